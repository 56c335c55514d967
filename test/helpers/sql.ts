// Raw SQL on a test database, beside the app's own Prisma client: a separate
// pg connection on PostgreSQL, the embedded instance itself on PGlite.
import pg from 'pg';
import type { TestDatabase } from './database.ts';

export type SqlError = Error & { code?: string; constraint?: string; hint?: string };

export type RawSql = {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements (function bodies included). */
  exec(sql: string): Promise<void>;
  /** Resolves with the error the statement raised; fails the test when it succeeds. */
  refused(sql: string, params?: unknown[]): Promise<SqlError>;
  close(): Promise<void>;
};

export async function rawSql(db: TestDatabase): Promise<RawSql> {
  let query: RawSql['query'];
  let exec: RawSql['exec'];
  let close: RawSql['close'];
  if (db.kind === 'pglite') {
    const lite = db.pglite!;
    query = async <T,>(sql: string, params: unknown[] = []) => (await lite.query<T>(sql, params)).rows;
    exec = async (sql) => void (await lite.exec(sql));
    close = async () => {};
  } else {
    const client = new pg.Client({ connectionString: db.url });
    client.on('error', () => {});
    await client.connect();
    query = async <T,>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[];
    exec = async (sql) => void (await client.query(sql));
    close = () => client.end();
  }
  return {
    query,
    exec,
    close,
    async refused(sql, params) {
      try {
        await query(sql, params);
      } catch (error) {
        return error as SqlError;
      }
      throw new Error(`expected the database to refuse: ${sql}`);
    },
  };
}
