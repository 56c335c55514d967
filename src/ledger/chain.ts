// The ledger's hash chain: the canonical bytes of an event and of a batch row (docs/ARCHITECTURE.md,
// "Tamper evidence"), as SQL for the append statement and as TypeScript for anyone who verifies.
import { createHash } from 'node:crypto';

/**
 * The encodings of a batch's link and event digests (ledger_batch.chain_version). 1: an event's digest
 * covers its position, so it can only be computed under the commit lock. 2: the digest leaves the
 * position out (the link still binds it, through each event_digests entry), so the append statement
 * computes it before the lock. A chain may hold both: each batch is verified by its own version.
 */
export type ChainVersion = 1 | 2;
export const ChainVersions: readonly ChainVersion[] = [1, 2];
/** The version every batch is appended with. */
export const CURRENT_CHAIN_VERSION: ChainVersion = 2;

/** The link before the first chained batch: SHA-256 of "dirledger-chain-v1" (the chain began at version 1). */
export const GENESIS_LINK = createHash('sha256').update('dirledger-chain-v1', 'utf8').digest();

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

/** The index of `position` in EVENT_FIELDS: version 2 leaves it out of an event's digest. */
const POSITION_FIELD = 1;

/** The fields an event's digest covers in `version`. */
export const eventFieldsOf = (version: ChainVersion) => (version === 1 ? EVENT_FIELDS : EVENT_FIELDS.filter((_, i) => i !== POSITION_FIELD));

/** The batch row's columns in the chain's order: version 1 hashes the first nine (to chain_seq), version 2 all ten. */
export const BATCH_FIELDS = [
  'id',
  'collector',
  'position',
  'received',
  'inserted',
  'duplicates',
  'bytes',
  'received_at',
  'chain_seq',
  'chain_version',
] as const;

