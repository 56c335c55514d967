// Reviewer reads: dirledger's GraphQL vs PostGraphile 5 on the same database vs one SQL statement (PostgreSQL).
//
//   npm run bench -- reads [--events 150000] [--load 150000] [--grow 1000000,10000000] [--rounds 3] [--seconds 2]
//                          [--concurrency 1,16] [--only "event by id,…"] [--skip-postgraphile] [--db postgres|both] [--base DIR]
//
// --base DIR also runs the server of another checkout (e.g. a worktree of main) on the same database and
// times it in the same interleaved rounds as "base" (an A/B beside PostGraphile); it is not accounted.
//
// --events N above --load (150,000) loads --load events through the door, measures, grows the ledger to
// N in SQL and measures again: `--events 1000000` prints how p99 grows from 150,000 to 1M. --grow adds sizes.
//
// --db both also runs this server on the embedded default (PGlite in a fresh data folder, loaded with
// the same events through the same door) and times it in the same interleaved rounds as "pglite";
// positions there follow its own commit order, so it is checked to answer, not compared with the floor,
// and it has no wire accounting or growth (both are PostgreSQL's).
// Loads --events through POST /ledger/batches with the ingest bench's workload (tool requests name
// their tool's contract), starts PostGraphile (Amber preset) on the same database, and asks each
// question of bench/lib/reads-questions.ts four ways: of this server, of PostGraphile, of PostGraphile
// keeping the record this server keeps of a recorded read ("recorded peer": REQUEST/IN staged,
// RESPONSE/OUT durable before the answer, through the product's own spool, writer and Ledger.append on
// the same database), and as one hand-written statement through pg (the floor). For the questions
// this server records (a Directory read), the recorded peer tells what the record costs from what the
// server's own path costs. First the loaded tables are vacuumed and analysed (so
// autovacuum does not run during the first cells) and it checks that every system answers with the same data;
// then an accounting pass through a wire-protocol relay counts statements and bytes from PostgreSQL
// per request (servers started behind the relay only for it); then timed, interleaved rounds
// (every question, concurrency and system in turn, the systems' order rotating per round) print rps,
// p50 and p99 with medians over rounds, and per request the CPU of the server, of the database's client backends
// and of the whole machine. --grow then adds generated events in SQL (bench/lib/grow-ledger.ts)
// and measures again at each size, printing how p99 grows.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { mintWithRootKey } from '../src/auth/tokens.ts';
import { contractSha256 } from '../src/directory/contracts.ts';
import { benchServerEntry } from './lib/build.ts';
import { onCleanup } from './lib/cleanup.ts';
import { backendsCpu, machineCpuSeconds, processCpuSeconds } from './lib/cpu.ts';
import { growLedger } from './lib/grow-ledger.ts';
import { workload } from './lib/ledger-workload.ts';
import { isLedgerAppend, startWireCounter, type WireCounts } from './lib/pg-wire-counter.ts';
import { benchBaseUrl, createBenchDatabase } from './lib/postgres.ts';
import { createBenchTarget, parseDbKinds } from './lib/target-db.ts';
import { postClient, type PostClient } from './lib/post.ts';
import { askFloor, questions, type Pools, type Question } from './lib/reads-questions.ts';
import { repoRoot, startServer, type ServerProcess } from './lib/server.ts';
import { fixed, int, median, percentile, row, target } from './lib/stats.ts';

const rootKey = randomBytes(32);
const auth = { authorization: `Bearer ${mintWithRootKey(rootKey)}` };
const tools = ['search_web', 'read_file', 'write_file', 'list_directory', 'run_query', 'send_email', 'create_event', 'fetch_url', 'summarize', 'git_diff'];
const contractOf = (tool: string) => ({
  method: 'POST',
  url: `https://tools.example.com/mcp/${tool}`,
  headers: { 'content-type': 'application/json' },
  body: { query: '{{query}}' },
});
const systems = ['ours', 'base', 'postgraphile', 'recorded peer', 'floor', 'pglite'] as const;
type System = (typeof systems)[number];
/**
 * `cpuMs`: the server process's CPU per request (not for the floor, which runs in this process);
 * `postgresMs`: the bench database's client backends' (the system's statements, and for ours its record's appends);
 * `machineMs`: every process's (server, PostgreSQL, this client), which bounds the rate once the cores are full.
 */
