// tools → events read ahead as one row per tool, its page of events as one JSON array
// (src/directory/tool-reads.ts, src/ledger/event-select.ts `plan.json`): the answers must be exactly
// those of a row per event (Tool.events read on its own, when asked twice under aliases), whatever the
// columns hold: positions past 2^53, costs with 20 digits, milliseconds, unicode and escapes in text
// and JSON, nulls, a tool with no events, pages after a cursor, many tools in the order asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolsStatement } from '../../src/directory/tool-reads.ts';
import { planEventSelect } from '../../src/ledger/event-select.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { gqlStatements, rawSql, type RawSql } from '../helpers/sql.ts';

const tools = ['ECHO', 'CLOCK', 'CLOCK_THEN_ECHO', 'MCP_ECHO', 'HTTPBIN_ANYTHING', 'WEATHER_NOW', 'IMSG_SEND'];
/** IMSG_SEND is given no event. */
const busy = tools.slice(0, 6);
const odd = 'quote " backslash \\ tab \t newline \n slash / nul-escaped \\u0000 bell \u0007 é 中文 😀 \u2028 end';
/** Text PostgreSQL cannot hold as it is (a NUL, a lone surrogate), stored escaped (storable.ts) in headers and metadata. */
const hostile = `${odd} nul \u0000 lone \ud800 mark \ufdd0`;

const event = `id nodeId position kind direction actionId toolName session turn task agent model status method url headers metadata costUsd
  inputTokens outputTokens occurredAt recordedAt payloadState payloadSha256 payloadSize payloadEncoding artifactUri artifactSha256 redactedSecrets
  payload { sha256 size storedSize storage codec encoding } batch { id collector position received inserted duplicates bytes receivedAt }`;
const page = `edges { cursor node { ${event} } } pageInfo { hasNextPage endCursor }`;

