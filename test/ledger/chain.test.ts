// The hash chain on real databases: every appended batch is linked under the commit lock, the link
// can be recomputed from the rows by anyone following docs/ARCHITECTURE.md (done here by hand, without
// src/ledger/chain.ts), and verifyLedger names each change a superuser makes behind the triggers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_FIELDS } from '../../src/ledger/chain.ts';
import { verifyLedger } from '../../src/ledger/verify.ts';
import { databaseKinds } from '../helpers/database.ts';
import { batch, createTestLedger, event, type TestLedger } from '../helpers/ledger.ts';
import { ms, recomputeByHand } from '../helpers/chain-by-hand.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

describe.each(databaseKinds)('the hash chain on %s', (kind) => {
  let t: TestLedger;
  let sql: RawSql;
  beforeAll(async () => {
    t = await createTestLedger(kind);
    sql = await rawSql(t.db);
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  it('links every batch in commit order, and the links recompute by hand from the documented bytes', async () => {
    await t.ledger.append(batch('c1', [event('a1'), event('a2', { tool: 'ECHO', metadata: { b: 1, a: [true, null, 'x'] } })], 2));
    // Awkward values: NULL next to empty strings, non-ASCII, a number the column normalises, a whole duplicate batch.
    await t.ledger.append(
      batch(
        'c1',
        [
          event('a3', {
            tool: 'ECHO',
            metadata: { empty: '', none: null },
            session: 'sé ssion ✓',
            costUsd: '0.5',
            inputTokens: 7,
            headers: { 'x-k': 'v' },
            payload: { state: 'NONE' },
          }),
          event('a4', { payload: { state: 'ARTIFACT', artifactUri: 'file:///x', artifactSha256: 'a'.repeat(64) } }),
        ],
        4,
      ),
    );
    await t.ledger.append(batch('c1', [event('a1')], 1));
    await Promise.all([1, 2, 3].map((n) => t.ledger.append(batch(`c${n + 1}`, [event(`p${n}a`), event(`p${n}b`)], 2))));
    const byHand = await recomputeByHand(sql);
    expect(byHand.map((b) => b.seq)).toEqual(['1', '2', '3', '4', '5', '6']);
    for (const b of byHand) expect(b.link).toBe(b.stored);
    const [head] = await sql.query<{ seq: string; link: Uint8Array }>('SELECT seq::text, link FROM ledger_chain');
    expect(head!.seq).toBe('6');
    expect(Buffer.from(head!.link).toString('hex')).toBe(byHand.at(-1)!.stored);

    const verified = await verifyLedger(t.db.sql);
    expect(verified).toMatchObject({ ok: true, batches: 6, events: 10, problemCount: 0, firstSeq: 1n, lastSeq: 6n });
    expect(verified.lastLink!.toString('hex')).toBe(byHand.at(-1)!.stored);
    // A range: the batches holding positions 3..4.
    const ranged = await verifyLedger(t.db.sql, { from: 3n, to: 4n });
    expect(ranged).toMatchObject({ ok: true, batches: 1, events: 2, firstSeq: 2n, lastSeq: 2n });
  });

  it("takes a timestamp's text with the cheaper float expression exactly as documented, for every millisecond timestamp", async () => {
    // The append statement reads epoch milliseconds through date_part (float8), cheaper than extract (numeric): for
    // timestamptz(3) values the two must give the same decimal, or batches chained before the change would no longer verify.
    const appendSql = EVENT_FIELDS.find((f) => f.column === 'occurred_at')!.sql.replaceAll('occurred_at', 't');
    const rows = await sql.query<{ t: string; fast: string; documented: string }>(
      `SELECT t::text, ${appendSql} AS fast, ${ms('t')} AS documented FROM (
         SELECT unnest(ARRAY['0001-01-01 00:00:00.001+00', '1969-12-31 23:59:59.999+00', '1970-01-01 00:00:00+00',
           '1970-01-01 00:00:00.001+00', '2026-12-01 02:00:00.5+00', '9999-12-31 23:59:59.999+00']::timestamptz(3)[]) AS t
         UNION ALL
         SELECT (timestamptz '1900-01-01 00:00:00+00' + make_interval(secs => (n * 7919.123457)::numeric(20,3)::float8))::timestamptz(3)
         FROM generate_series(1, 20000) AS n
       ) v`,
    );
    expect(rows.length).toBe(20_006);
    expect(rows.filter((r) => r.fast !== r.documented)).toEqual([]);
  });

  it('stays one unbroken chain under concurrent writers (the link follows commit order)', async () => {
    await Promise.all(
      [0, 1, 2, 3].map(async (w) => {
        for (let b = 0; b < 10; b++) await t.ledger.append(batch(`w${w}`, [event(`w${w}-${b}-1`), event(`w${w}-${b}-2`)], b + 1));
      }),
    );
    const verified = await verifyLedger(t.db.sql);
    expect(verified).toMatchObject({ ok: true, batches: 46, events: 90 });
    for (const b of await recomputeByHand(sql)) expect(b.link).toBe(b.stored);
  });

  it('verifies across event pages (5,000 a page, the next read while one is hashed) and names a change on a later page', async () => {
    for (let b = 0; b < 12; b++) {
      await t.ledger.append(
        batch(
          'pages',
          Array.from({ length: 500 }, (_, i) => event(`pg-${b}-${i}`, { payload: { state: 'NONE' } })),
          (b + 1) * 500,
        ),
      );
    }
    expect(await verifyLedger(t.db.sql)).toMatchObject({ ok: true, problemCount: 0 });
    const [late] = await sql.query<{ position: string }>("SELECT position::text FROM ledger_event WHERE id = 'pg-11-499'");
    await sql.exec(`SET session_replication_role = replica;
      UPDATE ledger_event SET session = 'rewritten' WHERE id = 'pg-11-499';
      SET session_replication_role = origin;`);
    const after = await verifyLedger(t.db.sql);
    expect(after.problems).toEqual([
      expect.objectContaining({ kind: 'EVENT_CHANGED', eventId: 'pg-11-499', position: BigInt(late!.position), columns: ['session'] }),
    ]);
    await sql.exec(`SET session_replication_role = replica;
      UPDATE ledger_event SET session = NULL WHERE id = 'pg-11-499';
      SET session_replication_role = origin;`);
    expect(await verifyLedger(t.db.sql)).toMatchObject({ ok: true });
  });

  it('names a timestamp set to infinity by hand, as it names any changed column', async () => {
    // One event a batch: the batch's column sums name the column of each.
    await t.ledger.append(batch('forever', [event('inf-1')], 1));
    await t.ledger.append(batch('forever', [event('inf-2')], 2));
    const [kept] = await sql.query<{ occurred: string; recorded: string }>(
      "SELECT (SELECT occurred_at::text FROM ledger_event WHERE id = 'inf-1') AS occurred, (SELECT recorded_at::text FROM ledger_event WHERE id = 'inf-2') AS recorded",
    );
    await sql.exec(`SET session_replication_role = replica;
      UPDATE ledger_event SET occurred_at = 'infinity' WHERE id = 'inf-1';
      UPDATE ledger_event SET recorded_at = '-infinity' WHERE id = 'inf-2';
      SET session_replication_role = origin;`);
    const after = await verifyLedger(t.db.sql);
    expect(after.problems.map((p) => [p.kind, p.eventId, p.columns])).toEqual([
      ['EVENT_CHANGED', 'inf-1', ['occurred_at']],
      ['EVENT_CHANGED', 'inf-2', ['recorded_at']],
    ]);
    await sql.exec(`SET session_replication_role = replica;
      UPDATE ledger_event SET occurred_at = '${kept!.occurred}' WHERE id = 'inf-1';
      UPDATE ledger_event SET recorded_at = '${kept!.recorded}' WHERE id = 'inf-2';
      SET session_replication_role = origin;`);
    expect(await verifyLedger(t.db.sql)).toMatchObject({ ok: true });
  });

  it('refuses to move the head other than one batch forward, and to delete it or a collector', async () => {
    expect((await sql.refused('UPDATE ledger_chain SET seq = seq + 2')).message).toMatch(/one batch forward/);
    expect((await sql.refused('UPDATE ledger_chain SET seq = seq - 1')).message).toMatch(/one batch forward/);
    expect((await sql.refused('DELETE FROM ledger_chain')).message).toMatch(/append-only/);
    expect((await sql.refused("DELETE FROM collector WHERE id = 'c1'")).message).toMatch(/collector is append-only: DELETE refused/);
    expect((await sql.refused('TRUNCATE collector')).message).toMatch(/append-only/);
    expect((await verifyLedger(t.db.sql)).ok).toBe(true);
  });

  it('names a changed column, a deleted event, a rewound collector, a changed batch row and a deleted last batch', async () => {
    await t.ledger.append(batch('tamper', [event('t1', { tool: 'ECHO' }), event('t2'), event('t3')], 3));
    await t.ledger.append(batch('tamper', [event('t4'), event('t5')], 5));
    const positions = Object.fromEntries(
      (await sql.query<{ id: string; position: string }>("SELECT id, position::text FROM ledger_event WHERE id LIKE 't%'")).map((r) => [r.id, r.position]),
    );
    // As a superuser: the triggers off for this session, then rewrite history.
    await sql.exec(`SET session_replication_role = replica;
      UPDATE ledger_event SET tool = 'TAMPERED' WHERE id = 't1';
      DELETE FROM ledger_event WHERE id = 't4';
      DELETE FROM collector WHERE id = 'tamper';
      INSERT INTO collector (id, delivered_position) VALUES ('tamper', 1);
      SET session_replication_role = origin;`);
    const after = await verifyLedger(t.db.sql);
    expect(after.ok).toBe(false);
    const byKind = (k: string) => after.problems.filter((p) => p.kind === k);
    expect(byKind('EVENT_CHANGED')).toEqual([expect.objectContaining({ eventId: 't1', position: BigInt(positions.t1!), columns: ['tool'] })]);
    expect(byKind('EVENT_MISSING')).toEqual([expect.objectContaining({ position: BigInt(positions.t4!) })]);
    expect(byKind('COLLECTOR_REWOUND')).toEqual([expect.objectContaining({ collector: 'tamper' })]);
    expect(byKind('COLLECTOR_REWOUND')[0]!.message).toMatch(/at 1, but its batches delivered up to 5/);
    expect(after.problems[0]).toMatchObject({ kind: 'EVENT_CHANGED', eventId: 't1' });
    expect(after.problemCount).toBe(3);

    await sql.exec(`ALTER TABLE ledger_batch DISABLE TRIGGER ledger_batch_append_only;
      UPDATE ledger_batch SET collector = 'elsewhere' WHERE chain_seq = 1;
      DELETE FROM ledger_batch WHERE chain_seq = (SELECT max(chain_seq) FROM ledger_batch);
      ALTER TABLE ledger_batch ENABLE TRIGGER ledger_batch_append_only;`);
    const later = await verifyLedger(t.db.sql);
    const kinds = later.problems.map((p) => p.kind);
    expect(kinds).toContain('BATCH_CHANGED');
    expect(later.problems.find((p) => p.kind === 'BATCH_CHANGED')).toMatchObject({ chainSeq: 1n });
    expect(later.problems.find((p) => p.kind === 'HEAD_MISMATCH')!.message).toMatch(/batches at the end were deleted/);
    // The deleted batch's remaining event is now in no chained batch.
    expect(later.problems.filter((p) => p.kind === 'EVENT_UNCHAINED').map((p) => p.eventId)).toEqual(['t5']);
  });
});
