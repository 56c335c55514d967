// Prisma's own schema engine, loaded from WebAssembly so migrations work where
// the native engine cannot be downloaded. Applies prisma/migrations/* and keeps
// Prisma's `_prisma_migrations` table, exactly as `prisma migrate deploy` does.
import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlQueryable } from './sql.ts';
import { bindMigrationAwareSqlAdapterFactory, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';

const here = path.dirname(fileURLToPath(import.meta.url));
export const prismaDir = path.resolve(here, '../../prisma');
export const migrationsDir = path.join(prismaDir, 'migrations');
const schemaPath = path.join(prismaDir, 'schema.prisma');

type Engine = {
  applyMigrations(input: unknown): Promise<{ appliedMigrationNames: string[] }>;
  diff(input: unknown): Promise<{ exitCode: number; stdout: string | null }>;
  free(): void;
};
type EngineModule = { SchemaEngine: { new: (o: unknown, log: (m: string) => void, a: object) => Promise<Engine> } };

let engineModule: Promise<EngineModule> | undefined;

async function loadEngineModule(): Promise<EngineModule> {
  const require = createRequire(import.meta.url);
  const entry = require.resolve('@prisma/schema-engine-wasm');
  const dir = path.dirname(entry);
  const bg = (await import(path.join(dir, 'schema_engine_bg.js'))) as Record<string, unknown> & {
    __wbg_set_wasm(wasm: unknown): void;
  };
  const module = await WebAssembly.compile(await readFile(path.join(dir, 'schema_engine_bg.wasm')));
  const imports: Record<string, Record<string, unknown>> = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    imports[imp.module] ??= {};
    imports[imp.module]![imp.name] = bg[imp.name];
  }
  const instance = await WebAssembly.instantiate(module, imports as WebAssembly.Imports);
  bg.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as (() => void) | undefined)?.();
  return bg as unknown as EngineModule;
}

async function withEngine<T>(adapterFactory: SqlMigrationAwareDriverAdapterFactory, run: (engine: Engine, schema: string) => Promise<T>): Promise<T> {
  engineModule ??= loadEngineModule();
  const { SchemaEngine } = await engineModule;
  const schema = await readFile(schemaPath, 'utf8');
  const engine = await SchemaEngine.new({ datamodels: [[schemaPath, schema]] }, () => {}, bindMigrationAwareSqlAdapterFactory(adapterFactory));
  try {
    return await run(engine, schema);
  } finally {
    engine.free();
  }
}

async function migrationNames(): Promise<string[]> {
  return (await readdir(migrationsDir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/**
 * Whether any migration folder is not yet recorded as applied in `_prisma_migrations`. A cheap
 * read that lets a start on an up-to-date database skip loading the schema engine at all.
 */
export async function hasPendingMigrations(sql: SqlQueryable): Promise<boolean> {
  const [present] = await sql.query<{ present: boolean }>(`SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`);
  if (!present?.present) return true;
  const applied = new Set(
    (await sql.query<{ migration_name: string }>('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL')).map(
      (r) => r.migration_name,
    ),
  );
  return (await migrationNames()).some((name) => !applied.has(name));
}

async function migrationList() {
  const names = await migrationNames();
  const lockPath = path.join(migrationsDir, 'migration_lock.toml');
  return {
    baseDir: migrationsDir,
    lockfile: { path: 'migration_lock.toml', content: await readFile(lockPath, 'utf8').catch(() => null) },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      names.map(async (name) => ({
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: await readFile(path.join(migrationsDir, name, 'migration.sql'), 'utf8').then(
            (value) => ({ tag: 'ok' as const, value }),
            (error: Error) => ({ tag: 'error' as const, value: error.message }),
          ),
        },
      })),
    ),
  };
}

const noFilter = { externalTables: [], externalEnums: [] };

/** Applies every pending migration; returns the names applied (none on a second run). */
export async function applyMigrations(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string[]> {
  const migrationsList = await migrationList();
  return withEngine(adapterFactory, async (engine) => {
    const out = await engine.applyMigrations({ migrationsList, filters: noFilter });
    return out.appliedMigrationNames;
  });
}

/**
 * Relations Prisma models whose foreign keys the migrations replaced with a once-per-statement
 * trigger check (20261130080000_ledger_reference_checks); the diff must not add them back.
 */
const checkedByTrigger = new Set(['ledger_event_batch_id_fkey', 'ledger_event_payload_sha256_fkey']);

/** The SQL that takes the migrations folder to prisma/schema.prisma (empty when in step). */
export async function diffMigrations(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  const migrationsList = await migrationList();
  return withEngine(adapterFactory, async (engine, schema) => {
    const out = await engine.diff({
      from: migrationsList.migrationDirectories.length ? { tag: 'migrations', ...migrationsList } : { tag: 'empty' },
      to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: schema }] },
      script: true,
      exitCode: null,
      filters: noFilter,
    });
    const steps = (out.stdout ?? '').split(/\n{2,}/).filter((step) => step.trim() !== '');
    const kept = steps.filter((step) => !checkedByTrigger.has(/^ALTER TABLE "\w+" ADD CONSTRAINT "(\w+)" FOREIGN KEY/m.exec(step)?.[1] ?? ''));
    return kept.length ? `${kept.join('\n\n')}\n` : '';
  });
}
