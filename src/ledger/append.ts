// The append statement: one batch as one SQL statement (blobs, events, the batch row with its chain
// link, the collector's position), in one of the chain's versions (src/ledger/chain.ts) or unchained.
import { TextArray, ByteaArray, type SqlQueryable } from '../db/sql.ts';
import type { PayloadState } from './input.ts';
import type { PayloadEncoding } from './payload.ts';
import { type ChainVersion, chainCtesSqlV1, chainCtesSqlV2, chainPreLockSqlV2, columnSumsSqlV2, returningTextsSql } from './chain.ts';

/** How batches are appended: chained in a version, or (only to measure what the chain costs) not at all. */
export type ChainMode = ChainVersion | 'off';

/** One event as the columns append writes: built once per event as a flat literal, so it has one shape. */
export type PreparedEvent = {
  id: string;
  kind: string;
  direction: string;
  actionId: string;
  tool: string | null;
  session: string | null;
  turn: string | null;
  task: string | null;
  agent: string | null;
  model: string | null;
  status: string | null;
  method: string | null;
  url: string | null;
  headers: string | null;
  costUsd: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  occurredAt: Date;
  state: PayloadState;
  sha256: string | null;
  size: bigint | null;
  encoding: PayloadEncoding | null;
  artifactUri: string | null;
  artifactSha256: string | null;
  redacted: string;
  metadata: string | null;
  contractForm: string | null;
  contractSha256: string | null;
};

export type PreparedBlob = { sha256: string; bytes: Buffer; encoding: PayloadEncoding };

/** What the batch row needs of the batch itself. */
export type BatchHead = { collector: string; position: bigint | null; received: number; bytes: number };

export type BlobRow = {
  sha256: string;
  size: number;
  encoding: PayloadEncoding;
  storage: 'INLINE' | 'OBJECT';
  codec: string;
  data: Buffer | null;
  objectKey: string | null;
  storedSize: number;
};

/** A flat literal (one shape), holding the data to store but not the original bytes. */
export const blobRow = (
  blob: PreparedBlob,
  storage: BlobRow['storage'],
  codec: string,
  data: Buffer | null,
  objectKey: string | null,
  storedSize: number,
): BlobRow => ({
  sha256: blob.sha256,
  size: blob.bytes.length,
  encoding: blob.encoding,
  storage,
  codec,
  data,
  objectKey,
  storedSize,
});

/** Transaction-scoped advisory lock that orders commits; its key is an arbitrary constant. */
const COMMIT_LOCK_KEY = 7_431_280_911;

/** One element of a text[] parameter: strings as they are, numbers and bigints in decimal, Dates in ISO 8601. */
const asText = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : String(v);

/** The batch row's received_at and its events' recorded_at, named once: the chain hashes exactly the value stored. */
const RECEIVED_AT = 'now()::timestamptz(3)';

const EVENT_COLUMNS = `id, position, kind, direction, action_id, tool, session, turn, task, agent, model, status,
         method, url, headers, cost_usd, input_tokens, output_tokens, occurred_at, batch_id, payload_state, payload_sha256,
         payload_size, payload_encoding, artifact_uri, artifact_sha256, redacted_secrets, metadata, contract_form, contract_sha256`;

/** The input's text columns cast to what ledger_event stores (numeric(20,10), timestamptz(3), char(64)): no cast is left for the INSERT. */
const TYPED_SQL = `SELECT ord, id, kind, direction::"Direction" AS direction, action_id, tool, session, turn, task, agent, model, status,
         method, url, headers::jsonb AS headers, cost_usd::numeric(20,10) AS cost_usd, input_tokens::int AS input_tokens,
         output_tokens::int AS output_tokens, occurred_at::timestamptz(3) AS occurred_at, ${RECEIVED_AT} AS recorded_at,
         $27::uuid AS batch_id, payload_state::"PayloadState" AS payload_state, payload_sha256::char(64) AS payload_sha256,
         payload_size::bigint AS payload_size, payload_encoding::"PayloadEncoding" AS payload_encoding, artifact_uri,
         artifact_sha256::char(64) AS artifact_sha256, coalesce(string_to_array(nullif(redacted_secrets, ''), ','), '{}') AS redacted_secrets,
         metadata::jsonb AS metadata, contract_form, contract_sha256::char(64) AS contract_sha256
       FROM input`;