type Cell = { rps: number; p50: number; p99: number; cpuMs?: number; postgresMs?: number; machineMs?: number };
/**
 * Per request; `statements` are reads, `appends` the ledger appends of the request's own record (a
 * Directory read is recorded: docs/ARCHITECTURE.md, "What is recorded"), batched in the background.
 * `readsPayload`: a read's text names blob.data (PostGraphile encodes it in SQL, so its bytes are not typed bytea).
 */
type Accounting = { statements: number; appends: number; bytes: number; byteaBytes: number; readsPayload: boolean };
type Sized = { events: number; cells: Map<string, Cell[]>; accounting: Map<string, Accounting> };

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      events: { type: 'string', default: '150000' },
      load: { type: 'string', default: '150000' },
      grow: { type: 'string', default: '' },
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '2' },
      concurrency: { type: 'string', default: '1,16' },
      only: { type: 'string', default: '' },
      'skip-postgraphile': { type: 'boolean', default: false },
      db: { type: 'string', default: 'postgres' },
      base: { type: 'string' },
    },
    strict: true,
  });
  const events = Math.min(Number(values.events), Number(values.load));
  const sizes = [...new Set([events, Number(values.events), ...values.grow.split(',').filter(Boolean).map(Number)])].sort((a, b) => a - b);
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const levels = values.concurrency.split(',').map(Number);
  const asked = values.only ? questions.filter((q) => values.only.split(',').includes(q.short)) : questions;
  const withPglite = parseDbKinds(values.db).includes('pglite');
  if (withPglite && sizes.length > 1) throw new Error('--grow grows PostgreSQL in SQL; run it without --db both');
  if (values.db === 'pglite') throw new Error('--db: reads compares against PostgreSQL; use --db both for PGlite beside it');
  const active: System[] = [
    ...(values['skip-postgraphile'] ? (['ours', 'floor'] as const) : (['ours', 'postgraphile', 'recorded peer', 'floor'] as const)),
    ...(values.base ? (['base'] as const) : []),
    ...(withPglite ? (['pglite'] as const) : []),
  ];
  const onPostgres = active.filter((s) => s !== 'pglite' && s !== 'base');
  console.log(
    `reads: ${int(events)} events through the ingest door${sizes.length > 1 ? `, then grown to ${sizes.slice(1).map(int).join(', ')}` : ''}; ` +
      `${rounds} interleaved rounds of ${seconds} s per cell; concurrency ${levels.join(', ')}; PostgreSQL at ${new URL(benchBaseUrl()).host}`,
  );

  const db = await createBenchDatabase('reads');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-reads-'));
  onCleanup(`remove ${dataDir}`, () => rm(dataDir, { recursive: true, force: true }));
  const contracts = new Map(tools.map((t) => [t, contractSha256(contractOf(t))]));
  await writeDirectory(dataDir);
  const entry = await benchServerEntry(repoRoot, 'reads');
  const ourEnv = (url: string, name: string) => ({
    DATABASE_URL: url,
    DATA_DIR: path.join(dataDir, name),
    DIRECTORY_DIR: path.join(dataDir, 'directory'),
    DIRECTORY_WATCH_MS: '0',
    DIRLEDGER_SECRET_DIRLEDGER_ROOT_KEY: rootKey.toString('hex'),
    AUTH_RATE_PER_SECOND: '0',
  });
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  // BENCH_PEER_NODE_ARGS (e.g. --cpu-prof) go to PostGraphile, recorded or not.
  const peerArgs = process.env.BENCH_PEER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const startOurs = (url: string, name: string) => startServer(ourEnv(url, name), { entry, ...(name === 'ours' && { nodeArgs }) });
  // recordIn: a folder name under the data folder for the recorded peer's spool and blobs.
  const startPostgraphile = (url: string, recordIn?: string) =>
    startServer(
      { DATABASE_URL: url, ...(recordIn && { RECORD_FOLDER: path.join(dataDir, recordIn) }) },
      {
        entry: path.join(repoRoot, 'bench/lib/postgraphile-server.mjs'),
        nodeArgs: ['--import', path.join(repoRoot, 'bench/lib/with-resolvers.mjs'), ...peerArgs],
      },
    );

  const loader = await startOurs(db.url, 'loader');
  const t0 = performance.now();
  await ingest(loader.origin, events, contracts);
  console.log(`loaded ${int(events)} events through POST /ledger/batches in ${fixed((performance.now() - t0) / 1000, 1)} s`);
  // The server timed starts after the load, as PostGraphile and the base do, so no system timed took
  // the load itself (the A/B of 2026-12-02 saw the loading server slower at concurrency 1 either way round).
  await loader.stop();
  const ours = await startOurs(db.url, 'ours');
  const peer = active.includes('postgraphile') ? await startPostgraphile(db.url) : undefined;
  const recordedPeer = active.includes('recorded peer') ? await startPostgraphile(db.url, 'recorded-peer') : undefined;
  const baseRoot = values.base && path.resolve(values.base);
  // BENCH_SERVER_NODE_ARGS (e.g. --cpu-prof) go to the base too, so an A/B can profile both sides.
  const base = baseRoot ? await startServer(ourEnv(db.url, 'base'), { root: baseRoot, entry: await benchServerEntry(baseRoot, 'reads'), nodeArgs }) : undefined;
  let embedded: ServerProcess | undefined;
  if (withPglite) {
    const target = await createBenchTarget('pglite', 'reads');
    const { DATABASE_URL: _onPostgres, ...embeddedEnv } = { ...ourEnv('', 'pglite'), ...target.env };
    embedded = await startServer(embeddedEnv, { entry, timeoutMs: 180_000 });
    const t1 = performance.now();
    await ingest(embedded.origin, events, contracts);
    console.log(`loaded the same ${int(events)} events into PGlite through POST /ledger/batches in ${fixed((performance.now() - t1) / 1000, 1)} s`);
  }
  const floor = new pg.Pool({ connectionString: db.url, max: Math.max(...levels) });
  floor.on('error', () => {}); // dropping the database ends its connections
  onCleanup('floor pool', () => floor.end());
  // Settled before anything is timed: otherwise autovacuum takes up the load here, during whichever cells come first.
  const t2 = performance.now();
  await floor.query('VACUUM (ANALYZE) ledger_event, blob, ledger_batch');
  console.log(`vacuumed and analysed in ${fixed((performance.now() - t2) / 1000, 1)} s`);

  const results: Sized[] = [];
  for (const size of sizes) {
    if (size > events) {
      console.log(`\ngrowing the ledger to ${int(size)} events in SQL…`);
      const s = await growLedger(db.url, size, { tools, contracts, log: (l) => console.log(l) });
      console.log(`grown in ${fixed(s, 0)} s`);
    }
    const pools = await readPools(floor, tools);
    const servers = { ours, base, postgraphile: peer, 'recorded peer': recordedPeer, pglite: embedded };
    await checkSameAnswers(asked, servers, floor, pools, onPostgres);
    const accounting = await account(asked, db.url, pools, onPostgres, startOurs, startPostgraphile);
    const cells = await timeRounds(asked, servers, floor, db.url, pools, active, levels, rounds, seconds);
    const sized: Sized = { events: size, cells, accounting };
    results.push(sized);
    printSize(sized, asked, active, levels, rounds);
  }
  if (results.length > 1) printGrowth(results, asked, active, levels);
  await peer?.stop();
  await recordedPeer?.stop();
  await base?.stop();
  await embedded?.stop();
  await ours.stop();
  await db.drop();
}

