// Entry only: read config, buildApp(), listen, SIGTERM/SIGINT → stop().
import v8 from 'node:v8';
import { type App, buildApp } from './app.ts';
import { type Config, ConfigError, parseConfig } from './config.ts';
import { withRootKey } from './auth/root-key.ts';
import { keepWasmOnBaselineCompiler } from './db/client.ts';
import { FolderLockedError } from './db/folder-lock.ts';
import { createLogger } from './logger.ts';

export async function serve(env: Record<string, string | undefined> = process.env): Promise<void> {
  let config: Config;
  try {
    config = parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  boundHeapGrowth();
  if (config.DATABASE_URL) keepWasmOnBaselineCompiler();
  // The root key joins the secret registry before the logger exists, so no log line can hold it.
  const keyed = withRootKey(config);
  config = keyed.config;
  const logger = createLogger(config.LOG_LEVEL, config.secrets);
  let app: App;
  try {
    app = await buildApp(config, { logger });
  } catch (error) {
    if (error instanceof FolderLockedError) {
      process.stderr.write(`dirledger: ${error.message}\n`);
      process.exit(3);
    }
    throw error;
  }
  // The demo Directory's model rows point at a fake upstream on this machine, started only when asked.
  const fake = config.DIRLEDGER_FAKE_MODELS ? await (await import('./model/fake-upstream.ts')).startFakeUpstream(config.FAKE_MODELS_PORT) : undefined;
  if (fake) logger.info({ origin: fake.origin }, 'fake model upstream (demo-gpt, demo-claude) is listening');
  const { url } = await app.start();
  logger.info({ url, database: app.services.db.kind, node: process.version }, 'dirledger is listening');
  process.stdout.write(`dirledger: GraphQL and GraphiQL at ${url}\n`);
  if (keyed.created) {
    // Shown once, on the start that created the root key; never logged. `dirledger token admin` mints another.
    process.stdout.write(
      `dirledger: a root key was created in ${config.DATA_DIR}/root.key. Admin token (shown once):\n\n  ${app.services.authority.mintToken()}\n\n` +
        'Send it as "Authorization: Bearer <token>" (in GraphiQL: the Headers tab), or set DIRLEDGER_TOKEN for the CLI.\n',
    );
  }
  if (!app.services.authRequired) logger.warn('AUTHORITY=off: every door is open to anyone who can reach this server');
  if (app.services.db.kind === 'postgres') {
    const { privilegeWarnings } = await import('./db/roles.ts');
    for (const warning of await privilegeWarnings(app.services.db.sql)) logger.warn(warning);
  }
  if (config.LEDGER_CHAIN === 'off') logger.warn('LEDGER_CHAIN=off: appended batches are not chained, and `dirledger verify` will report them');
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'stopping');
    await app.stop();
    await fake?.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/**
 * After each full collection the old generation may grow to 2× what survived (V8's ceiling on
 * low-memory devices) instead of up to 4×: under load, garbage otherwise piles up between full collections
 * (ingest max RSS ~340 → ~265 MB for ~3% more CPU; 1.5× saved 30 MB more for ~15%). V8 reads it at
 * every collection, so it holds however the server is started.
 */
function boundHeapGrowth(): void {
  v8.setFlagsFromString('--heap-growing-percent=100');
}

if (import.meta.url === `file://${process.argv[1]}`) await serve();
