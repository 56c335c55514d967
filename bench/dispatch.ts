// Dispatch: added latency and throughput of POST /api/tools/:name with full capture against calling the upstream directly; events recorded vs expected.
// The server runs on the durable spool (the default); a peer on DIRLEDGER_SPOOL=memory, measured in
// alternating blocks with it, gives the spool's share of the added latency. A bare Node proxy (no
// capture) in the same blocks, and this disk's durable 4 KiB write timed between them, give the
// floor any proxy with two durable writes per call has here; the same bare proxy making those two
// writes itself (request before sending, answer before answering) measures that floor whole, p99 too.
//
//   npm run bench -- dispatch [--sequential 5000] [--warmup 200] [--seconds 10] [--concurrency 32] [--root DIR] [--db postgres|pglite]
//
// --warmup: calls through the server before anything is measured. A fresh spool zero-fills a new
// segment under load when its first one fills (after ~1,750 calls here; later segments recycle
// committed ones), so the default measures that start and a warm-up of ~2,500 leaves it behind.
// --db pglite runs the server on the embedded default (PGlite in a fresh data folder) instead of a
// fresh PostgreSQL database; the ledger append ceiling is then not measured (it replays into PostgreSQL).
// --root runs the server from another checkout (A/B: run it alternately with this one).
// BENCH_SERVER_ENV, a JSON object of settings, is laid over the server's environment (A/B of a
// setting, e.g. '{"CAPTURE_BATCH_DELAY_MS":"1000"}' to hold the background writer back).
//
// A local upstream HTTP server runs in its own process, the dirledger server in another (on a
// fresh PostgreSQL database, BENCH_DATABASE_URL or the machine's). The same client measures both
// paths in the same run. On PostgreSQL, the recording floor (bench/lib/recording-proxy.ts: the bare
// proxy recording the same four events per call through the product's spool, writer and Ledger.append,
// on a database of its own) runs at the same concurrency: what the record alone allows, with no server
// around it. Nothing is asserted; targets print PASS or MISS. CPU time per call of each
// process (from /proc) is printed beside the timings, the server's event-loop thread apart from its
// other threads (the spool's writes through the thread pool, GC helpers): on a shared machine it says
// who spent the cores, and it does not move with the neighbours' load the way latency does. Last, the calls the
// run recorded are replayed straight into Ledger.append on a fresh database with nothing else
// running: the most events per second the ledger itself takes here, whatever the proxy costs.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { onCleanup } from './lib/cleanup.ts';
import { machineCpuSeconds, processCpuSeconds, threadCpuSeconds } from './lib/cpu.ts';
import { createBenchTarget, dbLabel, parseDbKinds } from './lib/target-db.ts';
import { type AppendCeiling, measureAppendCeilings } from './lib/append-ceiling.ts';
import { benchServerEntry } from './lib/build.ts';
import { repoRoot, startServer } from './lib/server.ts';
import { benchUpstreamSection, startBareProxy, startRecordingProxy, startUpstream } from './lib/upstream.ts';
import { durableWriteTimes } from './lib/durable-write.ts';
import { fixed, int, percentile, row, target } from './lib/stats.ts';

type Target = { url: string; body: string };

/** µs per call: the server (all its threads), its event-loop thread alone, the upstream, this client, every process on the machine; and the machine's busy share. */
type CpuPerCall = { server: number; serverLoop: number; upstream: number; client: number; machine: number; machineBusy: number };

/** Runs `phase` and returns its result with the CPU microseconds each process spent per call, and the machine's busy share. */
async function withCpu<T>(pids: { server: number; upstream: number }, calls: (result: T) => number, phase: () => Promise<T>): Promise<T & { cpu: CpuPerCall }> {
  const cpu = () => ({
    server: processCpuSeconds(pids.server) ?? 0,
    serverLoop: threadCpuSeconds(pids.server) ?? 0,
    upstream: processCpuSeconds(pids.upstream) ?? 0,
    client: process.cpuUsage(),
    machine: machineCpuSeconds(),
  });
  const before = cpu();
  const result = await phase();
  const after = cpu();
  const n = calls(result);
  const client = process.cpuUsage(before.client);
  const perCall = (seconds: number) => (seconds * 1e6) / n;
  return Object.assign(result as T & object, {
    cpu: {
      server: perCall(after.server - before.server),
      serverLoop: perCall(after.serverLoop - before.serverLoop),
      upstream: perCall(after.upstream - before.upstream),
      client: (client.user + client.system) / n,
      machine: perCall(after.machine.busy - before.machine.busy),
      machineBusy: (after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total),
    },
  }) as T & { cpu: CpuPerCall };
}

