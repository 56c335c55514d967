// Each test file gets its own database, in the template's state: embedded PGlite always, and
// the machine's PostgreSQL when TEST_DATABASE_URL is set.
import { randomBytes } from 'node:crypto';
import { cp, readFile } from 'node:fs/promises';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, openMemoryPglite, type Database } from '../../src/db/client.ts';
import { pooledPglite, pooledPostgres, releasePostgres } from './database-pool.ts';

export type DatabaseKind = 'pglite' | 'postgres';

/** The database kinds this run covers: PGlite always, PostgreSQL when its URL is set. */
export const databaseKinds: DatabaseKind[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

export function templateName(): string {
  return `dirledger_template_${process.pid}`;
}

/** Test databases of one run are named after its template, so that the run's teardown finds those its workers kept. */
export function testDatabasePrefix(template: string): string {
  return `dirledger_test_${template.replace('dirledger_template_', '')}_`;
}

export function adminUrl(url: string): string {
  return withDatabase(url, 'postgres');
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export type TestDatabase = Database & {
  /** A URL for a second connection, when the database is PostgreSQL. */
  url?: string;
  drop(): Promise<void>;
};

/**
 * The template dump, read once per process, as a Blob that hands PGlite the bytes it holds. PGlite reads a
 * Blob's bytes once per open and only reads them; a plain Blob streamed them back into a new copy each time
 * (~0.3 s of CPU for these 41 MB).
 */
class HeldBlob extends Blob {
  readonly #bytes: ArrayBuffer;
  constructor(bytes: ArrayBuffer) {
    super([]);
    this.#bytes = bytes;
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#bytes);
  }
}

let heldTemplate: Promise<Blob> | undefined;

function pgliteTemplate(): Promise<Blob> {
  heldTemplate ??= readFile(inject('pgliteTemplate')).then((dump) => new HeldBlob(dump.buffer.slice(dump.byteOffset, dump.byteOffset + dump.byteLength)));
  return heldTemplate;
}

/** A migrated database of the given kind in the template's state (made, or reused: test/helpers/database-pool.ts); drop() gives it back. */
export async function createTestDatabase(kind: DatabaseKind, options: { poolSize?: number } = {}): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const instance = await pooledPglite(async () => openMemoryPglite(await pgliteTemplate()));
    const db = await openDatabase({ instance });
    return Object.assign(db, { drop: () => db.close() });
  }
  const base = process.env.TEST_DATABASE_URL;
  const template = inject('postgresTemplate');
  if (!base || !template) throw new Error('PostgreSQL tests need TEST_DATABASE_URL');
  const name = await pooledPostgres(
    async () => {
      const made = `${testDatabasePrefix(template)}${randomBytes(6).toString('hex')}`;
      await onAdmin(base, `CREATE DATABASE "${made}" TEMPLATE "${template}"`);
      return made;
    },
    (n) => withDatabase(base, n),
  );
  const url = withDatabase(base, name);
  const db = await openDatabase({ url }, options);
  let dropped = false;
  return Object.assign(db, {
    url,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await db.close().catch(() => {});
      await releasePostgres(name, url, () => onAdmin(base, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  });
}

/** Runs one statement on the `postgres` database of the cluster `base` names, over a connection of its own. */
export async function onAdmin(base: string, sql: string, params: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl(base) });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/**
 * Fills an embedded-database folder (not there yet) with a copy of the suite's migrated template, so a
 * server started on it skips initdb and the migrations (a new folder's first start is its own test, in
 * test/server/lifecycle.test.ts).
 */
export async function seedPgliteFolder(pgDataDir: string): Promise<void> {
  await cp(inject('pgliteFolderTemplate'), pgDataDir, { recursive: true, errorOnExist: true, force: false });
}

/**
 * A real outage of a PostgreSQL test database: new connections are refused and open ones are
 * ended. Resolves with the function that lifts it.
 */
export async function refuseConnections(databaseUrl: string): Promise<() => Promise<void>> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = (sql: string, params: unknown[] = []) => onAdmin(process.env.TEST_DATABASE_URL ?? databaseUrl, sql, params);
  await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
  await admin('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  return () => admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
}

/** An outage that can be begun and ended from a test (PostgreSQL only): see refuseConnections. */
export function databaseOutage(databaseUrl: () => string) {
  let lift: (() => Promise<void>) | undefined;
  return {
    begin: async () => {
      lift = await refuseConnections(databaseUrl());
    },
    end: async () => {
      await lift?.();
      lift = undefined;
    },
  };
}