describe.each(databaseKinds)('tools → their events as one JSON page per tool (%s)', (kind) => {
  let t: TestApp;
  let sql: RawSql;

  const counted = (query: string, variables: Record<string, unknown> = {}) => gqlStatements(t, query, variables);

  const append = async (events: Record<string, unknown>[]) => {
    const r = await t.gql(`mutation ($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`, { input: { collector: 'tr', events } });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data.appendBatch.inserted).toBe(events.length);
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    sql = await rawSql(t.db);
    const made = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, k) => {
        const i = from + k;
        return {
          id: `tr-${i}`,
          kind: ['TOOL_CALL', 'TOOL_RESULT', 'MODEL_RESULT'][i % 3],
          direction: i % 2 ? 'IN' : 'OUT',
          actionId: `tr-act-${Math.floor(i / 2)}`,
          tool: busy[i % busy.length],
          ...(i % 4 === 0 && {
            session: `s-${odd}`,
            turn: 't',
            task: 'tr-task',
            agent: 'agent é',
            model: 'm',
            method: 'POST',
            url: `https://example.com/${i}?q=é`,
          }),
          ...(i % 3 === 2 && { costUsd: i % 2 ? '1234567890.0123456789' : '0.0000000001', inputTokens: 2_147_483_647, outputTokens: 0 }),
          status: i % 5 ? String(200 + i) : null,
          headers: i % 2 ? { 'content-type': 'application/json', 'x-odd': odd } : null,
          metadata: i % 3 ? { text: odd, hostile, [hostile]: 1, n: 12345678901234, f: 0.1, nested: [null, true, { é: '😀' }], empty: {} } : null,
          occurredAt: new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999) + i * 1001).toISOString(),
          ...(i % 4 !== 1 && { payload: { state: 'COMPLETE', text: i % 4 === 2 ? odd : `{"i":${i}}` } }),
        };
      });
    await append(made(0, 30));
    // Positions past 2^53: a JSON number would lose their last digits.
    await sql.query(`SELECT setval('ledger_position_seq', 9007199254740993)`);
    await append(made(30, 90));
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  /** The same read with Tool.events asked twice under aliases: the rows alone, then a row per event for each page. */
  const perEvent = (fields: string, args: string) =>
    counted(`query ($names: [String!]!) { tools(names: $names) { name events${args} { ${fields} } again: events(first: 1) { edges { node { id } } } } }`, {
      names: tools,
    });

  it('answers exactly as a row per event, on the first page and after a cursor, in one statement of one row per tool', async () => {
    let after: Record<string, string | null> = Object.fromEntries(tools.map((n) => [n, null]));
    for (const first of [4, 4, 20]) {
      // Every tool after its own cursor: one tool per read, as the cursor is per tool.
      for (const name of tools) {
        const args = `(first: ${first}${after[name] ? `, after: "${after[name]}"` : ''})`;
        const one = await counted(`{ tool(name: "${name}") { name description events${args} { ${page} } } }`);
        expect(one.statements).toHaveLength(1);
        expect(one.statements[0]!.text).toMatch(/json_agg/);
        const two = await counted(`{ tool(name: "${name}") { name description events${args} { ${page} } again: events(first: 1) { edges { node { id } } } } }`);
        expect(two.statements[1]!.text).not.toMatch(/json_agg/);
        const { again: _again, ...expected } = two.data.tool;
        expect(one.data.tool).toEqual(expected);
        after = { ...after, [name]: one.data.tool.events.pageInfo.endCursor };
      }
    }
    // Each tool's events were paged through to the end: 15 each, the idle tool none.
    expect(Object.values(after).filter(Boolean)).toHaveLength(busy.length);
  });

  it('many tools at once: the order asked, unknown names left out, a tool with no events an empty page', async () => {
    const names = [...tools].reverse().flatMap((n) => [n, `NO_SUCH_${n}`]);
    const { data, statements } = await counted(`query ($names: [String!]!) { tools(names: $names) { name events(first: 20) { ${page} } } }`, { names });
    expect(statements).toHaveLength(1);
    expect(data.tools.map((x: { name: string }) => x.name)).toEqual([...tools].reverse());
    const idle = data.tools.find((x: { name: string }) => x.name === 'IMSG_SEND');
    expect(idle.events).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    const expected = await perEvent(page, '(first: 20)');
    const byName = new Map(expected.data.tools.map(({ again: _again, ...x }: { name: string; again: unknown }) => [x.name, x]));
    for (const tool of data.tools) expect(tool).toEqual(byName.get(tool.name));
    // The values themselves, past what the per-event read also gives: exact digits and milliseconds.
    const nodes = data.tools.flatMap((x: { events: { edges: { node: any }[] } }) => x.events.edges.map((e) => e.node));
    expect(nodes).toHaveLength(busy.length * 15);
    expect(nodes.map((n: { position: string }) => n.position)).toContain('9007199254740995');
    expect(nodes.map((n: { costUsd: string | null }) => n.costUsd)).toEqual(expect.arrayContaining(['1234567890.0123456789', '0.0000000001']));
    expect(nodes.find((n: { id: string }) => n.id === 'tr-31').occurredAt).toBe(new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999) + 31 * 1001).toISOString());
    expect(nodes.find((n: { id: string }) => n.id === 'tr-31').headers['x-odd']).toBe(odd);
    expect(nodes.find((n: { id: string }) => n.id === 'tr-32').metadata).toEqual({
      text: odd,
      hostile,
      [hostile]: 1,
      n: 12345678901234,
      f: 0.1,
      nested: [null, true, { é: '😀' }],
      empty: {},
    });
    expect(nodes.find((n: { id: string }) => n.id === 'tr-32').session).toBe(`s-${odd}`);
  });

  it('payload bytes asked: a row per event (bytea has no JSON form here), the same answers', async () => {
    const fields = `edges { node { id position payload { text size } } } pageInfo { hasNextPage }`;
    const { data, statements } = await counted(`query ($names: [String!]!) { tools(names: $names) { name events(first: 5) { ${fields} } } }`, { names: tools });
    expect(statements).toHaveLength(1);
    expect(statements[0]!.text).not.toMatch(/json_agg/);
    expect(statements[0]!.text).toMatch(/\bp\.data\b/);
    const expected = await perEvent(fields, '(first: 5)');
    expect(data.tools).toEqual(expected.data.tools.map(({ again: _again, ...x }: { again: unknown }) => x));
    expect(data.tools[0].events.edges.some((e: { node: { payload: { text: string } | null } }) => e.node.payload?.text === odd)).toBe(true);
  });

  it('sends one row per tool, not one per event', async () => {
    const plan = planEventSelect({ select: { id: true, payload: { select: { size: true, sha256: true } } } }, ['position'])!;
    expect(plan.json).not.toBeNull();
    const statement = toolsStatement(tools, { take: 10, after: null, filter: {}, plan });
    const rows = await sql.query<Record<string, unknown>>(statement.text, [...statement.params.values]);
    expect(rows).toHaveLength(tools.length);
    // Only a bytea (or int8 array) column keeps the row-per-event shape.
    expect(planEventSelect({ select: { id: true, payload: { select: { data: true } } } }, ['position'])!.json).toBeNull();
  });
});
