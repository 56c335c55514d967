// The plans of reviewer reads kept per place in a parsed document (src/graphql/plan-cache.ts), through
// the real HTTP door: the same document sent again plans once, yet every answer is the one a fresh
// plan gives, whatever the variables (at the root, in directives beneath it), the selection, the
// fragments around it, or the caller's read authority. The cache keeps statement shapes, never rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS_PER_PLACE, planCacheStats } from '../../src/graphql/plan-cache.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { isBackground, recordStatements, type Statement } from '../helpers/sql.ts';

describe.each(databaseKinds)('cached read plans (%s)', (kind) => {
  let t: TestApp;
  let tokens: { task1: string; task2: string; none: string };

  async function ask(token: string, query: string, variables: Record<string, unknown> = {}) {
    const statements: Statement[] = [];
    const restore = recordStatements(t.db, statements);
    try {
      const response = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as { data?: any; errors?: any[] };
      return { ...body, statements: statements.filter((s) => !isBackground(s)) };
    } finally {
      restore();
    }
  }

  /** Plans made and plans reused while `fn` runs. */
  async function counting<T>(fn: () => Promise<T>): Promise<{ value: T; planned: number; reused: number }> {
    const before = planCacheStats();
    const value = await fn();
    const after = planCacheStats();
    return { value, planned: after.planned - before.planned, reused: after.reused - before.reused };
  }

  beforeAll(async () => {
    t = await startTestApp(kind);
    tokens = { task1: t.mint('read = task', 'task = PC-1'), task2: t.mint('read = task', 'task = PC-2'), none: t.mint('read = none') };
    const events = Array.from({ length: 12 }, (_, i) => ({
      id: `pc-${i}`,
      kind: i % 2 ? 'TOOL_RESULT' : 'TOOL_CALL',
      direction: i % 2 ? 'IN' : 'OUT',
      actionId: `pc-act-${Math.floor(i / 2)}`,
      tool: 'ECHO',
      task: i < 6 ? 'PC-1' : 'PC-2',
      occurredAt: new Date(Date.UTC(2026, 11, 1) + i * 1000).toISOString(),
      payload: { state: 'COMPLETE', text: `body ${i}` },
    }));
    const appended = await t.gql(`mutation ($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`, { input: { collector: 'pc', events } });
    expect(appended.errors).toBeUndefined();
  });
  afterAll(async () => t?.stop());

  it('plans a document once and answers each request with its own variables', async () => {
    const query = `query ($id: ID!) { event(id: $id) { id kind payload { size text } } }`;
    const first = await counting(() => ask(t.token, query, { id: 'pc-1' }));
    expect(first.value.data.event).toEqual({ id: 'pc-1', kind: 'TOOL_RESULT', payload: { size: '6', text: 'body 1' } });
    const again = await counting(async () => [await ask(t.token, query, { id: 'pc-2' }), await ask(t.token, query, { id: 'nothing' })]);
    expect(again.planned).toBe(0);
    expect(again.reused).toBe(2);
    expect(again.value[0]!.data.event).toEqual({ id: 'pc-2', kind: 'TOOL_CALL', payload: { size: '6', text: 'body 2' } });
    expect(again.value[1]!.data.event).toBeNull();
    for (const r of again.value) expect(r.statements, JSON.stringify(r.statements.map((s) => s.text.slice(0, 120)))).toHaveLength(1);
  });

  it('plans again for the values of variables beneath the field (directives), and answers each with its own selection', async () => {
    const query = `query ($id: ID!, $bytes: Boolean!) { event(id: $id) { id payload @include(if: $bytes) { text } } }`;
    for (const bytes of [true, false, true, false]) {
      const r = await ask(t.token, query, { id: 'pc-3', bytes });
      expect(r.data.event).toEqual(bytes ? { id: 'pc-3', payload: { text: 'body 3' } } : { id: 'pc-3' });
      expect(r.statements.some((s) => /\bdata\b/.test(s.text))).toBe(bytes);
    }
  });

  it('tells apart the nodes a variable merges into one field', async () => {
    const query = `query ($kind: Boolean!) { event(id: "pc-4") @include(if: $kind) { kind } event(id: "pc-4") { id } }`;
    expect((await ask(t.token, query, { kind: true })).data.event).toEqual({ kind: 'TOOL_CALL', id: 'pc-4' });
    expect((await ask(t.token, query, { kind: false })).data.event).toEqual({ id: 'pc-4' });
    expect((await ask(t.token, query, { kind: true })).data.event).toEqual({ kind: 'TOOL_CALL', id: 'pc-4' });
  });

  it('keeps each place in a document apart: aliases, fragments and different selections', async () => {
    const query = `fragment E on LedgerEvent { id payload { size } }
      { a: event(id: "pc-5") { ...E } b: event(id: "pc-6") { ...E kind payload { text } }
        page: events(filter: { tool: ["ECHO"] }, first: 2, order: DESC) { edges { node { ...E } } } }`;
    for (let i = 0; i < 2; i++) {
      const r = await ask(t.token, query);
      expect(r.errors).toBeUndefined();
      expect(r.data.a).toEqual({ id: 'pc-5', payload: { size: '6' } });
      expect(r.data.b).toEqual({ id: 'pc-6', kind: 'TOOL_CALL', payload: { size: '6', text: 'body 6' } });
      expect(r.data.page.edges.map((e: any) => e.node)).toEqual([
        { id: 'pc-11', payload: { size: '7' } },
        { id: 'pc-10', payload: { size: '7' } },
      ]);
    }
  });

  it("never answers one caller with another's rows: the same document for callers of different read authority", async () => {
    const query = `query ($id: ID!) { event(id: $id) { id task }
      events(filter: { tool: ["ECHO"] }, first: 20) { edges { node { id task payload { text } } } }
      action(id: "pc-act-4") { events { id task } } }`;
    const tasks = (r: { data?: any }) => [...new Set(r.data.events.edges.map((e: any) => e.node.task))];
    for (let round = 0; round < 2; round++) {
      const all = await ask(t.token, query, { id: 'pc-8' });
      expect(all.data.event).toEqual({ id: 'pc-8', task: 'PC-2' });
      expect(tasks(all)).toEqual(['PC-1', 'PC-2']);
      const one = await ask(tokens.task1, query, { id: 'pc-8' });
      expect(one.data.event).toBeNull();
      expect(tasks(one)).toEqual(['PC-1']);
      expect(one.data.action).toBeNull();
      const two = await ask(tokens.task2, query, { id: 'pc-8' });
      expect(two.data.event).toEqual({ id: 'pc-8', task: 'PC-2' });
      expect(tasks(two)).toEqual(['PC-2']);
      expect(two.data.action.events).toEqual([
        { id: 'pc-8', task: 'PC-2' },
        { id: 'pc-9', task: 'PC-2' },
      ]);
      const none = await ask(tokens.none, query, { id: 'pc-8' });
      expect(none.data).toBeNull();
      expect(none.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
  });

  it('does not keep a plan it reads through Prisma: a nested list is read as before, every time', async () => {
    const query = `{ event(id: "pc-7") { id payload { sha256 events(first: 5) { edges { node { id } } } } } }`;
    for (let i = 0; i < 2; i++) {
      const r = await counting(() => ask(t.token, query));
      expect(r.value.errors).toBeUndefined();
      expect(r.value.data.event.payload.events.edges).toEqual([{ node: { id: 'pc-7' } }]);
      expect(r.reused).toBe(0);
    }
  });

  it('keeps at most PLANS_PER_PLACE variable values per place, and still answers past it', async () => {
    const query = `query ($first: Int) { tool(name: "ECHO") { name events(first: $first) { edges { node { id } } } } }`;
    const r = await counting(async () => {
      for (let first = 0; first < PLANS_PER_PLACE + 8; first++) {
        const answer = await ask(t.token, query, { first });
        expect(answer.errors).toBeUndefined();
        expect(answer.data.tool.events.edges).toHaveLength(Math.min(first, 12));
      }
    });
    expect(r.reused).toBe(0);
    const again = await counting(() => ask(t.token, query, { first: 3 }));
    expect(again.value.data.tool.events.edges).toHaveLength(3);
    expect(again.reused).toBe(1);
    const past = await counting(() => ask(t.token, query, { first: PLANS_PER_PLACE + 3 }));
    expect(past.value.data.tool.events.edges).toHaveLength(12);
    expect(past.reused).toBe(0);
  });
});