async function writeDirectory(dataDir: string): Promise<void> {
  const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
  const lines = [
    'name,description,way: http,args schema',
    ...tools.map((t) =>
      [
        t,
        quote(`The ${t.replaceAll('_', ' ')} tool of the bench workload.`),
        quote(JSON.stringify(contractOf(t))),
        quote('{"type":"object","properties":{"query":{"type":"string"}}}'),
      ].join(','),
    ),
  ];
  await import('node:fs/promises').then((fs) => fs.mkdir(path.join(dataDir, 'directory'), { recursive: true }));
  await writeFile(path.join(dataDir, 'directory', 'tool.csv'), `${lines.join('\n')}\n`);
}

/** The workload through the ingest door, 4 senders, each tool request naming its tool's contract. */
async function ingest(origin: string, events: number, contracts: Map<string, string>): Promise<void> {
  const client = postClient(origin, 4);
  const batches = [...workload({ events, batchSize: 500, repeatRatio: 0.3, resendRatio: 0, seed: 1, collectors: 4 })];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < batches.length) {
        const b = batches[next++]!;
        const evs = b.events.map((e) => (e.kind === 'tool.request' && e.tool ? { ...e, contract: { form: 'REST', sha256: contracts.get(e.tool)! } } : e));
        const r = await client.post('/ledger/batches', Buffer.from(JSON.stringify({ collector: b.collector, position: b.position, events: evs })), {
          'content-type': 'application/json',
          ...auth,
        });
        if (r.status !== 200) throw new Error(`ingest answered ${r.status}: ${r.text.slice(0, 300)}`);
      }
    }),
  );
  client.close();
}

