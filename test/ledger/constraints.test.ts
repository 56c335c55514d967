// What the database itself refuses, whatever client asks: inconsistent payload
// claims (CHECK) and any change to recorded events or blobs (triggers).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/database.ts';
import { batch, createTestLedger, event, type TestLedger } from '../helpers/ledger.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

type Row = {
  state: string;
  sha256?: string | null;
  size?: number | null;
  encoding?: string | null;
  artifactUri?: string | null;
  artifactSha256?: string | null;
};

describe.each(databaseKinds)('the database refuses on %s', (kind) => {
  let t: TestLedger;
  let sql: RawSql;
  let batchId: string;
  const body = '{"recorded":true}';
  let n = 0;

  const insertEvent = (row: Row) =>
    sql.query(
      `INSERT INTO ledger_event (id, position, kind, direction, action_id, occurred_at, batch_id, payload_state,
         payload_sha256, payload_size, payload_encoding, artifact_uri, artifact_sha256)
       VALUES ($1, nextval('ledger_position_seq'), 'RAW', 'IN', 'raw-action', now(), $2::uuid, $3::"PayloadState",
         $4, $5, $6::"PayloadEncoding", $7, $8)`,
      [`raw-${++n}`, batchId, row.state, row.sha256 ?? null, row.size ?? null, row.encoding ?? null, row.artifactUri ?? null, row.artifactSha256 ?? null],
    );

  beforeAll(async () => {
    t = await createTestLedger(kind);
    sql = await rawSql(t.db);
    const result = await t.ledger.append(batch('collector-raw', [event('kept-1', { payload: { state: 'COMPLETE', text: body } }), event('kept-2')], 1));
    batchId = result.batchId;
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  it.each<[string, Row]>([
    ['COMPLETE without a hash', { state: 'COMPLETE', size: 17, encoding: 'UTF8' }],
    ['COMPLETE without a size', { state: 'COMPLETE', sha256: sha(body), encoding: 'UTF8' }],
    ['COMPLETE without an encoding', { state: 'COMPLETE', sha256: sha(body), size: 17 }],
    ['PARTIAL without a hash', { state: 'PARTIAL', size: 3, encoding: 'BINARY' }],
    ['NONE with a hash', { state: 'NONE', sha256: sha(body), size: 17, encoding: 'UTF8' }],
    ['MISSING with a hash', { state: 'MISSING', sha256: sha(body), size: 17 }],
    ['ARTIFACT with a hash', { state: 'ARTIFACT', sha256: sha(body), size: 17, encoding: 'UTF8', artifactUri: 'file:///x' }],
    ['ARTIFACT without a URI', { state: 'ARTIFACT' }],
    ['NONE with an artifact URI', { state: 'NONE', artifactUri: 'file:///x' }],
    ['MISSING with an artifact hash', { state: 'MISSING', size: 9, artifactSha256: sha('x') }],
  ])('an event row claiming %s (CHECK)', async (_what, row) => {
    const refused = await insertEvent(row).then(
      () => null,
      (e: { code?: string; constraint?: string; message: string }) => e,
    );
    expect(refused).toMatchObject({ code: '23514', constraint: 'ledger_event_payload_state_check' });
  });

  it('an event row whose hash is not 64 lowercase hex digits (foreign key: no blob can have that name)', async () => {
    const refused = await insertEvent({ state: 'COMPLETE', sha256: sha(body).toUpperCase(), size: 17, encoding: 'UTF8' }).catch((e) => e);
    expect(refused).toMatchObject({ code: '23503', constraint: 'ledger_event_payload_sha256_fkey' });
  });

  it('an event row pointing at a blob that does not exist (foreign key)', async () => {
    const refused = await insertEvent({ state: 'COMPLETE', sha256: sha('never stored'), size: 12, encoding: 'UTF8' }).catch((e) => e);
    expect(refused).toMatchObject({ code: '23503' });
  });

  it('an event row pointing at a batch that was never recorded (foreign key)', async () => {
    const refused = await sql
      .query(
        `INSERT INTO ledger_event (id, position, kind, direction, action_id, occurred_at, batch_id, payload_state)
         VALUES ('raw-orphan', nextval('ledger_position_seq'), 'RAW', 'IN', 'raw-action', now(), gen_random_uuid(), 'NONE')`,
      )
      .catch((e) => e);
    expect(refused).toMatchObject({ code: '23503', constraint: 'ledger_event_batch_id_fkey' });
    expect(refused.message).toMatch(/^ledger_event raw-orphan references batch [0-9a-f-]{36}, which is not recorded$/);
  });

  it('one bad row refuses the whole statement: the good rows beside it are not kept', async () => {
    const refused = await sql
      .query(
        `INSERT INTO ledger_event (id, position, kind, direction, action_id, occurred_at, batch_id, payload_state, payload_sha256, payload_size, payload_encoding)
         SELECT 'raw-multi-' || n, nextval('ledger_position_seq'), 'RAW', 'IN', 'raw-action', now(), $1::uuid, 'COMPLETE',
           CASE WHEN n = 3 THEN $3 ELSE $2 END, 17, 'UTF8'
         FROM generate_series(1, 5) AS n`,
        [batchId, sha(body), sha('never stored either')],
      )
      .catch((e) => e);
    expect(refused).toMatchObject({ code: '23503', constraint: 'ledger_event_payload_sha256_fkey' });
    expect(refused.message).toBe(`ledger_event raw-multi-3 references blob ${sha('never stored either')}, which is not stored`);
    expect(await sql.query(`SELECT id FROM ledger_event WHERE id LIKE 'raw-multi-%'`)).toEqual([]);
  });

  // Each distinct blob and batch is looked up once per statement: rows that share a reference are
  // checked together, and a statement naming a recorded and an unrecorded batch is still refused.
  it('rows sharing a missing blob, or a statement naming one recorded batch and one that is not: refused, naming the first row (by id)', async () => {
    const sharedBlob = await sql
      .query(
        `INSERT INTO ledger_event (id, position, kind, direction, action_id, occurred_at, batch_id, payload_state, payload_sha256, payload_size, payload_encoding)
         SELECT 'raw-shared-' || n, nextval('ledger_position_seq'), 'RAW', 'IN', 'raw-action', now(), $1::uuid, 'COMPLETE',
           CASE WHEN n % 2 = 0 THEN $3 ELSE $2 END, 17, 'UTF8'
         FROM generate_series(5, 2, -1) AS n`,
        [batchId, sha(body), sha('shared and never stored')],
      )
      .catch((e) => e);
    expect(sharedBlob).toMatchObject({ code: '23503', constraint: 'ledger_event_payload_sha256_fkey' });
    expect(sharedBlob.message).toBe(`ledger_event raw-shared-2 references blob ${sha('shared and never stored')}, which is not stored`);
    const twoBatches = await sql
      .query(
        `INSERT INTO ledger_event (id, position, kind, direction, action_id, occurred_at, batch_id, payload_state)
         SELECT 'raw-two-' || n, nextval('ledger_position_seq'), 'RAW', 'IN', 'raw-action', now(),
           CASE WHEN n = 3 THEN '00000000-0000-4000-8000-000000000003'::uuid ELSE $1::uuid END, 'NONE'
         FROM generate_series(1, 4) AS n`,
        [batchId],
      )
      .catch((e) => e);
    expect(twoBatches).toMatchObject({ code: '23503', constraint: 'ledger_event_batch_id_fkey' });
    expect(twoBatches.message).toBe('ledger_event raw-two-3 references batch 00000000-0000-4000-8000-000000000003, which is not recorded');
    expect(await sql.query(`SELECT id FROM ledger_event WHERE id LIKE 'raw-shared-%' OR id LIKE 'raw-two-%'`)).toEqual([]);
  });

  it('but accepts every consistent row', async () => {
    for (const row of [
      { state: 'COMPLETE', sha256: sha(body), size: 17, encoding: 'UTF8' },
      { state: 'PARTIAL', sha256: sha(body), size: 17, encoding: 'UTF8' },
      { state: 'NONE' },
      { state: 'MISSING', size: 9_000_000 },
      { state: 'ARTIFACT', artifactUri: 'file:///deploy/app.js' },
      { state: 'ARTIFACT', artifactUri: 'file:///deploy/app.js', artifactSha256: sha('app') },
    ]) {
      await insertEvent(row);
    }
  });

  it.each([
    ['INLINE without data', `'INLINE', 'identity', 0, NULL, NULL`, 'blob_storage_check'],
    ['INLINE with an object key', `'INLINE', 'identity', 1, '\\x61'::bytea, 'sha256/x'`, 'blob_storage_check'],
    ['OBJECT with inline data', `'OBJECT', 'identity', 1, '\\x61'::bytea, 'sha256/x'`, 'blob_storage_check'],
    ['OBJECT without a key', `'OBJECT', 'identity', 1, NULL, NULL`, 'blob_storage_check'],
    ['a negative stored size', `'INLINE', 'identity', -1, '\\x61'::bytea, NULL`, 'blob_size_check'],
  ])('a blob row with %s (CHECK)', async (_what, values, constraint) => {
    const refused = await sql.refused(
      `INSERT INTO blob (sha256, size, encoding, storage, codec, stored_size, data, object_key)
       VALUES ($1, 1, 'BINARY', ${values})`,
      [sha(`blob ${constraint} ${values}`)],
    );
    expect(refused).toMatchObject({ code: '23514', constraint });
  });

  it.each([
    ['uppercase hex', sha('upper').toUpperCase()],
    ['other letters', 'Z'.repeat(64)],
    ['too short (char(64) pads it with spaces)', sha('short').slice(0, 63)],
    ['hex with a space inside', `${sha('space').slice(0, 31)} ${sha('space').slice(32)}`],
  ])('a blob row keyed by something other than a lowercase SHA-256: %s (CHECK)', async (_what, key) => {
    const refused = await sql.refused(
      `INSERT INTO blob (sha256, size, encoding, storage, codec, stored_size, data) VALUES ($1, 1, 'BINARY', 'INLINE', 'identity', 1, '\\x61'::bytea)`,
      [key],
    );
    expect(refused).toMatchObject({ code: '23514', constraint: 'blob_sha256_hex_check' });
  });

  describe('any change to what was recorded', () => {
    let before: { events: string[]; blobs: string[]; batches: string[] };
    const snapshot = async () => ({
      events: (await sql.query<{ r: string }>(`SELECT row_to_json(e)::text AS r FROM ledger_event e ORDER BY position`)).map((x) => x.r),
      blobs: (await sql.query<{ r: string }>(`SELECT row_to_json(b)::text AS r FROM blob b ORDER BY sha256`)).map((x) => x.r),
      batches: (await sql.query<{ r: string }>(`SELECT row_to_json(l)::text AS r FROM ledger_batch l ORDER BY id`)).map((x) => x.r),
    });
    beforeAll(async () => {
      before = await snapshot();
    });

    it.each([
      ['UPDATE', 'ledger_event', `UPDATE ledger_event SET tool = 'rewritten' WHERE id = 'kept-1'`],
      ['UPDATE', 'ledger_event', `UPDATE ledger_event SET payload_state = 'NONE', payload_sha256 = NULL`],
      ['DELETE', 'ledger_event', `DELETE FROM ledger_event WHERE id = 'kept-2'`],
      ['DELETE', 'ledger_event', `DELETE FROM ledger_event`],
      ['TRUNCATE', 'ledger_event', `TRUNCATE ledger_event`],
      ['UPDATE', 'blob', `UPDATE blob SET data = '\\x00'::bytea`],
      ['DELETE', 'blob', `DELETE FROM blob`],
      ['TRUNCATE', 'blob', `TRUNCATE blob, ledger_event`],
      ['TRUNCATE', 'blob', `TRUNCATE blob CASCADE`],
      ['UPDATE', 'ledger_batch', `UPDATE ledger_batch SET inserted = 0`],
      ['DELETE', 'ledger_batch', `DELETE FROM ledger_batch`],
      ['TRUNCATE', 'ledger_batch', `TRUNCATE ledger_batch`],
    ])('%s on %s is refused with the trigger error', async (op, table, statement) => {
      const refused = await sql.refused(statement);
      // A multi-table TRUNCATE is refused by whichever table's trigger fires first.
      const tables = statement.startsWith('TRUNCATE blob') ? '(blob|ledger_event)' : table;
      expect(refused.message).toMatch(new RegExp(`^${tables} is append-only: ${op} refused$`));
      expect(refused).toMatchObject({ code: '42501', hint: 'The ledger only grows; append a new event instead.' });
      expect(await snapshot()).toEqual(before);
    });

    it('TRUNCATE of the blob table alone is refused (its events still reference it)', async () => {
      const refused = await sql.refused(`TRUNCATE blob`);
      expect(refused.code).toMatch(/^(42501|0A000)$/);
      expect(await snapshot()).toEqual(before);
    });

    it("moving a collector's delivered position backwards is refused", async () => {
      const refused = await sql.refused(`UPDATE collector SET delivered_position = 0 WHERE id = 'collector-raw'`);
      expect(refused).toMatchObject({ code: '23514' });
      expect(refused.message).toMatch(/collector collector-raw delivered position cannot move backwards \(from 1 to 0\)/);
    });
  });
});
