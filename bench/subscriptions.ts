// Live subscriptions: graphql-ws subscribers over filters while writers append (delivered/expected, duplicates, latency, server RSS/CPU).
//
//   npm run bench -- subscriptions [--seconds 30] [--scenario A,B,A2] [--root DIR]
//
// The server runs in a child process on a fresh PostgreSQL database (BENCH_DATABASE_URL, default
// the machine's); the subscribers and the 4 writers run here, in the benchmark's process.
//   A   1,000 graphql-ws subscribers (one connection each) over 100 tool filters; 500 events/s.
//   B   100 unfiltered subscribers; 100 events/s.
//   A2  A with two server instances joined by Redis (REDIS_URL, default the machine's): writers
//       append on the first, subscribers are split over both.
// --root runs the servers of another checkout (A/B comparisons).
// BENCH_SERVER_NODE_ARGS passes flags to the servers' node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
// The servers run as one esbuild bundle of src/ on plain node (bench/lib/build.ts), as a deployment
// would run them; BENCH_SERVER_SOURCE=1 runs src/server.ts itself instead.
// Writers POST batches to /ledger/batches every 50 ms. Commit → receipt is bracketed by three clocks:
//   recorded → receipt  from the event's recordedAt (the database's now() when its transaction
//                       began, so before the commit; same machine clock): an upper bound, the target;
//   send → receipt      from the moment the writer sent the batch: a looser upper bound that adds the
//                       whole append call (HTTP, parsing, hashing, compression, the commit lock);
//   answer → receipt    from the moment the append's answer arrived (after the commit): a lower bound.
// Targets (printed PASS/MISS, never asserted): p99 ≤ 100 ms, server RSS ≤ 500 MB, delivered/expected
// 1.0 and no duplicates.
import { parseArgs } from 'node:util';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createBenchDatabase } from './lib/postgres.ts';
import { processCpuSeconds } from './lib/cpu.ts';
import { sampleRss } from './lib/rss.ts';
import { benchServerEntry } from './lib/build.ts';
import { repoRoot, startServer, type ServerProcess } from './lib/server.ts';
import { fixed, int, mb, percentile, row, target } from './lib/stats.ts';

type Scenario = { name: string; subscribers: number; tools: number; filtered: boolean; eventsPerSecond: number; instances: 1 | 2 };

const scenarios: Record<string, Scenario> = {
  A: { name: 'A: 1,000 subscribers over 100 tool filters, 500 events/s', subscribers: 1000, tools: 100, filtered: true, eventsPerSecond: 500, instances: 1 },
  B: { name: 'B: 100 unfiltered subscribers, 100 events/s', subscribers: 100, tools: 100, filtered: false, eventsPerSecond: 100, instances: 1 },
  A2: { name: 'A2: scenario A on two instances joined by Redis', subscribers: 1000, tools: 100, filtered: true, eventsPerSecond: 500, instances: 2 },
};

const targets = { p99Ms: 100, rssBytes: 500 * 1_000_000 };
const WRITERS = 4;
const TICK_MS = 50;
const CONNECT_WAVE = 100;

const query = `subscription ($filter: LedgerFilter) { ledgerEvents(filter: $filter) { id position recordedAt } }`;

type Sub = { server: number; tool: string | null; live: boolean; seen: Set<string>; duplicates: number; client: Client; stop: () => void };

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { seconds: { type: 'string', default: '30' }, scenario: { type: 'string', default: 'A,B,A2' }, root: { type: 'string' } },
  });
  const seconds = Number(values.seconds);
  if (!(seconds > 0)) throw new Error(`--seconds: expected a positive number, got ${values.seconds}`);
  for (const key of values.scenario!.split(',').map((s) => s.trim().toUpperCase())) {
    const scenario = scenarios[key];
    if (!scenario) throw new Error(`--scenario: expected A, B or A2, got ${key}`);
    await runScenario(scenario, seconds, values.root);
  }
}

async function redisReachable(url: string): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