/**
 * The whole batch as one statement. The blobs are written first, outside the commit lock: they carry
 * no position, and while one batch holds the lock the others store their blobs on the other core.
 * The commit lock is a MATERIALIZED CTE that reads every blob row first (so it is taken after them),
 * joined to the event rows and to the final SELECT, so it is taken before the first nextval and held
 * until commit: positions become visible in commit order. The events' columns are cast to their
 * stored types before the lock too (`typed`, which the lock's CTE reads first): parsing jsonb and
 * numerics is no work for the serialized section. Chained, the batch row also takes the next link of
 * the hash chain (src/ledger/chain.ts). Version 2 computes every event's digest before the lock as
 * well (`digested`, summed in `chain_pre`), so under it only the positions are joined to the digests
 * and one SHA-256 taken for the batch; version 1 hashes the rows as stored, under the lock.
 *
 * No deadlock: a blob insert may wait for another transaction's uncommitted blob of the same hash,
 * but only before taking the lock; under the lock a batch writes only rows no other open
 * transaction can hold (new events, its batch row, its collector, the chain head), and its events
 * reference blobs that are committed or its own. Blobs go in hash order, so two batches never wait on each other.
 */
const appendSql = (chain: ChainMode) => `WITH stored_blobs AS (
       INSERT INTO blob (sha256, size, encoding, storage, codec, stored_size, data, object_key)
       SELECT b.sha256, b.size::bigint, b.encoding::"PayloadEncoding", b.storage::"BlobStorage", b.codec, b.stored_size::bigint,
         b.data, b.object_key
       FROM unnest($34::text[], $35::text[], $36::text[], $37::text[], $38::text[], $39::text[], $40::bytea[], $41::text[])
         WITH ORDINALITY AS b(sha256, size, encoding, storage, codec, stored_size, data, object_key, ord)
       ORDER BY ord
       ON CONFLICT (sha256) DO NOTHING
       RETURNING 1
     ),
     input AS (
       SELECT * FROM unnest(
         $1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
         $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[],
         $18::text[], $19::text[], $20::text[], $21::text[], $22::text[], $23::text[], $24::text[], $25::text[], $26::text[],
         $32::text[], $33::text[]
       ) WITH ORDINALITY AS e(id, kind, direction, action_id, tool, session, turn, task, agent, model, status, method, url,
         headers, cost_usd, input_tokens, output_tokens, occurred_at, payload_state, payload_sha256, payload_size,
         payload_encoding, artifact_uri, artifact_sha256, redacted_secrets, metadata, contract_form, contract_sha256, ord)
       ORDER BY ord
     ),
     typed AS MATERIALIZED (${TYPED_SQL}),${
       chain === 2
         ? `
     ${chainPreLockSqlV2()},`
         : ''
     }
     commit_lock AS MATERIALIZED (
       SELECT pg_advisory_xact_lock(${COMMIT_LOCK_KEY}) AS held
       FROM (SELECT count(*) FROM stored_blobs) AS blobs_first,
         ${chain === 2 ? 'chain_pre AS typed_first' : '(SELECT count(*) FROM typed) AS typed_first'}
     ),
     inserted AS (
       INSERT INTO ledger_event (${EVENT_COLUMNS}, recorded_at)
       SELECT t.id, nextval('ledger_position_seq'), t.kind, t.direction, t.action_id, t.tool, t.session, t.turn, t.task, t.agent,
         t.model, t.status, t.method, t.url, t.headers, t.cost_usd, t.input_tokens, t.output_tokens, t.occurred_at, t.batch_id,
         t.payload_state, t.payload_sha256, t.payload_size, t.payload_encoding, t.artifact_uri, t.artifact_sha256,
         t.redacted_secrets, t.metadata, t.contract_form, t.contract_sha256, t.recorded_at
       FROM commit_lock, typed t ORDER BY t.ord
       ON CONFLICT (id) DO NOTHING
       RETURNING id, position${chain === 1 ? `, ${returningTextsSql}` : ''}
     ),
     ${chain === 1 ? `${chainCtesSqlV1(RECEIVED_AT)},` : chain === 2 ? `${chainCtesSqlV2(RECEIVED_AT)},` : ''}
     accounted AS (${
       chain === 'off'
         ? `
       INSERT INTO ledger_batch (id, collector, position, received, inserted, duplicates, bytes, chain_version)
       SELECT $27::uuid, $28, $29::bigint, $30::int, count(*), $30::int - count(*), $31::bigint, NULL FROM inserted`
         : `
       INSERT INTO ledger_batch (id, collector, position, received, inserted, duplicates, bytes, received_at, chain_seq, chain_link,
         event_digests, column_sums, chain_version)
       SELECT $27::uuid, $28, $29::bigint, $30::int, d.n, $30::int - d.n, $31::bigint, ${RECEIVED_AT}, c.seq, c.link,
         d.event_digests, ${chain === 1 ? 'd.column_sums' : columnSumsSqlV2}, ${chain}
       FROM chain_digests d, chained c${chain === 2 ? ', chain_pre p' : ''}`
     }
     ),
     delivered AS (
       INSERT INTO collector AS c (id, delivered_position)
       SELECT $28, $29::bigint WHERE $29::bigint IS NOT NULL
       ON CONFLICT (id) DO UPDATE SET delivered_position = GREATEST(c.delivered_position, EXCLUDED.delivered_position),
         updated_at = now()
       RETURNING delivered_position
     )
     SELECT i.id, i.position, (SELECT delivered_position FROM delivered) AS collector_position
     FROM commit_lock LEFT JOIN inserted i ON true
     ORDER BY i.position`;

