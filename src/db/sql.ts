// A driver-level SQL executor for the few hot paths where Prisma's per-call overhead
// dominates (the ledger's append): the pg Pool for PostgreSQL, the PGlite instance when embedded.
// Values always travel as bind parameters; rows come back with the same types on both drivers.
import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import pg from 'pg';

/** A bind parameter. Arrays become PostgreSQL arrays; Uint8Array is bytea. */
export type SqlParam = string | number | bigint | boolean | Date | Uint8Array | null | readonly SqlParam[];

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
};

export interface SqlExecutor extends SqlQueryable {
  /** Runs `work` in one transaction on one connection: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T>;
}

const INT8 = 20;
const INT8_ARRAY = 1016;

const parseInt8 = (text: string) => BigInt(text);
const parseInt8Array = (text: string) => (pg.types.getTypeParser(INT8_ARRAY as never)(text) as (string | null)[]).map((v) => (v === null ? null : BigInt(v)));

const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return parseInt8;
    if (oid === INT8_ARRAY) return parseInt8Array;
    return pg.types.getTypeParser(oid, format);
  },
};

export function poolExecutor(pool: pg.Pool): SqlExecutor {
  const on = (client: pg.Pool | pg.PoolClient): SqlQueryable => ({
    async query<R extends SqlRow>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}) {
      const result = await client.query<R>({ text, values: params as unknown[], types: pgTypes, ...(options.prepared && { name: options.prepared }) });
      return result.rows;
    },
  });
  return {
    ...on(pool),
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
  const on = (client: PGlite | PGliteTransaction): SqlQueryable => ({
    async query<R extends SqlRow>(text: string, params: readonly SqlParam[] = []) {
      const result = await client.query<R>(text, params as unknown[], { parsers: pgliteParsers });
      return result.rows;
    },
  });
  return {
    ...on(db),
    transaction: (work) => db.transaction((tx) => work(on(tx))),
  };
}
