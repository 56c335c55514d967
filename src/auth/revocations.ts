// Revoked token ids: an append-only table (token_revocation) as the record, an in-memory Set as
// the check every request makes. Each instance learns a revocation from a feed: Redis pub/sub when
// REDIS_URL is set, and PostgreSQL LISTEN/NOTIFY whenever the database is PostgreSQL (the table's
// trigger notifies on commit, so a revocation travels while Redis is down),
// and re-reads the whole table whenever its feed (re)connects, so a message missed while
// disconnected is never missed for good. No polling.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { SqlExecutor } from '../db/sql.ts';
import type { Logger } from '../logger.ts';

// ioredis and pg are loaded by the feeds that use them: a server on PGlite without REDIS_URL loads neither.
const require = createRequire(import.meta.url);

export type Revocation = { tokenId: string; reason: string; revokedBy: string; actionId: string; revokedAt: Date };

/** How instances tell each other of a revocation. */
export interface RevocationFeed {
  readonly kind: 'local' | 'postgres' | 'redis' | 'redis+postgres';
  /** Starts listening: `heard` for every id announced, `connected` each time the feed (re)connects. */
  start(heard: (tokenId: string) => void, connected: () => void): void;
  /** Tells the other instances (the PostgreSQL trigger already does, on commit). */
  announce(tokenId: string): void;
  close(): Promise<void>;
}

/** One process (PGlite): nothing to tell anyone. */
export const localFeed = (): RevocationFeed => ({ kind: 'local', start: () => {}, announce: () => {}, close: async () => {} });

export const revocationChannel = 'dirledger_token_revocation';
/** The name the feed's own connection carries (pg application_name, redis CLIENT SETNAME). */
export const feedConnectionName = 'dirledger-revocations';
const TOKEN_ID = /^[0-9a-f]{32}$/;

