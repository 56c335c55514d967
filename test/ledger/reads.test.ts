// Reading the ledger over the real transport: filters, cursor pages, counts summed
// in SQL (checked against sums made here from the input), blob.events, and the
// number of SQL statements a nested query issues.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/index.ts';
import type { LedgerFilter, LedgerGrouping, ReadBlobEventsQuery, ReadEventsQuery } from '../gql/graphql.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { recordStatements, type Statement } from '../helpers/sql.ts';
import { databaseKinds } from '../helpers/database.ts';
import { AppendBatch } from '../helpers/operations.ts';

const Events = graphql(`
  query ReadEvents($filter: LedgerFilter, $first: Int, $after: String, $order: LedgerOrder) {
    events(filter: $filter, first: $first, after: $after, order: $order) {
      edges {
        cursor
        node {
          id
          position
          cursor
        }
      }
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
    }
  }
`);

const Counts = graphql(`
  query ReadCounts($by: LedgerGrouping!, $filter: LedgerFilter) {
    ledgerCounts(by: $by, filter: $filter) {
      key
      events
      inputTokens
      outputTokens
      costUsd
    }
  }
`);

const BlobEvents = graphql(`
  query ReadBlobEvents($sha256: String!, $first: Int, $after: String) {
    blob(sha256: $sha256) {
      sha256
      events(first: $first, after: $after) {
        edges {
          cursor
          node {
            id
            payloadSha256
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`);

const NestedEvents = graphql(`
  query ReadNestedEvents($first: Int) {
    events(first: $first) {
      edges {
        node {
          id
          payload {
            sha256
            size
          }
          batch {
            id
            collector
          }
        }
      }
    }
  }
`);

type Seed = {
  id: string;
  kind: string;
  direction: 'IN' | 'OUT';
  actionId: string;
  tool?: string;
  session?: string;
  turn?: string;
  task?: string;
  agent?: string;
  model?: string;
  status?: string;
  costUsd?: string;
  inputTokens?: number;
  outputTokens?: number;
  occurredAt: string;
  payload?: { state: 'COMPLETE'; text: string };
};

const dimensions = ['kind', 'tool', 'session', 'turn', 'task', 'agent', 'model', 'status'] as const;
const start = Date.parse('2026-11-29T22:10:00Z');
const shared = '{"same":"payload"}';

/** 60 events spread over about a day and a half, with gaps in every optional column. */
const seeds: Seed[] = Array.from({ length: 60 }, (_, i) => ({
  id: `ev-${String(i).padStart(3, '0')}`,
  kind: ['TOOL_CALL', 'REQUEST', 'RESPONSE', 'REFUSAL'][i % 4]!,
  direction: i % 2 ? 'OUT' : 'IN',
  actionId: `act-${Math.floor(i / 2)}`,
  ...(i % 5 !== 4 && { tool: ['ECHO', 'SEARCH', 'FETCH'][i % 3] }),
  session: `s-${i % 3}`,
  ...(i % 4 !== 2 && { turn: `turn-${i % 5}` }),
  ...(i % 6 !== 0 && { task: i % 2 ? 'T-17' : 'T-18' }),
  agent: ['alice', 'bob', 'carol'][i % 3],
  ...(i % 7 !== 0 && { model: ['m-a', 'm-b'][i % 2] }),
  status: i % 5 === 0 ? 'ERROR' : 'OK',
  ...(i % 5 !== 3 && { costUsd: ['0.1', '0.2', '0.0000000001', '1.5', '12.3456789012'][i % 5] }),
  ...(i % 4 !== 3 && { inputTokens: 100 * i + 7 }),
  outputTokens: 3 * i,
  occurredAt: new Date(start + i * 37 * 60_000).toISOString(),
  ...(i % 3 === 0 && { payload: { state: 'COMPLETE' as const, text: shared } }),
  ...(i % 3 === 1 && { payload: { state: 'COMPLETE' as const, text: `{"i":${i}}` } }),
}));