async function once(agent: Agent, t: Target): Promise<void> {
  const r = await request(t.url, { method: 'POST', body: t.body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
  await r.body.arrayBuffer();
  if (r.statusCode !== 200) throw new Error(`${t.url} answered ${r.statusCode}`);
}

async function sequential(agent: Agent, t: Target, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await once(agent, t);
    times.push(performance.now() - start);
  }
  return times;
}

async function concurrent(agent: Agent, t: Target, seconds: number, workers: number): Promise<{ times: number[]; rps: number }> {
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        await once(agent, t);
        times.push(performance.now() - start);
      }
    }),
  );
  return { times, rps: times.length / ((performance.now() - started) / 1000) };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      sequential: { type: 'string', default: '5000' },
      warmup: { type: 'string', default: '200' },
      seconds: { type: 'string', default: '10' },
      concurrency: { type: 'string', default: '32' },
      root: { type: 'string' },
      db: { type: 'string', default: 'postgres' },
    },
  });
  const n = Number(values.sequential);
  const warmup = Number(values.warmup);
  const seconds = Number(values.seconds);
  const workers = Number(values.concurrency);

  const upstream = await startUpstream();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-dispatch-'));
  onCleanup('remove bench directory', () => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'tool.json'), benchUpstreamSection(upstream.origin));
  const kinds = parseDbKinds(values.db!);
  if (kinds.length !== 1) throw new Error('--db: dispatch runs on one database per run (postgres or pglite); alternate runs for an A/B');
  const db = await createBenchTarget(kinds[0]!, 'bench_dispatch');
  onCleanup('drop bench database', () => db.drop());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-data-'));
  onCleanup('remove bench data', () => rm(dataDir, { recursive: true, force: true }));
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  // AUTHORITY=off: the bench measures dispatch and capture; bench/authority.ts measures the token check.
  const root = values.root ? path.resolve(values.root) : repoRoot;
  // The server runs as the esbuild bundle of src/ on plain node, as deployed (BENCH_SERVER_SOURCE=1: src/server.ts itself).
  const entry = await benchServerEntry(root, 'dispatch');
  const serverEnv = {
    DIRECTORY_DIR: dir,
    DIRECTORY_WATCH_MS: '0',
    LOG_LEVEL: 'error',
    AUTHORITY: 'off',
    ...(process.env.BENCH_SERVER_ENV ? JSON.parse(process.env.BENCH_SERVER_ENV) : {}),
  };
  const server = await startServer({ ...serverEnv, DATA_DIR: dataDir, ...db.env }, { nodeArgs, root, entry, timeoutMs: 180_000 });
  // The spool's share: a peer on the memory spool, its own database and folder, measured alternately with the server above.
  const peerDb = await createBenchTarget(db.kind, 'bench_dispatch_memory');
  onCleanup('drop peer database', () => peerDb.drop());
  const peerDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-data-'));
  onCleanup('remove peer data', () => rm(peerDir, { recursive: true, force: true }));
  const peer = await startServer({ ...serverEnv, DATA_DIR: peerDir, ...peerDb.env, DIRLEDGER_SPOOL: 'memory' }, { nodeArgs, root, entry, timeoutMs: 180_000 });
  type SpoolHealth = {
    mode?: string;
    writes?: number | null;
    writeP50Ms?: number | null;
    writeP99Ms?: number | null;
    appendP50Ms?: number | null;
    appendP99Ms?: number | null;
  };
  const spoolState = async () => ((await (await fetch(`${server.origin}/healthz`)).json()) as { spool?: SpoolHealth }).spool;
  const spoolMode = { spool: await spoolState() };

  const agent = new Agent({ connections: workers * 2, keepAliveTimeout: 60_000 });
  const direct: Target = { url: `${upstream.origin}/echo`, body: JSON.stringify({ q: 'bench' }) };
  const through: Target = { url: `${server.origin}/api/tools/BENCH_UP`, body: JSON.stringify({ q: 'bench' }) };
  const bareProxy = await startBareProxy(`${upstream.origin}/echo`);
  const throughBare: Target = { url: `${bareProxy.origin}/api/tools/BENCH_UP`, body: JSON.stringify({ q: 'bench' }) };
  const throughMemory: Target = { url: `${peer.origin}/api/tools/BENCH_UP`, body: JSON.stringify({ q: 'bench' }) };
  const durableBareProxy = await startBareProxy(`${upstream.origin}/echo`, path.join(dir, 'durable-bare-proxy'));
  const throughDurableBare: Target = { url: `${durableBareProxy.origin}/api/tools/BENCH_UP`, body: JSON.stringify({ q: 'bench' }) };

  const pids = { server: server.pid, upstream: upstream.pid };
  let throughCalls = 0;
  await sequential(agent, direct, 200);
  await sequential(agent, through, warmup);
  throughCalls += warmup;
  await sequential(agent, throughMemory, 200);
  await sequential(agent, throughBare, 200);
  await sequential(agent, throughDurableBare, 200);
  const seqDirect = await sequential(agent, direct, n);
  // Durable and memory in alternating blocks, so the machine's moods fall on both alike.
  const seqMemory: number[] = [];
  const seqBare: number[] = [];
  const seqDurableBare: number[] = [];
  const diskWrites: number[] = [];
  const writesBefore = (await spoolState())?.writes ?? null;
  const seqThrough = await withCpu(
    pids,
    () => n,
    async () => {
      const times: number[] = [];
      for (let done = 0; done < n; done += 250) {
        times.push(...(await sequential(agent, through, Math.min(250, n - done))));
        seqMemory.push(...(await sequential(agent, throughMemory, Math.min(250, n - done))));
        seqBare.push(...(await sequential(agent, throughBare, Math.min(250, n - done))));
        seqDurableBare.push(...(await sequential(agent, throughDurableBare, Math.min(250, n - done))));
        diskWrites.push(...(await durableWriteTimes(dir, 50)));
      }
      return { times };
    },
  );
  throughCalls += n;
  const afterSequential = await spoolState();
  const writesAfter = afterSequential?.writes ?? null;
  await peer.stop(60_000);
  // The least any Node proxy spends: the bare one (node:http in, node:http out, nothing recorded) at the same concurrency.
  const conBare = await withCpu(
    { server: bareProxy.pid, upstream: upstream.pid },
    (r) => r.times.length,
    () => concurrent(agent, throughBare, seconds, workers),
  );
  await bareProxy.stop();
  await durableBareProxy.stop();
  const conDirect = await withCpu(
    pids,
    (r) => r.times.length,
    () => concurrent(agent, direct, seconds, workers),
  );
  const writesBeforeConcurrent = (await spoolState())?.writes ?? null;
  const conThrough = await withCpu(
    pids,
    (r) => r.times.length,
    () => concurrent(agent, through, seconds, workers),
  );
  const afterConcurrent = await spoolState();
  const writesAfterConcurrent = afterConcurrent?.writes ?? null;
  throughCalls += conThrough.times.length;

  // A graceful stop flushes the background ledger writer.
  await server.stop(60_000);
  const rows = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ledger_event WHERE tool = 'BENCH_UP'`);
  const recorded = Number(rows[0]!.n);
  const expected = throughCalls * 4;
  // The recording floor (PostgreSQL only): the bare proxy with the product's recording pipeline and nothing else, same load.
  const floor = db.url ? await recordingFloor(upstream, agent, seconds, workers) : undefined;
  await agent.close();
  await upstream.stop();
  // What the ledger alone can take of these very events, the machine otherwise idle: a bound on any
  // proxy's throughput with full capture here, whatever the proxy costs.
  const ceilings = db.url ? await measureAppendCeilings({ url: db.url, blobDir: path.join(dataDir, 'blobs') }, 'BENCH_UP', [1, 4]) : [];
  const ceiling = ceilings.length ? ceilings.reduce((a, b) => (b.eventsPerSecond > a.eventsPerSecond ? b : a)) : undefined;
  const neededEvents = ceiling ? 0.5 * conDirect.rps * ceiling.eventsPerCall : 0;

  const p = (xs: number[], q: number) => percentile(xs, q);
  // Where the tail starts: a broad rise (many calls a little slower) and a few stalls read differently.
  const tailQuantiles = [0.9, 0.95, 0.98, 0.99, 0.995, 0.999];
  const addedP50 = p(seqThrough.times, 0.5) - p(seqDirect, 0.5);
  const addedP99 = p(seqThrough.times, 0.99) - p(seqDirect, 0.99);
  const conAddedP50 = p(conThrough.times, 0.5) - p(conDirect.times, 0.5);
  const spoolP50 = p(seqThrough.times, 0.5) - p(seqMemory, 0.5);
  const spoolP99 = p(seqThrough.times, 0.99) - p(seqMemory, 0.99);
  const bareP50 = p(seqBare, 0.5) - p(seqDirect, 0.5);
  const bareP99 = p(seqBare, 0.99) - p(seqDirect, 0.99);
  // Issue 15 asks two durable writes per call (its request before sending, its answer before answering).
  const floorP50 = bareP50 + 2 * p(diskWrites, 0.5);
  // The same floor measured whole: the bare proxy making those two writes itself.
  const durableBareP50 = p(seqDurableBare, 0.5) - p(seqDirect, 0.5);
  const durableBareP99 = p(seqDurableBare, 0.99) - p(seqDirect, 0.99);
  const ratio = conThrough.rps / conDirect.rps;
  const ms = (v: number) => `${fixed(v, 3)} ms`;
  // The honest throughput target (issue 17): the ledger's own ceiling for these events, not the bare upstream.
  const ceilingCalls = ceiling ? ceiling.eventsPerSecond / ceiling.eventsPerCall : 0;
  const ceilingRatio = ceiling ? conThrough.rps / ceilingCalls : 0;
  const lines = [
    `dispatch benchmark (server: ${values.root ? path.resolve(values.root) : 'this checkout'}, on ${dbLabel(db.kind)}): ${int(n)} sequential calls, then ${seconds} s at ${workers} concurrent; upstream and server in their own processes (${os.cpus().length} cores)`,
    '',
    row('', 'p50', 'p99', 'calls/s'),
    row('sequential direct', ms(p(seqDirect, 0.5)), ms(p(seqDirect, 0.99)), ''),
    row(`sequential through (${spoolMode.spool?.mode ?? 'no'} spool)`, ms(p(seqThrough.times, 0.5)), ms(p(seqThrough.times, 0.99)), ''),
    row('sequential through, memory peer', ms(p(seqMemory, 0.5)), ms(p(seqMemory, 0.99)), ''),
    row('sequential through, bare Node proxy', ms(p(seqBare, 0.5)), ms(p(seqBare, 0.99)), ''),
    row('sequential, durable bare proxy', ms(p(seqDurableBare, 0.5)), ms(p(seqDurableBare, 0.99)), ''),
    row(`${workers} concurrent direct`, ms(p(conDirect.times, 0.5)), ms(p(conDirect.times, 0.99)), int(conDirect.rps)),
    row(`${workers} concurrent through`, ms(p(conThrough.times, 0.5)), ms(p(conThrough.times, 0.99)), int(conThrough.rps)),
    '',
    row('CPU µs per call', 'server', 'its event loop', 'upstream', 'bench client', 'whole machine', 'machine busy'),
    ...(
      [
        ['sequential through', seqThrough.cpu],
        [`${workers} concurrent direct`, conDirect.cpu],
        [`${workers} concurrent through`, conThrough.cpu],
        [`${workers} concurrent, bare Node proxy`, conBare.cpu],
      ] as const
    ).map(([label, c]) => row(label, int(c.server), int(c.serverLoop), int(c.upstream), int(c.client), int(c.machine), `${int(c.machineBusy * 100)} %`)),
    '',
    ...(
      [
        ['direct', seqDirect],
        ['through', seqThrough.times],
        ['bare proxy + 2 durable writes', seqDurableBare],
      ] as const
    ).map(([label, xs]) => `sequential ${label} tail, ms: ${tailQuantiles.map((q) => `p${q * 100} ${fixed(p(xs, q), 2)}`).join(' · ')}`),
    `added latency (sequential): p50 ${ms(addedP50)}, p99 ${ms(addedP99)}; at ${workers} concurrent: p50 ${ms(conAddedP50)}`,
    `the spool's share (${spoolMode.spool?.mode ?? 'no'} spool − memory peer, sequential, alternating blocks of 250): p50 ${ms(spoolP50)}, p99 ${ms(spoolP99)}` +
      (writesBefore !== null && writesAfter !== null ? `; durable disk writes per sequential call: ${fixed((writesAfter - writesBefore) / n, 2)}` : ''),
    ...(afterSequential?.writeP50Ms != null
      ? [
          `the server's own spool over its last 1,024 durable writes (sequential phase): disk write p50 ${ms(afterSequential.writeP50Ms)}, p99 ${ms(afterSequential.writeP99Ms ?? 0)}; a call's wait for its records p50 ${ms(afterSequential.appendP50Ms ?? 0)}, p99 ${ms(afterSequential.appendP99Ms ?? 0)}`,
        ]
      : []),
    ...(afterConcurrent?.writeP50Ms != null
      ? [
          `the same over its last 1,024 at ${workers} concurrent: disk write p50 ${ms(afterConcurrent.writeP50Ms)}, p99 ${ms(afterConcurrent.writeP99Ms ?? 0)}; a call's wait for its records p50 ${ms(afterConcurrent.appendP50Ms ?? 0)}, p99 ${ms(afterConcurrent.appendP99Ms ?? 0)}`,
        ]
      : []),
    `this disk's durable 4 KiB write (O_DSYNC over zero-filled blocks, 1 ms apart, ${int(diskWrites.length)} between the blocks above): p50 ${ms(p(diskWrites, 0.5))}, p99 ${ms(p(diskWrites, 0.99))}`,
    `a bare Node proxy (no capture) adds p50 ${ms(bareP50)}, p99 ${ms(bareP99)}; floor of added p50 with two durable writes per call: ${ms(bareP50)} + 2 × ${ms(p(diskWrites, 0.5))} = ${ms(floorP50)}`,
    `the floor measured whole (the bare proxy writing each request and answer durably in place before going on): adds p50 ${ms(durableBareP50)}, p99 ${ms(durableBareP99)}`,
    `throughput ratio (through / direct, ${workers} concurrent): ${fixed(ratio, 3)}` +
      (writesBeforeConcurrent !== null && writesAfterConcurrent !== null
        ? `; durable disk writes per call at ${workers} concurrent: ${fixed((writesAfterConcurrent - writesBeforeConcurrent) / conThrough.times.length, 2)}`
        : ''),
    // On a machine whose every core is busy, the CPU all processes spend per call bounds the calls per second, whatever the server's share.
    `whole machine at ${workers} concurrent through: ${int(conThrough.cpu.machine)} µs of CPU per call (${int(conThrough.cpu.machineBusy * 100)} % of ${os.cpus().length} cores busy): at most ${int((os.cpus().length * 1e6) / conThrough.cpu.machine)} calls/s with every core busy`,
    `events recorded after flush: ${int(recorded)} of ${int(expected)} expected (4 per call × ${int(throughCalls)} calls)`,
    ...(ceiling
      ? [
          `ledger append ceiling, this run's calls replayed through Ledger.append in batches of 500, nothing else running: ${ceilings.map((c) => `${int(c.eventsPerSecond)} events/s with ${c.inFlight} in flight`).join(', ')}; at best ${int(ceiling.eventsPerSecond / ceiling.eventsPerCall)} calls/s`,
          `through at ${workers} concurrent against that ceiling: ${int(conThrough.rps)} / ${int(ceilingCalls)} calls/s = ${fixed(ceilingRatio, 3)} (the old target, 0.5 × direct = ${int(0.5 * conDirect.rps)} calls/s, would need ${fixed(neededEvents / ceiling.eventsPerSecond, 2)}× the ceiling)`,
          ...ceilingBudget(ceiling, ceilingCalls, conThrough.cpu, conDirect.cpu, conBare.cpu, workers),
          ...(floor
            ? [
                `the recording floor (a bare proxy recording the same 4 events per call through the product's spool, writer and Ledger.append, and nothing else) at ${workers} concurrent: ` +
                  `${int(floor.rps)} calls/s = ${fixed(floor.rps / ceilingCalls, 3)} of the ceiling; CPU per call: it ${int(floor.cpu.server)} µs, the whole machine ${int(floor.cpu.machine)} µs (${int(floor.cpu.machineBusy * 100)} % busy); ` +
                  `p50 ${ms(p(floor.times, 0.5))}, p99 ${ms(p(floor.times, 0.99))}; events recorded ${int(floor.recorded)} of ${int(floor.expected)}`,
                // Whatever a server adds to the floor only raises this: the best any server recording through this pipeline can do here.
                `with every core busy, the floor's ${int(floor.cpu.machine)} µs of machine CPU per call allow at most ${int((os.cpus().length * 1e6) / floor.cpu.machine)} calls/s = ` +
                  `${fixed((os.cpus().length * 1e6) / floor.cpu.machine / ceilingCalls, 3)} of the ceiling`,
              ]
            : []),
        ]
      : ['ledger append ceiling: measured on PostgreSQL runs only']),
    '',
    target('added p50', ms(addedP50), '≤ 1 ms', addedP50 <= 1),
    target('added p99', ms(addedP99), '≤ 5 ms', addedP99 <= 5),
    ...(ceiling ? [target('throughput / ledger ceiling', fixed(ceilingRatio, 3), '≥ 0.7', ceilingRatio >= 0.7)] : []),
    target('no event lost', `${int(recorded)} / ${int(expected)}`, 'equal', recorded === expected),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * The recording floor at `workers` concurrent on its own fresh PostgreSQL database and folder: its
 * rate, CPU per call, and the events it recorded (counted after its graceful stop) against 4 per call.
 */
