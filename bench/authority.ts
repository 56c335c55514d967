// Authority: verification cost per request (authenticate + allowsTool) for tokens of 1, 5 and 20 caveats, and the dispatch latency it adds (authority on against off, same run).
//
//   npm run bench -- authority [--iterations 20000] [--sequential 3000] [--cpu-calls 2000] [--seconds 5] [--concurrency 16] [--in-process]
//
// Part 1b: the revocation check (the in-memory Set of revoked ids, 10,000 of them, against a token's
// id and its issuers'), two Authorities side by side, with it and without, blocks interleaved.
// --in-process stops after part 1 (no servers). Part 2 ends with the same check across the wire: a
// token with 2 issuers through a server before and after it learns 10,000 revoked ids, against a
// control server that knows them throughout.
//
// Part 1 runs in this process: an Authority with a fixed root key verifies a token and checks one
// tool, timed one request at a time after a warm-up. Part 2 starts two dirledger servers on fresh
// PostgreSQL databases with the same root key (DIRLEDGER_SECRET_DIRLEDGER_ROOT_KEY), one with
// AUTHORITY=required and one with AUTHORITY=off (AUTH_RATE_PER_SECOND=0 on both), and one local
// upstream; the same client calls POST /api/tools/BENCH_UP through each, interleaved request by
// request, with an admin token and with a scoped token whose `uses` caveat is counted in the
// database. On a busy machine latency is noisy; the servers' own CPU time per call (from /proc,
// each target in its own block) is the steadier figure. Nothing is asserted; targets print PASS or MISS.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Agent, request } from 'undici';
import { Authority } from '../src/auth/authority.ts';
import { inspect } from '../src/auth/tokens.ts';
import { localFeed, Revocations } from '../src/auth/revocations.ts';
import { createLogger } from '../src/logger.ts';
import type { SqlExecutor } from '../src/db/sql.ts';
import { onCleanup } from './lib/cleanup.ts';
import { processCpuSeconds } from './lib/cpu.ts';
import { createBenchDatabase } from './lib/postgres.ts';
import { startServer, type ServerProcess } from './lib/server.ts';
import { fixed, int, percentile, row, target } from './lib/stats.ts';
import { benchUpstreamSection, startUpstream } from './lib/upstream.ts';

/** Verifying a token never queries; a query here would be a defect the bench should surface. */
const noDatabase: SqlExecutor = {
  query: () => Promise.reject(new Error('authenticate must not query the database')),
  transaction: () => Promise.reject(new Error('authenticate must not query the database')),
};

const future = '2099-01-01T00:00:00.000Z';
const past = '2020-01-01T00:00:00.000Z';

/** Caveats that all admit BENCH_UP at the REST door, as a real scoped token would carry. */
function caveatsFor(n: number): string[] {
  const pool = [
    'tools = BENCH_UP',
    'doors = REST,DISPATCH,MCP',
    `expires = ${future}`,
    'task = T-bench',
    'uses <= 999999999',
    `not_before = ${past}`,
    'agent = bench',
    'folders = docs/,src/',
    'audience = dirledger',
    'read = task',
    'powers = call,ingest',
    'tools = BENCH_*,ECHO,WEATHER_*',
    'doors = REST,SSE',
  ];
  return Array.from({ length: n }, (_, i) => pool[i % pool.length]!);
}

/** Wall time of each request, and the process CPU time per request (robust to a busy machine's scheduling). */
function verificationCost(authority: Authority, token: string, warmup: number, iterations: number): { times: number[]; cpuMs: number } {
  const once = () => {
    const checked = authority.authenticate(token, 'REST');
    if (!checked.ok) throw new Error(`the bench token was refused: ${checked.refusal.reason}`);
    const refused = authority.allowsTool(checked.grant, 'REST', 'BENCH_UP');
    if (refused) throw new Error(`the bench tool was refused: ${refused.reason}`);
  };
  for (let i = 0; i < warmup; i++) once();
  const times = new Array<number>(iterations);
  const cpu = process.cpuUsage();
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    once();
    times[i] = Number(process.hrtime.bigint() - start) / 1e6;
  }
  const used = process.cpuUsage(cpu);
  return { times, cpuMs: (used.user + used.system) / 1000 / iterations };
}

