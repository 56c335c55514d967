// The domain cores of one running app, built from configuration. Doors receive
// these; the cores never see a request.
import path from 'node:path';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/client.ts';
import { Ledger } from './ledger/ledger.ts';
import { FolderObjectStore, S3ObjectStore, type ObjectStore } from './ledger/object-store.ts';
import { SecretRedactor } from './ledger/redact.ts';
import type { Logger } from './logger.ts';

export type Services = {
  config: Config;
  logger: Logger;
  db: Database;
  ledger: Ledger;
};

export function createObjectStore(config: Config): ObjectStore {
  if (config.BLOB_STORE === 's3') {
    return new S3ObjectStore({
      endpoint: config.S3_ENDPOINT!,
      bucket: config.S3_BUCKET!,
      region: config.S3_REGION,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    });
  }
  return new FolderObjectStore(config.BLOB_DIR ?? path.join(config.DATA_DIR, 'blobs'));
}

export async function openConfiguredDatabase(config: Config): Promise<Database> {
  return config.DATABASE_URL
    ? openDatabase({ url: config.DATABASE_URL })
    : openDatabase({ dataDir: path.join(config.DATA_DIR, 'pglite') });
}

/** Opens the database, applies pending migrations and builds every core. */
export async function createServices(config: Config, logger: Logger, db?: Database): Promise<Services> {
  const database = db ?? (await openConfiguredDatabase(config));
  const applied = await database.migrate();
  if (applied.length) logger.info({ applied }, 'applied migrations');
  const ledger = new Ledger(database.prisma, createObjectStore(config), new SecretRedactor(config.secrets), {
    inlineMaxBytes: config.INLINE_MAX_BYTES,
    payloadMaxBytes: config.PAYLOAD_MAX_BYTES,
  });
  return { config, logger, db: database, ledger };
}