async function recordingFloor(upstream: { origin: string; pid: number }, agent: Agent, seconds: number, workers: number) {
  const floorDb = await createBenchTarget('postgres', 'bench_dispatch_floor');
  onCleanup('drop floor database', () => floorDb.drop());
  const folder = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-floor-'));
  onCleanup('remove floor data', () => rm(folder, { recursive: true, force: true }));
  const proxy = await startRecordingProxy(`${upstream.origin}/echo`, floorDb.url!, folder);
  const target: Target = { url: `${proxy.origin}/api/tools/BENCH_UP`, body: JSON.stringify({ q: 'bench' }) };
  const warm = await sequential(agent, target, 500);
  const run = await withCpu(
    { server: proxy.pid, upstream: upstream.pid },
    (r) => r.times.length,
    () => concurrent(agent, target, seconds, workers),
  );
  await proxy.stop();
  const rows = await floorDb.query<{ n: string }>(`SELECT count(*)::text AS n FROM ledger_event`);
  return { ...run, recorded: Number(rows[0]!.n), expected: 4 * (warm.length + run.times.length) };
}

/**
 * What 0.7 × the ceiling leaves for everything but the Ledger's append, on this machine's cores: at that rate, all
 * processes together may spend (cores / rate) of CPU per call; the append of a call's events costs what the
 * ceiling run measured (its Node process and PostgreSQL); the bench client and the upstream cost what this run
 * measured; the rest is what a proxy's own request path may spend.
 */
