// The migration-aware adapter factory for PostgreSQL, shared by the client and the migration worker.
import type { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type pg from 'pg';

/**
 * @prisma/adapter-pg splits a migration script on every `;`, which breaks
 * function bodies. Send each script whole instead: PostgreSQL's simple query
 * protocol runs it as one implicit transaction.
 */
export function wholeScriptMigrations(factory: PrismaPg, pool: pg.Pool): SqlMigrationAwareDriverAdapterFactory {
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
