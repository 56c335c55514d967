// Hot lookups must be able to use their index. A char(64) key compared with a text[] parameter
// silently falls back to a scan of the whole table (the comparison becomes key::text), which made
// every ingested batch scan all blobs. With sequential scans priced out, a plan that still scans
// the table (or reads the whole index and filters) is one whose key cannot drive an index search.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usesOfSql } from '../../src/auth/uses.ts';
import { toolsStatement } from '../../src/directory/tool-reads.ts';
import { eventStatement, planEventSelect, type SqlParams } from '../../src/ledger/event-select.ts';
import { knownBlobsSql } from '../../src/ledger/ledger.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/database.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const hash = (c: string) => c.repeat(64);

describe.each(databaseKinds)('hot lookups use their index on %s', (kind) => {
  let db: TestDatabase;
  let sql: RawSql;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    sql = await rawSql(db);
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });

  const plan = async (query: string, arrayLiteral: string): Promise<string> => {
    await sql.query('SET enable_seqscan = off');
    try {
      const rows = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query.replace('$1', `'${arrayLiteral}'`)}`);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await sql.query('RESET enable_seqscan');
    }
  };

  it.each([
    ['the blobs a batch already has (blob.sha256)', knownBlobsSql, 'sha256'],
    ["a token's use counters (token_uses.counter)", usesOfSql, 'counter'],
  ])('%s', async (_what, query, key) => {
    const text = await plan(query, `{"${hash('a')}","${hash('b')}"}`);
    expect(text, text).toMatch(new RegExp(`Index Cond: \\(${key} = ANY`));
    expect(text, text).not.toMatch(/Seq Scan|Filter:/);
  });

  it('the same lookup against text[] is the whole-table read this guards against', async () => {
    const text = await plan(knownBlobsSql.replace('::bpchar[]', ''), `{"${hash('a')}"}`);
    expect(text).toMatch(/Filter: \(\(sha256\)::text = ANY/);
    expect(text).not.toMatch(/Index Cond/);
  });
});

// The reviewer's reads of recent events stay flat as the ledger grows because each is an index walk
// that stops at its LIMIT: the index gives the order, so no plan sorts the matching rows. Checked
// with sorting priced out, for the custom plan and for the generic plan a named statement settles on.
describe.each(databaseKinds)('reviewer reads walk an index in order and stop at their limit on %s', (kind) => {
  let db: TestDatabase;
  let sql: RawSql;
  const plan = planEventSelect({ select: { id: true, position: true, payload: { select: { size: true, sha256: true } } } }, ['position'])!;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    sql = await rawSql(db);
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });

  const literal = (v: unknown): string =>
    Array.isArray(v) ? `'{${v.map((x) => `"${x}"`).join(',')}}'` : typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v);

  /** EXPLAIN of the statement as a custom plan and as a generic plan (the one a prepared statement reuses). */
  const plans = async (statement: { text: string; params: SqlParams }): Promise<string[]> => {
    await sql.exec('SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off');
    const name = `plan_${Math.random().toString(36).slice(2, 10)}`;
    try {
      await sql.exec(`PREPARE ${name} AS ${statement.text}`);
      const explain = async () =>
        (await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${name}(${statement.params.values.map(literal).join(', ')})`))
          .map((r) => r['QUERY PLAN'])
          .join('\n');
      const custom = await explain();
      await sql.exec('SET plan_cache_mode = force_generic_plan');
      return [custom, await explain()];
    } finally {
      await sql.exec(`DEALLOCATE ${name}; RESET plan_cache_mode; RESET enable_seqscan; RESET enable_sort; RESET enable_bitmapscan`);
    }
  };

  it("a tool's latest events: the (tool, position) index backwards, no sort", async () => {
    for (const text of await plans(eventStatement(plan, { filter: { tool: ['search_web'] }, order: 'DESC', limit: 51 }))) {
      expect(text, text).toMatch(/Index Scan Backward using ledger_event_tool_position_idx/);
      expect(text, text).not.toMatch(/Sort|Seq Scan/);
      expect(text, text).toMatch(/Index Scan using blob_pkey/);
    }
  });

  it('a page of all events, newest first, and one after a cursor: the position index, no sort', async () => {
    for (const spec of [
      { filter: {}, order: 'DESC', limit: 51 },
      { filter: {}, order: 'ASC', after: 10n, limit: 51 },
    ] as const) {
      for (const text of await plans(eventStatement(plan, spec))) {
        expect(text, text).toMatch(/Index Scan( Backward)? using ledger_event_position_key/);
        expect(text, text).not.toMatch(/Sort|Seq Scan/);
      }
    }
  });

  it("one event by id and one action's events: their own indexes, no sort", async () => {
    for (const text of await plans(eventStatement(plan, { filter: {}, id: 'evt_1', order: 'ASC', limit: 1 })))
      expect(text, text).toMatch(/Index Scan using ledger_event_pkey/);
    for (const text of await plans(eventStatement(plan, { filter: {}, actionId: 'act_1', order: 'ASC' }))) {
      expect(text, text).toMatch(/Index Scan using ledger_event_action_id_position_idx/);
      expect(text, text).not.toMatch(/Sort|Seq Scan/);
    }
  });

  it("tools → each one's first events: one index walk per tool under its LIMIT", async () => {
    const ahead = {
      take: 10,
      after: null,
      filter: {},
      plan: planEventSelect({ select: { id: true, payload: { select: { sha256: true } } } }, ['position', 'tool'])!,
    };
    const [custom, generic] = await plans(toolsStatement(['search_web', 'read_file'], ahead));
    for (const text of [custom!, generic!]) {
      expect(text, text).toMatch(/Limit\s+\(.*\n\s+->\s+Index Scan using ledger_event_tool_position_idx/);
      expect(text, text).not.toMatch(/Seq Scan/);
    }
  });
});
