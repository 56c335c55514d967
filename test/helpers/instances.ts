// Two instances of the app on one PostgreSQL database, signing with one root key: A is a TestApp,
// B a second buildApp on A's database with the same environment and a data folder of its own.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp, type App } from '../../src/app.ts';
import { parseConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { createLogger } from '../../src/logger.ts';
import { startTestApp, type TestApp } from './app.ts';

export type SecondInstance = { app: App; origin: string; url: string; stop(): Promise<void> };

/** Two instances of the app on one PostgreSQL database, signing with one root key. */
export async function twoInstances(env: Record<string, string>): Promise<{ a: TestApp; b: SecondInstance; stop(): Promise<void> }> {
  const shared = { DIRLEDGER_SECRET_DIRLEDGER_ROOT_KEY: randomBytes(32).toString('hex'), ...env };
  const a = await startTestApp('postgres', shared);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-app-b-'));
  const config = parseConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', AUTH_RATE_PER_SECOND: '0', ...shared });
  const app = await buildApp(config, { db: await openDatabase({ url: a.db.url! }), logger: createLogger('silent') });
  const { url, port } = await app.start(0, '127.0.0.1');
  const b = {
    app,
    url,
    origin: `http://127.0.0.1:${port}`,
    stop: async () => {
      await app.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return {
    a,
    b,
    stop: async () => {
      await b.stop();
      await a.stop();
    },
  };
}
