// Model door: added latency of POST /v1/chat/completions through dirledger (full capture) against calling the fake upstream directly: non-streaming, time to first token, each chunk forwarded.
//
//   npm run bench -- model-door [--sequential 2000] [--streams 200] [--gap-ms 0] [--db postgres|pglite]
//
// --gap-ms pauses between streamed calls, so a stream's trailing records (written when it ends) and the
// ledger's next batch are not measured as the next call's time to first token.
//
// The fake model upstream (src/model/fake-upstream.ts) runs in its own process, the dirledger server
// (the esbuild bundle, AUTHORITY=off, the durable spool) in another; one client measures both paths
// in interleaved blocks so the machine's moods fall on both alike. Chunks carry the wall-clock time
// the fake wrote them, so a chunk's delay is measured from its own writing, direct and through.
// A bare Node proxy, and one that writes each request and answer durably before going on
// (bench/lib/upstream.ts), in the same blocks, measure the floor of any proxy that keeps the spool's rule here.
// Nothing is asserted; targets print PASS or MISS. BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof") is added to the server's node flags.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { wallClockMs } from '../src/model/fake-upstream.ts';
import { onCleanup } from './lib/cleanup.ts';
import { processCpuSeconds } from './lib/cpu.ts';
import { benchServerEntry } from './lib/build.ts';
import { freePort, repoRoot, startServer } from './lib/server.ts';
import { startBareProxy } from './lib/upstream.ts';
import { fixed, int, percentile, row, target } from './lib/stats.ts';
import { createBenchTarget, dbLabel, parseDbKinds } from './lib/target-db.ts';

async function startFake(): Promise<{ origin: string; stop(): Promise<void> }> {
  const port = await freePort();
  const source = `import { startFakeUpstream } from ${JSON.stringify(path.join(repoRoot, 'src/model/fake-upstream.ts'))}; await startFakeUpstream(${port}); process.stdout.write('ready\\n');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`fake upstream exited with ${code}`)));
  });
  const stop = onCleanup(`stop fake upstream pid ${child.pid}`, async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  });
  return { origin: `http://127.0.0.1:${port}`, stop };
}

const agent = new Agent({ connections: 8, keepAliveTimeout: 60_000 });
const chatBody = JSON.stringify({ model: 'bench-gpt', messages: [{ role: 'user', content: 'bench' }], max_tokens: 16 });
const streamBody = (stamp: boolean) =>
  JSON.stringify({
    model: 'bench-gpt',
    messages: [{ role: 'user', content: stamp ? 'FAKE_STAMP' : 'bench' }],
    max_tokens: 16,
    stream: true,
    stream_options: { include_usage: true },
  });

async function call(url: string, body: string): Promise<number> {
  const start = performance.now();
  const r = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
  await r.body.arrayBuffer();
  if (r.statusCode !== 200) throw new Error(`${url} answered ${r.statusCode}`);
  return performance.now() - start;
}

