// The ledger's hash chain: the canonical bytes of an event and of a batch row (docs/ARCHITECTURE.md,
// "Tamper evidence"), as SQL for the append statement and as TypeScript for anyone who verifies.
import { createHash } from 'node:crypto';

export const CHAIN_VERSION = 'dirledger-chain-v1';

/** The link before the first chained batch: SHA-256 of the version's UTF-8 bytes. */
export const GENESIS_LINK = createHash('sha256').update(CHAIN_VERSION, 'utf8').digest();

/** Bytes per entry of ledger_batch.event_digests: position (int8, big-endian) + SHA-256. */
export const DIGEST_ENTRY_BYTES = 40;

/** Milliseconds since the Unix epoch, as decimal text: a timestamp's canonical text whatever the session's TimeZone. */
// ±infinity (only a hand edit can store it) has no millisecond count: its own text, so verify names it.
const epochMs = (column: string) => `CASE WHEN isfinite(${column}) THEN (date_part('epoch', ${column}) * 1000)::bigint::text ELSE ${column}::text END`;

/**
 * Every column of ledger_event in the chain's fixed order, with the SQL that gives the text hashed for
 * it: PostgreSQL's own text output of the stored value, except timestamps (epoch milliseconds).
 * A new column of ledger_event is a new chain version.
 */
export const EVENT_FIELDS: readonly { column: string; sql: string }[] = [
  ['id', 'id'],
  ['position', 'position::text'],
  ['kind', 'kind'],
  ['direction', 'direction::text'],
  ['action_id', 'action_id'],
  ['tool', 'tool'],
  ['session', 'session'],
  ['turn', 'turn'],
  ['task', 'task'],
  ['agent', 'agent'],
  ['model', 'model'],
  ['status', 'status'],
  ['method', 'method'],
  ['url', 'url'],
  ['headers', 'headers::text'],
  ['cost_usd', 'cost_usd::text'],
  ['input_tokens', 'input_tokens::text'],
  ['output_tokens', 'output_tokens::text'],
  ['occurred_at', epochMs('occurred_at')],
  ['recorded_at', epochMs('recorded_at')],
  ['batch_id', 'batch_id::text'],
  ['payload_state', 'payload_state::text'],
  ['payload_sha256', 'payload_sha256::text'],
  ['payload_size', 'payload_size::text'],
  ['payload_encoding', 'payload_encoding::text'],
  ['artifact_uri', 'artifact_uri'],
  ['artifact_sha256', 'artifact_sha256::text'],
  ['redacted_secrets', 'redacted_secrets::text'],
  ['metadata', 'metadata::text'],
  ['contract_form', 'contract_form'],
  ['contract_sha256', 'contract_sha256::text'],
].map(([column, sql]) => ({ column: column!, sql: sql! }));

/** The batch row's columns in the chain's order (chain_seq last). */
export const BATCH_FIELDS = ['id', 'collector', 'position', 'received', 'inserted', 'duplicates', 'bytes', 'received_at', 'chain_seq'] as const;

/** The batch row's fields as the texts that are hashed, read from a stored row (one SQL expression each). */
export const batchFieldsSql = (alias: string): string[] => [
  `${alias}.id::text`,
  `${alias}.collector`,
  `${alias}.position::text`,
  `${alias}.received::text`,
  `${alias}.inserted::text`,
  `${alias}.duplicates::text`,
  `${alias}.bytes::text`,
  epochMs(`${alias}.received_at`),
  `${alias}.chain_seq::text`,
];

/** A netstring: `<byte length>:<bytes>,` (checkpoints sign these). */
export const netstring = (text: string): string => `${Buffer.byteLength(text, 'utf8')}:${text},`;

/** PostgreSQL's type OID of text: every field of the canonical encoding is sent as text. */
const TEXT_OID = 25;

/**
 * The canonical bytes of a list of fields: PostgreSQL's binary send format of a row of text values
 * (`record_send(ROW(…))`, one C call in the append statement): the field count (int32, big-endian),
 * then per field its type OID 25 (int32), its length in bytes (int32; -1 for NULL) and its UTF-8 bytes.
 */
export function canonicalFields(fields: readonly (string | null)[]): Buffer {
  // Written straight into one buffer (no Buffer per field): verify runs this for every event it reads.
  let size = 4 + 8 * fields.length;
  for (const f of fields) if (f !== null) size += Buffer.byteLength(f, 'utf8');
  const out = Buffer.allocUnsafe(size);
  let at = out.writeInt32BE(fields.length, 0);
  for (const f of fields) {
    at = out.writeInt32BE(TEXT_OID, at);
    if (f === null) {
      at = out.writeInt32BE(-1, at);
      continue;
    }
    const length = out.write(f, at + 4, 'utf8');
    out.writeInt32BE(length, at);
    at += 4 + length;
  }
  return out;
}

