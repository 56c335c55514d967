// Hot lookups must be able to use their index. A char(64) key compared with a text[] parameter
// silently falls back to a scan of the whole table (the comparison becomes key::text), which made
// every ingested batch scan all blobs. With sequential scans priced out, a plan that still scans
// the table (or reads the whole index and filters) is one whose key cannot drive an index search.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usesOfSql } from '../../src/auth/authority.ts';
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