/** Time to the first content chunk, and each stamped chunk's delay from when the fake wrote it. */
async function stream(url: string, stamp: boolean): Promise<{ headers: number; ttft: number; delays: number[] }> {
  const start = performance.now();
  const r = await request(url, { method: 'POST', body: streamBody(stamp), headers: { 'content-type': 'application/json' }, dispatcher: agent });
  const headers = performance.now() - start;
  let ttft = NaN;
  const delays: number[] = [];
  let text = '';
  for await (const chunk of r.body) {
    const now = wallClockMs();
    text += Buffer.from(chunk).toString('utf8');
    if (Number.isNaN(ttft) && text.includes('"content":"w0')) ttft = performance.now() - start;
    for (const m of text.matchAll(/"content":"@(\d+\.\d+) "/g)) delays.push(now - Number(m[1]));
    text = text.slice(text.lastIndexOf('\n'));
  }
  if (r.statusCode !== 200) throw new Error(`${url} answered ${r.statusCode}`);
  return { headers, ttft, delays };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      sequential: { type: 'string', default: '2000' },
      streams: { type: 'string', default: '200' },
      'gap-ms': { type: 'string', default: '0' },
      db: { type: 'string', default: 'postgres' },
    },
  });
  const n = Number(values.sequential);
  const streams = Number(values.streams);
  const fake = await startFake();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-models-'));
  onCleanup('remove bench directory', () => rm(dir, { recursive: true, force: true }));
  const upstream = JSON.stringify({ method: 'POST', url: `${fake.origin}/openai/v1` }).replaceAll('"', '""');
  await writeFile(
    path.join(dir, 'model.csv'),
    `name,provider,upstream,input price,output price,cached price,max output,price date\nbench-gpt,openai,"${upstream}",0.15,0.60,0.075,16384,2026-12-01\n`,
  );
  const [kind] = parseDbKinds(values.db!);
  const db = await createBenchTarget(kind!, 'bench_model_door');
  onCleanup('drop bench database', () => db.drop());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-data-'));
  onCleanup('remove bench data', () => rm(dataDir, { recursive: true, force: true }));
  const entry = await benchServerEntry(repoRoot, 'model-door');
  const server = await startServer(
    { DIRECTORY_DIR: dir, DIRECTORY_WATCH_MS: '0', LOG_LEVEL: 'error', AUTHORITY: 'off', DATA_DIR: dataDir, ...db.env },
    { root: repoRoot, entry, timeoutMs: 180_000, nodeArgs: process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [] },
  );
  const direct = `${fake.origin}/openai/v1/chat/completions`;
  const through = `${server.origin}/v1/chat/completions`;
  // The least any Node proxy adds here (no capture, no record), and the same proxy making the spool's two durable writes itself.
  const bareProxy = await startBareProxy(direct);
  const bare = bareProxy.origin;
  const floorProxy = await startBareProxy(direct, path.join(dir, 'durable-bare-proxy'));
  const floor = `${floorProxy.origin}/v1/chat/completions`;

  for (let i = 0; i < 200; i++) await Promise.all([call(direct, chatBody), call(through, chatBody), call(floor, chatBody)]);
  type SpoolHealth = { writes?: number | null; writeP50Ms?: number | null; writeP99Ms?: number | null };
  const spoolHealth = async () => ((await (await fetch(`${server.origin}/healthz`)).json()) as { spool?: SpoolHealth }).spool ?? {};
  const spoolWrites = async () => (await spoolHealth()).writes ?? null;
  const writesAtStart = await spoolWrites();
  const cpuAtStart = processCpuSeconds(server.pid);
  const seqDirect: number[] = [];
  const seqThrough: number[] = [];
  const seqBare: number[] = [];
  const seqFloor: number[] = [];
  for (let i = 0; i < 200; i++) await call(bare, chatBody);
  for (let done = 0; done < n; done += 250) {
    for (let i = 0; i < Math.min(250, n - done); i++) seqDirect.push(await call(direct, chatBody));
    for (let i = 0; i < Math.min(250, n - done); i++) seqThrough.push(await call(through, chatBody));
    for (let i = 0; i < Math.min(250, n - done); i++) seqBare.push(await call(bare, chatBody));
    for (let i = 0; i < Math.min(250, n - done); i++) seqFloor.push(await call(floor, chatBody));
  }
  // The spool's own figures over its last 1,024 writes: the sequential calls' disk time, the part of the added latency no code here can cut.
  const { writes: writesAfterSequential = null, writeP50Ms = null, writeP99Ms = null } = await spoolHealth();
  const cpuAfterSequential = processCpuSeconds(server.pid);
  const ttftDirect: number[] = [];
  const headersDirect: number[] = [];
  const headersThrough: number[] = [];
  const ttftThrough: number[] = [];
  const ttftFloor: number[] = [];
  const chunkDirect: number[] = [];
  const chunkThrough: number[] = [];
  const gap = () => new Promise((r) => setTimeout(r, Number(values['gap-ms'])));
  for (let i = 0; i < streams; i++) {
    await gap();
    const viaDirect = await stream(direct, false);
    ttftDirect.push(viaDirect.ttft);
    headersDirect.push(viaDirect.headers);
    await gap();
    const viaThrough = await stream(through, false);
    ttftThrough.push(viaThrough.ttft);
    headersThrough.push(viaThrough.headers);
    await gap();
    ttftFloor.push((await stream(floor, false)).ttft);
    if (i % 4 === 0) {
      chunkDirect.push(...(await stream(direct, true)).delays);
      chunkThrough.push(...(await stream(through, true)).delays);
    }
  }
  const calls = 200 + n + streams + Math.ceil(streams / 4);
  const writesAtEnd = await spoolWrites();
  const perCall = (from: number | null, to: number | null, count: number) => (from === null || to === null ? 'n/a' : fixed((to - from) / count, 2));
  await agent.close();
  await floorProxy.stop();
  await server.stop(60_000);
  const rows = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ledger_event WHERE metadata->>'door' = 'MODEL'`);
  const recorded = Number(rows[0]!.n);
  await bareProxy.stop();
  await fake.stop();

  const p = percentile;
  const ms = (v: number) => `${fixed(v, 3)} ms`;
  const added = (a: number[], b: number[], q: number) => p(a, q) - p(b, q);
  const lines = [
    `model-door benchmark on ${dbLabel(db.kind)}: ${int(n)} sequential chat completions, ${int(streams)} streams ${values['gap-ms']} ms apart (${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => fixed(l, 2))
      .join(' ')})`,
    '',
    row('', 'p50', 'p99'),
    row('non-streaming direct', ms(p(seqDirect, 0.5)), ms(p(seqDirect, 0.99))),
    row('non-streaming through', ms(p(seqThrough, 0.5)), ms(p(seqThrough, 0.99))),
    row('non-streaming, durable bare proxy', ms(p(seqFloor, 0.5)), ms(p(seqFloor, 0.99))),
    row('non-streaming, bare Node proxy', ms(p(seqBare, 0.5)), ms(p(seqBare, 0.99))),
    row('stream headers direct', ms(p(headersDirect, 0.5)), ms(p(headersDirect, 0.99))),
    row('stream headers through', ms(p(headersThrough, 0.5)), ms(p(headersThrough, 0.99))),
    row('time to first token direct', ms(p(ttftDirect, 0.5)), ms(p(ttftDirect, 0.99))),
    row('time to first token through', ms(p(ttftThrough, 0.5)), ms(p(ttftThrough, 0.99))),
    row('time to first token, durable bare', ms(p(ttftFloor, 0.5)), ms(p(ttftFloor, 0.99))),
    row('chunk delay direct', ms(p(chunkDirect, 0.5)), ms(p(chunkDirect, 0.99))),
    row('chunk delay through', ms(p(chunkThrough, 0.5)), ms(p(chunkThrough, 0.99))),
    '',
    `events recorded (door MODEL): ${int(recorded)} of ${int(calls * 4)} expected (4 per call × ${int(calls)} calls)`,
    `the floor (a bare proxy writing each request and answer durably in place before going on) adds: non-streaming p50 ${ms(added(seqFloor, seqDirect, 0.5))}, p99 ${ms(added(seqFloor, seqDirect, 0.99))}; time to first token p50 ${ms(added(ttftFloor, ttftDirect, 0.5))}, p99 ${ms(added(ttftFloor, ttftDirect, 0.99))}`,
    `durable spool writes per call: ${perCall(writesAtStart, writesAfterSequential, n)} non-streaming, ${perCall(writesAfterSequential, writesAtEnd, streams + Math.ceil(streams / 4))} streaming`,
    `spool write (disk) over the last non-streaming calls: p50 ${writeP50Ms === null ? 'n/a' : ms(writeP50Ms)}, p99 ${writeP99Ms === null ? 'n/a' : ms(writeP99Ms)}`,
    `a bare Node proxy adds p50 ${ms(added(seqBare, seqDirect, 0.5))}; with the two writes the floor of added p50 is ${writeP50Ms === null ? 'n/a' : `${ms(added(seqBare, seqDirect, 0.5) + 2 * writeP50Ms)}, the door ${ms(added(seqThrough, seqDirect, 0.5) - added(seqBare, seqDirect, 0.5) - 2 * writeP50Ms)} above it`}`,
    // CPU time holds under load where latency does not; it includes the background batches to the Ledger.
    `server CPU per non-streaming call: ${cpuAtStart === null || cpuAfterSequential === null ? 'n/a' : `${int(((cpuAfterSequential - cpuAtStart) / n) * 1e6)} µs`}`,
    '',
    target('added p50, non-streaming', ms(added(seqThrough, seqDirect, 0.5)), '≤ 1 ms', added(seqThrough, seqDirect, 0.5) <= 1),
    target('added p99, non-streaming', ms(added(seqThrough, seqDirect, 0.99)), '≤ 5 ms', added(seqThrough, seqDirect, 0.99) <= 5),
    target('added p50, time to first token', ms(added(ttftThrough, ttftDirect, 0.5)), '≤ 1 ms', added(ttftThrough, ttftDirect, 0.5) <= 1),
    target('added p99, time to first token', ms(added(ttftThrough, ttftDirect, 0.99)), '≤ 5 ms', added(ttftThrough, ttftDirect, 0.99) <= 5),
    target('added p50, each chunk forwarded', ms(added(chunkThrough, chunkDirect, 0.5)), '≤ 1 ms', added(chunkThrough, chunkDirect, 0.5) <= 1),
    target('events recorded', `${int(recorded)} / ${int(calls * 4)}`, 'equal', recorded === calls * 4),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
