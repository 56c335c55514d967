// Per-token rate limits shared by every instance (REDIS_URL): rate-limiter-flexible's Redis store,
// one fixed window of `burst` requests per `burst / rate` seconds (whole seconds, as Redis expiry
// is), so the steady rate is the configured one and a token may spend its burst at once. When Redis
// cannot answer, its insurance limiter counts per process, and that is logged loudly both ways.
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../logger.ts';

export type RateVerdict = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface SharedRateLimiter {
  readonly kind: 'redis';
  /** Takes one request from `key`'s window. Never throws: Redis trouble falls back to this process's count. */
  take(key: string): Promise<RateVerdict>;
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
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: (times) => Math.min(times * 100, 1000) });
  let clientWarned = false;
  client.on('error', (error) => {
    if (!clientWarned) logger.warn({ err: error }, 'rate limit store (redis) connection error');
    clientWarned = true;
  });
  client.on('ready', () => (clientWarned = false));
  const window = windowOf(ratePerSecond, burst);
  let degraded = false;
  let fellBack = false;
  class Insurance extends RateLimiterMemory {
    override consume(key: string | number, points?: number, options?: Record<string, unknown>) {
      fellBack = true;
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
  const note = () => {
    if (fellBack && !degraded) logger.error({ ...window }, 'RATE LIMITS ARE PER PROCESS: redis is unreachable, each instance now allows every token its full rate until redis is back');
    if (!fellBack && degraded) logger.warn('rate limits are shared again: redis answers');
    degraded = fellBack;
    fellBack = false;
  };
  return {
    kind: 'redis',
    get degraded() {
      return degraded;
    },
    async take(key) {
      try {
        await limiter.consume(key);
        note();
        return { ok: true };
      } catch (rejected) {
        note();
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
