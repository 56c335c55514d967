// Migrations: Prisma's own folder applied through the WebAssembly schema engine, and the
// cheap "anything pending?" read that lets an up-to-date start skip the engine.
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import { diffMigrations, hasPendingMigrations, migrationsDir } from '../../src/db/schema-engine.ts';
import { createTestDatabase, databaseKinds } from '../helpers/database.ts';

describe('migrations on an empty embedded database', () => {
  it("are pending, apply in order with Prisma's _prisma_migrations table, then nothing is pending", async () => {
    const db = await openDatabase({ memory: true });
    try {
      expect(await hasPendingMigrations(db.sql)).toBe(true);
      const folders = (await readdir(migrationsDir, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort();
      expect(await db.migrate()).toEqual(folders);
      expect(await hasPendingMigrations(db.sql)).toBe(false);
      expect(await db.migrate()).toEqual([]);
      const recorded = await db.sql.query<{ migration_name: string }>('SELECT migration_name FROM _prisma_migrations ORDER BY migration_name');
      expect(recorded.map((r) => r.migration_name)).toEqual(folders);
    } finally {
      await db.close();
    }
  });
});

describe('the migrations folder and prisma/schema.prisma', () => {
  it('agree: the diff from one to the other is empty (a schema change without its migration fails here)', async () => {
    const db = await openDatabase({ memory: true });
    try {
      expect(await diffMigrations(db.adapterFactory)).toBe('');
    } finally {
      await db.close();
    }
  });
});

describe.each(databaseKinds)('pending migrations on %s', (kind) => {
  it('counts a migration whose row is missing or unfinished as pending', async () => {
    const db = await createTestDatabase(kind);
    try {
      expect(await hasPendingMigrations(db.sql)).toBe(false);
      await db.sql.query(`UPDATE _prisma_migrations SET finished_at = NULL WHERE migration_name = (SELECT max(migration_name) FROM _prisma_migrations)`);
      expect(await hasPendingMigrations(db.sql)).toBe(true);
    } finally {
      await db.drop();
    }
  });
});
