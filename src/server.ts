// Entry only: read config, buildApp(), listen, SIGTERM/SIGINT → stop().
import { buildApp } from './app.ts';
import { ConfigError, parseConfig } from './config.ts';
import { createLogger } from './logger.ts';

export async function serve(env: Record<string, string | undefined> = process.env): Promise<void> {
  let config;
  try {
    config = parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.LOG_LEVEL, config.secrets);
  const app = await buildApp(config, { logger });
  const { url } = await app.start();
  logger.info({ url, database: app.services.db.kind }, 'dirledger is listening');
  process.stdout.write(`dirledger: GraphQL and GraphiQL at ${url}\n`);
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'stopping');
    await app.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

if (import.meta.url === `file://${process.argv[1]}`) await serve();
