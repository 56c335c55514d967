// Entry only: read config, buildApp(), listen, SIGTERM/SIGINT → stop().
import v8 from 'node:v8';
import { type App, buildApp } from './app.ts';
import { type Config, ConfigError, parseConfig } from './config.ts';
import { withRootKey } from './auth/root-key.ts';
import { keepWasmOnBaselineCompiler } from './db/client.ts';
import { FolderLockedError } from './db/folder-lock.ts';
import { directoryHealth } from './health.ts';
import { trimWhenIdle } from './idle-trim.ts';
import { createLogger } from './logger.ts';
import { EXIT_UNAVAILABLE, startProblem } from './startup-errors.ts';

/** How to get an admin token on a start that prints none (the root key exists already, or the start failed). */
const recoverAdminToken = (config: Config) =>
  `an admin token: \`npx dirledger token admin\` mints one from this server's root key (DIRLEDGER_ROOT_KEY, else ${config.DATA_DIR}/root.key).`;

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
  function fail(error: unknown, stage: 'open' | 'listen'): never {
    const problem = error instanceof FolderLockedError ? { message: error.message, exitCode: EXIT_UNAVAILABLE } : startProblem(error, config, stage);
    if (!problem) throw error;
    process.stderr.write(`dirledger: ${problem.message}\n`);
    if (keyed.created) process.stderr.write(`dirledger: ${recoverAdminToken(config)}\n`);
    process.exit(problem.exitCode);
  }
  let app: App;
  try {
    app = await buildApp(config, { logger });
  } catch (error) {
    fail(error, 'open');
  }
  let url: string;
  try {
    ({ url } = await app.start());
  } catch (error) {
    await app.stop().catch(() => {});
    fail(error, 'listen');
  }
  // The demo Directory's model rows point at a fake upstream on this machine, started only when asked.
  const fake = config.DIRLEDGER_FAKE_MODELS ? await (await import('./model/fake-upstream.ts')).startFakeUpstream(config.FAKE_MODELS_PORT) : undefined;
  if (fake) logger.info({ origin: fake.origin }, 'fake model upstream (demo-gpt, demo-claude) is listening');
  logger.info({ url, database: app.services.db.kind, node: process.version }, 'dirledger is listening');
  process.stdout.write(`dirledger: GraphQL and GraphiQL at ${url}\n`);
  if (keyed.created) {
    // Shown once, on the start that created the root key; never logged. `dirledger token admin` mints another.
    process.stdout.write(
      `dirledger: a root key was created in ${config.DATA_DIR}/root.key. Admin token (shown once):\n\n  ${app.services.authority.mintToken()}\n\n` +
        'Send it as "Authorization: Bearer <token>" (in GraphiQL: the Headers tab), or set DIRLEDGER_TOKEN for the CLI.\n',
    );
  } else if (app.services.authRequired) {
    process.stdout.write(`dirledger: ${recoverAdminToken(config)}\n`);
  }
  const directory = await directoryHealth(app.services);
  for (const problem of directory.problems) process.stderr.write(`dirledger: Directory degraded: ${problem}\n`);
  if (!app.services.authRequired) logger.warn('AUTHORITY=off: every door is open to anyone who can reach this server');
  if (app.services.db.kind === 'postgres') {
    const { privilegeWarnings } = await import('./db/roles.ts');
    for (const warning of await privilegeWarnings(app.services.db.sql)) logger.warn(warning);
  }
  const trim =
    config.IDLE_TRIM_MS > 0
      ? trimWhenIdle({
          quietMs: config.IDLE_TRIM_MS,
          started: () => app.activity().started,
          inFlight: () => app.activity().inFlight > 0,
          onTrim: ({ ms, rssBefore, rssAfter }) => logger.debug({ ms: Math.round(ms), rssBefore, rssAfter }, 'quiet: memory given back'),
        })
      : undefined;
  if (config.LEDGER_CHAIN === 'off') logger.warn('LEDGER_CHAIN=off: appended batches are not chained, and `dirledger verify` will report them');
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'stopping');
    trim?.stop();
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
