// The reviewer's read shapes, counted at the database driver: how many SQL statements each sends,
// whether any of them reads blob.data when no payload bytes were asked for, and (on PostgreSQL)
// whether the ledger's statements are named, so PostgreSQL plans them once per connection. A
// regression to a statement per row, or to reading payload bytes for a size and a hash, fails here.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { gqlStatements, type Statement } from '../helpers/sql.ts';
import { databaseKinds } from '../helpers/database.ts';

const tools = ['ECHO', 'CLOCK', 'CLOCK_THEN_ECHO', 'MCP_ECHO', 'HTTPBIN_ANYTHING', 'WEATHER_NOW', 'IMSG_SEND'];
const big = 'x'.repeat(300_000); // past INLINE_MAX_BYTES: kept in the object store
const contract = { method: 'POST', url: 'https://example.com/hook', headers: { 'content-type': 'application/json' }, body: { q: '{{q}}' } };

const readsPayloadBytes = (s: Statement) => /\bblob\b/.test(s.text) && /(\bp\.data\b|"data")/.test(s.text);

describe.each(databaseKinds)('reviewer reads: statements at the driver (%s)', (kind) => {
  let t: TestApp;
  let contractSha: string;

  const counted = (query: string, variables: Record<string, unknown> = {}) => gqlStatements(t, query, variables);

  beforeAll(async () => {
    t = await startTestApp(kind);
    contractSha = await t.app.services.directory.rememberContract(contract);
    const events = Array.from({ length: 7 * 30 }, (_, i) => ({
      id: `rs-${i}`,
      kind: ['TOOL_CALL', 'TOOL_RESULT'][i % 2],
      direction: i % 2 ? 'IN' : 'OUT',
      actionId: `rs-act-${Math.floor(i / 2)}`,
      tool: tools[i % 7],
      task: i < 40 ? 'rs-task' : undefined,
      status: i % 2 ? '200' : undefined,
      occurredAt: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
      payload: { state: 'COMPLETE', text: i === 3 ? big : `{"i":${i},"pad":"${'p'.repeat(200)}"}` },
      ...(i % 2 === 0 && { contract: { form: 'REST', sha256: contractSha } }),
    }));
    const appended = await t.gql(`mutation ($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`, { input: { collector: 'rs', events } });
    expect(appended.errors).toBeUndefined();
    expect(appended.data.appendBatch.inserted).toBe(events.length);
  });
  afterAll(async () => t?.stop());

  it('one event by id with its blob size and hash: one statement, no payload bytes', async () => {
    const { data, statements } = await counted(`{ event(id: "rs-5") { id kind position payload { size sha256 } } }`);
    expect(data.event.payload.sha256).toBe(
      createHash('sha256')
        .update(`{"i":5,"pad":"${'p'.repeat(200)}"}`)
        .digest('hex'),
    );
    expect(statements).toHaveLength(1);
    expect(statements.some(readsPayloadBytes)).toBe(false);
  });

  it('latest 50 events of a tool with blob size and hash: one statement, whatever the page size', async () => {
    for (const first of [5, 50]) {
      const { data, statements } = await counted(
        `query ($first: Int) { events(filter: { tool: ["ECHO"] }, first: $first, order: DESC) { edges { node { id position payload { size sha256 } } } } }`,
        { first },
      );
      expect(data.events.edges).toHaveLength(Math.min(first, 30));
      expect(data.events.edges[0].node.id).toBe('rs-203');
      expect(statements).toHaveLength(1);
      expect(statements.some(readsPayloadBytes)).toBe(false);
    }
  });

  it('tool → 20 events → blob: one statement, the row with its events and their blobs', async () => {
    const { data, statements } = await counted(`{ tool(name: "CLOCK") { name events(first: 20) { edges { node { id payload { size sha256 } } } } } }`);
    expect(data.tool.events.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(Array.from({ length: 20 }, (_, i) => `rs-${1 + 7 * i}`));
    expect(statements).toHaveLength(1);
    expect(statements.some(readsPayloadBytes)).toBe(false);
  });

  it('7 tools → 10 events each → blob: one statement for all of them', async () => {
    const { data, statements } = await counted(
      `query ($names: [String!]!) { tools(names: $names) { name events(first: 10) { edges { node { id toolName payload { size sha256 } } } } } }`,
      { names: tools },
    );
    expect(data.tools).toHaveLength(7);
    for (const tool of data.tools) {
      expect(tool.events.edges).toHaveLength(10);
      expect(tool.events.edges.every((e: { node: { toolName: string } }) => e.node.toolName === tool.name)).toBe(true);
    }
    expect(statements).toHaveLength(1);
    // Asked twice under aliases, each page is its own read: the rows, then one statement per page.
    const twice = await counted(
      `{ tools(names: ["ECHO", "CLOCK"]) { a: events(first: 2) { edges { node { id } } } b: events(first: 3) { edges { node { id } } } } }`,
    );
    expect(twice.data.tools.map((t: any) => [t.a.edges.length, t.b.edges.length])).toEqual([
      [2, 3],
      [2, 3],
    ]);
    expect(twice.statements).toHaveLength(3);
    expect(statements.some(readsPayloadBytes)).toBe(false);
  });

  it("count of one tool's events: one primary-key read of the counts kept on append", async () => {
    const { data, statements } = await counted(`{ ledgerCounts(by: TOOL, filter: { tool: ["ECHO"] }) { key events } }`);
    expect(data.ledgerCounts).toEqual([{ key: 'ECHO', events: 30 }]);
    expect(statements).toHaveLength(1);
    expect(statements[0]!.text).toMatch(/FROM ledger_tool_count/);
  });

  it('the counts kept on append equal the rows, through duplicates, several batches and a total', async () => {
    const more = (ids: number[]) =>
      ids.map((i) => ({
        id: `kc-${i}`,
        kind: 'TOOL_CALL',
        direction: 'OUT',
        actionId: `kc-${i}`,
        tool: i % 2 ? 'ECHO' : 'NOT_A_ROW',
        occurredAt: '2026-11-02T00:00:00Z',
      }));
    for (const ids of [
      [1, 2, 3],
      [3, 4, 5, 6],
      [1, 2, 7],
    ]) {
      const r = await t.gql(`mutation ($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`, {
        input: { collector: 'kc', events: more(ids) },
      });
      expect(r.errors).toBeUndefined();
    }
    const kept = await counted(`{ ledgerCounts(by: TOOL, filter: { tool: ["ECHO", "NOT_A_ROW", "NEVER_SEEN"] }) { key events } }`);
    expect(kept.data.ledgerCounts).toEqual([
      { key: 'ECHO', events: 34 },
      { key: 'NOT_A_ROW', events: 3 },
    ]);
    expect(kept.statements[0]!.text).toMatch(/FROM ledger_tool_count/);
    // With a sum, or another condition, the rows themselves are counted: the same numbers.
    const summed = await t.gql(`{ ledgerCounts(by: TOOL, filter: { tool: ["ECHO", "NOT_A_ROW"] }) { key events outputTokens } }`);
    expect(summed.data.ledgerCounts.map((c: { key: string; events: number }) => [c.key, c.events])).toEqual([
      ['ECHO', 34],
      ['NOT_A_ROW', 3],
    ]);
    const total = await t.gql(`{ ask(question: "how many events for tool ECHO") { total { events } } }`);
    expect(total.errors).toBeUndefined();
    expect(total.data.ask.total.events).toBe(34);
  });

  it('event → contract: at most two statements, then the contract from memory', async () => {
    const query = `{ event(id: "rs-8") { id contract { form sha256 shape json } } }`;
    const { data, statements } = await counted(query);
    expect(data.event.contract).toEqual({ form: 'REST', sha256: contractSha, shape: 'HTTP', json: contract });
    expect(statements.length).toBeLessThanOrEqual(2);
    expect((await counted(query)).statements).toHaveLength(1);
  });

  it('action → events → payload text: one statement, inline and object-stored bytes verified', async () => {
    const { data, statements } = await counted(`{ action(id: "rs-act-1") { id events { id payload { text size } } } }`);
    expect(data.action.events.map((e: { id: string }) => e.id)).toEqual(['rs-2', 'rs-3']);
    expect(data.action.events[1].payload.text).toBe(big);
    expect(data.action.events[0].payload.text).toBe(`{"i":2,"pad":"${'p'.repeat(200)}"}`);
    expect(statements).toHaveLength(1);
    expect(statements.some(readsPayloadBytes)).toBe(true);
    const missing = await counted(`{ action(id: "no-such-action") { id events { id } } }`);
    expect(missing.data.action).toBeNull();
  });

  it('task → calls with their outcome: two statements for the page', async () => {
    const { data, statements } = await counted(`{ task(id: "rs-task") { id calls(first: 20) { edges { node { id toolName outcome status startedAt } } } } }`);
    expect(data.task.calls.edges).toHaveLength(20);
    expect(data.task.calls.edges[0].node).toMatchObject({ id: 'rs-act-0', toolName: 'ECHO', outcome: 'OK', status: '200' });
    expect(statements).toHaveLength(2);
  });

  it('task → calls → events: one more statement for every call of the page', async () => {
    const { data, statements } = await counted(`{ task(id: "rs-task") { calls(first: 20) { edges { node { id events { id } } } } } }`);
    expect(data.task.calls.edges.map((e: { node: { events: unknown[] } }) => e.node.events.length)).toEqual(Array(20).fill(2));
    expect(statements).toHaveLength(3);
  });

  it.runIf(kind === 'postgres')('names the statement of every reviewer read shape, so PostgreSQL plans each once per connection', async () => {
    const shapes = [
      `{ event(id: "rs-5") { id kind position payload { size sha256 } } }`,
      `{ events(filter: { tool: ["ECHO"] }, first: 50, order: DESC) { edges { node { id position payload { size sha256 } } } } }`,
      `{ tool(name: "CLOCK") { name events(first: 20) { edges { node { id payload { size sha256 } } } } } }`,
      `{ tools(names: ["ECHO", "CLOCK"]) { name events(first: 10) { edges { node { id payload { size sha256 } } } } } }`,
      `{ ledgerCounts(by: TOOL, filter: { tool: ["ECHO"] }) { key events } }`,
      `{ event(id: "rs-8") { id contract { form sha256 } } }`,
      `{ action(id: "rs-act-1") { id events { id payload { text } } } }`,
      `{ task(id: "rs-task") { id calls(first: 20) { edges { node { id toolName outcome } } } } }`,
    ];
    for (const query of shapes) {
      await counted(query); // a contract read once is served from memory after
      const { statements } = await counted(query);
      expect(statements.length, query).toBeGreaterThan(0);
      for (const s of statements) expect(s.name, `${query}\n${s.text}`).toMatch(/^dl_read_/);
    }
  });

  it.runIf(kind === 'postgres')('names every ledger statement, so its plan is reused', async () => {
    const { statements } = await counted(`{ events(filter: { tool: ["ECHO"] }, first: 3) { edges { node { id payload { sha256 } batch { collector } } } } }`);
    expect(statements).toHaveLength(1);
    expect(statements[0]!.name).toMatch(/^dl_read_/);
    const again = await counted(`{ events(filter: { tool: ["CLOCK"] }, first: 9) { edges { node { id payload { sha256 } batch { collector } } } } }`);
    expect(again.statements[0]!.name).toBe(statements[0]!.name);
  });
});