/** The same bytes in SQL, for text expressions. */
export const canonicalSql = (texts: readonly string[]) => `record_send(ROW(${texts.map((t) => `(${t})::text`).join(', ')}))`;

/** SHA-256 of an event's canonical bytes (its fields in EVENT_FIELDS order). */
export function eventDigest(fields: readonly (string | null)[]): Buffer {
  return createHash('sha256').update(canonicalFields(fields)).digest();
}

/** A batch's link: SHA-256(previous link ‖ canonical bytes of the batch fields ‖ its event digest entries). */
export function batchLink(previous: Buffer, batchFields: readonly (string | null)[], eventDigests: Buffer): Buffer {
  return createHash('sha256').update(previous).update(canonicalFields(batchFields)).update(eventDigests).digest();
}

/** One entry of event_digests. */
export function digestEntry(position: bigint, digest: Buffer): Buffer {
  const entry = Buffer.allocUnsafe(DIGEST_ENTRY_BYTES);
  entry.writeBigInt64BE(position, 0);
  digest.copy(entry, 8);
  return entry;
}

/** The entries of event_digests as (position, digest) pairs; null when its length is not a whole number of entries. */
export function parseDigests(bytes: Buffer): { position: bigint; digest: Buffer }[] | null {
  if (bytes.length % DIGEST_ENTRY_BYTES !== 0) return null;
  const entries: { position: bigint; digest: Buffer }[] = [];
  for (let at = 0; at < bytes.length; at += DIGEST_ENTRY_BYTES) {
    entries.push({ position: bytes.readBigInt64BE(at), digest: bytes.subarray(at + 8, at + DIGEST_ENTRY_BYTES) });
  }
  return entries;
}

/** `t1, t2, …`: the names the append statement's RETURNING gives the field texts. */
const textName = (i: number) => `t${i + 1}`;

/** RETURNING items of the event INSERT: each field's text, computed once from the stored row. */
export const returningTextsSql = EVENT_FIELDS.map((f, i) => `${f.sql} AS ${textName(i)}`).join(', ');

/**
 * The CTEs that chain one batch, appended after `inserted` (which RETURNs position and t1…tN).
 * Parameters: $27 batch id, $28 collector, $29 position, $30 received, $31 bytes.
 * `chain_digests`: count, event_digests and column_sums; `chained`: the head moved forward, RETURNING
 * its new seq and link. The head's UPDATE re-reads the newest committed row whatever the statement's
 * snapshot (READ COMMITTED re-evaluates an UPDATE on the latest row version), so the link always
 * follows the batch committed just before, in commit-lock order.
 */
export function chainCtesSql(receivedAt: string): string {
  const texts = EVENT_FIELDS.map((_, i) => `i.${textName(i)}`);
  const sums = texts.map((t) => `coalesce(sum(hashtext(${t})), 0)`).join(', ');
  const batch = [
    '$27::uuid::text',
    '$28::text',
    '$29::bigint::text',
    '$30::int::text',
    'd.n::text',
    '($30::int - d.n)::text',
    '$31::bigint::text',
    epochMs(receivedAt),
    '(h.seq + 1)::text',
  ];
  return `chain_digests AS (
       SELECT count(*)::int AS n,
         coalesce(string_agg(int8send(i.position) || sha256(${canonicalSql(texts)}), ''::bytea ORDER BY i.position), ''::bytea) AS event_digests,
         ARRAY[${sums}]::bigint[] AS column_sums
       FROM inserted i
     ),
     chained AS (
       UPDATE ledger_chain h SET seq = h.seq + 1, link = sha256(h.link || ${canonicalSql(batch)} || d.event_digests)
       FROM chain_digests d WHERE h.id
       RETURNING h.seq, h.link
     )`;
}

/** The SQL of column_sums for stored events: to compare with a batch's, naming the columns that changed. */
export const columnSumsSql = `SELECT ARRAY[${EVENT_FIELDS.map((f) => `coalesce(sum(hashtext(${f.sql})), 0)`).join(', ')}]::bigint[]::text[] AS sums
  FROM ledger_event WHERE position = ANY($1::bigint[])`;