const APPEND_SQL: Record<string, string> = { off: appendSql('off'), 1: appendSql(1), 2: appendSql(2) };

/** Runs the append statement; every column travels as a binary text[] (TextArray). */
export async function appendStatement(
  sql: SqlQueryable,
  chain: ChainMode,
  batchId: string,
  head: BatchHead,
  blobs: BlobRow[],
  events: PreparedEvent[],
): Promise<{ events: { id: string; position: bigint }[]; collectorPosition: bigint | null }> {
  // Every column travels as a binary text[] (TextArray); the statement casts what is not text.
  const col = (f: (e: PreparedEvent) => unknown) => new TextArray(events.map((e) => asText(f(e))));
  const blobCol = (f: (b: BlobRow) => unknown) => new TextArray(blobs.map((b) => asText(f(b))));
  const rows = await sql.query<{ id: string | null; position: bigint | null; collector_position: bigint | null }>(
    APPEND_SQL[String(chain)]!,
    [
      col((e) => e.id),
      col((e) => e.kind),
      col((e) => e.direction),
      col((e) => e.actionId),
      col((e) => e.tool),
      col((e) => e.session),
      col((e) => e.turn),
      col((e) => e.task),
      col((e) => e.agent),
      col((e) => e.model),
      col((e) => e.status),
      col((e) => e.method),
      col((e) => e.url),
      col((e) => e.headers),
      col((e) => e.costUsd),
      col((e) => e.inputTokens),
      col((e) => e.outputTokens),
      col((e) => e.occurredAt),
      col((e) => e.state),
      col((e) => e.sha256),
      col((e) => e.size),
      col((e) => e.encoding),
      col((e) => e.artifactUri),
      col((e) => e.artifactSha256),
      col((e) => e.redacted),
      col((e) => e.metadata),
      batchId,
      head.collector,
      head.position,
      head.received,
      head.bytes,
      col((e) => e.contractForm),
      col((e) => e.contractSha256),
      blobCol((r) => r.sha256),
      blobCol((r) => r.size),
      blobCol((r) => r.encoding),
      blobCol((r) => r.storage),
      blobCol((r) => r.codec),
      blobCol((r) => r.storedSize),
      new ByteaArray(blobs.map((r) => (r.storage === 'INLINE' ? r.data : null))),
      blobCol((r) => r.objectKey),
    ],
    { prepared: chain === 'off' ? 'ledger_append' : `ledger_append_chained_v${chain}`, genericPlan: true },
  );
  return {
    events: rows.filter((r) => r.id !== null).map((r) => ({ id: r.id!, position: r.position! })),
    // The upsert always returns the row when a position was sent (a rewind raises instead).
    collectorPosition: rows[0]?.collector_position ?? null,
  };
}
