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

program
  .command('find')
  .description('Resolve words to ranked Directory rows, asking a running server (GET /api/directory/resolve).')
  .argument('<words...>', 'what you are looking for, in any words')
  .option('--url <url>', 'the server (default DIRLEDGER_URL, else http://127.0.0.1:PORT)')
  .option('--min-score <n>', 'refuse anything scored below this')
  .option('--limit <n>', 'at most this many rows (default 10)')
  .option('--types <types>', 'only these types, comma-separated')
  .option('--json', 'print the answer as JSON, exactly as the HTTP door sends it')
  .action(async (words: string[], opts: { url?: string; minScore?: string; limit?: string; types?: string; json?: boolean }) => {
    const { find } = await import('./find.ts');
    const url = opts.url ?? process.env.DIRLEDGER_URL ?? `http://127.0.0.1:${process.env.PORT || 4000}`;
    process.exitCode = await find(words, { ...opts, url });
  });

await program.parseAsync(process.argv);
