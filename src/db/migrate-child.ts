// Applies migrations in a short-lived child process with its own connection (PostgreSQL) or its own
// PGlite on the folder (the embedded database's first start, initdb included): the schema engine and
// initdb (WebAssembly) and everything they allocate leave with the process. A worker thread does not
// do this: its freed memory stays in the server's allocator (measured +30 MB RSS at idle).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createEmbedded } from './embedded.ts';
import { wholeScriptMigrations } from './pg-migrations.ts';
import { applyMigrations } from './schema-engine.ts';

export type MigrationTarget = { url: string } | { dataDir: string };

type Report = { applied: string[] } | { error: { message: string; code?: string; stack?: string } };

const childFlag = '--dirledger-migrate';

/** Runs applyMigrations on `target` in a child process; resolves with the names applied, rejects with its error. */
export function migrateInChild(target: MigrationTarget): Promise<string[]> {
  // Node runs this TypeScript file natively; none of the parent's flags (the test runner's loaders) are passed on.
  // WebAssembly (initdb, Postgres, the schema engine) stays on V8's baseline compiler: the child lives for seconds,
  // too short for an optimizing compile to pay back (a new folder's migration: ~11 s of CPU against ~18 s).
  const child = fork(fileURLToPath(import.meta.url), [childFlag], {
    execArgv: ['--liftoff-only'],
    env: { ...process.env, DIRLEDGER_MIGRATE_TARGET: JSON.stringify(target) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let report: Report | undefined;
    child.once('message', (message: Report) => (report = message));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (report && 'applied' in report) return resolve(report.applied);
      if (report) return reject(Object.assign(new Error(report.error.message), report.error));
      reject(new Error(`The migration process exited (code ${code}, signal ${signal}) before reporting.`));
    });
  });
}

async function childMain(target: MigrationTarget): Promise<void> {
  let report: Report;
  try {
    report = { applied: 'url' in target ? await migratePostgres(target.url) : await migrateEmbedded(target.dataDir) };
  } catch (error) {
    const e = error as Error & { code?: unknown };
    report = { error: { message: e.message, stack: e.stack, ...(typeof e.code === 'string' ? { code: e.code } : {}) } };
  }
  process.send!(report, () => process.disconnect());
}

async function migratePostgres(url: string): Promise<string[]> {
  // Imported here: the server imports this module for migrateInChild, and on PGlite never needs pg.
  const [{ default: pg }, { PrismaPg }] = await Promise.all([import('pg'), import('@prisma/adapter-pg')]);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    return await applyMigrations(wholeScriptMigrations(new PrismaPg(pool), pool));
  } finally {
    await pool.end().catch(() => {});
  }
}

async function migrateEmbedded(dataDir: string): Promise<string[]> {
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  const pglite = await createEmbedded(dataDir);
  try {
    return await applyMigrations(new PrismaPGlite(pglite));
  } finally {
    await pglite.close();
  }
}

const target = process.env.DIRLEDGER_MIGRATE_TARGET;
if (process.argv.includes(childFlag) && process.send && target) await childMain(JSON.parse(target) as MigrationTarget);
