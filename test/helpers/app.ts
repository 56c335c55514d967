// Starts the real app on a free port, against a fresh test database.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp, type App } from '../../src/app.ts';
import { parseConfig, type Config } from '../../src/config.ts';
import type { DestinationStream } from 'pino';
import { createLogger } from '../../src/logger.ts';
import type { SpoolIo } from '../../src/ledger/spool-files.ts';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './database.ts';

export type TestApp = {
  app: App;
  config: Config;
  db: TestDatabase;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** The GraphQL endpoint. */
  url: string;
  dataDir: string;
  /** An admin token (no caveats), minted in process; every helper below sends it. */
  token: string;
  /** `{ authorization: "Bearer <admin token>" }`, for requests a test makes itself. */
  auth: Record<string, string>;
  /** Mints a token with these caveats (e.g. "tools = ECHO", "uses <= 5"). */
  mint(...caveats: string[]): string;
  /** POSTs a GraphQL operation and returns the parsed JSON. */
  gql<T = any>(query: string, variables?: Record<string, unknown>): Promise<{ data?: T; errors?: any[] }>;
  /** Runs a typed document (test/gql) and returns its typed result. */
  op<R, V>(document: TypedDocumentNode<R, V>, variables?: V): Promise<{ data?: R; errors?: any[] }>;
  stop(): Promise<void>;
};

/** `logTo`: the server's log lines (at LOG_LEVEL, secrets redacted as in production) go there instead of nowhere. */
export async function startTestApp(
  kind: DatabaseKind = 'pglite',
  env: Record<string, string> = {},
  options: { logTo?: DestinationStream; spoolIo?: SpoolIo } = {},
): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-app-'));
  // Per-token rate limits are tested on their own; elsewhere one admin token makes many calls.
  const config = parseConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', AUTH_RATE_PER_SECOND: '0', ...env });
  const db = await createTestDatabase(kind);
  const logger = options.logTo ? createLogger(config.LOG_LEVEL, config.secrets, 1, options.logTo) : createLogger('silent');
  const app = await buildApp(config, { db, logger, ...(options.spoolIo && { spoolIo: options.spoolIo }) });
  const { url, port } = await app.start(0, '127.0.0.1');
  const origin = `http://127.0.0.1:${port}`;
  const mint = (...caveats: string[]) => app.services.authority.mintToken(caveats);
  const token = mint();
  const auth = { authorization: `Bearer ${token}` };
  const gql: TestApp['gql'] = async (query, variables) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...auth },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as any;
  };
  return {
    app,
    config,
    db,
    origin,
    url,
    dataDir,
    token,
    auth,
    mint,
    gql,
    op: (document, variables) => gql(print(document), variables as Record<string, unknown>),
    async stop() {
      await app.stop();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
