// Two server instances on one PostgreSQL database, joined by Redis pub/sub: an event appended on A
// reaches subscribers on B by the signal (the safety poll is set far away). Then a private Redis is
// killed and restarted mid-stream: nothing is lost once it is back.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.ts';
import { parseConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { createLogger } from '../../src/logger.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { batch, event } from '../helpers/ledger.ts';
import { freePort, privateRedis } from '../helpers/private-redis.ts';
import { eventsQuery, waitFor, wsClient, wsSubscribe } from './helpers.ts';

const redisUrl = process.env.REDIS_URL;
const pgUrl = process.env.TEST_DATABASE_URL;
const reason = !redisUrl ? 'REDIS_URL is not set' : !pgUrl ? 'TEST_DATABASE_URL is not set (two instances need a shared PostgreSQL)' : null;
if (reason) process.stdout.write(`test/live/redis.test.ts (two instances on the machine's Redis) skipped: ${reason}\n`);

/** A second instance of the app on the same database as `first`. */
async function secondInstance(first: TestApp, env: Record<string, string>): Promise<{ app: App; url: string; stop(): Promise<void> }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-app-b-'));
  const config = parseConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', ...env });
  const app = await buildApp(config, { db: await openDatabase({ url: first.db.url! }), logger: createLogger('silent') });
  const { url } = await app.start(0, '127.0.0.1');
  return {
    app,
    url,
    stop: async () => {
      await app.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let n = 0;
const events = (count: number, tool: string) => Array.from({ length: count }, () => event(`r${++n}-${Math.random().toString(36).slice(2)}`, { tool }));

describe.skipIf(reason !== null)('two instances joined by Redis', () => {
  const channel = `dirledger-test-${process.pid}-${Date.now()}`;
  const env = { REDIS_URL: redisUrl!, LIVE_CHANNEL: channel, LIVE_POLL_MS: '600000' };
  let a: TestApp;
  let b: Awaited<ReturnType<typeof secondInstance>>;
  beforeAll(async () => {
    a = await startTestApp('postgres', env);
    b = await secondInstance(a, env);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('an event appended on A reaches a subscriber on B, and one on A, by the signal', async () => {
    const client = wsClient(b.url, b.app.services.authority.mintToken([]));
    const onB = wsSubscribe(client, eventsQuery, { filter: { tool: ['x'] } }, 'ledgerEvents');
    const clientA = wsClient(a.url, a.token);
    const onA = wsSubscribe(clientA, eventsQuery, { filter: { tool: ['x'] } }, 'ledgerEvents');
    await waitFor(() => b.app.services.live.stats().following === 1 && a.app.services.live.stats().following === 1, 'subscribed');
    const appended = [];
    for (let i = 0; i < 10; i++) appended.push(...(await a.app.services.ledger.append(batch('a', events(20, 'x')))).appended);
    await waitFor(() => onB.events.length === 200 && onA.events.length === 200, 'deliveries on both instances', 10_000);
    expect(onB.events.map((e) => BigInt(e.position))).toEqual(appended.map((x) => x.position));
    expect(b.app.services.live.stats().polls).toBe(0);
    expect(b.app.services.signal.kind).toBe('redis');
    // A woke itself once per append and ignored its own messages coming back through Redis.
    expect(a.app.services.live.stats().wakes).toBe(10);
    onB.stop();
    onA.stop();
    await client.dispose();
    await clientA.dispose();
  });
});

const redisServerReason = pgUrl ? null : 'TEST_DATABASE_URL is not set (two instances need a shared PostgreSQL)';
if (redisServerReason) process.stdout.write(`test/live/redis.test.ts (private Redis restarted mid-stream) skipped: ${redisServerReason}\n`);

describe.skipIf(redisServerReason !== null)('Redis restarted mid-stream', () => {
  let port: number;
  let redis: ReturnType<typeof privateRedis>;
  let a: TestApp;
  let b: Awaited<ReturnType<typeof secondInstance>>;
  beforeAll(async () => {
    port = await freePort();
    redis = privateRedis(port);
    await redis.start();
    const env = { REDIS_URL: `redis://127.0.0.1:${port}`, LIVE_POLL_MS: '1000' };
    a = await startTestApp('postgres', env);
    b = await secondInstance(a, env);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await redis?.kill().catch(() => {});
  });

  it('loses nothing: events appended on A while Redis is down reach B once it is back', async () => {
    const client = wsClient(b.url, b.app.services.authority.mintToken([]));
    const sub = wsSubscribe(client, eventsQuery, {}, 'ledgerEvents');
    await waitFor(() => b.app.services.live.stats().following === 1, 'subscribed');
    const appended: bigint[] = [];
    const write = async (count: number) => {
      for (let i = 0; i < count; i++) appended.push(...(await a.app.services.ledger.append(batch('a', events(10, 'y')))).appended.map((x) => x.position));
    };
    await write(5);
    await waitFor(() => sub.events.length === 50, 'before the restart');
    await redis.kill();
    await write(5);
    await redis.start();
    await write(5);
    await waitFor(() => sub.events.length === appended.length, 'everything after the restart', 20_000);
    expect(sub.events.map((e) => BigInt(e.position))).toEqual(appended);
    expect(sub.errors).toEqual([]);
    sub.stop();
    await client.dispose();
  });
});
