// Raw SQL on a test database, beside the app's own Prisma client: a separate
// pg connection on PostgreSQL, the embedded instance itself on PGlite.
import pg from 'pg';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
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
    query = async <T>(sql: string, params: unknown[] = []) => (await lite.query<T>(sql, params)).rows;
    exec = async (sql) => void (await lite.exec(sql));
    close = async () => {};
  } else {
    const client = new pg.Client({ connectionString: db.url });
    client.on('error', () => {});
    await client.connect();
    query = async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[];
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

export type Statement = { text: string; name?: string };

/** Records every statement an app's database driver sends, until the returned function is called. */
export function recordStatements(db: Pick<TestDatabase, 'pglite'>, into: Statement[]): () => void {
  if (db.pglite) {
    const lite = db.pglite;
    const original = lite.query;
    lite.query = function (this: unknown, text: string, ...rest: unknown[]) {
      into.push({ text });
      return (original as (...a: unknown[]) => unknown).call(lite, text, ...rest);
    } as typeof lite.query;
    return () => {
      lite.query = original;
    };
  }
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    into.push(typeof config === 'string' ? { text: config } : { text: String((config as { text?: string }).text), name: (config as { name?: string }).name });
    return original.call(this, config, ...rest);
  };
  return () => {
    proto.query = original;
  };
}

/**
 * The ledger append's own statements (Ledger.append: the blob lookup, then one INSERT …). A read that
 * starts at the Directory is itself recorded (docs/ARCHITECTURE.md, "What is recorded"), and that
 * record's append may run, in the background, while the read is counted: it is not the read's.
 */
export const isLedgerAppend = (s: Statement): boolean => /\bINSERT\s+INTO\b|^SELECT sha256 FROM blob WHERE sha256 = ANY/i.test(s.text);

/**
 * Statements that run in the background while a request is counted, not for it: the ledger append (above), and
 * the revocation list a new app re-reads once its revocation feed has connected (src/auth/revocations.ts), which
 * on a loaded machine can land after the app has begun to answer.
 */
export const isBackground = (s: Statement): boolean => isLedgerAppend(s) || s.text === 'SELECT token_id FROM token_revocation';

/** Runs one GraphQL operation on a test app, expecting no errors: its data and the statements it sent, the background's left out. */
export async function gqlStatements(t: Pick<TestApp, 'db' | 'gql'>, query: string, variables: Record<string, unknown> = {}) {
  const statements: Statement[] = [];
  const restore = recordStatements(t.db, statements);
  let result: { data?: any; errors?: any[] };
  try {
    result = await t.gql(query, variables);
  } finally {
    restore();
  }
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return { data: result.data, statements: statements.filter((s) => !isBackground(s)) };
}
