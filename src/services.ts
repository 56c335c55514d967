// The domain cores of one running app, built from configuration. Doors receive
// these; the cores never see a request.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/client.ts';
import { Directory } from './directory/directory.ts';
import { parseRetiredTargets } from './directory/retired.ts';
import { Ledger } from './ledger/ledger.ts';
import { FolderObjectStore, S3ObjectStore, type ObjectStore } from './ledger/object-store.ts';
import { SecretRedactor } from './secrets/redact.ts';
import { DirectoryResolver } from './resolver/directory-source.ts';
import { StreamRegistry } from './live/streams.ts';
import { MemorySignal, RedisSignal, type LiveSignal } from './live/signal.ts';
import { LedgerTail } from './live/tail.ts';
import { LedgerWriter, writerOptionsFromConfig } from './capture/writer.ts';
import { currentInvocation } from './context/request.ts';
import { Spool } from './ledger/spool.ts';
import type { SpoolIo } from './ledger/spool-files.ts';
import { Dispatcher } from './dispatch/dispatcher.ts';
import type { RecordWhen } from './dispatch/record.ts';
import type { EventInput } from './ledger/input.ts';
import { Authority } from './auth/authority.ts';
import { redisRateLimiter } from './auth/shared-rate.ts';
import { bothFeeds, localFeed, postgresFeed, redisFeed, Revocations } from './auth/revocations.ts';
import { withRootKey } from './auth/root-key.ts';
import { callAuthorizer } from './auth/calls.ts';
import { HOLD_MARGIN_MS, modelAuthorizer, startHoldSweep } from './auth/spend.ts';
import type { Logger } from './logger.ts';
import { checkpointKey, type CheckpointKey } from './ledger/checkpoint.ts';
import { ModelCatalog } from './model/catalog.ts';
import { ModelGateway } from './model/gateway.ts';
import { SpanFilings } from './capture/otel-lineage.ts';
import { filedUnder } from './ledger/action-filing.ts';
import { PriceBook } from './model/price.ts';
import { ingestGateFor, type IngestGate } from './ledger/ingest-gate.ts';

export type Services = {
  config: Config;
  logger: Logger;
  db: Database;
  ledger: Ledger;
  /** Replaces every registered secret value by its name; the last step before any byte leaves or is stored. */
  redactor: SecretRedactor;
  directory: Directory;
  /** Words → ranked Directory rows; follows the Directory's builds without blocking a query. */
  resolver: DirectoryResolver;
  /** The batched background ledger writer every capture goes through (writeNow for webhooks). */
  writer: LedgerWriter;
  /** The durable spool in front of the writer (DIRLEDGER_SPOOL=durable), else undefined. */
  spool: Spool | undefined;
  /** What is captured and not yet in the Ledger: /healthz and `ledgerSpool`. */
  spoolState(): SpoolState;
  /** The runner: a Directory row's contract → the outgoing call, recorded. */
  dispatcher: Dispatcher;
  /** Model rows of the Directory, routed by name (src/model/catalog.ts). */
  models: ModelCatalog;
  /** Model prices, each stored once under its SHA-256 (model_price) before an event names it. */
  prices: PriceBook;
  /** The model door's core: provider-shaped calls to the model rows' upstreams, recorded. */
  gateway: ModelGateway;
  /** What OTLP spans stored earlier were filed under (session, agent), for children sent in later requests. */
  spanFilings: SpanFilings;
  /** Admission of collectors' batches (ingest, OTLP, appendBatch): how many, and how many bytes, at once. */
  ingestGate: IngestGate;
  /** The live ledger: one shared tail reader that fans events out to subscriptions (src/live/tail.ts). */
  live: LedgerTail;
  /** Wakes the live tails of every instance after a commit: in-memory, or Redis pub/sub with REDIS_URL. */
  signal: LiveSignal;
  /** Streamed answers as they arrive: the tee publishes with `streams.publish(actionId, chunk)` (src/live/streams.ts). */
  streams: StreamRegistry;
  /** Verifies tokens, counts uses, records refusals. `required` false only with AUTHORITY=off. */
  authority: Authority;
  /** Signs ledger checkpoints: Ed25519, derived from the root key (src/ledger/checkpoint.ts). */
  checkpointKey: CheckpointKey;
  /** Revoked token ids: the append-only table, the in-memory Set every request checks, the feed between instances. */
  revocations: Revocations;
  /** False with AUTHORITY=off: every door open (benchmarks only). */
  authRequired: boolean;
  /** This server's base URL as written into contract forms (PUBLIC_URL, else set when the server listens). */
  publicUrl: string;
  /** Stops background work (the Directory's folder watcher); the database is closed by the caller. */
  close(): Promise<void>;
};