/** LISTEN on a connection of its own; reconnects with backoff and says so, so the table is re-read. */
export function postgresFeed(url: string, logger: Logger): RevocationFeed {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  return {
    kind: 'postgres',
    start(heard, connected) {
      const connect = async () => {
        if (closed) return;
        const next = new (require('pg') as typeof pg).Client({ connectionString: url, application_name: feedConnectionName });
        const again = (error?: Error) => {
          if (client !== next || closed) return;
          client = undefined;
          next.end().catch(() => {});
          if (failures++ === 0) logger.warn({ err: error }, 'revocation feed (LISTEN) lost; reconnecting, then re-reading every revocation');
          retry = setTimeout(() => void connect(), Math.min(failures * 100, 1000));
          retry.unref();
        };
        client = next;
        next.on('error', again);
        next.on('end', () => again());
        next.on('notification', (message) => {
          if (message.channel === revocationChannel && message.payload && TOKEN_ID.test(message.payload)) heard(message.payload);
        });
        try {
          await next.connect();
          await next.query(`LISTEN ${revocationChannel}`);
        } catch (error) {
          return again(error as Error);
        }
        if (failures > 0) logger.info('revocation feed (LISTEN) back');
        failures = 0;
        connected();
      };
      void connect();
    },
    announce() {},
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}

/** Redis pub/sub; ioredis resubscribes on reconnect, and every `ready` re-reads the table. */
export function redisFeed(url: string, channel: string, logger: Logger): RevocationFeed {
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
  const options = { retryStrategy: (times: number) => Math.min(times * 100, 1000) };
  const publisher: Redis = new RedisClient(url, { ...options, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const subscriber: Redis = new RedisClient(url, { ...options, maxRetriesPerRequest: null, connectionName: feedConnectionName });
  let warned = false;
  const onError = (error: Error) => {
    if (!warned) logger.warn({ err: error }, 'revocation feed (redis) unavailable; the table is re-read when it is back');
    warned = true;
  };
  publisher.on('error', onError);
  subscriber.on('error', onError);
  return {
    kind: 'redis',
    start(heard, connected) {
      subscriber.on('message', (from: string, message: string) => {
        if (from === channel && TOKEN_ID.test(message)) heard(message);
      });
      subscriber.on('ready', () => {
        warned = false;
        connected();
      });
      subscriber.subscribe(channel).catch(() => {});
    },
    announce(tokenId) {
      publisher
        .publish(channel, tokenId)
        .catch((error: Error) =>
          logger.error({ err: error, tokenId }, 'announcing a revocation on redis failed; other instances learn it when their feed reconnects'),
        );
    },
    async close() {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}

/**
 * Redis pub/sub and PostgreSQL LISTEN together (REDIS_URL on PostgreSQL): the table's trigger
 * notifies whatever Redis does, so a revocation still reaches every instance within a second while
 * Redis is down, instead of when it is back. An id heard twice is added once.
 */
export function bothFeeds(redis: RevocationFeed, postgres: RevocationFeed): RevocationFeed {
  return {
    kind: 'redis+postgres',
    start(heard, connected) {
      redis.start(heard, connected);
      postgres.start(heard, connected);
    },
    announce(tokenId) {
      redis.announce(tokenId);
      postgres.announce(tokenId);
    },
    async close() {
      await Promise.all([redis.close(), postgres.close()]);
    },
  };
}

const columns = 'token_id AS "tokenId", reason, revoked_by AS "revokedBy", action_id AS "actionId", revoked_at AS "revokedAt"';

export class Revocations {
  private readonly ids = new Set<string>();
  private readonly listeners = new Set<(tokenId: string) => void>();
  private loading: Promise<void> | undefined;
  private reloadAgain = false;

  private readonly sql: SqlExecutor;
  readonly feed: RevocationFeed;
  private readonly logger: Logger;
  constructor(sql: SqlExecutor, feed: RevocationFeed, logger: Logger) {
    this.sql = sql;
    this.feed = feed;
    this.logger = logger;
  }

  /** Listens first, then reads the table, so a revocation committed in between is not missed. */
  async start(): Promise<void> {
    this.feed.start(
      (tokenId) => this.add(tokenId),
      () => void this.reload(),
    );
    await this.reload();
  }

  /** The first id of a token's lineage (itself, then its issuers) that is revoked. Memory only. */
  revokedIn(lineage: readonly string[]): string | undefined {
    if (this.ids.size === 0) return undefined;
    for (const id of lineage) if (this.ids.has(id)) return id;
    return undefined;
  }

  get size(): number {
    return this.ids.size;
  }

  /** Re-reads every revocation; concurrent calls share one read, and one asked during a read runs after it. */
  reload(): Promise<void> {
    if (this.loading) {
      this.reloadAgain = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.reloadAgain = false;
        try {
          const rows = await this.sql.query<{ token_id: string }>('SELECT token_id FROM token_revocation');
          for (const row of rows) this.add(row.token_id.trim());
        } catch (error) {
          this.logger.error({ err: error }, 're-reading revocations failed; the ones already known still apply');
        }
      } while (this.reloadAgain);
      this.loading = undefined;
    })();
    return this.loading;
  }

  /** Records a revocation (the first one of an id stands; a second is answered with the first). */
  async revoke(input: Omit<Revocation, 'revokedAt'>): Promise<{ revocation: Revocation; already: boolean }> {
    const inserted = await this.sql.query<Revocation>(
      `INSERT INTO token_revocation (token_id, reason, revoked_by, action_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (token_id) DO NOTHING RETURNING ${columns}`,
      [input.tokenId, input.reason, input.revokedBy, input.actionId],
    );
    this.add(input.tokenId);
    if (inserted[0]) {
      this.feed.announce(input.tokenId);
      return { revocation: { ...inserted[0], revokedAt: new Date(inserted[0].revokedAt) }, already: false };
    }
    return { revocation: (await this.find([input.tokenId]))!, already: true };
  }

  /** The revocation of the first revoked id of a lineage, read from the table. */
  async find(lineage: readonly string[]): Promise<Revocation | null> {
    if (lineage.length === 0) return null;
    const rows = await this.sql.query<Revocation>(`SELECT ${columns} FROM token_revocation WHERE token_id = ANY($1::bpchar[])`, [[...lineage]]);
    for (const id of lineage) {
      const row = rows.find((r) => r.tokenId === id);
      if (row) return { ...row, revokedAt: new Date(row.revokedAt) };
    }
    return null;
  }

  /** Calls `listener` with each id newly known as revoked (live subscriptions end on it); returns the unsubscribe. */
  onRevoked(listener: (tokenId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private add(tokenId: string): void {
    if (this.ids.has(tokenId)) return;
    this.ids.add(tokenId);
    for (const listener of this.listeners) listener(tokenId);
  }

  close(): Promise<void> {
    this.listeners.clear();
    return this.feed.close();
  }
}
