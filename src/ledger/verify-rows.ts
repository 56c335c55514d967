// The stored chain as the verifier reads it (src/ledger/verify.ts): batch rows a page at a time,
// events in position order with the next page read ahead.
import type { SqlQueryable } from '../db/sql.ts';
import { type ChainVersion, EVENT_FIELDS, batchFieldsSql, parseDigests } from './chain.ts';

const BATCH_PAGE = 500;
const EVENT_PAGE = 5_000;

export type StoredBatch = {
  fields: (string | null)[];
  /** Its chain_version; null when it is not one this verifier knows. */
  version: ChainVersion | null;
  seq: bigint;
  id: string;
  link: Buffer | null;
  digests: Buffer | null;
  sums: string[] | null;
};

export type StoredEvent = { fields: (string | null)[]; position: bigint; id: string };

const fieldKeys = EVENT_FIELDS.map((_, i) => `f${i}`);
const eventTextsSql = EVENT_FIELDS.map((f, i) => `${f.sql} AS f${i}`).join(', ');
export const batchSelectSql = `SELECT ${batchFieldsSql('b')
  .map((s, i) => `${s} AS f${i}`)
  .join(', ')}, b.chain_seq, b.chain_link, b.event_digests, b.column_sums::text[] AS column_sums
  FROM ledger_batch b WHERE b.chain_seq >= $1 AND b.chain_seq <= $2 ORDER BY b.chain_seq LIMIT ${BATCH_PAGE}`;

/**
 * Reads events in position order over (after, upTo], a page at a time; the next page is asked for as
 * soon as one arrives, so the database reads it while this process hashes the one before.
 */
export class EventCursor {
  private buffer: StoredEvent[] = [];
  private at = 0;
  private next: Promise<StoredEvent[]> | null = null;
  private done = false;
  private readonly sql: SqlQueryable;
  private after: bigint;
  private readonly upTo: bigint | null;
  constructor(sql: SqlQueryable, after: bigint, upTo: bigint | null) {
    this.sql = sql;
    this.after = after;
    this.upTo = upTo;
  }

  private fetch(after: bigint): Promise<StoredEvent[]> {
    const page = this.sql
      .query<Record<string, string | null>>(
        `SELECT ${eventTextsSql} FROM ledger_event WHERE position > $1${this.upTo === null ? '' : ' AND position <= $2'} ORDER BY position LIMIT ${EVENT_PAGE}`,
        this.upTo === null ? [after] : [after, this.upTo],
      )
      .then((rows) =>
        rows.map((row) => {
          const fields = fieldKeys.map((key) => row[key] ?? null);
          return { fields, position: BigInt(fields[1]!), id: fields[0]! };
        }),
      );
    page.catch(() => {}); // awaited by peek; handled now in case verification stops before it
    return page;
  }

  async peek(): Promise<StoredEvent | null> {
    if (this.at < this.buffer.length) return this.buffer[this.at]!;
    if (this.done) return null;
    this.buffer = await (this.next ?? this.fetch(this.after));
    this.at = 0;
    this.next = null;
    if (this.buffer.length < EVENT_PAGE) this.done = true;
    if (this.buffer.length) this.after = this.buffer.at(-1)!.position;
    if (!this.done) this.next = this.fetch(this.after);
    return this.buffer[0] ?? null;
  }

  take(): void {
    this.at++;
  }
}

export async function lastPositionOf(sql: SqlQueryable, seq: bigint): Promise<bigint | null> {
  const [row] = await sql.query<{ event_digests: Uint8Array | null }>(
    'SELECT event_digests FROM ledger_batch WHERE chain_seq <= $1 AND inserted > 0 ORDER BY chain_seq DESC LIMIT 1',
    [seq],
  );
  const entries = row?.event_digests ? parseDigests(Buffer.from(row.event_digests)) : null;
  return entries?.at(-1)?.position ?? 0n;
}
