// Migrates once, then every test file clones: a PGlite data dump (and a data folder made from it, for
// servers started on a folder), and (when TEST_DATABASE_URL is set) a PostgreSQL template database.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/client.ts';
import { adminUrl, templateName, withDatabase } from './database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    pgliteFolderTemplate: string;
    postgresTemplate: string | null;
  }
}

export default async function setup(project: TestProject) {
  const dir = path.join(os.tmpdir(), `dirledger-test-${process.pid}`);
  await mkdir(dir, { recursive: true });
  const url = process.env.TEST_DATABASE_URL;
  const template = url ? templateName() : null;
  // The PostgreSQL template's migrations mostly wait on the server: they run while PGlite's use the CPU.
  const [{ file, folder }] = await Promise.all([pgliteTemplates(dir), url && template ? postgresTemplate(url, template) : undefined]);
  project.provide('pgliteTemplate', file);
  project.provide('pgliteFolderTemplate', folder);
  project.provide('postgresTemplate', template);
  return async () => {
    await rm(dir, { recursive: true, force: true });
    if (url && template) {
      const admin = await openDatabase({ url: adminUrl(url) }, { poolSize: 1 });
      await admin.prisma.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
      await admin.close();
    }
  };
}

/**
 * A migrated PGlite database as a data dump, and the same as a closed data folder (what `seedPgliteFolder` copies).
 * Both start their WAL in a fresh segment after a checkpoint; the dump's segment is cut after that checkpoint's
 * page (see shortenWal), the folder's stays whole, as on any cluster a server starts on.
 */
async function pgliteTemplates(dir: string): Promise<{ file: string; folder: string }> {
  const lite = await openDatabase({ memory: true });
  await lite.migrate();
  const pglite = lite.pglite!;
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

async function postgresTemplate(url: string, template: string): Promise<void> {
  const admin = await openDatabase({ url: adminUrl(url) }, { poolSize: 1 });
  await admin.prisma.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
  await admin.prisma.$executeRawUnsafe(`CREATE DATABASE "${template}"`);
  const db = await openDatabase({ url: withDatabase(url, template) }, { poolSize: 1 });
  await db.migrate();
  await db.close();
  await admin.close();
}
