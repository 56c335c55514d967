// Hot lookups must be able to use their index. A char(64) key compared with a text[] parameter
// silently falls back to a scan of the whole table (the comparison becomes key::text), which made
// every ingested batch scan all blobs. With sequential scans priced out, a plan that still scans
// the table (or reads the whole index and filters) is one whose key cannot drive an index search.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usesOfSql } from '../../src/auth/uses.ts';
import { eventsForToolsStatement } from '../../src/directory/tool-events.ts';
import { toolsStatement } from '../../src/directory/tool-reads.ts';
import { eventStatement, planEventSelect, type SqlParams } from '../../src/ledger/event-select.ts';
import { knownBlobsSql } from '../../src/ledger/ledger.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/database.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const hash = (c: string) => c.repeat(64);

const literal = (v: unknown): string =>
  Array.isArray(v) ? `'{${v.map((x) => `"${x}"`).join(',')}}'` : typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v);

/** `explain` (EXPLAIN or EXPLAIN ANALYZE) of the statement prepared, as a custom plan and as the generic plan a prepared statement may settle on. */
async function customAndGeneric(sql: RawSql, explain: string, statement: { text: string; params: { values: readonly unknown[] } }): Promise<string[]> {
  const name = `plan_${Math.random().toString(36).slice(2, 10)}`;
  try {
    await sql.exec(`PREPARE ${name} AS ${statement.text}`);
    const run = async () =>
      (await sql.query<{ 'QUERY PLAN': string }>(`${explain} EXECUTE ${name}(${statement.params.values.map(literal).join(', ')})`))
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    const custom = await run();
    await sql.exec('SET plan_cache_mode = force_generic_plan');
    return [custom, await run()];
  } finally {
    await sql.exec(`DEALLOCATE ${name}; RESET plan_cache_mode`);
  }
}

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

  /** EXPLAIN of the statement as a custom plan and as a generic plan, with sorting and scans priced out. */
  const plans = async (statement: { text: string; params: SqlParams }): Promise<string[]> => {
    await sql.exec('SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off');
    try {
      return await customAndGeneric(sql, 'EXPLAIN', statement);
    } finally {
      await sql.exec('RESET enable_seqscan; RESET enable_sort; RESET enable_bitmapscan');
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

// With real statistics a position walk can look cheap for a tool that is common overall, though its
// events are all at the far end of the walk. The reads hold the tool in their order, so every plan walks
// the (tool, position) index and reads no row it then throws away. Checked by running them (EXPLAIN ANALYZE).
describe.each(databaseKinds)('reviewer reads stay on their index when statistics favour a position walk on %s', (kind) => {
  let db: TestDatabase;
  let sql: RawSql;
  const plan = planEventSelect({ select: { id: true, position: true, payload: { select: { size: true, sha256: true } } } }, ['position'])!;
  const events = 40_000;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    sql = await rawSql(db);
    // 'old_tool' on every other event of the first half, 'new_tool' on every other event of the second half.
    // Loaded as a replica would be: these rows reference no batch or blob, and the reference triggers stay off.
    await sql.exec(`SET session_replication_role = replica;
      INSERT INTO ledger_event (id, position, kind, direction, action_id, tool, occurred_at, batch_id, payload_state)
      SELECT 'evt_' || g, g, 'tool.request', 'OUT', 'act_' || g,
             CASE WHEN g % 2 = 1 THEN NULL WHEN g <= ${events / 2} THEN 'old_tool' ELSE 'new_tool' END,
             now(), '00000000-0000-4000-8000-000000000000', 'NONE'
      FROM generate_series(1, ${events}) AS g;
      SET session_replication_role = origin;
      ANALYZE ledger_event`);
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });

  /** EXPLAIN ANALYZE of the statement as a custom plan and as the generic plan a prepared statement may settle on. */
  const runs = (statement: { text: string; params: SqlParams | { values: unknown[] } }) => customAndGeneric(sql, 'EXPLAIN ANALYZE', statement);

  it('the trap is real here: ordered by position alone, the latest events of the old tool are found by filtering the newer half', async () => {
    const [custom] = await runs({
      text: `SELECT e.id FROM ledger_event e WHERE e.tool = $1 ORDER BY e.position DESC LIMIT $2::int`,
      params: { values: ['old_tool', 51] },
    });
    expect(custom, custom).toMatch(/Index Scan Backward using ledger_event_position_key/);
    expect(Number(/Rows Removed by Filter: (\d+)/.exec(custom!)?.[1]), custom).toBeGreaterThanOrEqual(events / 2);
  });

  it("a tool's latest events, newest first: down its own index, no row read and dropped", async () => {
    for (const text of await runs(eventStatement(plan, { filter: { tool: ['old_tool'] }, order: 'DESC', limit: 51 }))) {
      expect(text, text).toMatch(/Index Scan Backward using ledger_event_tool_position_idx/);
      expect(text, text).not.toMatch(/Rows Removed by Filter|Sort/);
      expect(text, text).toMatch(/actual time=[\d.]+\.\.[\d.]+ rows=51(\.00)? /);
    }
  });

  it("several tools' latest events: one walk per tool down its own index, merged, no row read and dropped", async () => {
    const statement = eventStatement(plan, { filter: { tool: ['old_tool', 'absent_tool', 'old_tool'] }, order: 'DESC', limit: 51 });
    for (const text of await runs(statement)) {
      expect(text, text).toMatch(/Index Scan Backward using ledger_event_tool_position_idx/);
      expect(text, text).not.toMatch(/Rows Removed by Filter: [1-9]|ledger_event_position_key/);
      expect(text, text).toMatch(/^Limit .*actual time=[\d.]+\.\.[\d.]+ rows=51(\.00)? /);
    }
  });

  it('several tools merged: the same events, in the same order, as the plain statement, either way and after a cursor', async () => {
    const idPlan = planEventSelect({ select: { id: true } }, ['position'])!;
    const ids = async (statement: { text: string; params: { values: unknown[] } }, read = (row: Record<string, unknown>) => row.id) =>
      (await sql.query<Record<string, unknown>>(statement.text, statement.params.values)).map(read);
    for (const [order, after] of [
      ['DESC', undefined],
      ['DESC', 30_001n],
      ['ASC', undefined],
      ['ASC', 19_990n],
    ] as const) {
      const spec = { filter: { tool: ['new_tool', 'old_tool', 'absent_tool'] }, order, limit: 25, ...(after !== undefined && { after }) };
      const merged = eventStatement(idPlan, spec);
      expect(merged.text).toMatch(/CROSS JOIN LATERAL/);
      const plain = {
        text: `SELECT e.id FROM ledger_event e WHERE e.tool = ANY($1::text[])${after === undefined ? '' : ` AND e.position ${order === 'ASC' ? '>' : '<'} $3::bigint`} ORDER BY e.position ${order} LIMIT $2::int`,
        params: { values: [spec.filter.tool, 25, ...(after === undefined ? [] : [after])] },
      };
      const expected = await ids(plain);
      expect(expected).toHaveLength(25);
      expect(await ids(merged, (row) => idPlan.read(row).id)).toEqual(expected);
    }
  });

  /** How PostgreSQL planned the statement prepared by name and run `times` (the choice is made per statement from its sixth run). */
  async function planChoices(statement: { text: string; params: { values: readonly unknown[] } }, times: number) {
    const name = `choice_${Math.random().toString(36).slice(2, 10)}`;
    await sql.exec(`PREPARE ${name} AS ${statement.text}`);
    try {
      for (let i = 0; i < times; i++) await sql.query(`EXECUTE ${name}(${statement.params.values.map(literal).join(', ')})`);
      const [row] = await sql.query<{ generic: string; custom: string }>(
        'SELECT generic_plans::text AS generic, custom_plans::text AS custom FROM pg_prepared_statements WHERE name = $1',
        [name],
      );
      return { generic: Number(row!.generic), custom: Number(row!.custom) };
    } finally {
      await sql.exec(`DEALLOCATE ${name}`);
    }
  }

  describe('tools → their first events, as a named statement', () => {
    const ahead = { take: 20, after: null, filter: {}, plan };
    // The tools' rows (their section is not checked here: loaded as a replica would be), with statistics.
    beforeAll(() =>
      sql.exec(`SET session_replication_role = replica;
        INSERT INTO directory_row (type, name, ordinal, version_tag)
        SELECT 'tool', t, n, repeat('0', 64) FROM unnest(ARRAY['old_tool', 'new_tool', 'idle_tool']) WITH ORDINALITY AS d(t, n);
        SET session_replication_role = origin;
        ANALYZE directory_row`),
    );
    afterAll(() => sql.exec('DELETE FROM directory_row; ANALYZE directory_row'));

    it('settles on the generic plan after five runs, for one tool and for several: not planned again for every read', async () => {
      // A page as one JSON array per tool, and (payload bytes asked: no JSON form) a row per event.
      const withBytes = { ...ahead, plan: planEventSelect({ select: { id: true, position: true, payload: { select: { data: true } } } }, ['position'])! };
      for (const read of [ahead, withBytes])
        for (const names of [['new_tool'], ['new_tool', 'old_tool', 'idle_tool']]) {
          const statement = toolsStatement(names, read);
          expect(statement.text.includes('json_agg'), statement.text).toBe(read === ahead);
          expect(await planChoices(statement, 8), statement.text).toEqual({ generic: 3, custom: 5 });
        }
    });

    it('the same read with the names as one array and the page size as a parameter is planned again on every run (the shape it avoids)', async () => {
      const statement = toolsStatement(['new_tool'], ahead);
      const arrayShaped = {
        text: statement.text.replace(/r\.name IN \(\$1\)/, 'r.name = ANY($1::text[])').replace(/LIMIT 21\b/, 'LIMIT $2::int'),
        params: { values: [['new_tool'], 21] },
      };
      expect(arrayShaped.text).not.toBe(statement.text);
      expect(await planChoices(arrayShaped, 8)).toEqual({ generic: 0, custom: 8 });
    });

    it("each tool's events read on their own (Tool.events) settle on the generic plan too", async () => {
      for (const names of [['new_tool'], ['new_tool', 'old_tool', 'idle_tool']]) {
        const statement = eventsForToolsStatement(names, 20, null, {}, planEventSelect({ select: { id: true } }, ['position', 'tool'])!);
        expect(await planChoices(statement, 8), statement.text).toEqual({ generic: 3, custom: 5 });
      }
    });

    it('no names: no row, and no statement that does not parse', async () => {
      const statement = toolsStatement([], ahead);
      expect(await sql.query(statement.text, [...statement.params.values])).toEqual([]);
    });
  });

  it("tools → each one's first events, oldest first: one walk per tool down its own index", async () => {
    const ahead = {
      take: 10,
      after: null,
      filter: {},
      plan: planEventSelect({ select: { id: true, payload: { select: { sha256: true } } } }, ['position', 'tool'])!,
    };
    for (const text of await runs(toolsStatement(['new_tool'], ahead))) {
      expect(text, text).toMatch(/Index Scan using ledger_event_tool_position_idx/);
      expect(text, text).not.toMatch(/Rows Removed by Filter: [1-9]/);
    }
  });
});