type Target = { label: string; url: string; headers: Record<string, string>; pid: number };

async function once(agent: Agent, t: Target, body: string): Promise<void> {
  const r = await request(t.url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...t.headers }, dispatcher: agent });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`${t.label}: ${t.url} answered ${r.statusCode}: ${text.slice(0, 300)}`);
}

/** Sequential calls, the targets interleaved request by request so drift on a shared machine hits all alike. */
async function interleaved(agent: Agent, targets: Target[], n: number, body: string): Promise<number[][]> {
  const times = targets.map(() => [] as number[]);
  for (let i = 0; i < n; i++) {
    for (const [j, t] of targets.entries()) {
      const start = performance.now();
      await once(agent, t, body);
      times[j]!.push(performance.now() - start);
    }
  }
  return times;
}

async function concurrent(agent: Agent, t: Target, seconds: number, workers: number, body: string): Promise<{ times: number[]; rps: number }> {
  const times: number[] = [];
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        await once(agent, t, body);
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
      iterations: { type: 'string', default: '20000' },
      sequential: { type: 'string', default: '3000' },
      'cpu-calls': { type: 'string', default: '2000' },
      seconds: { type: 'string', default: '5' },
      concurrency: { type: 'string', default: '16' },
      'in-process': { type: 'boolean', default: false },
    },
  });
  const iterations = Math.max(20_000, Number(values.iterations));
  const n = Number(values.sequential);
  const cpuCalls = Number(values['cpu-calls']);
  const seconds = Number(values.seconds);
  const workers = Number(values.concurrency);
  const ms = (v: number) => `${fixed(v, 3)} ms`;
  const us = (v: number) => `${fixed(v * 1000, 1)} µs`;

  const rootKeyHex = randomBytes(32).toString('hex');
  const rootKey = Buffer.from(rootKeyHex, 'hex');
  const authority = new Authority({ rootKey, audience: 'dirledger', sql: noDatabase, record: () => {}, ratePerSecond: 0, rateBurst: 1 });

  // Part 1: verification cost in process.
  const lines = [
    `authority benchmark: verification cost (authenticate + allowsTool), ${int(iterations)} requests per token after ${int(iterations / 4)} warm-up (${os.cpus().length} cores)`,
    '',
    row('', 'p50', 'p99', 'mean', 'CPU / request'),
  ];
  const targets: string[] = [];
  for (const count of [1, 5, 20]) {
    const token = authority.mintToken(caveatsFor(count));
    const { times, cpuMs } = verificationCost(authority, token, iterations / 4, iterations);
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    const p50 = percentile(times, 0.5);
    lines.push(row(`${count} caveat${count === 1 ? '' : 's'} (${token.length} chars)`, us(p50), us(percentile(times, 0.99)), us(mean), us(cpuMs)));
    targets.push(target(`verify p50, ${count} caveat${count === 1 ? '' : 's'}`, ms(p50), '≤ 0.1 ms', p50 <= 0.1));
    // A token's first request pays the signature chain and caveat parsing (later ones hit the verified-token cache).
    const fresh = Array.from({ length: Math.min(iterations, 5_000) }, () => authority.mintToken(caveatsFor(count)));
    const firstTimes = fresh.map((t) => {
      const start = process.hrtime.bigint();
      if (!authority.authenticate(t, 'REST').ok) throw new Error('a fresh bench token was refused');
      return Number(process.hrtime.bigint() - start) / 1e6;
    });
    const firstP50 = percentile(firstTimes, 0.5);
    lines.push(row(`  first use of each token (uncached)`, us(firstP50), us(percentile(firstTimes, 0.99)), '', ''));
    targets.push(target(`verify p50, ${count} caveat${count === 1 ? '' : 's'}, first use`, ms(firstP50), '≤ 0.1 ms', firstP50 <= 0.1));
  }
  process.stdout.write(`${[...lines, '', ...targets].join('\n')}\n\n`);

  // Part 1b: the revocation check, with it and without, same token, blocks interleaved.
  const revokedIds = Array.from({ length: 10_000 }, () => randomBytes(16).toString('hex'));
  const table: SqlExecutor = { ...noDatabase, query: async () => revokedIds.map((id) => ({ token_id: id })) as never };
  const revocations = new Revocations(table, localFeed(), createLogger('silent'));
  await revocations.start();
  const checking = new Authority({ rootKey, audience: 'dirledger', sql: noDatabase, record: () => {}, ratePerSecond: 0, rateBurst: 1, revocations });
  // A token two issues down (its identifier names two issuers), 5 caveats: three ids to check.
  const grantOf = (a: Authority, token: string) => {
    const checked = a.authenticate(token, 'REST');
    if (!checked.ok) throw new Error(checked.refusal.reason);
    return checked.grant;
  };
  const issuing = authority.mintToken(['powers = issue,call', 'tools = BENCH_UP']);
  const middle = authority.issue(grantOf(authority, issuing), 'REST', {});
  if (!middle.ok) throw new Error('issue failed');
  const leaf = authority.issue(grantOf(authority, middle.token), 'REST', { doors: ['REST'], expires: future });
  if (!leaf.ok) throw new Error('issue failed');
  const blocks = 20;
  const per = Math.max(2_000, Math.floor(iterations / blocks));
  const withoutCheck: number[] = [];
  const withCheck: number[] = [];
  verificationCost(authority, leaf.token, per, per);
  verificationCost(checking, leaf.token, per, per);
  for (let b = 0; b < blocks; b++) {
    withoutCheck.push(...verificationCost(authority, leaf.token, 0, per).times);
    withCheck.push(...verificationCost(checking, leaf.token, 0, per).times);
  }
  const offP50 = percentile(withoutCheck, 0.5);
  const onP50 = percentile(withCheck, 0.5);
  const added = onP50 - offP50;
  process.stdout.write(
    `${[
      `revocation check: ${int(revocations.size)} revoked ids in memory; a token with 2 issuers (3 ids checked); ${int(withCheck.length)} requests each, ${blocks} interleaved blocks`,
      '',
      row('', 'p50', 'p99', 'mean', ''),
      row('without revocations', us(offP50), us(percentile(withoutCheck, 0.99)), us(withoutCheck.reduce((a, v) => a + v, 0) / withoutCheck.length), ''),
      row('with revocations', us(onP50), us(percentile(withCheck, 0.99)), us(withCheck.reduce((a, v) => a + v, 0) / withCheck.length), ''),
      row('added by the check', us(added), '', '', ''),
      '',
      target('revocation check, p50 added', ms(added), '≤ 0.01 ms', added <= 0.01),
    ].join('\n')}\n\n`,
  );
  await revocations.close();
  if (values['in-process']) return;

  // Part 2: dispatch through a server with authority on against one with it off.
  const upstream = await startUpstream();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-authority-'));
  onCleanup('remove bench directory', () => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'tool.json'), benchUpstreamSection(upstream.origin));
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const start = async (mode: 'required' | 'off', name: string = mode): Promise<ServerProcess & { databaseUrl: string }> => {
    const db = await createBenchDatabase(`bench_authority_${name}`);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), `dirledger-bench-authority-${name}-`));
    onCleanup(`remove bench data ${name}`, () => rm(dataDir, { recursive: true, force: true }));
    const server = await startServer(
      {
        DATABASE_URL: db.url,
        DIRECTORY_DIR: dir,
        DIRECTORY_WATCH_MS: '0',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'error',
        AUTHORITY: mode,
        AUTH_RATE_PER_SECOND: '0',
        DIRLEDGER_SECRET_DIRLEDGER_ROOT_KEY: rootKeyHex,
      },
      { nodeArgs },
    );
    return Object.assign(server, { databaseUrl: db.url });
  };
  const [on, off, revoked] = await Promise.all([start('required'), start('off'), start('required', 'revoked')]);
  // A server learns 10,000 revoked ids as another instance would tell it (its LISTEN feed); the last
  // names a canary token, refused once the whole batch has arrived.
  const learnRevocations = async (server: { origin: string; databaseUrl: string }) => {
    const canary = authority.mintToken();
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    await client.query(
      `INSERT INTO token_revocation (token_id, reason, revoked_by, action_id)
       SELECT md5(random()::text || g), 'bench', 'bench', 'bench-' || g FROM generate_series(1, $1::int) g
       UNION ALL SELECT $2, 'bench canary', 'bench', 'bench-canary'`,
      [revokedIds.length - 1, inspect(canary).tokenId],
    );
    await client.end();
    for (let waited = 0; ; waited += 50) {
      const answer = await request(`${server.origin}${route}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${canary}` },
        dispatcher: agent,
      });
      await answer.body.text();
      if (answer.statusCode === 401) return;
      if (waited > 30_000) throw new Error(`${server.origin} still admits the canary token 30 s after its revocation (${answer.statusCode})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const admin = authority.mintToken();
  const scoped = authority.mintToken(['tools = BENCH_UP', 'doors = REST', `expires = ${future}`, 'uses <= 999999999']);
  const route = '/api/tools/BENCH_UP';
  const offTarget: Target = { label: 'authority off', url: `${off.origin}${route}`, headers: {}, pid: off.pid };
  const adminTarget: Target = { label: 'on, admin token', url: `${on.origin}${route}`, headers: { authorization: `Bearer ${admin}` }, pid: on.pid };
  const scopedTarget: Target = { label: 'on, scoped token (uses)', url: `${on.origin}${route}`, headers: { authorization: `Bearer ${scoped}` }, pid: on.pid };
  const all = [offTarget, adminTarget, scopedTarget];
  const body = JSON.stringify({ q: 'bench' });

  const agent = new Agent({ connections: workers * 2, keepAliveTimeout: 60_000 });
  const bare = await request(`${on.origin}${route}`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
  await bare.body.text();
  if (bare.statusCode !== 401) throw new Error(`the AUTHORITY=required server answered ${bare.statusCode} to a call without a token, expected 401`);
  await learnRevocations(revoked);

  await interleaved(agent, all, 300, body);
  const seq = await interleaved(agent, all, n, body);
  // Server CPU per call: each target alone, with a pause so the background writer's batches land inside their block.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));
  const cpuPerCall: number[] = [];
  for (const t of all) {
    await settle();
    const before = processCpuSeconds(t.pid)!;
    await interleaved(agent, [t], cpuCalls, body);
    await settle();
    cpuPerCall.push(((processCpuSeconds(t.pid)! - before) * 1000) / cpuCalls);
  }
  // The revocation check across the wire, the same token (2 issuers, 3 ids checked) through two
  // servers interleaved request by request, in blocks: first `on` knows no revoked id and `revoked`
  // 10,000; then `on` learns 10,000 too. `revoked` is the control: the check's cost is how much
  // `on` slowed against it, so whatever differs between the two processes cancels out.
  const leafHeaders = { authorization: `Bearer ${leaf.token}` };
  const pair: Target[] = [
    { label: 'on', url: `${on.origin}${route}`, headers: leafHeaders, pid: on.pid },
    { label: 'control', url: `${revoked.origin}${route}`, headers: leafHeaders, pid: revoked.pid },
  ];
  const checkBlocks = 10;
  const phase = async () => {
    await interleaved(agent, pair, 300, body);
    const seqs: number[][] = [[], []];
    const blockGaps: number[] = [];
    for (let b = 0; b < checkBlocks; b++) {
      const [mine, control] = await interleaved(agent, pair, Math.ceil(n / checkBlocks), body);
      seqs[0]!.push(...mine!);
      seqs[1]!.push(...control!);
      blockGaps.push(percentile(mine!, 0.5) - percentile(control!, 0.5));
    }
    const cpu: number[] = [];
    for (const t of pair) {
      await settle();
      const before = processCpuSeconds(t.pid)!;
      await interleaved(agent, [t], cpuCalls, body);
      await settle();
      cpu.push(((processCpuSeconds(t.pid)! - before) * 1000) / cpuCalls);
    }
    return { seqs, blockGaps, cpu, gap: percentile(seqs[0]!, 0.5) - percentile(seqs[1]!, 0.5) };
  };
  const before = await phase();
  await learnRevocations(on);
  const after = await phase();
  const con = [] as { times: number[]; rps: number }[];
  if (seconds > 0) for (const t of all) con.push(await concurrent(agent, t, seconds, workers, body));
  await agent.close();
  await Promise.all([on.stop(30_000), off.stop(30_000), revoked.stop(30_000)]);
  await upstream.stop();

  const p = (xs: number[], q: number) => percentile(xs, q);
  const out = [
    `dispatch with authority on against off: ${int(n)} sequential calls each, interleaved${seconds > 0 ? `, then ${seconds} s at ${workers} concurrent each` : ''}; POST ${route}; servers and upstream in their own processes`,
    '',
    row('', 'p50', 'p99', 'server CPU/call', seconds > 0 ? `p50 at ${workers}` : '', seconds > 0 ? 'calls/s' : ''),
    ...all.map((t, i) =>
      row(t.label, ms(p(seq[i]!, 0.5)), ms(p(seq[i]!, 0.99)), ms(cpuPerCall[i]!), con[i] ? ms(p(con[i]!.times, 0.5)) : '', con[i] ? int(con[i]!.rps) : ''),
    ),
    '',
  ];
  for (const [i, t] of all.entries()) {
    if (i === 0) continue;
    const addedP50 = p(seq[i]!, 0.5) - p(seq[0]!, 0.5);
    const addedP99 = p(seq[i]!, 0.99) - p(seq[0]!, 0.99);
    const ratio = con[i] && con[0] ? `, throughput ratio ${fixed(con[i]!.rps / con[0]!.rps, 3)}` : '';
    out.push(`added by authority (${t.label}): p50 ${ms(addedP50)}, p99 ${ms(addedP99)}, server CPU ${ms(cpuPerCall[i]! - cpuPerCall[0]!)} per call${ratio}`);
  }
  const wireAdded = after.gap - before.gap;
  const blockAdded = after.blockGaps.map((g, i) => g - before.blockGaps[i]!).sort((x, y) => x - y);
  const spread = percentile(blockAdded, 0.75) - percentile(blockAdded, 0.25);
  out.push(
    '',
    `revocation check across the wire: a token with 2 issuers, ${int(before.seqs[0]!.length)} sequential calls through each of two servers per phase, interleaved, in ${checkBlocks} blocks; the control server knows 10,000 revoked ids throughout`,
    '',
    row('', 'p50', 'p99', 'server CPU/call', '', ''),
    row('on, no revoked ids', ms(percentile(before.seqs[0]!, 0.5)), ms(percentile(before.seqs[0]!, 0.99)), ms(before.cpu[0]!), '', ''),
    row('  control, same time', ms(percentile(before.seqs[1]!, 0.5)), ms(percentile(before.seqs[1]!, 0.99)), ms(before.cpu[1]!), '', ''),
    row(`on, ${int(revokedIds.length)} revoked ids`, ms(percentile(after.seqs[0]!, 0.5)), ms(percentile(after.seqs[0]!, 0.99)), ms(after.cpu[0]!), '', ''),
    row('  control, same time', ms(percentile(after.seqs[1]!, 0.5)), ms(percentile(after.seqs[1]!, 0.99)), ms(after.cpu[1]!), '', ''),
    '',
    `added by the check (on − control, with − without): p50 ${ms(wireAdded)}, server CPU ${ms(after.cpu[0]! - after.cpu[1]! - (before.cpu[0]! - before.cpu[1]!))} per call; per block ${blockAdded.map((v) => fixed(v, 3)).join(' · ')} ms`,
    '',
    // Blocks whose middle half spreads wider than the target cannot tell a pass from a miss.
    spread <= 0.01
      ? target('revocation check, p50 added per call, across the wire', ms(wireAdded), '≤ 0.01 ms', wireAdded <= 0.01)
      : `revocation check across the wire: not resolved here, the blocks' middle half spans ${ms(spread)} (target ≤ 0.01 ms; the in-process figure above is the check's cost)`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}
