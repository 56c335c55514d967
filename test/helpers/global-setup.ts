// Migrates once, then every test file clones: a PGlite data dump, and (when
// TEST_DATABASE_URL is set) a PostgreSQL template database.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/client.ts';
import { adminUrl, templateName, withDatabase } from './database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    postgresTemplate: string | null;
  }
}

export default async function setup(project: TestProject) {
  const dir = path.join(os.tmpdir(), `dirledger-test-${process.pid}`);
  await mkdir(dir, { recursive: true });
  const lite = await openDatabase({ memory: true });
  await lite.migrate();
  const dump = await lite.pglite!.dumpDataDir('none');
  const file = path.join(dir, 'pglite-template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  await lite.close();
  project.provide('pgliteTemplate', file);

  const url = process.env.TEST_DATABASE_URL;
  const template = url ? templateName() : null;
  project.provide('postgresTemplate', template);
  if (url && template) {
    const admin = await openDatabase({ url: adminUrl(url) }, { poolSize: 1 });
    await admin.prisma.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
    await admin.prisma.$executeRawUnsafe(`CREATE DATABASE "${template}"`);
    const db = await openDatabase({ url: withDatabase(url, template) }, { poolSize: 1 });
    await db.migrate();
    await db.close();
    await admin.close();
  }
  return async () => {
    await rm(dir, { recursive: true, force: true });
    if (url && template) {
      const admin = await openDatabase({ url: adminUrl(url) }, { poolSize: 1 });
      await admin.prisma.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
      await admin.close();
    }
  };
}
