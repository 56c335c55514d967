// The database a benchmark's server runs on: a fresh PostgreSQL database, or the embedded default
// (PGlite in a fresh data folder, as `npm start` with no DATABASE_URL runs it).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { onCleanup } from './cleanup.ts';
import { createBenchDatabase } from './postgres.ts';

export type BenchDbKind = 'postgres' | 'pglite';

export type BenchTarget = {
  kind: BenchDbKind;
  /** What the server's environment needs to run on it. */
  env: Record<string, string>;
  /** The PostgreSQL URL, for kind 'postgres'. */
  url?: string;
  /** SQL on the stored data. On PGlite only once the server has stopped: one process per data folder. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
};

/** `--db postgres|pglite|both` → the kinds to run, in the order they run within a repetition. */
export function parseDbKinds(value: string): BenchDbKind[] {
  if (value === 'both') return ['postgres', 'pglite'];
  if (value === 'postgres' || value === 'pglite') return [value];
  throw new Error(`--db: expected postgres, pglite or both, got ${JSON.stringify(value)}`);
}

export const dbLabel = (kind: BenchDbKind) => (kind === 'pglite' ? 'PGlite' : 'PostgreSQL');

export async function createBenchTarget(kind: BenchDbKind, prefix: string): Promise<BenchTarget> {
  if (kind === 'postgres') {
    const db = await createBenchDatabase(prefix);
    const { default: pg } = await import('pg');
    return {
      kind,
      env: { DATABASE_URL: db.url },
      url: db.url,
      async query<T>(sql: string, params?: unknown[]) {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          return (await client.query(sql, params)).rows as T[];
        } finally {
          await client.end();
        }
      },
      drop: db.drop,
    };
  }
  const folder = await mkdtemp(path.join(tmpdir(), `dirledger-bench-${prefix}-`));
  let db: Database | undefined;
  const drop = onCleanup(`remove data folder ${folder}`, async () => {
    await db?.close();
    await rm(folder, { recursive: true, force: true });
  });
  return {
    kind,
    env: { DATA_DIR: folder },
    async query<T>(sql: string, params?: unknown[]) {
      db ??= await openDatabase({ dataDir: path.join(folder, 'pglite') });
      return db.sql.query<T & Record<string, unknown>>(sql, params as never) as Promise<T[]>;
    },
    drop,
  };
}
