// Shared rate limits: how close a token's granted rate over two instances stays to its configured rate over periods of every length.
//
//   npm run bench -- rate [--rate 20] [--burst 20] [--seconds 24] [--loops 4]
//
// Two shared limiters (src/auth/shared-rate.ts: rate-limiter-flexible on Redis, each with its own
// Redis connection, as two instances have) take requests for one key from `loops` loops each, as fast
// as Redis answers, for `seconds`; beside them, this process's own limiter (Authority.rate without
// Redis) on its own. Every grant's time is kept; for each period length the fewest and most grants
// in any period of that length (every 1 ms position after the first burst) are printed as a share
// of rate × length. Needs REDIS_URL (default redis://127.0.0.1:6379). Nothing is asserted.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { Authority } from '../src/auth/authority.ts';
import { redisRateLimiter, windowOf } from '../src/auth/shared-rate.ts';
import type { SqlExecutor } from '../src/db/sql.ts';
import { createLogger } from '../src/logger.ts';
import { fixed, int, row } from './lib/stats.ts';

const noDatabase: SqlExecutor = {
  query: () => Promise.reject(new Error('no database in this bench')),
  transaction: () => Promise.reject(new Error('no database in this bench')),
};

/** Grants at or after `from` and before `to` in sorted `times`. */
function countIn(times: number[], from: number, to: number): number {
  const firstAtOrAfter = (t: number) => {
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (times[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return firstAtOrAfter(to) - firstAtOrAfter(from);
}

/** The fewest and most grants in any period of `length` ms inside [start, end), every 1 ms. */
function extremes(times: number[], start: number, end: number, length: number): { min: number; max: number } {
  let min = Infinity;
  let max = 0;
  for (let from = start; from + length <= end; from += 1) {
    const n = countIn(times, from, from + length);
    if (n < min) min = n;
    if (n > max) max = n;
  }
  return { min, max };
}

async function hammer(loops: number, ms: number, take: () => Promise<boolean> | boolean): Promise<{ grants: number[]; started: number; ended: number }> {
  const grants: number[] = [];
  const started = performance.now();
  const ended = started + ms;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (performance.now() < ended) {
        if (await take()) grants.push(performance.now());
        await new Promise((resolve) => setImmediate(resolve));
      }
    }),
  );
  return { grants: grants.sort((a, b) => a - b), started, ended };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      rate: { type: 'string', default: '20' },
      burst: { type: 'string', default: '20' },
      seconds: { type: 'string', default: '24' },
      loops: { type: 'string', default: '4' },
    },
  });
  const rate = Number(values.rate);
  const burst = Number(values.burst);
  const seconds = Number(values.seconds);
  const loops = Number(values.loops);
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const logger = createLogger('warn');
  const prefix = `dirledger-bench-rate-${process.pid}-${Date.now()}`;
  const instances = [redisRateLimiter(url, prefix, rate, burst, logger), redisRateLimiter(url, prefix, rate, burst, logger)];
  await Promise.all(instances.map((instance) => instance.connected));
  const key = randomBytes(16).toString('hex');
  let next = 0;
  const shared = await hammer(loops * 2, seconds * 1000, async () => (await instances[next++ % 2]!.take(key)).ok);
  const degraded = instances.some((i) => i.degraded);
  await Promise.all(instances.map((i) => i.close()));

  const authority = new Authority({
    rootKey: randomBytes(32),
    audience: 'dirledger',
    sql: noDatabase,
    record: () => {},
    ratePerSecond: rate,
    rateBurst: burst,
  });
  const checked = authority.authenticate(authority.mintToken(), 'REST');
  if (!checked.ok) throw new Error(checked.refusal.reason);
  const grant = checked.grant;
  const local = await hammer(loops, seconds * 1000, async () => (await authority.rate(grant, 'REST')) === null);

  const window = windowOf(rate, burst);
  const lengths = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20].filter((s) => s <= seconds / 2);
  const pct = (n: number, s: number) => `${fixed((100 * n) / (rate * s), 0)} %`;
  const lines = [
    `shared rate: ${rate} requests/s, burst ${burst}, one key, ${seconds} s, ${loops} loops per instance asking as fast as answered`,
    `redis (rate-limiter-flexible ${createRequire(import.meta.url)('rate-limiter-flexible/package.json').version}): fixed windows of ${window.points} requests per ${window.duration} s, two instances; ${int(shared.grants.length)} granted${degraded ? ' (REDIS WAS UNREACHABLE: per-process figures)' : ''}`,
    `this process (Authority.rate without Redis): ${int(local.grants.length)} granted`,
    '',
    `grants in any period of each length after the first ${window.duration} s, as a share of rate × length (fewest … most)`,
    '',
    row('period', 'redis, 2 instances', 'one process', '±10% holds'),
  ];
  for (const s of lengths) {
    const skip = window.duration * 1000;
    const r = extremes(shared.grants, shared.started + skip, shared.ended, s * 1000);
    const l = extremes(local.grants, local.started + skip, local.ended, s * 1000);
    const holds = (e: { min: number; max: number }) => e.min >= 0.9 * rate * s && e.max <= 1.1 * rate * s;
    lines.push(
      row(`${s} s`, `${pct(r.min, s)} … ${pct(r.max, s)}`, `${pct(l.min, s)} … ${pct(l.max, s)}`, `${holds(r) ? 'yes' : 'no'} / ${holds(l) ? 'yes' : 'no'}`),
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
