// Per-token rate limits shared by every instance (REDIS_URL): rate-limiter-flexible's Redis store,
// one fixed window of `burst` requests per `burst / rate` seconds (whole seconds, as Redis expiry
// is), so the steady rate is the configured one and a token may spend its burst at once. The library
// has no smoother Redis limiter (no token bucket; BurstyRateLimiter is two fixed windows), so over a
// period shorter than ten windows a token can get one window more or less than rate × period
// (`npm run bench -- rate`). When Redis cannot answer, its insurance limiter counts per process, and
// that is logged loudly both ways.
import { createRequire } from 'node:module';
import type { Logger } from '../logger.ts';

// ioredis and rate-limiter-flexible are loaded by redisRateLimiter only: without REDIS_URL they never load.
const require = createRequire(import.meta.url);

/** How long a starting server waits for its first Redis connection before counting per process. */
const CONNECT_WAIT_MS = 3_000;

export type RateVerdict = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface SharedRateLimiter {
  readonly kind: 'redis';
  /** Takes one request from `key`'s window. Never throws: Redis trouble falls back to this process's count. */
  take(key: string): Promise<RateVerdict>;
  /** Settles once the first connection attempt has succeeded or failed (at most CONNECT_WAIT_MS). */
  readonly connected: Promise<void>;
  /** True while the last answer came from the per-process insurance limiter. */
  readonly degraded: boolean;
  close(): Promise<void>;
}

/** The window a rate and burst become: `points` requests per `duration` whole seconds. */
export function windowOf(ratePerSecond: number, burst: number): { points: number; duration: number } {
  const duration = Math.max(1, Math.ceil(burst / ratePerSecond));
  return { points: Math.max(1, Math.round(ratePerSecond * duration)), duration };
}

export function redisRateLimiter(url: string, keyPrefix: string, ratePerSecond: number, burst: number, logger: Logger): SharedRateLimiter {
  const { Redis } = require('ioredis') as typeof import('ioredis');
  const { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } = require('rate-limiter-flexible') as typeof import('rate-limiter-flexible');
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: (times) => Math.min(times * 100, 1000) });
  let clientWarned = false;
  client.on('error', (error) => {
    if (!clientWarned) logger.warn({ err: error }, 'rate limit store (redis) connection error');
    clientWarned = true;
  });
  client.on('ready', () => (clientWarned = false));
  // Until its connection is ready every answer would come from the insurance limiter: the server waits.
  const connected = new Promise<void>((resolve) => {
    client.once('ready', resolve);
    client.once('error', () => resolve());
    setTimeout(resolve, CONNECT_WAIT_MS).unref();
  });
  const window = windowOf(ratePerSecond, burst);
  // rate-limiter-flexible hands the insurance limiter the same options object it was given, so each
  // call can tell which store answered it.
  const insured = Symbol('answered by the per-process insurance limiter');
  class Insurance extends RateLimiterMemory {
    override consume(key: string | number, points?: number, options?: Record<string | symbol, unknown>) {
      if (options) options[insured] = true;
      return super.consume(key, points, options);
    }
  }
  const limiter = new RateLimiterRedis({
    storeClient: client,
    keyPrefix,
    ...window,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new Insurance({ keyPrefix: `${keyPrefix}:local`, ...window }),
  });
  // Calls finish out of order; the state follows the latest call to start, so it cannot flap.
  let degraded = false;
  let started = 0;
  let decided = 0;
  const note = (call: number, options: Record<symbol, unknown>) => {
    if (call < decided) return;
    decided = call;
    const perProcess = options[insured] === true;
    if (perProcess && !degraded)
      logger.error({ ...window }, 'RATE LIMITS ARE PER PROCESS: redis is unreachable, each instance now allows every token its full rate until redis is back');
    if (!perProcess && degraded) logger.warn('rate limits are shared again: redis answers');
    degraded = perProcess;
  };
  return {
    kind: 'redis',
    connected,
    get degraded() {
      return degraded;
    },
    async take(key) {
      const call = ++started;
      const options: Record<symbol, unknown> = {};
      try {
        await limiter.consume(key, 1, options);
        note(call, options);
        return { ok: true };
      } catch (rejected) {
        note(call, options);
        if (rejected instanceof RateLimiterRes) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(rejected.msBeforeNext / 1000)) };
        logger.error({ err: rejected }, 'rate limiter failed; the request is let through');
        return { ok: true };
      }
    },
    async close() {
      client.disconnect();
    },
  };
}