function ceilingBudget(ceiling: AppendCeiling, ceilingCalls: number, through: CpuPerCall, direct: CpuPerCall, bare: CpuPerCall, workers: number): string[] {
  const cores = os.cpus().length;
  const rate = 0.7 * ceilingCalls;
  const perCall = (cores * 1e6) / rate;
  const append = ceiling.cpuPerCall.node + ceiling.cpuPerCall.postgres;
  const ends = through.client + through.upstream;
  const left = perCall - append - ends;
  return [
    `the ceiling's own CPU per call (${ceiling.inFlight} in flight): ${int(ceiling.cpuPerCall.node)} µs in Node (Ledger.append, Prisma, pg) + ${int(ceiling.cpuPerCall.postgres)} µs in PostgreSQL = ${int(append)} µs`,
    `0.7 × the ceiling = ${int(rate)} calls/s on ${cores} cores allows ${int(perCall)} µs of CPU per call in all: ${int(append)} for the append, ${int(ends)} for this bench client and the upstream (at ${workers} concurrent through; ${int(direct.client + direct.upstream)} when direct), ` +
      `leaving ${int(left)} µs for the server's request path; it spends ${int(through.server)} µs (all its threads, its own append included) and the machine ${int(through.machine)} µs per call in all`,
    `a bare Node proxy (node:http in and out, nothing recorded, no spool, no token, no Directory) spends ${int(bare.server)} µs per call at ${workers} concurrent: ` +
      `${fixed(bare.server / Math.max(left, 1), 2)}× what the target leaves for the request path`,
  ];
}