/** Recent events, their actions, and the tools: what a reviewer reads. */
async function readPools(pool: pg.Pool, tools: string[]): Promise<Pools> {
  const recent = (
    await pool.query<{ id: string; action_id: string; kind: string }>('SELECT id, action_id, kind FROM ledger_event ORDER BY position DESC LIMIT 4000')
  ).rows;
  const spread = <T>(list: T[]) => list.filter((_, i) => i % 7 === 0);
  return {
    eventIds: spread(recent.map((r) => r.id)),
    contractEventIds: spread(recent.filter((r) => r.kind === 'tool.request').map((r) => r.id)),
    actionIds: [...new Set(spread(recent.map((r) => r.action_id)))],
    tools,
    sevenTools: [...tools].sort().slice(0, 7),
  };
}

type Servers = { ours: ServerProcess; base?: ServerProcess; postgraphile?: ServerProcess; 'recorded peer'?: ServerProcess; pglite?: ServerProcess };

/** The query a system is asked: PostGraphile's schema for PostGraphile, recorded or not; this server's for the rest. */
const schemaOf = (system: System) => (system === 'postgraphile' || system === 'recorded peer' ? 'postgraphile' : 'ours');

async function askGraph(client: PostClient, q: Question, system: System, pools: Pools, i: number): Promise<unknown> {
  const graph = q[schemaOf(system)];
  const headers = schemaOf(system) === 'postgraphile' ? {} : auth;
  const body = Buffer.from(JSON.stringify({ query: graph.query, variables: graph.variables(pools, i) }));
  const send = () => client.post('/graphql', body, { 'content-type': 'application/json', accept: 'application/json', ...headers });
  // A keep-alive socket the server closed while this system sat out other cells: the read never arrived, so it is sent again.
  const r = await send().catch((error: NodeJS.ErrnoException) =>
    error.code === 'ECONNRESET' || /socket hang up/.test(error.message) ? send() : Promise.reject(error),
  );
  const answer = JSON.parse(r.text) as { data?: unknown; errors?: unknown };
  if (r.status !== 200 || answer.errors) throw new Error(`${system} answered ${r.status} to "${q.short}": ${r.text.slice(0, 500)}`);
  return answer.data;
}

