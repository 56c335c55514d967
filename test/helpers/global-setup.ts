// Migrates once, then every test file clones: a PGlite data dump and a data folder made from it, for servers
// started on a folder (both made in a child, test/helpers/pglite-templates.ts), and (when TEST_DATABASE_URL is
// set) a PostgreSQL template database.
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/client.ts';
import { adminUrl, templateName, testDatabasePrefix, withDatabase } from './database.ts';
import { makePgliteTemplates } from './pglite-templates.ts';

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
  const [{ file, folder }] = await Promise.all([makePgliteTemplates(dir), url && template ? postgresTemplate(url, template) : undefined]);
  project.provide('pgliteTemplate', file);
  project.provide('pgliteFolderTemplate', folder);
  project.provide('postgresTemplate', template);
  return async () => {
    await rm(dir, { recursive: true, force: true });
    if (url && template) {
      const admin = await openDatabase({ url: adminUrl(url) }, { poolSize: 1 });
      // The databases the workers kept for reuse (test/helpers/database-pool.ts), then the template.
      const kept = await admin.sql.query<{ name: string }>(`SELECT datname AS name FROM pg_database WHERE starts_with(datname, $1)`, [
        testDatabasePrefix(template),
      ]);
      for (const { name } of kept) await admin.prisma.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.prisma.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
      await admin.close();
    }
  };
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
