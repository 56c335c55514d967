// The dirledger CLI. Each command is a thin door over the same cores the server uses.
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, parseConfig } from '../config.ts';
import { diffMigrations } from '../db/schema-engine.ts';
import { openConfiguredDatabase } from '../services.ts';
import { serve } from '../server.ts';

function config() {
  try {
    return parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

function port(value: string): string {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError(`expected a port from 0 to 65535, got ${JSON.stringify(value)}`);
  return value;
}

export const program = new Command()
  .name('dirledger')
  .description('The Directory (what could be done) and the Ledger (what was done).')
  .showHelpAfterError();

program
  .command('serve')
  .description('Start the GraphQL server (applies pending migrations first).')
  .option('-p, --port <port>', 'port to listen on (overrides PORT)', port)
  .action(async (opts: { port?: string }) => {
    await serve({ ...process.env, ...(opts.port ? { PORT: opts.port } : {}) });
  });

program
  .command('migrate')
  .description('Apply pending database migrations and exit.')
  .action(async () => {
    const db = await openConfiguredDatabase(config());
    try {
      const applied = await db.migrate();
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'no pending migrations\n');
    } finally {
      await db.close();
    }
  });

program
  .command('migration-diff')
  .description('Print the SQL that takes prisma/migrations to prisma/schema.prisma (for a new migration).')
  .action(async () => {
    const { openDatabase } = await import('../db/client.ts');
    const db = await openDatabase({ memory: true });
    try {
      process.stdout.write(await diffMigrations(db.adapterFactory));
    } finally {
      await db.close();
    }
  });

await program.parseAsync(process.argv);
