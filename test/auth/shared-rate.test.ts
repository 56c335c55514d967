// Rate limits across instances: with REDIS_URL a token's rate over two instances is its configured
// rate (rate-limiter-flexible on Redis); with Redis unreachable each process counts for itself, and
// says so loudly in its log.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowOf } from '../../src/auth/shared-rate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { twoInstances } from '../helpers/instances.ts';

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
const reason = !redisUrl ? 'REDIS_URL is not set' : !pgUrl ? 'TEST_DATABASE_URL is not set (two instances need a shared PostgreSQL)' : null;
if (reason) process.stdout.write(`test/auth/shared-rate.test.ts (two instances) skipped: ${reason}\n`);

/** Sends requests from `workers` loops per origin until `ms` after the first answer; counts 200s and 429s. */
async function hammer(origins: string[], token: string, ms: number, workers = 3) {
  const counts = { ok: 0, limited: 0, other: 0, retryAfter: new Set<string>() };
  let until = Infinity;
  const loop = async (origin: string) => {
    while (performance.now() < until) {
      const response = await fetch(`${origin}/api/directory/resolve?q=echo`, { headers: { authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      if (until === Infinity) until = performance.now() + ms;
      if (performance.now() >= until) break;
      if (response.status === 200) counts.ok++;
      else if (response.status === 429) {
        counts.limited++;
        counts.retryAfter.add(response.headers.get('retry-after') ?? '');
      } else counts.other++;
    }
  };
  await Promise.all(origins.flatMap((origin) => Array.from({ length: workers }, () => loop(origin))));
  return counts;
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
    pair = await twoInstances({ REDIS_URL: redisUrl!, LIVE_CHANNEL: `dirledger-rate-${process.pid}-${Date.now()}`, AUTH_RATE_PER_SECOND: String(rate), AUTH_RATE_BURST: String(rate) });
  });
  afterAll(() => pair?.stop());

  it("a token's rate over both instances is its configured rate (±10%), not twice it", async () => {
    const token = pair.a.mint('read = all');
    // Redis counts fixed windows (rate-limiter-flexible): a period can see one window more than it spans, so
    // ±10% holds over ten windows or more.
    const seconds = 10;
    const counts = await hammer([pair.a.origin, pair.b.origin], token, seconds * 1000);
    expect(counts.other).toBe(0);
    expect(counts.limited).toBeGreaterThan(0);
    expect(counts.ok).toBeGreaterThanOrEqual(rate * seconds * 0.9);
    expect(counts.ok).toBeLessThanOrEqual(rate * seconds * 1.1);
    expect([...counts.retryAfter].every((r) => Number(r) >= 1)).toBe(true);
    expect(pair.a.app.services.authority['options'].sharedRate?.degraded).toBe(false);
  });

  it('another token has its own rate', async () => {
    const first = pair.a.mint('read = all');
    const second = pair.a.mint('read = all');
    const seconds = 10;
    const [one, two] = await Promise.all([hammer([pair.a.origin, pair.b.origin], first, seconds * 1000, 2), hammer([pair.a.origin, pair.b.origin], second, seconds * 1000, 2)]);
    for (const counts of [one, two]) {
      expect(counts.ok).toBeGreaterThanOrEqual(rate * seconds * 0.9);
      expect(counts.ok).toBeLessThanOrEqual(rate * seconds * 1.1);
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
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${t.origin}/api/directory/resolve?q=echo`, { headers: { authorization: `Bearer ${token}` } })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(lines.some((l) => l.includes('RATE LIMITS ARE PER PROCESS'))).toBe(true);
    expect(t.app.services.authority['options'].sharedRate?.degraded).toBe(true);
  });
});