/** Exact decimal sum, in units of 1e-10, printed without trailing zeros. */
function decimalSum(values: (string | undefined)[]): string {
  let units = 0n;
  for (const v of values) {
    if (v === undefined) continue;
    const [whole, frac = ''] = v.split('.');
    units += BigInt(whole!) * 10n ** 10n + BigInt(frac.padEnd(10, '0'));
  }
  const whole = units / 10n ** 10n;
  const frac = (units % 10n ** 10n).toString().padStart(10, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

const hourOf = (iso: string) => `${iso.slice(0, 13)}:00:00.000Z`;
const dayOf = (iso: string) => `${iso.slice(0, 10)}T00:00:00.000Z`;

function keyOf(e: Seed, by: LedgerGrouping): string | null {
  if (by === 'HOUR') return hourOf(e.occurredAt);
  if (by === 'DAY') return dayOf(e.occurredAt);
  return e[by.toLowerCase() as (typeof dimensions)[number]] ?? null;
}

function expectedCounts(events: Seed[], by: LedgerGrouping) {
  const groups = new Map<string | null, Seed[]>();
  for (const e of events) {
    const k = keyOf(e, by);
    groups.set(k, [...(groups.get(k) ?? []), e]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a === null ? 1 : b === null ? -1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([key, group]) => ({
      key,
      events: group.length,
      inputTokens: String(group.reduce((s, e) => s + (e.inputTokens ?? 0), 0)),
      outputTokens: String(group.reduce((s, e) => s + (e.outputTokens ?? 0), 0)),
      costUsd: decimalSum(group.map((e) => e.costUsd)),
    }));
}

function matches(e: Seed, filter: LedgerFilter): boolean {
  for (const d of dimensions) {
    const want = filter[d];
    if (want !== undefined && want !== null) {
      const list = Array.isArray(want) ? want : [want];
      if (e[d] === undefined || !list.includes(e[d]!)) return false;
    }
  }
  if (filter.direction && !(Array.isArray(filter.direction) ? filter.direction : [filter.direction]).includes(e.direction)) return false;
  if (filter.occurredFrom && e.occurredAt < new Date(filter.occurredFrom).toISOString()) return false;
  if (filter.occurredTo && e.occurredAt >= new Date(filter.occurredTo).toISOString()) return false;
  return true;
}

const allGroupings: LedgerGrouping[] = ['HOUR', 'DAY', 'SESSION', 'TURN', 'KIND', 'AGENT', 'MODEL', 'TOOL', 'TASK', 'STATUS'];

describe.each(databaseKinds)('reading the ledger (%s)', (kind) => {
  let t: TestApp;

  async function append(events: Seed[], collector = 'reads') {
    const result = await t.op(AppendBatch, { input: { collector, events } });
    expect(result.errors).toBeUndefined();
    return result.data!.appendBatch;
  }

  async function ids(filter: LedgerFilter) {
    const result = await t.op(Events, { filter, first: 500 });
    expect(result.errors).toBeUndefined();
    return result.data!.events.edges.map((e) => e.node.id);
  }

  /** Pages through with `first` until the end; returns every id seen, in order. */
  async function pageAll(first: number, order: 'ASC' | 'DESC' = 'ASC', filter?: LedgerFilter, between?: (page: number) => Promise<void>) {
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; ; page++) {
      const result: { data?: ReadEventsQuery; errors?: unknown[] } = await t.op(Events, { filter, first, after, order });
      expect(result.errors).toBeUndefined();
      const { edges, pageInfo } = result.data!.events;
      expect(edges.length).toBeLessThanOrEqual(first);
      seen.push(...edges.map((e) => e.node.id));
      for (const e of edges) expect(e.cursor).toBe(e.node.cursor);
      expect(pageInfo.hasPreviousPage).toBe(after !== null);
      if (!pageInfo.hasNextPage) return seen;
      expect(pageInfo.endCursor).toBe(edges.at(-1)!.cursor);
      after = pageInfo.endCursor!;
      await between?.(page);
    }
  }

  beforeAll(async () => {
    t = await startTestApp(kind);
    for (let i = 0; i < seeds.length; i += 15) await append(seeds.slice(i, i + 15));
  });
  afterAll(async () => t?.stop());

  it('filters by every dimension, one value or a list', async () => {
    for (const d of dimensions) {
      const values = [...new Set(seeds.map((e) => e[d]).filter((v): v is string => v !== undefined))];
      expect(values.length).toBeGreaterThan(1);
      for (const v of values) {
        const expected = seeds.filter((e) => e[d] === v).map((e) => e.id);
        expect(await ids({ [d]: [v] }), `${d} = ${v}`).toEqual(expected);
      }
      const two = values.slice(0, 2);
      expect(await ids({ [d]: two }), `${d} in ${two}`).toEqual(seeds.filter((e) => two.includes(e[d]!)).map((e) => e.id));
    }
    expect(await ids({ direction: ['OUT'] })).toEqual(seeds.filter((e) => e.direction === 'OUT').map((e) => e.id));
    expect(await ids({ direction: ['IN', 'OUT'] })).toEqual(seeds.map((e) => e.id));
    expect(await ids({ tool: ['NO_SUCH_TOOL'] })).toEqual([]);
    // One value may be sent without brackets (GraphQL list input coercion).
    const single = await t.gql(`{ events(first: 500, filter: { tool: "ECHO", direction: OUT }) { edges { node { id } } } }`);
    expect(single.data.events.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(
      seeds.filter((e) => e.tool === 'ECHO' && e.direction === 'OUT').map((e) => e.id),
    );
  });

  it('filters by a time range: from inclusive, to exclusive, and combined with columns', async () => {
    const from = seeds[10]!.occurredAt;
    const to = seeds[25]!.occurredAt;
    expect(await ids({ occurredFrom: from })).toEqual(seeds.slice(10).map((e) => e.id));
    expect(await ids({ occurredTo: to })).toEqual(seeds.slice(0, 25).map((e) => e.id));
    expect(await ids({ occurredFrom: from, occurredTo: to })).toEqual(seeds.slice(10, 25).map((e) => e.id));
    const combined: LedgerFilter = { occurredFrom: from, occurredTo: to, status: ['OK'], kind: ['TOOL_CALL', 'REFUSAL'], agent: ['alice'] };
    const expected = seeds.filter((e) => matches(e, combined)).map((e) => e.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(await ids(combined)).toEqual(expected);
  });

  it('refuses a backwards time range and an empty value list with BAD_INPUT', async () => {
    const backwards = await t.gql(`{ events(filter: { occurredFrom: "2026-12-01T00:00:00Z", occurredTo: "2026-11-01T00:00:00Z" }) { edges { cursor } } }`);
    expect(backwards.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    expect(backwards.errors?.[0]?.message).toMatch(
      /expected occurredFrom at or before occurredTo, got 2026-12-01T00:00:00.000Z after 2026-11-01T00:00:00.000Z/,
    );
    const empty = await t.gql(`{ events(filter: { tool: [] }) { edges { cursor } } }`);
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    expect(empty.errors?.[0]?.message).toBe('Invalid filter: tool: expected at least one value, got []');
  });

  it('pages forward with first/after, reaching every event exactly once in position order', async () => {
    const all = seeds.map((e) => e.id);
    for (const first of [1, 7, 60, 500]) expect(await pageAll(first)).toEqual(all);
    const filter: LedgerFilter = { task: ['T-17'] };
    expect(await pageAll(4, 'ASC', filter)).toEqual(seeds.filter((e) => e.task === 'T-17').map((e) => e.id));
  });

  it('pages in DESC order, newest commit first', async () => {
    const reversed = seeds.map((e) => e.id).reverse();
    expect(await pageAll(9, 'DESC')).toEqual(reversed);
    const first = await t.op(Events, { first: 3, order: 'DESC' });
    const positions = first.data!.events.edges.map((e) => BigInt(e.node.position));
    expect(positions[0]! > positions[1]! && positions[1]! > positions[2]!).toBe(true);
  });

  it('stays correct while a writer appends between pages', async () => {
    const late: Seed[] = Array.from({ length: 5 }, (_, i) => ({
      id: `late-${i}`,
      kind: 'LATE',
      direction: 'IN',
      actionId: `late-${i}`,
      occurredAt: '2026-11-01T00:00:00Z',
    }));
    const seen = await pageAll(8, 'ASC', { kind: ['TOOL_CALL', 'LATE'] }, async (page) => {
      if (page === 0) await append(late.slice(0, 3), 'late');
      if (page === 1) await append(late.slice(3), 'late');
    });
    const expected = [...seeds.filter((e) => e.kind === 'TOOL_CALL').map((e) => e.id), ...late.map((e) => e.id)];
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('refuses a bad cursor and a page size past the cap with BAD_INPUT', async () => {
    const bad = await t.op(Events, { first: 2, after: 'not-a-cursor' });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    expect(bad.errors?.[0]?.message).toBe('Invalid cursor: expected a cursor returned by this ledger, got "not-a-cursor"');
    const forged = await t.op(Events, { after: Buffer.from('ledger:-1').toString('base64url') });
    expect(forged.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    const tooMany = await t.op(Events, { first: 501 });
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    expect(tooMany.errors?.[0]?.message).toBe('Invalid first: expected a whole number from 0 to 500, got 501');
    const negative = await t.op(Events, { first: -1 });
    expect(negative.errors?.[0]?.message).toBe('Invalid first: expected a whole number from 0 to 500, got -1');
    const fifty = await t.op(Events, {});
    expect(fifty.data!.events.edges).toHaveLength(50);
    expect(fifty.data!.events.pageInfo.hasNextPage).toBe(true);
  });

  it('counts per grouping, summed from rows, match sums made from the input', async () => {
    for (const by of allGroupings) {
      const result = await t.op(Counts, { by, filter: { session: ['s-0', 's-1', 's-2'] } });
      expect(result.errors, by).toBeUndefined();
      expect(result.data!.ledgerCounts, by).toEqual(expectedCounts(seeds, by));
    }
    const filter: LedgerFilter = { status: ['OK'], occurredFrom: seeds[5]!.occurredAt };
    const filtered = await t.op(Counts, { by: 'TOOL', filter });
    expect(filtered.data!.ledgerCounts).toEqual(
      expectedCounts(
        seeds.filter((e) => matches(e, filter)),
        'TOOL',
      ),
    );
    const none = await t.op(Counts, { by: 'MODEL', filter: { tool: ['NO_SUCH_TOOL'] } });
    expect(none.data!.ledgerCounts).toEqual([]);
  });

  it('sums cost as an exact decimal (0.1 + 0.2 = 0.3)', async () => {
    const base = { kind: 'DECIMAL', direction: 'IN' as const, task: 'T-DEC', occurredAt: '2026-10-01T00:00:00Z' };
    await append([
      { ...base, id: 'dec-1', actionId: 'dec-1', costUsd: '0.1', inputTokens: 2_000_000_000, outputTokens: 1 },
      { ...base, id: 'dec-2', actionId: 'dec-2', costUsd: '0.2', inputTokens: 2_000_000_000, outputTokens: 2 },
      { ...base, id: 'dec-3', actionId: 'dec-3', costUsd: '0.0000000001' },
    ]);
    const result = await t.op(Counts, { by: 'TASK', filter: { task: ['T-DEC'], kind: ['DECIMAL'] } });
    expect(result.data!.ledgerCounts).toEqual([{ key: 'T-DEC', events: 3, inputTokens: '4000000000', outputTokens: '3', costUsd: '0.3000000001' }]);
    const two = await t.op(Counts, { by: 'DAY', filter: { kind: ['DECIMAL'], occurredTo: '2026-10-01T00:00:00.001Z' } });
    expect(two.data!.ledgerCounts).toEqual([
      { key: '2026-10-01T00:00:00.000Z', events: 3, inputTokens: '4000000000', outputTokens: '3', costUsd: '0.3000000001' },
    ]);
    const exact = await t.op(Counts, { by: 'KIND', filter: { kind: ['DECIMAL'], turn: [] } });
    expect(exact.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    await append([
      { ...base, id: 'dec-4', actionId: 'dec-4', task: 'T-POINT-3', costUsd: '0.1' },
      { ...base, id: 'dec-5', actionId: 'dec-5', task: 'T-POINT-3', costUsd: '0.2' },
    ]);
    const point3 = await t.op(Counts, { by: 'TASK', filter: { task: ['T-POINT-3'] } });
    expect(point3.data!.ledgerCounts).toEqual([{ key: 'T-POINT-3', events: 2, inputTokens: '0', outputTokens: '0', costUsd: '0.3' }]);
  });

  it('lists every event that references a blob, as a connection with ledger cursors', async () => {
    const sha256 = createHash('sha256').update(shared).digest('hex');
    const expected = seeds.filter((e) => e.payload?.text === shared).map((e) => e.id);
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const result: { data?: ReadBlobEventsQuery; errors?: unknown[] } = await t.op(BlobEvents, { sha256, first: 6, after });
      expect(result.errors).toBeUndefined();
      const events = result.data!.blob!.events;
      seen.push(...events.edges.map((e) => e.node.id));
      for (const e of events.edges) expect(e.node.payloadSha256).toBe(sha256);
      if (!events.pageInfo.hasNextPage) break;
      after = events.pageInfo.endCursor!;
    }
    expect(seen).toEqual(expected);
    // The blob's cursors are the ledger's: one taken from events() resumes blob.events.
    const fromEvents = await t.op(Events, { first: 500, filter: { kind: ['TOOL_CALL'] } });
    const cursorOfFirstShared = fromEvents.data!.events.edges.find((e) => e.node.id === expected[0])!.cursor;
    const resumed = await t.op(BlobEvents, { sha256, first: 500, after: cursorOfFirstShared });
    expect(resumed.data!.blob!.events.edges.map((e) => e.node.id)).toEqual(expected.slice(1));
    const bad = await t.op(BlobEvents, { sha256, after: 'garbage' });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    const tooMany = await t.op(BlobEvents, { sha256, first: 501 });
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
  });

  it('loads events → payload → batch in one SQL statement, whatever the page size', async () => {
    const recorded: Statement[] = [];
    const restore = recordStatements(t.db, recorded);
    const counts: number[] = [];
    try {
      for (const first of [3, 60]) {
        recorded.length = 0;
        const result = await t.op(NestedEvents, { first });
        const statements = recorded.map((r) => r.text);
        expect(result.errors).toBeUndefined();
        const edges = result.data!.events.edges;
        expect(edges).toHaveLength(first);
        expect(edges.filter((e) => e.node.payload).length).toBeGreaterThan(0);
        expect(edges.every((e) => e.node.batch.collector === 'reads')).toBe(true);
        counts.push(statements.length);
        // One statement, the payload and batch joined into it, however many events: no query per row or per relation.
        expect(statements.map(tableOf)).toEqual(['ledger_event']);
        expect(statements[0]).toMatch(/JOIN blob .* JOIN ledger_batch/);
      }
    } finally {
      restore();
    }
    expect(counts).toEqual([1, 1]);
  });
});

const tableOf = (sql: string) => /\bFROM\s+"?(?:public"?\."?)?(\w+)/i.exec(sql)?.[1] ?? sql;