async function checkSameAnswers(asked: Question[], servers: Servers, floor: pg.Pool, pools: Pools, active: System[]): Promise<void> {
  const graphs = active.filter((s) => s !== 'floor');
  const clients = Object.fromEntries(graphs.map((s) => [s, postClient(servers[s as keyof Servers]!.origin, 1)]));
  try {
    for (const [index, q] of asked.entries()) {
      for (let i = 0; i < 5; i++) {
        const answers: Record<string, unknown> = { floor: await askFloor(floor, q, questions.indexOf(q), pools, i) };
        for (const s of graphs) answers[s] = await q[schemaOf(s)].normalize(await askGraph(clients[s]!, q, s, pools, i));
        for (const s of active) {
          if (!isDeepStrictEqual(answers[s], answers.floor)) {
            throw new Error(
              `"${q.short}" (sample ${i}): ${s} answered differently from the floor\n${s}: ${JSON.stringify(answers[s]).slice(0, 800)}\nfloor: ${JSON.stringify(answers.floor).slice(0, 800)}`,
            );
          }
        }
      }
      void index;
    }
    console.log(`checked: ${active.join(', ')} give the same data for every question (5 samples each)`);
  } finally {
    for (const client of Object.values(clients)) client.close();
  }
}

/** Statements and bytes from PostgreSQL per request, through the relay, after a warm-up of each question. */
async function account(
  asked: Question[],
  url: string,
  pools: Pools,
  active: System[],
  startOurs: (url: string, name: string) => Promise<ServerProcess>,
  startPeer: (url: string, recordIn?: string) => Promise<ServerProcess>,
): Promise<Map<string, Accounting>> {
  const base = new URL(url);
  const counters = Object.fromEntries(
    await Promise.all(active.map(async (s) => [s, await startWireCounter({ host: base.hostname, port: Number(base.port || 5432) })] as const)),
  );
  const out = new Map<string, Accounting>();
  const n = 20;
  const servers: Partial<Record<System, ServerProcess>> = { ours: await startOurs(counters.ours!.via(url), 'ours-accounting') };
  if (active.includes('postgraphile')) servers.postgraphile = await startPeer(counters.postgraphile!.via(url));
  if (active.includes('recorded peer')) servers['recorded peer'] = await startPeer(counters['recorded peer']!.via(url), 'recorded-peer-accounting');
  const floor = new pg.Pool({ connectionString: counters.floor!.via(url), max: 1 });
  try {
    for (const system of active) {
      const counter = counters[system]!;
      const client = system === 'floor' ? undefined : postClient(servers[system]!.origin, 1);
      for (const q of asked) {
        const ask = (i: number) => (client ? askGraph(client, q, system, pools, i) : askFloor(floor, q, questions.indexOf(q), pools, i));
        for (let i = 0; i < n; i++) await ask(i); // the same requests once first: caches (contracts) and named statements warm
        const warm = counter.take(); // named statements are parsed once: their text passes during the warm-up
        for (let i = 0; i < n; i++) await ask(i);
        const c: WireCounts = counter.take();
        if (process.env.BENCH_READS_DEBUG)
          console.log(
            system,
            q.short,
            c.statements,
            c.byType,
            c.texts.map((t) => t.slice(0, 300)),
          );
        const readsPayload = [...warm.texts, ...c.texts].some((t) => !isLedgerAppend(t) && /\bblob\b/.test(t) && /\bdata\b/.test(t));
        out.set(`${system}|${q.short}`, {
          statements: (c.statements - c.appends) / n,
          appends: c.appends / n,
          bytes: c.bytesFromServer / n,
          byteaBytes: c.byteaBytes / n,
          readsPayload,
        });
      }
      client?.close();
    }
  } finally {
    await floor.end();
    for (const s of Object.values(servers)) await s.stop();
    for (const c of Object.values(counters)) await c.close();
  }
  return out;
}

