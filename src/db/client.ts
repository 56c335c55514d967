// The one Prisma client factory: real PostgreSQL through @prisma/adapter-pg, or
// embedded PGlite (Postgres in WebAssembly, data in a folder) when no URL is set.
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client.ts';
import { applyMigrations } from './schema-engine.ts';

export type Database = {
  prisma: PrismaClient;
  kind: 'postgres' | 'pglite';
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  migrate(): Promise<string[]>;
  close(): Promise<void>;
  /** The embedded instance, when kind is 'pglite'. */
  pglite?: PGlite;
};

export type DatabaseTarget = { url: string } | { dataDir: string } | { memory: true; loadDataDir?: Blob };

export async function openDatabase(target: DatabaseTarget, options: { poolSize?: number } = {}): Promise<Database> {
  if ('url' in target) {
    const pool = new pg.Pool({ connectionString: target.url, max: options.poolSize ?? 10 });
    pool.on('error', () => {}); // an idle client's error surfaces on its next query
    const adapterFactory = new PrismaPg(pool);
    const prisma = new PrismaClient({ adapter: adapterFactory });
    const migrationFactory = wholeScriptMigrations(adapterFactory, pool);
    return {
      prisma,
      kind: 'postgres',
      adapterFactory: migrationFactory,
      migrate: () => applyMigrations(migrationFactory),
      close: once(async () => {
        await prisma.$disconnect();
        await pool.end();
      }),
    };
  }
  let pglite: PGlite;
  if ('dataDir' in target) {
    await mkdir(target.dataDir, { recursive: true });
    pglite = await PGlite.create(target.dataDir);
  } else {
    pglite = await PGlite.create(target.loadDataDir ? { loadDataDir: target.loadDataDir } : {});
  }
  const adapterFactory = new PrismaPGlite(pglite);
  const prisma = new PrismaClient({ adapter: adapterFactory });
  return {
    prisma,
    kind: 'pglite',
    pglite,
    adapterFactory,
    migrate: () => applyMigrations(adapterFactory),
    close: once(async () => {
      await prisma.$disconnect();
      await pglite.close();
    }),
  };
}

/**
 * @prisma/adapter-pg splits a migration script on every `;`, which breaks
 * function bodies. Send each script whole instead: PostgreSQL's simple query
 * protocol runs it as one implicit transaction.
 */
function wholeScriptMigrations(factory: PrismaPg, pool: pg.Pool): SqlMigrationAwareDriverAdapterFactory {
  const patch = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    adapter.executeScript = async (script: string) => {
      await pool.query(script);
    };
    return adapter;
  };
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => patch(await factory.connect()),
    connectToShadowDb: async () => factory.connectToShadowDb(),
  };
}

function once(run: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= run());
}
