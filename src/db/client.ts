// The one Prisma client factory: real PostgreSQL through @prisma/adapter-pg, or
// embedded PGlite (Postgres in WebAssembly, data in a folder) when no URL is set.
// Each driver and its adapter are imported only when opened: a server on PostgreSQL never loads
// PGlite, one on PGlite never loads pg (~8 MB resident).
import { mkdir } from 'node:fs/promises';
import v8 from 'node:v8';
import type { PGlite } from '@electric-sql/pglite';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaClient } from '../generated/prisma/client.ts';
import { folderBytes } from './disk.ts';
import { compiledPglite, createEmbedded, isInitialised, sharedBuffersParams } from './embedded.ts';
import { acquireFolderLock, type FolderLock } from './folder-lock.ts';
import { migrateInChild } from './migrate-child.ts';
import { wholeScriptMigrations } from './pg-migrations.ts';
import { applyMigrations, hasPendingMigrations } from './schema-engine.ts';
import { pgliteExecutor, poolExecutor, type SqlExecutor } from './sql.ts';

export type Database = {
  prisma: PrismaClient;
  /** Driver-level SQL on the same pool or instance as `prisma`, for hot paths only. */
  sql: SqlExecutor;
  kind: 'postgres' | 'pglite';
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  migrate(): Promise<string[]>;
  /** Bytes the database takes on disk: its data folder for embedded PGlite, pg_database_size on PostgreSQL. */
  sizeBytes(): Promise<number>;
  close(): Promise<void>;
  /** The connection URL, when kind is 'postgres' (for a connection of its own, such as LISTEN). */
  url?: string;
  /** The embedded instance, when kind is 'pglite'. */
  pglite?: PGlite;
  /** The data folder's lock, when PGlite keeps its data in a folder (one process per folder). */
  folderLock?: FolderLock;
};

/** `instance`: an in-memory PGlite the caller opened (the suite reuses one per process); close() closes it. */
export type DatabaseTarget = { url: string } | { dataDir: string } | { memory: true } | { instance: PGlite };

export async function openDatabase(target: DatabaseTarget, options: { poolSize?: number } = {}): Promise<Database> {
  if ('url' in target) {
    const [{ default: pg }, { PrismaPg }] = await Promise.all([import('pg'), import('@prisma/adapter-pg')]);
    const pool = new pg.Pool({ connectionString: target.url, max: options.poolSize ?? 10 });
    pool.on('error', () => {}); // an idle client's error surfaces on its next query
    // The ledger's appends run here (QueryOptions.genericPlan): sessions of their own, so the reads'
    // plans stay PostgreSQL's choice. A few, since the writer sends one batch at a time and ingest a
    // few; kept a minute when idle, so a burst after a pause finds the append parsed and planned.
    const genericPlans = new pg.Pool({ connectionString: target.url, max: Math.min(4, options.poolSize ?? 10), idleTimeoutMillis: 60_000 });
    genericPlans.on('error', () => {});
    const adapterFactory = new PrismaPg(pool);
    const prisma = new PrismaClient({ adapter: adapterFactory });
    const migrationFactory = wholeScriptMigrations(adapterFactory, pool);
    const sql = poolExecutor(pool, genericPlans);
    return register({
      prisma,
      sql,
      kind: 'postgres',
      url: target.url,
      adapterFactory: migrationFactory,
      // In a child process with its own connection: the schema engine's memory leaves with it.
      migrate: async () => ((await hasPendingMigrations(sql)) ? migrateInChild({ url: target.url }) : []),
      sizeBytes: () => databaseSize(sql),
      close: once(async () => {
        await prisma.$disconnect();
        await pool.end();
        await genericPlans.end();
      }),
    });
  }
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  let pglite: PGlite;
  let appliedAtOpen: string[] = [];
  let folderLock: FolderLock | undefined;
  if ('dataDir' in target) {
    // Before the folder is touched: a second opener fails here, naming the holder.
    folderLock = acquireFolderLock(target.dataDir);
    try {
      // Compiled on V8's worker threads meanwhile (src/db/embedded.ts, compiledPglite).
      const wasmModule = compiledPglite();
      wasmModule.catch(() => {});
      await mkdir(target.dataDir, { recursive: true });
      // A new folder is created and migrated in a child process (under this process's lock): initdb
      // and the schema engine would otherwise leave ~600 MB resident in this one for good.
      if (!isInitialised(target.dataDir)) appliedAtOpen = await migrateInChild({ dataDir: target.dataDir });
      pglite = await createEmbedded(target.dataDir, await wasmModule);
    } catch (error) {
      folderLock.release();
      throw error;
    }
  } else if ('instance' in target) {
    pglite = target.instance;
  } else {
    pglite = await openMemoryPglite();
  }
  const adapterFactory = new PrismaPGlite(pglite);
  const prisma = new PrismaClient({ adapter: adapterFactory });
  const sql = pgliteExecutor(pglite);
  return register({
    prisma,
    sql,
    kind: 'pglite',
    pglite,
    ...(folderLock && { folderLock }),
    adapterFactory,
    // A folder's later migrations (an upgrade) run in-process: the adapter needs this very PGlite instance.
    migrate: async () => {
      const applied = appliedAtOpen;
      appliedAtOpen = [];
      return [...applied, ...((await hasPendingMigrations(sql)) ? await applyMigrations(adapterFactory) : [])];
    },
    sizeBytes: () => ('dataDir' in target ? folderBytes(target.dataDir) : databaseSize(sql)),
    close: once(async () => {
      await prisma.$disconnect();
      await pglite.close();
      folderLock?.release();
    }),
  });
}

/**
 * An in-memory PGlite (tests, `dirledger migration-diff`), from a dump when given one: no server, so V8 tiers the
 * parser up as it would. A folder's shared_buffers: Postgres's default 128 MB took ~0.4 s of memset at each start,
 * most of a test database's open.
 */
export async function openMemoryPglite(loadDataDir?: Blob): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  return PGlite.create({ ...(loadDataDir && { loadDataDir }), startParams: [...PGlite.defaultStartParams, ...sharedBuffersParams()] });
}

/**
 * Keeps WebAssembly on V8's baseline compiler (Liftoff) for the rest of the process. Prisma's query
 * compiler is WebAssembly, and tiering its hot functions up to the optimizing compiler cost ~50 MB of
 * resident memory for no measurable CPU gain. Process-wide, so only for PostgreSQL: PGlite's Postgres
 * is WebAssembly too and needs the optimizing compiler (dispatch on PGlite, Liftoff only: 10,000–12,800
 * µs of server CPU per call against 8,400–9,100 with tier-up, A/B pairs). --liftoff-only rather than
 * --no-wasm-tier-up, which Node 24 no longer honours. Measured on Node 24 it does not hold: 76 TurboFan compiles in
 * 3,000 GraphQL requests with it, none with --liftoff-only on the command line (docs/ARCHITECTURE.md); a start flag would.
 */
export function keepWasmOnBaselineCompiler(): void {
  v8.setFlagsFromString('--liftoff-only');
}

async function databaseSize(sql: SqlExecutor): Promise<number> {
  const rows = await sql.query<{ bytes: string }>('select pg_database_size(current_database())::text as bytes');
  return Number(rows[0]!.bytes);
}

const executors = new WeakMap<PrismaClient, SqlExecutor>();

function register(db: Database): Database {
  executors.set(db.prisma, db.sql);
  return db;
}

/** The driver-level executor opened with this Prisma client by openDatabase, if any. */
export function sqlExecutorOf(prisma: PrismaClient): SqlExecutor | undefined {
  return executors.get(prisma);
}

function once(run: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= run());
}
