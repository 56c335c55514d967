// A driver-level SQL executor for the few hot paths where Prisma's per-call overhead
// dominates (the ledger's append): the pg Pool for PostgreSQL, the PGlite instance when embedded.
// Values always travel as bind parameters; rows come back with the same types on both drivers.
import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import { createRequire } from 'node:module';
import type pg from 'pg';

const require = createRequire(import.meta.url);

/** A bind parameter. Arrays become PostgreSQL arrays; Uint8Array is bytea; ByteaArray is bytea[]; TextArray is text[]. */
export type SqlParam = string | number | bigint | boolean | Date | Uint8Array | ByteaArray | TextArray | null | readonly SqlParam[];

/**
 * A bytea[] parameter (cast it in SQL: `$1::bytea[]`). To PostgreSQL it goes in the binary array
 * format, so the bytes are copied as they are: as text they would be hex or base64 that both sides
 * encode, scan and decode (for the ledger's blobs, most of PostgreSQL's parameter parsing).
 */
export class ByteaArray {
  readonly items: readonly (Uint8Array | null)[];
  constructor(items: readonly (Uint8Array | null)[]) {
    this.items = items;
  }

  /** PostgreSQL's binary array of one dimension: ndim, has-nulls, element type, length, lower bound, then each element as int32 length (-1: NULL) and its bytes. */
  toBinary(): Buffer {
    const BYTEA = 17;
    const items = this.items;
    if (items.length === 0) return Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, BYTEA]);
    const size = items.reduce((n, item) => n + 4 + (item?.length ?? 0), 20);
    const out = Buffer.allocUnsafe(size);
    out.writeInt32BE(1, 0);
    out.writeInt32BE(items.includes(null) ? 1 : 0, 4);
    out.writeInt32BE(BYTEA, 8);
    out.writeInt32BE(items.length, 12);
    out.writeInt32BE(1, 16);
    let at = 20;
    for (const item of items) {
      out.writeInt32BE(item === null ? -1 : item.length, at);
      at += 4;
      if (item === null) continue;
      out.set(item, at);
      at += item.length;
    }
    return out;
  }
}

/**
 * A text[] parameter (cast it in SQL: `$1::text[]`, and cast its elements to other types there).
 * To PostgreSQL it goes in the binary array format: each string's UTF-8 bytes written once into one
 * buffer, where an array literal (`{"a",NULL}`) costs a JavaScript string of every element quoted and
 * concatenated (for the ledger's append, a fifth of what the server allocated) and PostgreSQL's
 * array_in scanning it for quotes and escapes.
 */
export class TextArray {
  readonly items: readonly (string | null)[];
  constructor(items: readonly (string | null)[]) {
    this.items = items;
  }

  /**
   * The binary array built as one latin1 string (length prefixes as four chars, each element's UTF-8
   * bytes as chars) and written in one call: a write per element cost more than the bytes themselves.
   */
  toBinary(): Buffer {
    const TEXT = 25;
    const items = this.items;
    if (items.length === 0) return Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, TEXT]);
    const parts: string[] = new Array(items.length * 2);
    let nulls = 0;
    for (let i = 0; i < items.length; i++) {
      let item = items[i];
      if (item === null || item === undefined) {
        parts[2 * i] = int32Chars(-1);
        parts[2 * i + 1] = '';
        nulls = 1;
        continue;
      }
      if (nonAscii.test(item)) item = Buffer.from(item, 'utf8').toString('latin1');
      parts[2 * i] = int32Chars(item.length);
      parts[2 * i + 1] = item;
    }
    const header = int32Chars(1) + int32Chars(nulls) + int32Chars(TEXT) + int32Chars(items.length) + int32Chars(1);
    return Buffer.from(header + parts.join(''), 'latin1');
  }
}

