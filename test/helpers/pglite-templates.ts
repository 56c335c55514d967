// The suite's migrated PGlite database, made once per run by global setup in a child process of its own
// started with --liftoff-only: the migration is seconds of one-off WebAssembly, which V8's optimizing compiler
// does not pay back (~7 s of CPU against ~11 s in process, on the critical path before the first test file).
// Writes a data dump (what in-process test databases open) and a closed data folder (what servers start on),
// then prints their paths as one JSON line.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../../src/db/client.ts';

export type PgliteTemplates = { file: string; folder: string };

/** Makes both templates in `dir` in a --liftoff-only child; rejects with the child's output when it fails. */
export function makePgliteTemplates(dir: string): Promise<PgliteTemplates> {
  const child = spawn(process.execPath, ['--liftoff-only', fileURLToPath(import.meta.url), dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const report = out.split('\n').find((line) => line.startsWith('{"file":'));
      if (code === 0 && report) resolve(JSON.parse(report) as PgliteTemplates);
      else reject(new Error(`Making the PGlite templates failed (code ${code}, signal ${signal}):\n${out}`));
    });
  });
}

/**
 * Both start their WAL in a fresh segment after a checkpoint; the dump's segment is cut after that checkpoint's
 * page (see shortenWal), the folder's stays whole, as on any cluster a server starts on.
 */
async function pgliteTemplates(dir: string): Promise<PgliteTemplates> {
  const lite = await openDatabase({ memory: true });
  await lite.migrate();
  const pglite = lite.pglite!;
  // Test databases never create a database: without the two templates' catalogs the dump holds 9 MB instead of
  // 25, and opening it costs ~0.28 s less CPU (1.07–1.30 s against 0.79–1.00 s per open, three runs of six opens).
  await pglite.exec(`UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')`);
  await pglite.exec('DROP DATABASE template0');
  await pglite.exec('DROP DATABASE template1');
  // The migrations' WAL leaves with its segment (not recycled into a future one).
  await pglite.exec('SET wal_recycle = off; SELECT pg_switch_wal(); CHECKPOINT;');
  const whole = new Blob([await (await pglite.dumpDataDir('none')).arrayBuffer()]);
  await shortenWal(pglite);
  const file = path.join(dir, 'pglite-template.tar');
  await writeFile(file, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()));
  await lite.close();
  const folder = path.join(dir, 'pglite-folder-template');
  const { PGlite } = await import('@electric-sql/pglite');
  const seeded = await PGlite.create({ dataDir: folder, loadDataDir: whole });
  await seeded.close();
  return { file, folder };
}

/**
 * Cuts the current WAL segment (in PGlite's in-memory file system) after the page that holds the last record.
 * The rest of the 16 MB is zeros that every test database's open copied twice; Postgres reads a segment's end
 * as the end of the WAL and writes on from there, as it does in a whole segment.
 */
async function shortenWal(pglite: PGlite): Promise<void> {
  const { rows } = await pglite.query<{ dir: string; file: string; offset: number }>(
    `SELECT current_setting('data_directory') AS dir, file_name AS file, file_offset AS offset FROM pg_walfile_name_offset(pg_current_wal_insert_lsn())`,
  );
  const { dir, file, offset } = rows[0]!;
  const page = 8192;
  pglite.Module.FS.truncate(`${dir}/pg_wal/${file}`, Math.ceil((offset + 1) / page) * page);
}

if (import.meta.main) {
  const made = await pgliteTemplates(process.argv[2]!);
  process.stdout.write(`${JSON.stringify(made)}\n`);
}
