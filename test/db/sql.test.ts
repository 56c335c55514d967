// The driver-level executor (db.sql): the same values in and the same types out on both
// databases, every value a bind parameter, and a transaction that rolls back on error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ByteaArray, TextArray } from '../../src/db/sql.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/database.ts';
import { batch, createTestLedger, event, type TestLedger } from '../helpers/ledger.ts';

describe.each(databaseKinds)('db.sql on %s', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    await db.sql.query('CREATE TABLE sql_probe (id int PRIMARY KEY, note text)');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('round-trips bytea with NUL bytes, unicode text, bigint and numeric exactly', async () => {
    const bytes = Uint8Array.from([0, 1, 0, 255, 0, 0x5c, 0x27]);
    const text = 'naïve ✓ 𝄞 \' " \\ $1 ; DROP TABLE sql_probe; --';
    const big = 9_007_199_254_740_993n; // past Number.MAX_SAFE_INTEGER
    const [row] = await db.sql.query<{ b: Uint8Array; t: string; n: bigint; small: bigint; d: string; len: number }>(
      'SELECT $1::bytea AS b, $2::text AS t, $3::int8 AS n, $4::int8 AS small, $5::numeric AS d, octet_length($1::bytea) AS len',
      [bytes, text, big, 7n, '0.0000001'],
    );
    expect(Buffer.from(row!.b).equals(Buffer.from(bytes))).toBe(true);
    expect(row!.len).toBe(7);
    expect(row!.t).toBe(text);
    expect(row!.n).toBe(big);
    expect(row!.small).toBe(7n);
    expect(row!.d).toBe('0.0000001');
  });

  it('passes arrays as PostgreSQL arrays, quotes, commas, braces and NULLs included', async () => {
    const texts = ['a,b', '{c}', 'd"e', 'f\\g', null, ''];
    const [row] = await db.sql.query<{ t: (string | null)[]; i: number[]; n: number; big: bigint[] }>(
      'SELECT $1::text[] AS t, $2::int[] AS i, cardinality($1::text[]) AS n, $3::int8[] AS big',
      [texts, [1, -2, 3], [1n, 9_007_199_254_740_993n]],
    );
    expect(row!.t).toEqual(texts);
    expect(row!.i).toEqual([1, -2, 3]);
    expect(row!.n).toBe(6);
    expect(row!.big).toEqual([1n, 9_007_199_254_740_993n]);
  });

  it.each([
    ['bytes, NULLs and empty values', [Uint8Array.from([0, 0x5c, 0x22, 0x7b, 0x2c, 255]), null, new Uint8Array(0), Buffer.from('{"a":"b,c"}'), null]],
    ['no elements at all', []],
    ['one 300 KiB element', [Buffer.alloc(300 * 1024, 7)]],
  ])('passes a ByteaArray as bytea[]: %s, exactly', async (_what, items) => {
    const [row] = await db.sql.query<{ b: (Uint8Array | null)[]; n: number; lengths: (number | null)[] }>(
      'SELECT $1::bytea[] AS b, cardinality($1::bytea[]) AS n, ARRAY(SELECT octet_length(x) FROM unnest($1::bytea[]) AS x) AS lengths',
      [new ByteaArray(items)],
    );
    expect(row!.n).toBe(items.length);
    expect(row!.lengths).toEqual(items.map((item) => (item === null ? null : item.length)));
    expect((row!.b ?? []).map((x) => (x === null ? null : Buffer.from(x).toString('hex')))).toEqual(
      items.map((item) => (item === null ? null : Buffer.from(item).toString('hex'))),
    );
  });

  it.each([
    ['quotes, commas, braces, backslashes, NULLs and empty strings', ['a,b', '{c}', 'd"e', 'f\\g', null, '', 'NULL', ' padded ']],
    ['multi-byte UTF-8', ['naïve ✓ 𝄞', 'ключ', '日本語', null]],
    ['long elements: 1,023 and 1,024 bytes, and 80,000 bytes of two-byte characters', ['a'.repeat(1023), 'b'.repeat(1024), 'é'.repeat(40_000)]],
    ['no elements at all', []],
    ['only NULLs', [null, null]],
  ])('passes a TextArray as text[]: %s, exactly', async (_what, items) => {
    const [row] = await db.sql.query<{ t: (string | null)[] | null; n: number; lengths: (number | null)[] }>(
      'SELECT $1::text[] AS t, cardinality($1::text[]) AS n, ARRAY(SELECT octet_length(x) FROM unnest($1::text[]) AS x) AS lengths',
      [new TextArray(items)],
    );
    expect(row!.n).toBe(items.length);
    expect(row!.t ?? []).toEqual(items);
    expect(row!.lengths).toEqual(items.map((item) => (item === null ? null : Buffer.byteLength(item))));
  });

  it('casts the elements of a TextArray in SQL, and a bad element fails with the value it could not read', async () => {
    const [row] = await db.sql.query<{ n: string[]; at: Date[] }>('SELECT $1::text[]::numeric[] AS n, $2::text[]::timestamptz[] AS at', [
      new TextArray(['0.000001', '12.5']),
      new TextArray(['2026-11-30T10:00:00.123Z']),
    ]);
    expect(row!.n.map(String)).toEqual(['0.000001', '12.5']);
    expect(new Date(row!.at[0]!).toISOString()).toBe('2026-11-30T10:00:00.123Z');
    await expect(db.sql.query('SELECT $1::text[]::int[]', [new TextArray(['7', 'seven'])])).rejects.toThrow(/invalid input syntax for type integer: "seven"/);
  });

  it('commits a transaction that resolves', async () => {
    const out = await db.sql.transaction(async (tx) => {
      await tx.query('INSERT INTO sql_probe VALUES ($1, $2)', [1, 'kept']);
      return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM sql_probe'))[0]!.n;
    });
    expect(out).toBe(1);
    expect(await db.sql.query('SELECT id, note FROM sql_probe ORDER BY id')).toEqual([{ id: 1, note: 'kept' }]);
  });

  it('rolls back every statement of a transaction that throws, and the connection stays usable', async () => {
    await expect(
      db.sql.transaction(async (tx) => {
        await tx.query('INSERT INTO sql_probe VALUES ($1, $2)', [2, 'rolled back']);
        await tx.query('INSERT INTO sql_probe VALUES ($1, $2)', [1, 'duplicate key']);
      }),
    ).rejects.toThrow(/duplicate key|unique/i);
    await expect(
      db.sql.transaction(async (tx) => {
        await tx.query('INSERT INTO sql_probe VALUES ($1, $2)', [3, 'rolled back too']);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await db.sql.query('SELECT id FROM sql_probe ORDER BY id')).toEqual([{ id: 1 }]);
    expect(await db.prisma.$queryRawUnsafe('SELECT count(*)::int AS n FROM sql_probe')).toEqual([{ n: 1 }]);
  });

  it('reports a statement error with its SQLSTATE', async () => {
    await expect(db.sql.query('SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
  });
});

// The ledger's append of a small batch made a custom plan look cheaper than the generic one, so
// PostgreSQL planned it anew on every run; statements sent with `genericPlan` run on sessions of
// their own that always use the generic plan, and every other statement keeps PostgreSQL's choice.
describe.runIf(databaseKinds.includes('postgres'))('statements run with genericPlan on PostgreSQL', () => {
  let ledger: TestLedger;
  beforeAll(async () => {
    ledger = await createTestLedger('postgres');
  });
  afterAll(async () => {
    await ledger?.stop();
  });
  const planCacheMode = async (options: { genericPlan?: boolean }) =>
    (await ledger.db.sql.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode', [], options))[0]!.plan_cache_mode;

  it('run on a session set to the generic plan, while the other statements keep auto', async () => {
    expect(await planCacheMode({ genericPlan: true })).toBe('force_generic_plan');
    expect(await planCacheMode({})).toBe('auto');
    await ledger.db.sql.transaction(async (tx) => {
      expect((await tx.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode', [], { genericPlan: true }))[0]!.plan_cache_mode).toBe('auto');
    });
  });

  it("use the ledger append's generic plan from its first small batch, never a custom one", async () => {
    for (let i = 0; i < 8; i++) {
      const result = await ledger.ledger.append(batch('generic-plan', [event(`gp-${i}-a`), event(`gp-${i}-b`)]));
      expect(result.inserted).toBe(2);
    }
    const plans = await ledger.db.sql.query<{ name: string; generic_plans: bigint; custom_plans: bigint }>(
      "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'ledger_append%'",
      [],
      { genericPlan: true },
    );
    expect(plans).toHaveLength(1);
    expect(plans[0]!.generic_plans).toBeGreaterThanOrEqual(8n);
    expect(plans[0]!.custom_plans).toBe(0n);
  });

  it('discard a session whose statement failed, and set the next one up the same way', async () => {
    const session = async () => (await ledger.db.sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [], { genericPlan: true }))[0]!.pid;
    const before = await session();
    expect(await session()).toBe(before); // one caller at a time reuses the session it had
    await expect(ledger.db.sql.query('SELECT 1/0', [], { genericPlan: true })).rejects.toMatchObject({ code: '22012' });
    expect(await session()).not.toBe(before);
    expect(await planCacheMode({ genericPlan: true })).toBe('force_generic_plan');
  });
});
