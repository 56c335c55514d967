// Rate limits across instances: with REDIS_URL a token's rate over two instances is its configured
// rate (rate-limiter-flexible on Redis); with Redis unreachable, at start or lost mid-run, each
// process counts for itself and says so loudly in its log, and says so again when Redis is back.
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowOf } from '../../src/auth/shared-rate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { twoInstances } from '../helpers/instances.ts';
import { freePort, privateRedis, privateRedisMissing } from '../helpers/private-redis.ts';

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
const reason = !redisUrl ? 'REDIS_URL is not set' : !pgUrl ? 'TEST_DATABASE_URL is not set (two instances need a shared PostgreSQL)' : null;
if (reason) process.stdout.write(`test/auth/shared-rate.test.ts (two instances) skipped: ${reason}\n`);

/**
 * Sends requests from `workers` loops per origin, `askPerSecond` in all (each loop at its share of it), until `ms` after
 * the first answer; counts 200s (with their times) and 429s, and when each request was sent. Paced, not as fast as the
 * loops can go: five times the rate shows a limit that is per instance (twice the rate granted) as well, and the
 * answers refused as fast as they come cost ~15 s of CPU a run for nothing.
 */
async function hammer(origins: string[], token: string, ms: number, askPerSecond: number, workers = 3) {
  const spacingMs = (1000 * origins.length * workers) / askPerSecond;
  const counts = { ok: 0, limited: 0, other: 0, retryAfter: new Set<string>(), granted: [] as number[], asked: [] as number[], started: 0 };
  let until = Infinity;
  const loop = async (origin: string) => {
    while (performance.now() < until) {
      const sent = performance.now();
      const response = await fetch(`${origin}/api/directory/resolve?q=echo`, { headers: { authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      if (until === Infinity) {
        counts.started = performance.now();
        until = counts.started + ms;
      }
      const at = performance.now();
      if (at >= until) break;
      const next = sent + spacingMs;
      counts.asked.push(sent);
      if (response.status === 200) {
        counts.ok++;
        counts.granted.push(at);
      } else if (response.status === 429) {
        counts.limited++;
        counts.retryAfter.add(response.headers.get('retry-after') ?? '');
      } else counts.other++;
      if (next > performance.now()) await sleep(next - performance.now());
    }
  };
  await Promise.all(origins.flatMap((origin) => Array.from({ length: workers }, () => loop(origin))));
  counts.granted.sort((a, b) => a - b);
  counts.asked.sort((a, b) => a - b);
  return counts;
}

/**
 * Over every period of `length` ms that fits in the run (one starting each 1 ms): the most answers granted, and the
 * least granted against what the limiter owed: 90% of the rate over the period, or 90% of what was asked in it when
 * the callers asked for less (a loaded machine's client can fall below the rate; a limiter that refuses it is wrong
 * all the same). `shortfall` > 0 names a period where the limiter granted less than it owed.
 */
function grantedPerPeriod(counts: Awaited<ReturnType<typeof hammer>>, length: number, runMs: number, rate: number) {
  const { granted, asked, started } = counts;
  let max = 0;
  let shortfall = -Infinity;
  let worst = { granted: 0, asked: 0 };
  const inPeriod = (times: number[], from: number, at: { first: number; end: number }) => {
    while (at.first < times.length && times[at.first]! < from) at.first++;
    while (at.end < times.length && times[at.end]! < from + length) at.end++;
    return at.end - at.first;
  };
  const g = { first: 0, end: 0 };
  const a = { first: 0, end: 0 };
  for (let from = started; from + length <= started + runMs; from += 1) {
    const got = inPeriod(granted, from, g);
    const wanted = inPeriod(asked, from, a);
    max = Math.max(max, got);
    const owed = 0.9 * Math.min((rate * length) / 1000, wanted);
    if (owed - got > shortfall) {
      shortfall = owed - got;
      worst = { granted: got, asked: wanted };
    }
  }
  return { max, shortfall, worst };
}

describe('the window a rate and burst become', () => {
  it('keeps the configured steady rate in whole seconds', () => {
    expect(windowOf(20, 20)).toEqual({ points: 20, duration: 1 });
    expect(windowOf(50, 200)).toEqual({ points: 200, duration: 4 });
    expect(windowOf(0.5, 1)).toEqual({ points: 1, duration: 2 });
    expect(windowOf(3, 10)).toEqual({ points: 12, duration: 4 });
  });
});

describe.skipIf(reason !== null)('two instances sharing limits through Redis', () => {
  let pair: Awaited<ReturnType<typeof twoInstances>>;
  const rate = 20;
  beforeAll(async () => {
    pair = await twoInstances({
      REDIS_URL: redisUrl!,
      LIVE_CHANNEL: `dirledger-rate-${process.pid}-${Date.now()}`,
      AUTH_RATE_PER_SECOND: String(rate),
      AUTH_RATE_BURST: String(rate),
    });
  });
  afterAll(() => pair?.stop());

  // Redis counts fixed windows (rate-limiter-flexible has no smoother Redis limiter): a window's
  // requests are granted as they come, so a period shorter than ten windows can see one window more
  // or less than it spans (`npm run bench -- rate` prints by how much). Over any period of ten windows
  // or more, wherever it starts, the rate is the configured one within ±10%.
  it("a token's rate over both instances is its configured rate (±10%) over any period of 10 s, not twice it", async () => {
    const token = pair.a.mint('read = all');
    const counts = await hammer([pair.a.origin, pair.b.origin], token, 13_000, rate * 5);
    expect(counts.other).toBe(0);
    expect(counts.limited).toBeGreaterThan(0);
    const { max, shortfall, worst } = grantedPerPeriod(counts, 10_000, 13_000, rate);
    expect(shortfall, `granted ${worst.granted} of ${worst.asked} asked in its worst period`).toBeLessThanOrEqual(0);
    expect(max).toBeLessThanOrEqual(rate * 10 * 1.1);
    expect([...counts.retryAfter].every((r) => Number(r) >= 1)).toBe(true);
    expect(pair.a.app.services.authority.sharedRate?.degraded).toBe(false);
  });

  it('another token has its own rate', async () => {
    const first = pair.a.mint('read = all');
    const second = pair.a.mint('read = all');
    const [one, two] = await Promise.all([
      hammer([pair.a.origin, pair.b.origin], first, 12_000, rate * 5, 2),
      hammer([pair.a.origin, pair.b.origin], second, 12_000, rate * 5, 2),
    ]);
    for (const counts of [one, two]) {
      const { max, shortfall, worst } = grantedPerPeriod(counts, 10_000, 12_000, rate);
      expect(shortfall, `granted ${worst.granted} of ${worst.asked} asked in its worst period`).toBeLessThanOrEqual(0);
      expect(max).toBeLessThanOrEqual(rate * 10 * 1.1);
    }
  });
});

describe('Redis unreachable: per-process limits, logged loudly', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    const logTo = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    t = await startTestApp('pglite', { REDIS_URL: 'redis://127.0.0.1:1', AUTH_RATE_PER_SECOND: '1', AUTH_RATE_BURST: '3', LOG_LEVEL: 'warn' }, { logTo });
  });
  afterAll(() => t?.stop());

  it('answers within the token rate counted here, and says the limits are per process', async () => {
    const token = t.mint('read = all');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await fetch(`${t.origin}/api/directory/resolve?q=echo`, { headers: { authorization: `Bearer ${token}` } })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(lines.some((l) => l.includes('RATE LIMITS ARE PER PROCESS'))).toBe(true);
    expect(t.app.services.authority.sharedRate?.degraded).toBe(true);
  });
});

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