/** Closed loop: `concurrency` callers for `seconds`, each request's latency kept. */
async function drive(seconds: number, concurrency: number, call: (i: number) => Promise<unknown>): Promise<Cell> {
  const latencies: number[] = [];
  let i = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        await call(i++);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  return { rps: latencies.length / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

async function timeRounds(
  asked: Question[],
  servers: Servers,
  floor: pg.Pool,
  floorUrl: string,
  pools: Pools,
  active: System[],
  levels: number[],
  rounds: number,
  seconds: number,
): Promise<Map<string, Cell[]>> {
  const cells = new Map<string, Cell[]>();
  const max = Math.max(...levels);
  // Every client backend on the bench database, listed over a connection of its own, which is left out (autovacuum is not the system's).
  const lister = new pg.Client({ connectionString: floorUrl });
  await lister.connect();
  const backendPids = async () =>
    (
      await lister.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
      )
    ).rows.map((r) => r.pid);
  const clients = Object.fromEntries(active.filter((s) => s !== 'floor').map((s) => [s, postClient(servers[s as keyof Servers]!.origin, max)]));
  try {
    for (let round = 0; round < rounds; round++) {
      const order = active.map((_, k) => active[(k + round) % active.length]!);
      for (const q of asked) {
        for (const c of levels) {
          for (const system of order) {
            const call = (i: number) =>
              system === 'floor' ? askFloor(floor, q, questions.indexOf(q), pools, i) : askGraph(clients[system]!, q, system, pools, i);
            await drive(Math.min(0.3, seconds / 4), c, call); // warm-up, not kept
            const pid = system === 'floor' ? undefined : servers[system as keyof Servers]!.pid;
            const cpu0 = pid && processCpuSeconds(pid);
            const postgresSince = await backendsCpu(backendPids);
            const machine0 = machineCpuSeconds().busy;
            const cell = await drive(seconds, c, call);
            cell.machineMs = ((machineCpuSeconds().busy - machine0) * 1000) / (cell.rps * seconds);
            cell.postgresMs = ((await postgresSince()) * 1000) / (cell.rps * seconds);
            if (pid) cell.cpuMs = ((processCpuSeconds(pid)! - (cpu0 as number)) * 1000) / (cell.rps * seconds);
            const key = `${system}|${q.short}|${c}`;
            cells.set(key, [...(cells.get(key) ?? []), cell]);
            if (process.env.BENCH_READS_DEBUG) console.log(`  round ${round + 1} ${key}: ${int(cell.rps)} rps, ${fixed(cell.cpuMs ?? NaN)} ms CPU per request`);
          }
        }
      }
      process.stdout.write(`  round ${round + 1}/${rounds} done\n`);
    }
  } finally {
    for (const client of Object.values(clients)) client.close();
    await lister.end();
  }
  return cells;
}

const med = (list: Cell[] | undefined, f: (c: Cell) => number) => (list?.length ? median(list.map(f)) : NaN);

function printSize(s: Sized, asked: Question[], active: System[], levels: number[], rounds: number): void {
  console.log(`\n== ${int(s.events)} events: medians of ${rounds} interleaved rounds (shared 2-core machine)`);
  console.log(`${''.padEnd(34)} ${active.map((a) => a.padStart(16)).join(' ')}`);
  for (const q of asked) {
    console.log(`-- ${q.name}`);
    for (const c of levels) {
      const get = (a: System, f: (c: Cell) => number) => med(s.cells.get(`${a}|${q.short}|${c}`), f);
      console.log(row(`  rps, concurrency ${c}`, ...active.map((a) => int(get(a, (x) => x.rps)))));
      console.log(row(`  p50 / p99 ms, concurrency ${c}`, ...active.map((a) => `${fixed(get(a, (x) => x.p50))} / ${fixed(get(a, (x) => x.p99))}`)));
      console.log(row(`  server CPU ms per request, conc ${c}`, ...active.map((a) => (a === 'floor' ? '' : fixed(get(a, (x) => x.cpuMs ?? NaN))))));
      console.log(row(`  PostgreSQL CPU ms per request, conc ${c}`, ...active.map((a) => fixed(get(a, (x) => x.postgresMs ?? NaN)))));
      console.log(row(`  machine CPU ms per request, conc ${c}`, ...active.map((a) => fixed(get(a, (x) => x.machineMs ?? NaN)))));
      const ratio = (a: System) => get('ours', (x) => x.rps) / get(a, (x) => x.rps);
      if (active.includes('postgraphile'))
        console.log(target(`  ours / PostGraphile rps, conc ${c}`, fixed(ratio('postgraphile')), '≥ 1.0', ratio('postgraphile') >= 1));
      // Where this server records the read, the same record's cost to PostGraphile, and ours beside PostGraphile paying it.
      if (active.includes('recorded peer') && s.accounting.get(`ours|${q.short}`)!.appends > 0) {
        const recordCost = get('recorded peer', (x) => x.rps) / get('postgraphile', (x) => x.rps);
        console.log(row(`  recorded peer / PostGraphile rps, conc ${c}`, fixed(recordCost)));
        console.log(row(`  ours / recorded peer rps, conc ${c}`, fixed(ratio('recorded peer'))));
      }
      console.log(row(`  ours / floor rps, conc ${c}`, fixed(ratio('floor'))));
      if (active.includes('base')) console.log(row(`  ours / base rps, conc ${c}`, fixed(ratio('base'))));
      if (active.includes('pglite')) console.log(row(`  ours on PGlite / on PostgreSQL rps, conc ${c}`, fixed(1 / ratio('pglite'))));
    }
    const onPostgres = active.filter((a) => a !== 'pglite' && a !== 'base');
    const acc = (a: System) => s.accounting.get(`${a}|${q.short}`)!;
    console.log(row('  SQL statements per request', ...onPostgres.map((a) => fixed(acc(a).statements, 1))));
    if (onPostgres.some((a) => acc(a).appends)) console.log(row('  + ledger appends (its own record)', ...onPostgres.map((a) => fixed(acc(a).appends, 2))));
    console.log(row('  bytes from PostgreSQL per request', ...onPostgres.map((a) => int(acc(a).bytes))));
    const payload = (a: Accounting) => (a.byteaBytes ? int(a.byteaBytes) : a.readsPayload ? 'read, encoded' : '0');
    console.log(row('  blob.data bytes per request', ...onPostgres.map((a) => payload(acc(a)))));
    const ours = acc('ours');
    console.log(target('  ours: statements per request', fixed(ours.statements, 1), '≤ 2', ours.statements <= 2));
    if (!q.short.includes('payload')) console.log(target('  ours: payload bytes read', payload(ours), '0', !ours.byteaBytes && !ours.readsPayload));
  }
}

function printGrowth(results: Sized[], asked: Question[], active: System[], levels: number[]): void {
  const first = results[0]!;
  console.log(`\n== growth: p99 at each size / p99 at ${int(first.events)} (medians over rounds)`);
  console.log(
    `${''.padEnd(34)} ${results
      .slice(1)
      .flatMap((r) => active.map((a) => `${a} ${int(r.events / 1e6)}M`.padStart(16)))
      .join(' ')}`,
  );
  for (const q of asked) {
    for (const c of levels) {
      const p99 = (r: Sized, a: System) => med(r.cells.get(`${a}|${q.short}|${c}`), (x) => x.p99);
      console.log(row(`${q.short}, conc ${c}`, ...results.slice(1).flatMap((r) => active.map((a) => `${fixed(p99(r, a) / p99(first, a))}×`))));
      const last = results.at(-1)!;
      console.log(
        target(
          `  ours p99 ${int(last.events / 1e6)}M / ${int(first.events / 1e3)}K`,
          `${fixed(p99(last, 'ours'))} / ${fixed(p99(first, 'ours'))} ms`,
          '≤ 2×',
          p99(last, 'ours') <= 2 * p99(first, 'ours'),
        ),
      );
    }
  }
}
