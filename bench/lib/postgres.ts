// Fresh PostgreSQL databases for one benchmark run, always dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onCleanup } from './cleanup.ts';

export const defaultBenchUrl = 'postgresql://postgres@127.0.0.1:5432/postgres';

export function benchBaseUrl(): string {
  return process.env.BENCH_DATABASE_URL || defaultBenchUrl;
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export type BenchDatabase = { name: string; url: string; drop(): Promise<void> };

/** Creates an empty database named `dirledger_bench_<prefix>_<random>`; drop() (or cleanupAll) removes it. */
export async function createBenchDatabase(prefix: string, baseUrl = benchBaseUrl()): Promise<BenchDatabase> {
  const name = `dirledger_bench_${prefix}_${randomBytes(4).toString('hex')}`;
  await adminQuery(baseUrl, `CREATE DATABASE "${name}"`);
  const drop = onCleanup(`drop database ${name}`, () => adminQuery(baseUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  return { name, url: withDatabase(baseUrl, name), drop };
}

async function adminQuery(baseUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