const nonAscii = /[\x80-\uffff]/;
const smallInt32Chars: string[] = [];
/** A big-endian int32 as four latin1 chars (one byte each). */
function int32Chars(n: number): string {
  if (n >= 0 && n < 1024) {
    smallInt32Chars[n] ??= String.fromCharCode(0, 0, n >>> 8, n & 255);
    return smallInt32Chars[n];
  }
  return String.fromCharCode((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
}

const forPool = (params: readonly SqlParam[]) => params.map((p) => (p instanceof ByteaArray || p instanceof TextArray ? p.toBinary() : p));
const TEXT_ARRAY = 1009;
const BYTEA_ARRAY = 1001;

/**
 * TextArray and ByteaArray go to PGlite in the binary array format too: its bind sends a Uint8Array
 * as a binary parameter. As the default text form, every element was quoted into one literal (bytea
 * as hex, twice its bytes) in this heap and scanned again by array_in in its WebAssembly memory.
 */
function pgliteSerializers(db: PGlite): Record<number, (value: unknown) => string> {
  const binaryOr = (oid: number) => (value: unknown) =>
    value instanceof TextArray || value instanceof ByteaArray ? (value.toBinary() as unknown as string) : db.serializers[oid]!(value);
  return { [TEXT_ARRAY]: binaryOr(TEXT_ARRAY), [BYTEA_ARRAY]: binaryOr(BYTEA_ARRAY) };
}

export type SqlRow = Record<string, unknown>;

export interface SqlQueryable {
  /**
   * Runs one statement with `$1…$n` parameters and returns its rows. int8 comes back as bigint,
   * numeric as string, bytea as Uint8Array, timestamptz as Date, json/jsonb parsed.
   */
  query<R extends SqlRow = SqlRow>(text: string, params?: readonly SqlParam[], options?: QueryOptions): Promise<R[]>;
}

export type QueryOptions = {
  /**
   * A prepared-statement name, for a hot statement always sent with the same text: PostgreSQL
   * parses and plans it once per connection instead of on every call (for the ledger's append,
   * a fifth of PostgreSQL's CPU). PGlite runs in this process and ignores it.
   */
  prepared?: string;
  /**
   * Run it where PostgreSQL always uses the statement's generic plan: for a prepared statement whose
   * plan does not depend on its values, which PostgreSQL would otherwise plan again on every run
   * whenever the values make a custom plan look cheaper (the ledger's append of a small batch: its
   * plan for 2 events costed below the generic one, so all of them were planned anew, 1.85 against
   * 0.95 ms of PostgreSQL's CPU per append). PGlite ignores it.
   */
  genericPlan?: boolean;
};

export interface SqlExecutor extends SqlQueryable {
  /** Runs `work` in one transaction on one connection: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T>;
}

const INT8 = 20;
const INT8_ARRAY = 1016;

// pg is loaded by the first pool query only: an embedded server never needs it.
let pgTypeParsers: typeof pg.types | undefined;
const pgTypeParsersLoaded = () => (pgTypeParsers ??= (require('pg') as typeof pg).types);

const parseInt8 = (text: string) => BigInt(text);
const parseInt8Array = (text: string) =>
  (pgTypeParsersLoaded().getTypeParser(INT8_ARRAY as never)(text) as (string | null)[]).map((v) => (v === null ? null : BigInt(v)));

const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return parseInt8;
    if (oid === INT8_ARRAY) return parseInt8Array;
    return pgTypeParsersLoaded().getTypeParser(oid, format);
  },
};

/**
 * `genericPlans`: a pool of its own for the statements run with `genericPlan`, whose sessions are set
 * to plan_cache_mode = force_generic_plan before their first one, so that the statements on `pool`
 * keep PostgreSQL's own choice; without it they run on `pool` as any other. A transaction runs on `pool`.
 */
export function poolExecutor(pool: pg.Pool, genericPlans?: pg.Pool): SqlExecutor {
  const forcedGeneric = new WeakSet<pg.PoolClient>();
  const queryOf = (text: string, params: readonly SqlParam[], options: QueryOptions) => ({
    text,
    values: forPool(params),
    types: pgTypes,
    ...(options.prepared && { name: options.prepared }),
  });
  async function queryGeneric<R extends SqlRow>(generic: pg.Pool, text: string, params: readonly SqlParam[], options: QueryOptions): Promise<R[]> {
    const client = await generic.connect();
    try {
      if (!forcedGeneric.has(client)) {
        await client.query('SET plan_cache_mode = force_generic_plan');
        forcedGeneric.add(client);
      }
      const result = await client.query<R>(queryOf(text, params, options));
      client.release();
      return result.rows;
    } catch (error) {
      client.release(error as Error); // as pool.query does: a client that failed is not handed out again
      throw error;
    }
  }
  const on = (client: pg.Pool | pg.PoolClient, generic?: pg.Pool): SqlQueryable => ({
    async query<R extends SqlRow>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}) {
      if (options.genericPlan && generic) return queryGeneric<R>(generic, text, params, options);
      return (await client.query<R>(queryOf(text, params, options))).rows;
    },
  });
  return {
    ...on(pool, genericPlans),
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const out = await work(on(client));
        await client.query('COMMIT');
        return out;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
        throw error;
      } finally {
        // A connection whose rollback failed is discarded rather than handed out mid-transaction.
        client.release(broken);
      }
    },
  };
}

const pgliteParsers = { [INT8]: parseInt8, [INT8_ARRAY]: parseInt8Array };

export function pgliteExecutor(db: PGlite): SqlExecutor {
  const serializers = pgliteSerializers(db);
  const on = (client: PGlite | PGliteTransaction): SqlQueryable => ({
    async query<R extends SqlRow>(text: string, params: readonly SqlParam[] = []) {
      const result = await client.query<R>(text, params as unknown[], { parsers: pgliteParsers, serializers });
      return result.rows;
    },
  });
  return {
    ...on(db),
    transaction: (work) => db.transaction((tx) => work(on(tx))),
  };
}