export type SpoolState = {
  mode: 'durable' | 'memory';
  /** Events captured and not yet committed to the Ledger. */
  events: number;
  /** Their bytes on disk (durable); null in memory mode. */
  bytes: number | null;
  /** Age of the oldest of them (durable); null in memory mode. */
  oldestAgeMs: number | null;
  /** Disk writes made since start, and the appends they carried and refused (durable); null in memory mode. */
  writes: number | null;
  appends: number | null;
  refused: number | null;
  /** Over the last durable writes (up to 1,024), in ms: the disk write, and an append's wait from its call until durable; null in memory mode or before the first. */
  writeP50Ms: number | null;
  writeP99Ms: number | null;
  appendP50Ms: number | null;
  appendP99Ms: number | null;
};

/** What memory mode has no figure for. */
const noSpoolFigures = {
  ...{ bytes: null, oldestAgeMs: null, writes: null, appends: null, refused: null },
  ...{ writeP50Ms: null, writeP99Ms: null, appendP50Ms: null, appendP99Ms: null },
} as const;

/** Test hooks: the spool's file operations (to inject a full disk or a failing sync). */
export type ServiceOptions = { spoolIo?: SpoolIo };

/** The demo Directory shipped in the repo: what the server serves unless DIRECTORY_DIR says otherwise. */
export const demoDirectoryDir = fileURLToPath(new URL('./directory/demo', import.meta.url));

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
  return config.DATABASE_URL ? openDatabase({ url: config.DATABASE_URL }) : openDatabase({ dataDir: path.join(config.DATA_DIR, 'pglite') });
}