async function runScenario(s: Scenario, seconds: number, root?: string): Promise<void> {
  process.stdout.write(`\n${s.name}, ${seconds} s\n`);
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  if (s.instances === 2 && !(await redisReachable(redisUrl))) {
    process.stdout.write(`  skipped: Redis at ${redisUrl} is not reachable\n`);
    return;
  }
  const db = await createBenchDatabase('subs');
  const env: Record<string, string> = { DATABASE_URL: db.url, DIRECTORY_WATCH_MS: '0', AUTHORITY: 'off' };
  if (s.instances === 2) Object.assign(env, { REDIS_URL: redisUrl, LIVE_CHANNEL: `dirledger-bench-${db.name}` });
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const entry = await benchServerEntry(root ?? repoRoot, 'subscriptions');
  const servers: ServerProcess[] = [await startServer(env, { nodeArgs, root, entry })];
  if (s.instances === 2) servers.push(await startServer(env, { nodeArgs, root, entry }));

  // Subscribers: one graphql-ws connection each, spread over the instances.
  const subs: Sub[] = [];
  const opening: Promise<void>[] = [];
  const errors = new Set<string>();
  const sentAt = new Map<string, number>();
  /** Receipt after the event's recordedAt: an upper bound of commit → receipt. */
  const latencies: number[] = [];
  const latenciesOn: number[][] = servers.map(() => []);
  /** Receipt after the writer sent the batch: a looser upper bound. */
  const fromSend: number[] = [];
  /** Receipt after the append's answer arrived: a lower bound of commit → receipt. */
  const afterAnswer: number[] = [];
  const appendMs: number[] = [];
  const answeredAt = new Map<string, number>();
  const toolOf = (i: number) => `tool-${i % s.tools}`;
  for (let i = 0; i < s.subscribers; i++) {
    const server = i % servers.length;
    const origin = servers[server]!.origin;
    let connected = () => {};
    opening.push(new Promise<void>((resolve) => (connected = resolve)));
    const client = createClient({
      url: `${origin.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      lazy: true,
      on: { connected: () => connected(), closed: () => connected() },
    });
    const tool = s.filtered ? toolOf(i) : null;
    const sub: Sub = { server, tool, live: false, seen: new Set(), duplicates: 0, client, stop: () => {} };
    sub.stop = client.subscribe<{ ledgerEvents: { id: string; recordedAt: string } }>(
      { query, variables: tool ? { filter: { tool: [tool] } } : {} },
      {
        next: (result) => {
          const id = result.data?.ledgerEvents.id;
          if (!id) return;
          const receivedAt = Date.now();
          if (id.startsWith('marker-')) {
            sub.live = true;
            return;
          }
          if (sub.seen.has(id)) sub.duplicates++;
          else sub.seen.add(id);
          const t0 = sentAt.get(id);
          const now = performance.now();
          if (t0 !== undefined) {
            fromSend.push(now - t0);
            const recorded = receivedAt - Date.parse(result.data!.ledgerEvents.recordedAt);
            latencies.push(recorded);
            latenciesOn[server]!.push(recorded);
          }
          const t1 = answeredAt.get(id);
          afterAnswer.push(t1 === undefined ? 0 : Math.max(0, now - t1));
        },
        error: (error) =>
          errors.add(error instanceof Error ? error.message : `close ${(error as { code?: number }).code} ${(error as { reason?: string }).reason}`),
        complete: () => {},
      },
    );
    subs.push(sub);
    // Connections open in waves: a thousand at once can miss graphql-ws's 3 s init timeout on a busy machine.
    if (opening.length === CONNECT_WAVE || i === s.subscribers - 1) await Promise.all(opening.splice(0));
  }

  const append = async (events: object[]) => {
    const response = await fetch(`${servers[0]!.origin}/ledger/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ collector: `bench-${Math.random()}`, events }),
    });
    if (!response.ok) throw new Error(`append: HTTP ${response.status} ${await response.text()}`);
  };
  const eventOf = (id: string, tool: string) => ({
    id,
    kind: 'TOOL_CALL',
    direction: 'OUT',
    actionId: `act-${id}`,
    tool,
    occurredAt: new Date().toISOString(),
    payload: { state: 'COMPLETE', text: `{"call":"${id}","tool":"${tool}"}` },
  });

  // Every subscriber is live once it has received a marker of its tool (one per tool).
  const markerUntil = Date.now() + 60_000;
  let round = 0;
  while (subs.some((sub) => !sub.live)) {
    if (Date.now() > markerUntil) {
      const notLive = servers.map((_, i) => subs.filter((x) => x.server === i && !x.live).length);
      throw new Error(
        `subscribers not live after 60 s: ${notLive.join(' + ')} of ${subs.length} (by server)${errors.size ? `; errors: ${[...errors].join('; ')}` : ''}`,
      );
    }
    await append(Array.from({ length: s.tools }, (_, i) => eventOf(`marker-${round}-${i}`, toolOf(i))));
    round++;
    await new Promise((r) => setTimeout(r, 500));
  }
  latencies.length = 0;
  fromSend.length = 0;
  for (const l of latenciesOn) l.length = 0;
  afterAnswer.length = 0;

  const rss = servers.map((p) => sampleRss(p.pid));
  const cpu0 = servers.map((p) => processCpuSeconds(p.pid) ?? 0);
  const started = performance.now();
  const perTool = new Map<string, number>();
  let sent = 0;
  let failures = 0;
  const writer = async (w: number) => {
    const rate = s.eventsPerSecond / WRITERS / 1000;
    let written = 0;
    let tick = 0;
    while (performance.now() - started < seconds * 1000) {
      // Paced by the clock, not by ticks: a slow append is caught up in the next batch.
      const n = Math.floor((performance.now() - started) * rate) - written;
      written += Math.max(0, n);
      const events = Array.from({ length: n }, (_, i) => {
        const id = `w${w}-${tick}-${i}`;
        const tool = toolOf(w * 7919 + tick * 31 + i);
        perTool.set(tool, (perTool.get(tool) ?? 0) + 1);
        return eventOf(id, tool);
      });
      if (n > 0) {
        const t0 = performance.now();
        for (const e of events) sentAt.set(e.id, t0);
        sent += n;
        await append(events).catch(() => failures++);
        const t1 = performance.now();
        appendMs.push(t1 - t0);
        for (const e of events) answeredAt.set(e.id, t1);
      }
      tick++;
      const next = started + tick * TICK_MS;
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  const writeSeconds = (performance.now() - started) / 1000;

  const expectedOf = (sub: Sub) => (sub.tool ? (perTool.get(sub.tool) ?? 0) : sent);
  const expected = subs.reduce((a, sub) => a + expectedOf(sub), 0);
  const received = () => subs.reduce((a, sub) => a + sub.seen.size, 0);
  const drainUntil = Date.now() + 15_000;
  while (received() < expected && Date.now() < drainUntil) await new Promise((r) => setTimeout(r, 50));
  const cpu = servers.map((p, i) => (processCpuSeconds(p.pid) ?? cpu0[i]!) - cpu0[i]!);
  const memory = rss.map((r) => r.stop());
  const delivered = received();
  const duplicates = subs.reduce((a, sub) => a + sub.duplicates, 0);

  for (const sub of subs) sub.stop();
  await Promise.all(subs.map((sub) => sub.client.dispose()));
  for (const server of servers.reverse()) await server.stop();
  await db.drop();

  const p50 = percentile(latencies, 0.5);
  const p99 = percentile(latencies, 0.99);
  const max = latencies.reduce((a, b) => Math.max(a, b), 0);
  process.stdout.write(`${row('events appended', int(sent))}  (${fixed(sent / writeSeconds, 0)}/s, ${failures} failed appends)\n`);
  process.stdout.write(`${row('deliveries expected', int(expected))}  (${fixed(expected / writeSeconds, 0)}/s)\n`);
  process.stdout.write(`${target('delivered / expected', fixed(delivered / expected, 4), '1.0', delivered === expected)}\n`);
  process.stdout.write(`${target('duplicates', int(duplicates), '0', duplicates === 0)}\n`);
  process.stdout.write(`${row('latency p50 (recorded → receipt)', `${fixed(p50, 1)} ms`)}\n`);
  process.stdout.write(`${target('latency p99 (recorded → receipt)', `${fixed(p99, 1)} ms`, `≤ ${targets.p99Ms} ms`, p99 <= targets.p99Ms)}\n`);
  if (servers.length > 1) {
    latenciesOn.forEach((l, i) => {
      process.stdout.write(
        `${row(`  subscribers on server ${i + 1} p50 / p99`, `${fixed(percentile(l, 0.5), 1)} ms`, `${fixed(percentile(l, 0.99), 1)} ms`)}\n`,
      );
    });
  }
  process.stdout.write(`${row('latency max (recorded → receipt)', `${fixed(max, 1)} ms`)}\n`);
  process.stdout.write(
    `${row(
      'send → receipt p50 / p99 / max',
      `${fixed(percentile(fromSend, 0.5), 1)} ms`,
      `${fixed(percentile(fromSend, 0.99), 1)} ms`,
      `${fixed(
        fromSend.reduce((a, b) => Math.max(a, b), 0),
        1,
      )} ms`,
    )}  (upper bound, includes the append call)\n`,
  );
  process.stdout.write(`${row('append call p50 / p99', `${fixed(percentile(appendMs, 0.5), 1)} ms`, `${fixed(percentile(appendMs, 0.99), 1)} ms`)}\n`);
  process.stdout.write(
    `${row('after append answer p50 / p99', `${fixed(percentile(afterAnswer, 0.5), 1)} ms`, `${fixed(percentile(afterAnswer, 0.99), 1)} ms`)}  (lower bound)\n`,
  );
  memory.forEach((m, i) => {
    process.stdout.write(`${target(`server ${i + 1} RSS (max)`, mb(m.maxBytes), `≤ ${mb(targets.rssBytes)}`, m.maxBytes <= targets.rssBytes)}\n`);
  });
  cpu.forEach((c, i) => {
    process.stdout.write(`${row(`server ${i + 1} CPU`, `${fixed(c, 1)} s`)}  (${fixed((100 * c) / writeSeconds, 0)}% of one core)\n`);
  });
}
