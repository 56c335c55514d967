// The hash chain recomputed from the rows by hand, following only docs/ARCHITECTURE.md (Tamper
// evidence), without src/ledger/chain.ts: what an outside auditor with any PostgreSQL client can do.
import { createHash } from 'node:crypto';
import type { RawSql } from './sql.ts';

// The documented canonical form, written out independently of src/ledger/chain.ts.
export const ms = (c: string) => `(extract(epoch FROM ${c}) * 1000)::bigint::text`;
const documentedEventColumns = [
  'id',
  'position::text',
  'kind',
  'direction::text',
  'action_id',
  'tool',
  'session',
  'turn',
  'task',
  'agent',
  'model',
  'status',
  'method',
  'url',
  'headers::text',
  'cost_usd::text',
  'input_tokens::text',
  'output_tokens::text',
  ms('occurred_at'),
  ms('recorded_at'),
  'batch_id::text',
  'payload_state::text',
  'payload_sha256::text',
  'payload_size::text',
  'payload_encoding::text',
  'artifact_uri',
  'artifact_sha256::text',
  'redacted_secrets::text',
  'metadata::text',
  'contract_form',
  'contract_sha256::text',
];
const documentedBatchColumns = [
  'id::text',
  'collector',
  'position::text',
  'received::text',
  'inserted::text',
  'duplicates::text',
  'bytes::text',
  ms('received_at'),
  'chain_seq::text',
  'chain_version::text',
];
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
/** Field count, then per field: OID 25 (text), byte length or -1 for NULL, the UTF-8 bytes. */
const fieldList = (values: (string | null)[]) =>
  Buffer.concat([
    int32(values.length),
    ...values.flatMap((v) => (v === null ? [int32(25), int32(-1)] : [int32(25), int32(Buffer.byteLength(v)), Buffer.from(v, 'utf8')])),
  ]);
const sha256 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();

/**
 * Recomputes every chained batch's link from the rows, as an outside auditor would. Version 1: an
 * event's field list is all 31 columns and the batch's the first nine; version 2: the event's leaves
 * out position (index 1) and the batch's adds chain_version.
 */
export async function recomputeByHand(sql: RawSql): Promise<{ seq: string; version: string; link: string; stored: string }[]> {
  const batches = await sql.query<Record<string, string | null> & { link: Uint8Array }>(
    `SELECT ${documentedBatchColumns.map((c, i) => `${c} AS b${i}`).join(', ')}, chain_link AS link FROM ledger_batch WHERE chain_seq IS NOT NULL ORDER BY chain_seq`,
  );
  let previous = sha256(Buffer.from('dirledger-chain-v1'));
  const out = [];
  for (const b of batches) {
    const version = b.b9!;
    const events = await sql.query<Record<string, string | null>>(
      `SELECT ${documentedEventColumns.map((c, i) => `${c} AS e${i}`).join(', ')} FROM ledger_event WHERE batch_id = $1 ORDER BY position`,
      [b.b0],
    );
    const entries = events.map((e) => {
      const position = Buffer.alloc(8);
      position.writeBigInt64BE(BigInt(e.e1!));
      const fields = documentedEventColumns.map((_, i) => e[`e${i}`] ?? null).filter((_, i) => version === '1' || i !== 1);
      return Buffer.concat([position, sha256(fieldList(fields))]);
    });
    const batchFields = documentedBatchColumns.map((_, i) => b[`b${i}`] ?? null).slice(0, version === '1' ? 9 : 10);
    const link = sha256(previous, fieldList(batchFields), ...entries);
    out.push({ seq: b.b8!, version, link: link.toString('hex'), stored: Buffer.from(b.link).toString('hex') });
    previous = Buffer.from(b.link);
  }
  return out;
}
