// The append path on real databases: idempotence, concurrent collectors, and
// "all or nothing" proven with a failure the database itself raises mid-batch.
import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { databaseKinds } from '../helpers/database.ts';
import { batch, createTestLedger, defaultLimits, event, type TestLedger } from '../helpers/ledger.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

async function tableRows(sql: RawSql): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [table, order] of [
    ['ledger_event', 'position'],
    ['blob', 'sha256'],
    ['ledger_batch', 'id'],
    ['collector', 'id'],
  ] as const) {
    out[table] = (await sql.query<{ r: string }>(`SELECT row_to_json(t)::text AS r FROM ${table} t ORDER BY ${order}`)).map((x) => x.r);
  }
  return out;
}

async function listFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((d) => d.isFile()).map((d) => d.name);
}

describe.each(databaseKinds)('appending on %s', (kind) => {
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

  it('inserts the same batch sent three times once, and counts the rest as duplicates', async () => {
    const events = [
      event('same-1'),
      event('same-2', { payload: { state: 'COMPLETE', base64: Buffer.from([0, 1, 2, 255]).toString('base64') } }),
      event('same-3', { payload: { state: 'NONE' } }),
      event('same-4', { payload: { state: 'MISSING', size: 123 } }),
    ];
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await t.ledger.append(batch('collector-same', events, 10)));
    expect(results.map((r) => [r.received, r.inserted, r.duplicates, r.position])).toEqual([
      [4, 4, 0, 10n],
      [4, 0, 4, 10n],
      [4, 0, 4, 10n],
    ]);
    expect(new Set(results.map((r) => r.batchId)).size).toBe(3);
    const stored = await sql.query<{ id: string; batch_id: string }>(`SELECT id, batch_id::text FROM ledger_event WHERE id LIKE 'same-%' ORDER BY position`);
    expect(stored.map((e) => e.id)).toEqual(['same-1', 'same-2', 'same-3', 'same-4']);
    expect(new Set(stored.map((e) => e.batch_id))).toEqual(new Set([results[0]!.batchId]));
    const batches = await sql.query<{ received: number; inserted: number; duplicates: number; position: string }>(
      `SELECT received, inserted, duplicates, position::text FROM ledger_batch WHERE collector = 'collector-same' ORDER BY received_at, inserted DESC`,
    );
    expect(batches).toEqual([
      { received: 4, inserted: 4, duplicates: 0, position: '10' },
      { received: 4, inserted: 0, duplicates: 4, position: '10' },
      { received: 4, inserted: 0, duplicates: 4, position: '10' },
    ]);
    const blobs = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM blob WHERE sha256 IN (SELECT payload_sha256 FROM ledger_event WHERE id LIKE 'same-%')`,
    );
    expect(blobs[0]!.n).toBe(2);
  });

  it("never moves a collector's delivered position backwards, even for a later batch with a lower position", async () => {
    const position = async () => (await sql.query<{ p: string }>(`SELECT delivered_position::text AS p FROM collector WHERE id = 'collector-pos'`))[0]?.p;
    expect((await t.ledger.append(batch('collector-pos', [event('pos-1')], 20))).position).toBe(20n);
    const lower = await t.ledger.append(batch('collector-pos', [event('pos-2')], 5));
    expect([lower.inserted, lower.position]).toEqual([1, 20n]);
    expect(await position()).toBe('20');
    const none = await t.ledger.append(batch('collector-pos', [event('pos-3')]));
    expect([none.inserted, none.position]).toEqual([1, null]);
    expect(await position()).toBe('20');
    expect((await t.ledger.append(batch('collector-pos', [event('pos-1')], 21))).position).toBe(21n);
    expect(await position()).toBe('21');
    // The batch rows keep what each batch claimed; only the collector's row is monotonic.
    const claimed = await sql.query<{ position: string | null }>(
      `SELECT position::text FROM ledger_batch WHERE collector = 'collector-pos' ORDER BY received_at, position`,
    );
    expect(claimed.map((b) => b.position).sort()).toEqual(['20', '21', '5', null].sort());
  });

  it('counts an id repeated inside one batch as a duplicate and stores it once', async () => {
    const result = await t.ledger.append(batch('collector-repeat', [event('rep-1'), event('rep-1'), event('rep-2')]));
    expect([result.received, result.inserted, result.duplicates]).toEqual([3, 2, 1]);
    expect((await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_event WHERE id LIKE 'rep-%'`))[0]!.n).toBe(2);
  });

  it('stores each event exactly once when two collectors send overlapping batches concurrently', async () => {
    // A second writer on its own connections (PostgreSQL); PGlite has one connection by nature.
    let second: Database | undefined;
    let other = t.ledger;
    if (kind === 'postgres') {
      second = await openDatabase({ url: t.db.url! }, { poolSize: 10 });
      other = new Ledger(second.prisma, t.objects, new SecretRedactor({}), defaultLimits);
    }
    try {
      // Payloads repeat across both collectors, so blob inserts collide too.
      const ev = (i: number) => event(`ovl-${i}`, { payload: { state: 'COMPLETE', text: `{"shared":${i % 7},"pad":"${'x'.repeat(100)}"}` } });
      const batchesOf = (collector: string, from: number, to: number) => {
        const out = [];
        for (let start = from; start < to; start += 20) {
          out.push(
            batch(
              collector,
              Array.from({ length: 20 }, (_, k) => ev(start + k)),
              (start - from) / 20 + 1,
            ),
          );
        }
        return out;
      };
      const a = batchesOf('collector-a', 0, 200);
      const b = batchesOf('collector-b', 100, 300).reverse();
      const results = await Promise.all([...a.map((x) => t.ledger.append(x)), ...b.map((x) => other.append(x))]);
      expect(results.reduce((n, r) => n + r.inserted, 0)).toBe(300);
      expect(results.reduce((n, r) => n + r.duplicates, 0)).toBe(100);
      const rows = await sql.query<{ n: number; ids: number; positions: number; blobs: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT id)::int AS ids, count(DISTINCT position)::int AS positions,
           count(DISTINCT payload_sha256)::int AS blobs FROM ledger_event WHERE id LIKE 'ovl-%'`,
      );
      expect(rows[0]).toEqual({ n: 300, ids: 300, positions: 300, blobs: 7 });
      const accounted = await sql.query<{ inserted: number; duplicates: number }>(
        `SELECT sum(inserted)::int AS inserted, sum(duplicates)::int AS duplicates FROM ledger_batch WHERE collector IN ('collector-a', 'collector-b')`,
      );
      expect(accounted[0]).toEqual({ inserted: 300, duplicates: 100 });
      const delivered = await sql.query<{ id: string; p: string }>(
        `SELECT id, delivered_position::text AS p FROM collector WHERE id IN ('collector-a', 'collector-b') ORDER BY id`,
      );
      expect(delivered).toEqual([
        { id: 'collector-a', p: '10' },
        { id: 'collector-b', p: '10' },
      ]);
    } finally {
      await second?.close();
    }
  });

  it('stores inline bytes exactly when an object-stored blob sorts first in the batch', async () => {
    // Regression: a leading NULL in the bytea[] parameter made the driver send the inline bytes as base64 text.
    const inline = 'inline bytes beside a large blob';
    let large = randomBytes(270_000);
    while (sha(large) > sha(inline)) large = randomBytes(270_000);
    const result = await t.ledger.append(
      batch('collector-mixed', [
        event('mixed-inline', { payload: { state: 'COMPLETE', text: inline } }),
        event('mixed-large', { payload: { state: 'COMPLETE', base64: large.toString('base64') } }),
        event('mixed-empty', { payload: { state: 'COMPLETE', text: '' } }),
      ]),
    );
    expect(result.inserted).toBe(3);
    expect((await t.ledger.readBlob(sha(inline)))!.toString()).toBe(inline);
    expect((await t.ledger.readBlob(sha(large)))!.equals(large)).toBe(true);
    expect((await t.ledger.readBlob(sha('')))!.length).toBe(0);
    const stored = await sql.query<{ sha256: string; storage: string; has_data: boolean; object_key: string | null }>(
      `SELECT sha256, storage::text, data IS NOT NULL AS has_data, object_key FROM blob WHERE sha256 = ANY($1::text[]) ORDER BY sha256`,
      [[sha(inline), sha(large), sha('')]],
    );
    expect(stored.map((b) => [b.sha256, b.storage, b.has_data, b.object_key !== null])).toEqual(
      [
        [sha(large), 'OBJECT', false, true],
        [sha(inline), 'INLINE', true, false],
        [sha(''), 'INLINE', true, false],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
  });

  it('stores one blob for 1,000 events with one identical payload', async () => {
    const body = JSON.stringify({ tools: Array.from({ length: 40 }, (_, i) => ({ name: `TOOL_${i}`, description: 'lists things' })) });
    const events = Array.from({ length: 1000 }, (_, i) => event(`same-payload-${i}`, { payload: { state: 'COMPLETE', text: body } }));
    const first = await t.ledger.append(batch('collector-1000', events.slice(0, 600)));
    const second = await t.ledger.append(batch('collector-1000', events.slice(400)));
    expect([first.inserted, second.inserted, second.duplicates]).toEqual([600, 400, 200]);
    const rows = await sql.query<{ n: number; hashes: number; hash: string }>(
      `SELECT count(*)::int AS n, count(DISTINCT payload_sha256)::int AS hashes, min(payload_sha256) AS hash
       FROM ledger_event WHERE id LIKE 'same-payload-%'`,
    );
    expect(rows[0]).toEqual({ n: 1000, hashes: 1, hash: sha(body) });
    const blobs = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM blob WHERE sha256 = $1`, [sha(body)]);
    expect(blobs[0]!.n).toBe(1);
  });

  it('stores one object for many events with one identical large payload', async () => {
    const body = randomBytes(300_000).toString('base64');
    const before = (await listFiles(t.blobDir)).length;
    const events = Array.from({ length: 30 }, (_, i) => event(`same-large-${i}`, { payload: { state: 'COMPLETE', base64: body } }));
    await Promise.all([t.ledger.append(batch('collector-large', events.slice(0, 20))), t.ledger.append(batch('collector-large', events.slice(10)))]);
    const hash = sha(Buffer.from(body, 'base64'));
    expect((await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM blob WHERE sha256 = $1 AND storage = 'OBJECT'`, [hash]))[0]!.n).toBe(1);
    expect((await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_event WHERE payload_sha256 = $1`, [hash]))[0]!.n).toBe(30);
    const files = await listFiles(t.blobDir);
    expect(files.length - before).toBe(1);
    expect(files).toContain(hash);
  });

  describe('a failure raised by the database in the middle of a batch', () => {
    beforeAll(async () => {
      await sql.exec(`
        CREATE FUNCTION test_explode() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'injected failure for %', TG_TABLE_NAME USING ERRCODE = 'P0001';
        END;
        $$;
        CREATE TRIGGER test_explode_batch BEFORE INSERT ON ledger_batch
          FOR EACH ROW WHEN (NEW.collector = 'collector-explode') EXECUTE FUNCTION test_explode();
        CREATE TRIGGER test_explode_event BEFORE INSERT ON ledger_event
          FOR EACH ROW WHEN (NEW.id = 'poison') EXECUTE FUNCTION test_explode();
      `);
      await t.ledger.append(batch('collector-before', [event('before-1', { payload: { state: 'COMPLETE', text: 'recorded before' } })], 3));
    });

    const doomed = (tag: string) => {
      const inline = `fresh inline bytes ${tag} ${randomBytes(8).toString('hex')}`;
      const large = randomBytes(270_000);
      return {
        inline,
        large,
        events: [
          event(`doomed-${tag}-1`, { payload: { state: 'COMPLETE', text: inline } }),
          event(`doomed-${tag}-2`, { payload: { state: 'COMPLETE', base64: large.toString('base64') } }),
          event(`doomed-${tag}-3`, { payload: { state: 'COMPLETE', text: 'recorded before' } }),
          event('before-1', { payload: { state: 'COMPLETE', text: 'recorded before' } }),
        ],
      };
    };

    it.each([
      ['the batch row', 'collector-explode', (events: Record<string, unknown>[]) => events],
      ['the last event row', 'collector-poisoned', (events: Record<string, unknown>[]) => [...events, event('poison')]],
    ])('leaves no blob, event, batch or position of that batch when %s is refused', async (_what, collector, shape) => {
      const tag = collector.split('-')[1]!;
      const { inline, large, events } = doomed(tag);
      const before = await tableRows(sql);
      await expect(t.ledger.append(batch(collector, shape(events), 99))).rejects.toThrow(/injected failure/);
      expect(await tableRows(sql)).toEqual(before);
      const leftovers = await sql.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM blob WHERE sha256 = ANY($1::text[]))
              + (SELECT count(*) FROM ledger_event WHERE id LIKE $2)
              + (SELECT count(*) FROM ledger_batch WHERE collector = $3)
              + (SELECT count(*) FROM collector WHERE id = $3) AS n`,
        [[sha(inline), sha(large)], `doomed-${tag}-%`, collector],
      );
      expect(Number(leftovers[0]!.n)).toBe(0);

      // The same events from a healthy collector go in whole, and read back exactly.
      const retried = await t.ledger.append(batch(`collector-retry-${tag}`, events, 1));
      expect([retried.inserted, retried.duplicates]).toEqual([3, 1]);
      expect(await t.ledger.readBlob(sha(large))).toEqual(large);
      expect((await t.ledger.readBlob(sha(inline)))!.toString()).toBe(inline);
    });
  });
});