/** Opens the database, applies pending migrations and builds every core. */
export async function createServices(keyless: Config, logger: Logger, db?: Database, options: ServiceOptions = {}): Promise<Services> {
  // The root key joins the secret registry before anything can redact, log or dispatch.
  const { config, rootKey, release: releaseRootKey } = withRootKey(keyless);
  const database = db ?? (await openConfiguredDatabase(config));
  const applied = await database.migrate();
  if (applied.length) logger.info({ applied }, 'applied migrations');
  const redactor = new SecretRedactor(config.secrets);
  const objects = createObjectStore(config);
  const ledger = new Ledger(database.prisma, objects, redactor, {
    inlineMaxBytes: config.INLINE_MAX_BYTES,
    payloadMaxBytes: config.PAYLOAD_MAX_BYTES,
    chain: config.LEDGER_CHAIN,
  });
  const directory = new Directory(database.prisma, logger, {
    dir: path.resolve(config.DIRECTORY_DIR ?? demoDirectoryDir),
    boundSecrets: new Set(Object.keys(config.secrets)),
    retired: parseRetiredTargets(config.RETIRED_HOSTS),
    watchDebounceMs: config.DIRECTORY_WATCH_MS,
  });
  await directory.build();
  directory.watch();
  const resolver = new DirectoryResolver(database.prisma, directory, logger);
  await resolver.sync();
  const signal: LiveSignal = config.REDIS_URL ? new RedisSignal(config.REDIS_URL, config.LIVE_CHANNEL, logger) : new MemorySignal();
  ledger.onAppended((result) => signal.notify(result.appended.at(-1)!.position));
  const live = new LedgerTail(database.prisma, signal, logger, {
    pageSize: config.LIVE_PAGE_SIZE,
    pollMs: config.LIVE_POLL_MS,
    bufferMax: config.LIVE_BUFFER_MAX,
  });
  const streams = new StreamRegistry(redactor, {
    retainMs: config.STREAM_RETAIN_MS,
    retainMaxBytes: config.PAYLOAD_MAX_BYTES,
    bufferMax: config.LIVE_BUFFER_MAX,
  });
  const publicUrl = (config.PUBLIC_URL ?? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${config.PORT}`).replace(/\/+$/, '');
  const spooled =
    config.DIRLEDGER_SPOOL === 'durable'
      ? await Spool.open({
          dir: config.SPOOL_DIR ?? path.join(config.DATA_DIR, 'spool'),
          maxBytes: config.SPOOL_MAX_BYTES,
          maxEvents: config.CAPTURE_QUEUE_MAX_EVENTS,
          waitMs: config.SPOOL_WAIT_MS,
          lingerMs: config.SPOOL_LINGER_MS,
          logger,
          redactor,
          ...(options.spoolIo && { io: options.spoolIo }),
        })
      : undefined;
  const spool = spooled?.spool;
  const writer = new LedgerWriter(ledger, { ...writerOptionsFromConfig(config, logger), ...(spool && { spool }) });
  if (spooled?.recovered.length) {
    // Before any door opens: what an earlier run captured and had not committed.
    logger.info({ events: spooled.recovered.length }, 'replaying the spool into the ledger');
    writer.recover(spooled.recovered);
    await writer.flush();
    logger.info({ events: spooled.recovered.length, duplicates: writer.stats().duplicates }, 'spool replayed');
  }
  const spoolState = (): SpoolState => {
    if (!spool) return { mode: 'memory', events: writer.stats().queued, ...noSpoolFigures };
    const { segments: _segments, waiting: _waiting, ...figures } = spool.stats();
    return { mode: 'durable', ...figures };
  };
  const revocations = new Revocations(
    database.sql,
    config.REDIS_URL && database.url
      ? bothFeeds(redisFeed(config.REDIS_URL, `${config.LIVE_CHANNEL}:revocations`, logger), postgresFeed(database.url, logger))
      : config.REDIS_URL
        ? redisFeed(config.REDIS_URL, `${config.LIVE_CHANNEL}:revocations`, logger)
        : database.url
          ? postgresFeed(database.url, logger)
          : localFeed(),
    logger,
  );
  await revocations.start();
  const sharedRate =
    config.REDIS_URL && config.AUTH_RATE_PER_SECOND > 0
      ? redisRateLimiter(config.REDIS_URL, `${config.LIVE_CHANNEL}:rate`, config.AUTH_RATE_PER_SECOND, config.AUTH_RATE_BURST, logger)
      : undefined;
  await sharedRate?.connected;
  const authority = new Authority({
    rootKey,
    audience: config.AUTH_AUDIENCE,
    sql: database.sql,
    record: (event) => writer.enqueue(event),
    ratePerSecond: config.AUTH_RATE_PER_SECOND,
    rateBurst: config.AUTH_RATE_BURST,
    revocations,
    ...(sharedRate && { sharedRate }),
  });
  /** The runner's and the model door's own events: `now` durable before it resolves, else staged for the door's answer. */
  const records = (events: EventInput[], when: RecordWhen) => {
    if (when === 'now' || !currentInvocation()?.answerWaitsForRecord) return writer.enqueue(events);
    // The door awaits writer.durable() before it answers; a failure to make them durable surfaces there.
    void writer.stage(events).catch((error) => logger.error({ err: error }, 'staged events could not be made durable'));
    return Promise.resolve();
  };
  const dispatcher = new Dispatcher({
    authorize: callAuthorizer(authority),
    selfOrigin: () => services.publicUrl,
    directory,
    record: records,
    redactor,
    secrets: config.secrets,
    retired: parseRetiredTargets(config.RETIRED_HOSTS),
    timeoutMs: config.DISPATCH_TIMEOUT_MS,
    responseMaxBytes: config.DISPATCH_RESPONSE_MAX_BYTES,
    streamCutoffMs: config.STREAM_CUTOFF_MS,
    suggest: (name) => resolver.meant(name),
    logger,
  });
  const holdLimitMs = config.MODEL_TIMEOUT_MS + config.SPOOL_WAIT_MS + HOLD_MARGIN_MS;
  const holdSweep = startHoldSweep({ sql: database.sql, record: (events) => writer.enqueue(events), logger, everyMs: Math.min(holdLimitMs, 60_000) });
  await holdSweep.first;
  const models = new ModelCatalog(database.prisma, directory, resolver);
  const prices = new PriceBook(database.sql);
  const gateway = new ModelGateway({
    catalog: models,
    prices,
    secrets: config.secrets,
    timeoutMs: config.MODEL_TIMEOUT_MS,
    payloadMaxBytes: config.PAYLOAD_MAX_BYTES,
    cutoffMs: config.STREAM_CUTOFF_MS,
    authorize: modelAuthorizer(authority, database.sql, holdLimitMs),
    track: (recording) => writer.track(recording),
    record: records,
    logger,
  });
  const close = async () => {
    try {
      await holdSweep.stop();
      await live.close();
      await signal.close();
      await revocations.close();
      await sharedRate?.close();
      streams.close();
      await directory.close();
      if (objects instanceof S3ObjectStore) objects.close();
      await spool?.close();
    } finally {
      releaseRootKey();
    }
  };
  const services: Services = {
    config,
    logger,
    db: database,
    ledger,
    redactor,
    directory,
    resolver,
    writer,
    spool,
    spoolState,
    dispatcher,
    models,
    prices,
    gateway,
    spanFilings: new SpanFilings((actionIds) => filedUnder(database.sql, actionIds)),
    ingestGate: ingestGateFor(database.kind, config),
    authority,
    checkpointKey: checkpointKey(rootKey),
    revocations,
    authRequired: config.AUTHORITY === 'required',
    live,
    signal,
    streams,
    publicUrl,
    close,
  };
  return services;
}