if (privateRedisMissing) process.stdout.write(`test/auth/shared-rate.test.ts (Redis lost and back) skipped: ${privateRedisMissing}\n`);

describe.skipIf(privateRedisMissing !== null)('Redis lost mid-run and back: per-process limits meanwhile, logged both ways', () => {
  let t: TestApp;
  let redis: ReturnType<typeof privateRedis>;
  const lines: string[] = [];
  beforeAll(async () => {
    redis = privateRedis(await freePort());
    await redis.start();
    const logTo = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    t = await startTestApp('pglite', { REDIS_URL: redis.url, AUTH_RATE_PER_SECOND: '1', AUTH_RATE_BURST: '3', LOG_LEVEL: 'warn' }, { logTo });
  });
  afterAll(async () => {
    await t?.stop();
    await redis?.kill().catch(() => {});
  });
  const five = async (token: string) => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await fetch(`${t.origin}/api/directory/resolve?q=echo`, { headers: { authorization: `Bearer ${token}` } })).status);
    return statuses;
  };
  const limiter = () => t.app.services.authority.sharedRate!;

  it('counts in Redis, then in this process while Redis is gone, then in Redis again', async () => {
    expect(await five(t.mint('read = all'))).toEqual([200, 200, 200, 429, 429]);
    expect(limiter().degraded).toBe(false);

    await redis.kill();
    await until(() => lines.some((l) => l.includes('rate limit store (redis) connection error')), 'the connection error logged');
    expect(await five(t.mint('read = all'))).toEqual([200, 200, 200, 429, 429]);
    expect(limiter().degraded).toBe(true);
    expect(lines.filter((l) => l.includes('RATE LIMITS ARE PER PROCESS'))).toHaveLength(1);

    await redis.start();
    const back = t.mint('read = all');
    // The client reconnects within a second; until then its answers still come from this process.
    await until(
      async () => {
        await five(back);
        return !limiter().degraded;
      },
      'shared again',
      10_000,
    );
    expect(lines.some((l) => l.includes('rate limits are shared again'))).toBe(true);
    expect(await five(t.mint('read = all'))).toEqual([200, 200, 200, 429, 429]);
    expect(limiter().degraded).toBe(false);
  });
});
