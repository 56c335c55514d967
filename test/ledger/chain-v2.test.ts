// Chain version 2 (event digests without the position, computed before the commit lock) on real
// databases: a history begun in version 1 and continued in version 2 verifies as one chain and
// recomputes by hand; a superuser's changes behind the triggers are named in either part.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger/ledger.ts';
import { verifyLedger } from '../../src/ledger/verify.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { recomputeByHand } from '../helpers/chain-by-hand.ts';
import { databaseKinds } from '../helpers/database.ts';
import { batch, createTestLedger, defaultLimits, event, type TestLedger } from '../helpers/ledger.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

describe.each(databaseKinds)('chain version 2 after version 1 on %s', (kind) => {
  let t: TestLedger;
  let v2: Ledger;
  let sql: RawSql;
  const positionOf = async (id: string) =>
    BigInt((await sql.query<{ position: string }>('SELECT position::text FROM ledger_event WHERE id = $1', [id]))[0]!.position);
  /** As a superuser: the triggers off for this session, then `script`. */
  const behindTriggers = (script: string) => sql.exec(`SET session_replication_role = replica; ${script}; SET session_replication_role = origin;`);

  beforeAll(async () => {
    // The same database written first by a version-1 writer, then by the current one (version 2).
    t = await createTestLedger(kind, { limits: { chain: 1 } });
    v2 = new Ledger(t.db.prisma, t.objects, new SecretRedactor({}), defaultLimits);
    sql = await rawSql(t.db);
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  it('continues a version-1 chain in version 2: one chain that verifies and recomputes by hand from the documented bytes', async () => {
    await t.ledger.append(batch('v1', [event('m1'), event('m2', { tool: 'ECHO', metadata: { b: 1 } })], 2));
    await t.ledger.append(batch('v1', [event('m3', { costUsd: '0.5', headers: { 'x-k': 'v' } })], 3));
    await v2.append(batch('v2', [event('m4', { costUsd: '1.25', inputTokens: 7, session: 'sé ✓' }), event('m5', { payload: { state: 'NONE' } })], 2));
    // Awkward values: NULL beside empty strings, an artifact, and a duplicate beside a new event.
    await v2.append(
      batch(
        'v2',
        [
          event('m6', { metadata: { empty: '', none: null }, payload: { state: 'ARTIFACT', artifactUri: 'file:///x', artifactSha256: 'a'.repeat(64) } }),
          event('m1'),
        ],
        4,
      ),
    );
    // Writers of both versions at once: the chain follows commit order whichever wrote.
    await Promise.all([
      ...[1, 2, 3].map((n) => v2.append(batch(`p${n}`, [event(`p${n}a`), event(`p${n}b`, { contract: { form: 'REST', sha256: 'b'.repeat(64) } })], 2))),
      t.ledger.append(batch('p0', [event('p0a')], 1)),
    ]);
    const byHand = await recomputeByHand(sql);
    expect(byHand.map((b) => b.version)).toEqual(['1', '1', '2', '2', ...byHand.slice(4).map((b) => b.version)]);
    expect(
      byHand
        .slice(4)
        .map((b) => b.version)
        .sort(),
    ).toEqual(['1', '2', '2', '2']);
    for (const b of byHand) expect(b.link).toBe(b.stored);
    const verified = await verifyLedger(t.db.sql);
    expect(verified).toMatchObject({ ok: true, batches: 8, events: 13, problemCount: 0, lastSeq: 8n });
    expect(verified.lastLink!.toString('hex')).toBe(byHand.at(-1)!.stored);
    const [sums] = await sql.query<{ sums: string[] }>('SELECT column_sums::text[] AS sums FROM ledger_batch WHERE chain_seq = 3');
    expect(sums!.sums.length).toBe(30);
  });

  it('names a changed column in a version-2 batch, and the first altered event first', async () => {
    await v2.append(batch('tamper', [event('u1'), event('u2', { tool: 'ECHO' }), event('u3')], 3));
    await behindTriggers("UPDATE ledger_event SET tool = 'TAMPERED' WHERE id = 'u2'; UPDATE ledger_event SET model = 'other' WHERE id = 'u3'");
    const after = await verifyLedger(t.db.sql);
    expect(after.ok).toBe(false);
    expect(after.problems).toEqual([
      expect.objectContaining({ kind: 'EVENT_CHANGED', eventId: 'u2', position: await positionOf('u2'), columns: ['tool', 'model'] }),
      expect.objectContaining({ kind: 'EVENT_CHANGED', eventId: 'u3', position: await positionOf('u3'), columns: ['tool', 'model'] }),
    ]);
    expect(after.problems[0]!.message).toMatch(/Event u2 at position \d+ no longer matches what batch \d+ \(.+\) appended: changed tool, model/);
    await behindTriggers("UPDATE ledger_event SET tool = 'ECHO' WHERE id = 'u2'; UPDATE ledger_event SET model = NULL WHERE id = 'u3'");
    expect(await verifyLedger(t.db.sql)).toMatchObject({ ok: true });
  });

  it('names the column of a change in a version-2 batch that had a duplicate (its sums were taken over the inserted events only)', async () => {
    await v2.append(batch('dup', [event('u1'), event('d1'), event('d2')], 3));
    const [row] = await sql.query<{ duplicates: number }>("SELECT b.duplicates FROM ledger_batch b JOIN ledger_event e ON e.batch_id = b.id WHERE e.id = 'd1'");
    expect(row!.duplicates).toBe(1);
    await behindTriggers("UPDATE ledger_event SET session = 'moved' WHERE id = 'd2'");
    const after = await verifyLedger(t.db.sql);
    expect(after.problems).toEqual([expect.objectContaining({ kind: 'EVENT_CHANGED', eventId: 'd2', columns: ['session'] })]);
    await behindTriggers("UPDATE ledger_event SET session = NULL WHERE id = 'd2'");
    expect(await verifyLedger(t.db.sql)).toMatchObject({ ok: true });
  });

  it('names two events of a version-2 batch whose positions were swapped, each with where the chain put it', async () => {
    await v2.append(batch('swap', [event('s1'), event('s2'), event('s3')], 3));
    const [p1, p3] = [await positionOf('s1'), await positionOf('s3')];
    await behindTriggers(
      `UPDATE ledger_event SET position = -1 WHERE id = 's1'; UPDATE ledger_event SET position = ${p1} WHERE id = 's3'; UPDATE ledger_event SET position = ${p3} WHERE id = 's1'`,
    );
    const after = await verifyLedger(t.db.sql);
    expect(after.problems).toEqual([
      expect.objectContaining({ kind: 'EVENT_CHANGED', eventId: 's3', position: p1, columns: ['position'] }),
      expect.objectContaining({ kind: 'EVENT_CHANGED', eventId: 's1', position: p3, columns: ['position'] }),
    ]);
    expect(after.problems[0]!.message).toMatch(new RegExp(`Event s3 at position ${p1} .*changed position \\(appended at ${p3}\\)`));
    await behindTriggers(
      `UPDATE ledger_event SET position = -1 WHERE id = 's3'; UPDATE ledger_event SET position = ${p1} WHERE id = 's1'; UPDATE ledger_event SET position = ${p3} WHERE id = 's3'`,
    );
    expect(await verifyLedger(t.db.sql)).toMatchObject({ ok: true });
  });

  it('names a deleted event of a version-2 batch and one of a version-1 batch before it, with the triggers disabled', async () => {
    const [m2, s2] = [await positionOf('m2'), await positionOf('s2')];
    await sql.exec(`ALTER TABLE ledger_event DISABLE TRIGGER ledger_event_append_only;
      DELETE FROM ledger_event WHERE id IN ('m2', 's2');
      ALTER TABLE ledger_event ENABLE TRIGGER ledger_event_append_only;`);
    const after = await verifyLedger(t.db.sql);
    expect(after.problems.map((p) => [p.kind, p.position])).toEqual([
      ['EVENT_MISSING', m2],
      ['EVENT_MISSING', s2],
    ]);
  });

  it('names a batch whose chain_version was changed, and one relabelled as the other version', async () => {
    const [last] = await sql.query<{ seq: string }>('SELECT max(chain_seq)::text AS seq FROM ledger_batch');
    await sql.exec(`ALTER TABLE ledger_batch DISABLE TRIGGER ledger_batch_append_only;
      UPDATE ledger_batch SET chain_version = 7 WHERE chain_seq = ${last!.seq};
      UPDATE ledger_batch SET chain_version = 1 WHERE chain_seq = 3;
      ALTER TABLE ledger_batch ENABLE TRIGGER ledger_batch_append_only;`);
    const after = await verifyLedger(t.db.sql);
    const batches = after.problems.filter((p) => p.kind === 'BATCH_CHANGED');
    expect(batches.map((p) => p.chainSeq)).toEqual([3n, BigInt(last!.seq)]);
    expect(batches[1]!.message).toMatch(/chain_version .* is 7, not a version of the chain \(1, 2\)/);
    // Relabelled, batch 3's events no longer hash as version 1 would have them.
    expect(after.problems.filter((p) => p.kind === 'EVENT_CHANGED' && p.chainSeq === 3n).map((p) => p.eventId)).toEqual(['m4', 'm5']);
  });
});
