// Directory: full build, no-change and one-section rebuilds, names-only listing, tool(name) with every form over HTTP.
//
//   npm run bench -- directory [--rows 24890] [--seed 1] [--db postgres|pglite] [--requests 300]
//
// Generates the seed-scale fixture (src/directory/fixtures.ts) into bench/.tmp, starts the app in
// process on a fresh database (BENCH_DATABASE_URL, default the machine's PostgreSQL; or embedded
// PGlite), and prints figures. Nothing is asserted.
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config.ts';
import { type Database, openDatabase } from '../src/db/client.ts';
import { generateDirectory, writeDirectory } from '../src/directory/fixtures.ts';
import { createLogger } from '../src/logger.ts';
import { onCleanup } from './lib/cleanup.ts';
import { createBenchDatabase } from './lib/postgres.ts';
import { fixed, int, median, percentile, row, target } from './lib/stats.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      rows: { type: 'string', default: '24890' },
      seed: { type: 'string', default: '1' },
      db: { type: 'string', default: 'postgres' },
      requests: { type: 'string', default: '300' },
    },
    strict: true,
  });
  const rows = Number(values.rows);
  const requests = Number(values.requests);
  const tmp = await mkdtemp(path.join(here, '.tmp-directory-'));
  onCleanup('remove fixture folder', () => rm(tmp, { recursive: true, force: true }));
  const dir = path.join(tmp, 'sections');
  let t = performance.now();
  const sections = generateDirectory({ rows, seed: Number(values.seed) });
  await writeDirectory(dir, sections, 'csv');
  const generateMs = performance.now() - t;

  const env: Record<string, string> = {
    DATA_DIR: path.join(tmp, 'data'),
    DIRECTORY_DIR: dir,
    DIRECTORY_WATCH_MS: '0',
    LOG_LEVEL: 'silent',
    PORT: '0',
    GRAPHQL_MAX_COST: '1000000',
  };
  let db: Database | undefined;
  if (values.db === 'pglite') db = await openDatabase({ memory: true });
  else {
    const bench = await createBenchDatabase('directory');
    env.DATABASE_URL = bench.url;
  }
  const config = parseConfig(env);
  t = performance.now();
  const app = await buildApp(config, { logger: createLogger('silent'), ...(db ? { db } : {}) });
  const startMs = performance.now() - t;
  onCleanup('stop app', () => app.stop());
  const fullBuild = app.services.directory.lastBuild!;
  const { port } = await app.start(0, '127.0.0.1');
  const origin = `http://127.0.0.1:${port}`;
  const directory = app.services.directory;
  // Every door needs a token (AUTHORITY=required): measured on the real path, with an admin token.
  const auth = { authorization: `Bearer ${app.services.authority.mintToken()}` };

  const noChange: number[] = [];
  for (let i = 0; i < 15; i++) {
    const s = performance.now();
    await directory.build();
    noChange.push(performance.now() - s);
  }
  const oneSection = async (file: string) => {
    await appendFile(path.join(dir, file), `BENCH_ADDED_${Date.now()},added by the benchmark\r\n`);
    const s = performance.now();
    const report = await directory.build();
    return { ms: performance.now() - s, rebuilt: report.rebuilt };
  };
  const toolChange = await oneSection('tool.csv');
  const variableChange = await oneSection('variable.csv');

  const listing = async (query: string, n: number) => {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const s = performance.now();
      const response = await fetch(`${origin}/api/directory${query}`, { headers: auth });
      if (!response.ok) throw new Error(`GET /api/directory${query}: HTTP ${response.status}`);
      const body = await response.arrayBuffer();
      times.push(performance.now() - s);
      bytes = body.byteLength;
    }
    return { first: times[0]!, p50: median(times.slice(1)), bytes };
  };
  const namesAll = await listing('', 21);
  const namesTools = await listing('?type=tool', 21);
  const fullTools = await listing('?type=tool&full=1', 21);
  const fullAll = await listing('?full=1', 5);
  const aloneAll = await listing('?names=1', 21);

  const toolNames = sections.tool!.map((r) => r.name!);
  const query = `query($n: String!) { tool(name: $n) { name description argsSchema runnable reasons upstream { json } contracts { form shape door json text secretNames } } }`;
  const times: number[] = [];
  let formsSeen = 0;
  let bodyBytes = 0;
  for (let i = 0; i < requests; i++) {
    const name = toolNames[(i * 7919) % toolNames.length]!;
    const s = performance.now();
    const response = await fetch(`${origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...auth },
      body: JSON.stringify({ query, variables: { n: name } }),
    });
    const text = await response.text();
    times.push(performance.now() - s);
    bodyBytes += text.length;
    const parsed = JSON.parse(text) as { data?: { tool?: { contracts: unknown[] } }; errors?: unknown };
    if (parsed.errors || !parsed.data?.tool) throw new Error(`tool(${name}) failed: ${text.slice(0, 300)}`);
    formsSeen += parsed.data.tool.contracts.length;
  }
  const warm = times.slice(Math.min(20, times.length - 1));

  const out = [
    `Directory benchmark: ${int(rows)} rows, ${Object.keys(sections).length} sections, database ${values.db}`,
    row('fixture generated and written', `${fixed(generateMs, 0)} ms`),
    row('app start (migrations + full build)', `${fixed(startMs, 0)} ms`),
    row('full build', `${fixed(fullBuild.ms, 0)} ms`, `${fullBuild.rebuilt.length} sections`),
    target('rebuild with no change (median of 15)', `${fixed(median(noChange), 1)} ms`, '≤ 100 ms', median(noChange) <= 100),
    row('rebuild after tool.csv changed', `${fixed(toolChange.ms, 0)} ms`, `rebuilt ${toolChange.rebuilt.join(',')}`),
    row('rebuild after variable.csv changed', `${fixed(variableChange.ms, 0)} ms`, `rebuilt ${variableChange.rebuilt.join(',')}`),
    row(
      'GET /api/directory (all rows, names only)',
      `first ${fixed(namesAll.first, 1)} ms`,
      `p50 ${fixed(namesAll.p50, 2)} ms`,
      `${int(namesAll.bytes)} bytes`,
    ),
    row(
      'GET /api/directory?type=tool (names only)',
      `first ${fixed(namesTools.first, 1)} ms`,
      `p50 ${fixed(namesTools.p50, 2)} ms`,
      `${int(namesTools.bytes)} bytes`,
    ),
    row('GET /api/directory?type=tool&full=1', `first ${fixed(fullTools.first, 1)} ms`, `p50 ${fixed(fullTools.p50, 2)} ms`, `${int(fullTools.bytes)} bytes`),
    row('tools: with descriptions / names only', `${fixed(fullTools.bytes / namesTools.bytes, 1)}×`),
    row(
      'GET /api/directory?names=1 (all rows, names alone)',
      `first ${fixed(aloneAll.first, 1)} ms`,
      `p50 ${fixed(aloneAll.p50, 2)} ms`,
      `${int(aloneAll.bytes)} bytes`,
    ),
    row('all rows: with descriptions / name,type,kind', `${fixed(fullAll.bytes / namesAll.bytes, 2)}×`),
    row("all rows: with descriptions / names alone (the seed's 19.6×)", `${fixed(fullAll.bytes / aloneAll.bytes, 2)}×`),
    target(`tool(name) with every form over HTTP (p50 of ${warm.length} warm)`, `${fixed(median(warm), 2)} ms`, '≤ 5 ms', median(warm) <= 5),
    row('  p95 / max', `${fixed(percentile(warm, 0.95), 2)} ms`, `${fixed(Math.max(...warm), 2)} ms`),
    row('  forms per answer / bytes per answer', fixed(formsSeen / requests, 1), int(Math.round(bodyBytes / requests))),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  await app.stop();
  await db?.close();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { cleanupAll } = await import('./lib/cleanup.ts');
  run(process.argv.slice(2)).finally(() => cleanupAll());
}