/** How many of BATCH_FIELDS a batch of `version` hashes into its link. */
export const batchFieldCount = (version: ChainVersion) => (version === 1 ? 9 : 10);

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
  `${alias}.chain_version::text`,
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
export function canonicalFields(fields: readonly (string | null)[], skip = -1): Buffer {
  // Written straight into one buffer (no Buffer per field): verify runs this for every event it reads.
  const count = skip >= 0 && skip < fields.length ? fields.length - 1 : fields.length;
  let size = 4 + 8 * count;
  for (let i = 0; i < fields.length; i++) if (i !== skip && fields[i] !== null) size += Buffer.byteLength(fields[i]!, 'utf8');
  const out = Buffer.allocUnsafe(size);
  let at = out.writeInt32BE(count, 0);
  for (let i = 0; i < fields.length; i++) {
    if (i === skip) continue;
    const f = fields[i] as string | null;
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

/** SHA-256 of an event's canonical bytes in `version`, from all its fields in EVENT_FIELDS order. */
export function eventDigest(version: ChainVersion, fields: readonly (string | null)[]): Buffer {
  return createHash('sha256')
    .update(canonicalFields(fields, version === 1 ? -1 : POSITION_FIELD))
    .digest();
}

/** A batch's link: SHA-256(previous link ‖ canonical bytes of its version's batch fields ‖ its event digest entries). */
export function batchLink(version: ChainVersion, previous: Buffer, batchFields: readonly (string | null)[], eventDigests: Buffer): Buffer {
  return createHash('sha256')
    .update(previous)
    .update(canonicalFields(batchFields.slice(0, batchFieldCount(version))))
    .update(eventDigests)
    .digest();
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

/** `t1, t2, …`: the names the append statement gives the field texts. */
const textName = (i: number) => `t${i + 1}`;

/** The batch fields' texts in the append statement (version 1: the first nine; `version` is the tenth). */
const appendBatchTexts = (version: ChainVersion, receivedAt: string) =>
  [
    '$27::uuid::text',
    '$28::text',
    '$29::bigint::text',
    '$30::int::text',
    'd.n::text',
    '($30::int - d.n)::text',
    '$31::bigint::text',
    epochMs(receivedAt),
    '(h.seq + 1)::text',
    `'${version}'`,
  ].slice(0, batchFieldCount(version));

/** The sums of hashtext over the texts (one per field): column_sums. */
const sumsSql = (texts: readonly string[]) => `ARRAY[${texts.map((t) => `coalesce(sum(hashtext(${t})), 0)`).join(', ')}]::bigint[]`;

/**
 * `chained`: the head moved forward over `chain_digests` (n, event_digests), RETURNING its new seq and
 * link. The head's UPDATE re-reads the newest committed row whatever the statement's snapshot (READ
 * COMMITTED re-evaluates an UPDATE on the latest row version), so the link always follows the batch
 * committed just before, in commit-lock order.
 */
const chainedSql = (version: ChainVersion, receivedAt: string) => `chained AS (
       UPDATE ledger_chain h SET seq = h.seq + 1, link = sha256(h.link || ${canonicalSql(appendBatchTexts(version, receivedAt))} || d.event_digests)
       FROM chain_digests d WHERE h.id
       RETURNING h.seq, h.link
     )`;

/** Version 1, under the lock. RETURNING items of the event INSERT: each field's text, computed once from the stored row. */
export const returningTextsSql = EVENT_FIELDS.map((f, i) => `${f.sql} AS ${textName(i)}`).join(', ');

/**
 * Version 1: the CTEs that chain one batch, appended after `inserted` (which RETURNs position and
 * t1…tN), all under the commit lock. `chain_digests`: count, event_digests and column_sums.
 * Parameters: $27 batch id, $28 collector, $29 position, $30 received, $31 bytes.
 */
export function chainCtesSqlV1(receivedAt: string): string {
  const texts = EVENT_FIELDS.map((_, i) => `i.${textName(i)}`);
  return `chain_digests AS (
       SELECT count(*)::int AS n,
         coalesce(string_agg(int8send(i.position) || sha256(${canonicalSql(texts)}), ''::bytea ORDER BY i.position), ''::bytea) AS event_digests,
         ${sumsSql(texts)} AS column_sums
       FROM inserted i
     ),
     ${chainedSql(1, receivedAt)}`;
}

/**
 * Version 2, before the lock, after `typed` (the event columns already cast to the types they are
 * stored as, so what is hashed is what is stored): `digested`, each event's digest and the hashtext of
 * each of its field texts, and `chain_pre`, the batch's count and column sums. The commit lock is
 * taken after `chain_pre` is read.
 */
export function chainPreLockSqlV2(): string {
  const fields = eventFieldsOf(2);
  const texts = fields.map((_, i) => `x.${textName(i)}`);
  // OFFSET 0 keeps the subquery from being flattened, which would compute every text twice.
  return `digested AS MATERIALIZED (
       SELECT x.id, sha256(${canonicalSql(texts)}) AS digest, ${texts.map((t, i) => `hashtext(${t}) AS h${i + 1}`).join(', ')}
       FROM (SELECT id, ${fields.map((f, i) => `${f.sql} AS ${textName(i)}`).join(', ')} FROM typed OFFSET 0) x
     ),
     chain_pre AS MATERIALIZED (
       SELECT count(*)::int AS n, ${hashSumsSql('g')} AS column_sums FROM digested g
     )`;
}

/** The column sums over `digested` rows (alias `g`): sums of the hashtexts computed before the lock. */
const hashSumsSql = (alias: string) =>
  `ARRAY[${eventFieldsOf(2)
    .map((_, i) => `coalesce(sum(${alias}.h${i + 1}), 0)`)
    .join(', ')}]::bigint[]`;

/**
 * Version 2, under the lock: the digests computed before it, each after the position `inserted`
 * (RETURNING id, position) gave its event, and the head moved forward.
 */
export function chainCtesSqlV2(receivedAt: string): string {
  return `chain_digests AS (
       SELECT count(*)::int AS n,
         coalesce(string_agg(int8send(i.position) || g.digest, ''::bytea ORDER BY i.position), ''::bytea) AS event_digests
       FROM inserted i JOIN digested g ON g.id = i.id
     ),
     ${chainedSql(2, receivedAt)}`;
}

/**
 * Version 2's column_sums (d: chain_digests, p: chain_pre): chain_pre's, less the sums of the events
 * that were duplicates (not inserted), so they cover the inserted events as version 1's do. Resent
 * ids are common (a collector retries): under the lock this only adds up hashtexts taken before it.
 */
export const columnSumsSqlV2 = `CASE WHEN d.n = p.n THEN p.column_sums ELSE (
         SELECT array_agg(u.total - u.duplicate ORDER BY u.k)::bigint[]
         FROM unnest(p.column_sums, (SELECT ${hashSumsSql('g')} FROM digested g
           WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i.id = g.id))) WITH ORDINALITY AS u(total, duplicate, k)
       ) END`;

/** The SQL of column_sums for stored events of a `version` batch: to compare with the batch's, naming the columns that changed. */
export const columnSumsSql = (version: ChainVersion) =>
  `SELECT ${sumsSql(eventFieldsOf(version).map((f) => f.sql))}::text[] AS sums FROM ledger_event WHERE position = ANY($1::bigint[])`;
