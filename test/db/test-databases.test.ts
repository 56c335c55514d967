// The suite's embedded test databases are reused within a process (test/helpers/database-pool.ts): one given back
// must be the template again, a changed shape must never come back, and a handle kept after close() must not
// reach the next holder's database.
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, databaseKinds, refuseConnections, type DatabaseKind } from '../helpers/database.ts';
import { batch, createTestLedger, event } from '../helpers/ledger.ts';
import { poolCounts } from '../helpers/database-pool.ts';

/** What a fresh database from the template holds: every table's row count, the chain's row, the position sequence. */
async function contents(db: Awaited<ReturnType<typeof createTestDatabase>>) {
  const tables = await db.sql.query<{ name: string }>(`SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables ORDER BY 1`);
  const counts: Record<string, number> = {};
  for (const { name } of tables) counts[name] = (await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${name}`))[0]!.n;
  const chain = await db.sql.query('SELECT * FROM ledger_chain');
  const position = await db.sql.query('SELECT last_value::text, is_called FROM ledger_position_seq');
  const role = await db.sql.query('SELECT current_user::text AS role, current_setting($1) AS path', ['search_path']);
  return { counts, chain, position, role };
}

/** A fresh database's contents (that database given back), then a test ledger of the same kind with two events appended. */
async function freshThenWritten(kind: DatabaseKind) {
  const first = await createTestDatabase(kind);
  const fresh = await contents(first);
  await first.drop();
  const t = await createTestLedger(kind);
  await t.ledger.append(batch('c1', [event('e1'), event('e2', { kind: 'TOOL_RESULT', direction: 'OUT', actionId: 'act-e1' })]));
  return { fresh, t };
}

describe('embedded test databases reused within a process', () => {
  it('comes back as the template after rows, a sequence, the session and an open transaction were changed', async () => {
    const { fresh, t } = await freshThenWritten('pglite');
    await t.ledger.append(batch('c1', [event('e3')]));
    expect((await contents(t.db)).counts['public.ledger_event']).toBe(3);
    await t.db.sql.query('SET search_path = pg_catalog');
    await t.db.pglite!.exec('BEGIN; SELECT 1;');
    await t.stop();

    const before = poolCounts();
    const again = await createTestDatabase('pglite');
    try {
      expect(poolCounts().reused).toBe(before.reused + 1);
      expect(await contents(again)).toEqual(fresh);
    } finally {
      await again.drop();
    }
  });

  it('never gives back a database whose shape a test changed', async () => {
    const changed = await createTestDatabase('pglite');
    await changed.sql.query('CREATE TABLE left_behind (n int)');
    await changed.sql.query('ALTER TABLE ledger_event DISABLE TRIGGER ledger_event_no_truncate');
    const before = poolCounts();
    await changed.drop();
    expect(poolCounts().discarded).toBe(before.discarded + 1);
    const next = await createTestDatabase('pglite');
    try {
      expect(await next.sql.query(`SELECT 1 FROM pg_class WHERE relname = 'left_behind'`)).toEqual([]);
      expect(await next.sql.query(`SELECT tgenabled FROM pg_trigger WHERE tgname = 'ledger_event_no_truncate'`)).toEqual([{ tgenabled: 'O' }]);
    } finally {
      await next.drop();
    }
  });

  it('answers a handle kept after close() as a closed PGlite, while the next holder works on', async () => {
    const first = await createTestDatabase('pglite');
    const kept = first.pglite!;
    await first.drop();
    const next = await createTestDatabase('pglite');
    try {
      expect(kept.closed).toBe(true);
      await expect(kept.query('SELECT 1')).rejects.toThrow('PGlite is closed');
      await expect(first.sql.query('SELECT 1')).rejects.toThrow('PGlite is closed');
      expect(await next.sql.query<{ n: number }>('SELECT 1 AS n')).toEqual([{ n: 1 }]);
    } finally {
      await next.drop();
    }
  });

  it('keeps what a holder sets on its handle to that handle', async () => {
    const first = await createTestDatabase('pglite');
    const handle = first.pglite!;
    const original = handle.query;
    handle.query = (() => Promise.reject(new Error('wrapped'))) as typeof handle.query;
    await expect(handle.query('SELECT 1')).rejects.toThrow('wrapped');
    handle.query = original;
    await first.drop();
    const next = await createTestDatabase('pglite');
    try {
      expect(await next.pglite!.query('SELECT 1 AS n')).toMatchObject({ rows: [{ n: 1 }] });
    } finally {
      await next.drop();
    }
  });
});

describe.skipIf(!databaseKinds.includes('postgres'))('PostgreSQL test databases reused within a process', () => {
  it('comes back as the template after rows, a sequence and statistics changed, with another connection still open', async () => {
    const { fresh, t } = await freshThenWritten('postgres');
    await t.db.sql.query('ANALYZE ledger_event');
    const lingering = new pg.Client({ connectionString: t.db.url });
    lingering.on('error', () => {});
    await lingering.connect();
    await lingering.query('BEGIN');
    await lingering.query('SELECT count(*) FROM ledger_event');
    const before = poolCounts();
    await t.stop();

    const again = await createTestDatabase('postgres');
    try {
      expect(poolCounts().reused).toBe(before.reused + 1);
      expect(again.url).toBe(t.db.url);
      expect(await contents(again)).toEqual(fresh);
      const stats = await again.sql.query(`SELECT 1 FROM pg_statistic WHERE starelid = 'ledger_event'::regclass`);
      expect(stats).toEqual([]);
      await expect(lingering.query('SELECT 1')).rejects.toThrow();
    } finally {
      await again.drop();
      await lingering.end().catch(() => {});
    }
  });

  it('drops a database whose shape a test changed, or that refuses connections', async () => {
    const changed = await createTestDatabase('postgres');
    await changed.sql.query('CREATE TABLE left_behind (n int)');
    let before = poolCounts();
    await changed.drop();
    expect(poolCounts().discarded).toBe(before.discarded + 1);

    const refusing = await createTestDatabase('postgres');
    await refuseConnections(refusing.url!);
    before = poolCounts();
    await refusing.drop();
    expect(poolCounts().discarded).toBe(before.discarded + 1);

    const next = await createTestDatabase('postgres');
    try {
      expect(next.url).not.toBe(changed.url);
      expect(next.url).not.toBe(refusing.url);
      expect(await next.sql.query(`SELECT 1 FROM pg_class WHERE relname = 'left_behind'`)).toEqual([]);
    } finally {
      await next.drop();
    }
  });
});
