// Resolver: p50/p99 per query, build time and heap on the seed-scale fixture, beside Fuse.js and uFuzzy; p99 at 10× rows.
//
//   npm run bench -- resolver [--queries 1000] [--scale 10] [--seed 1] [--engines resolver,fuse,ufuzzy]
//   node bench/resolver.ts                (runs alone too)
//
// Workload: 1,000 queries, the labelled classes of test/resolver/labelled-queries.json (fixture part)
// in equal parts, run in process against the same rows through each engine. Accuracy is top-1 on
// the whole fixture part of the labelled set. Figures are printed beside their targets; nothing is asserted.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import uFuzzy from '@leeoniya/ufuzzy';
import Fuse from 'fuse.js';
import { generateDirectory } from '../src/directory/fixtures.ts';
import { parseAliasTable } from '../src/resolver/aliases.ts';
import { buildResolverIndex } from '../src/resolver/build.ts';
import { resolverRowsFromSections } from '../src/resolver/from-sections.ts';
import { resolve } from '../src/resolver/resolve.ts';
import type { ResolverRow } from '../src/resolver/types.ts';
import { accuracy, fixtureAliasJson, loadLabelledSet, QueryClasses, type LabelledQuery } from '../test/resolver/labelled.ts';
import { fixed, int, mb, percentile, target } from './lib/stats.ts';

const targets = { p50Ms: 0.2, p99Ms: 2, buildMs: 1000, heapBytes: 100 * 1_000_000, p99AtScaleMs: 20 };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** JS heap plus ArrayBuffers (typed arrays live outside the heap), after collecting garbage. */
function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

type Engine = { name: string; buildMs: number; heapBytes: number; search(q: string): string[] };

function timeQueries(engine: Engine, queries: string[], passes: number, warmUp = queries.length): number[] {
  const times: number[] = [];
  for (const q of queries.slice(0, warmUp)) engine.search(q);
  for (let p = 0; p < passes; p++) {
    for (const q of queries) {
      const t = performance.now();
      engine.search(q);
      times.push(performance.now() - t);
    }
  }
  return times;
}

function ours(rows: ResolverRow[], aliases: ReturnType<typeof parseAliasTable>): Engine & { tokens: number } {
  const before = heapAfterGc();
  const t = performance.now();
  const index = buildResolverIndex(rows, aliases);
  const buildMs = performance.now() - t;
  const heapBytes = heapAfterGc() - before;
  return { name: 'resolver', buildMs, heapBytes, tokens: index.stats.tokens, search: (q) => resolve(index, q, { limit: 3 }).matches.map((m) => m.row.name) };
}

function fuse(rows: ResolverRow[]): Engine {
  const before = heapAfterGc();
  const t = performance.now();
  const engine = new Fuse(rows, {
    keys: [
      { name: 'name', weight: 2 },
      { name: 'description', weight: 1 },
    ],
    includeScore: false,
    ignoreLocation: true,
    threshold: 0.4,
  });
  const buildMs = performance.now() - t;
  const heapBytes = heapAfterGc() - before;
  return { name: 'Fuse.js 7.5', buildMs, heapBytes, search: (q) => engine.search(q, { limit: 3 }).map((r) => r.item.name) };
}

function ufuzzy(rows: ResolverRow[]): Engine {
  const before = heapAfterGc();
  const t = performance.now();
  const haystack = rows.map((r) => `${r.name.replace(/[_-]+/g, ' ')} ${r.description ?? ''}`);
  const uf = new uFuzzy({ intraMode: 1 });
  const buildMs = performance.now() - t;
  const heapBytes = heapAfterGc() - before;
  return {
    name: 'uFuzzy 1.0',
    buildMs,
    heapBytes,
    search: (q) => {
      const [idxs, info, order] = uf.search(haystack, q, 0, 1000);
      if (!idxs?.length) return [];
      const ranked = info && order ? order.slice(0, 3).map((k) => info.idx[k]!) : idxs.slice(0, 3);
      return ranked.map((i) => rows[i]!.name);
    },
  };
}

function workload(labelled: LabelledQuery[], size: number): string[] {
  const perClass = Math.ceil(size / QueryClasses.length);
  const out: string[] = [];
  for (const cls of QueryClasses) {
    const pool = labelled.filter((q) => q.class === cls);
    for (let i = 0; i < perClass && pool.length; i++) out.push(pool[i % pool.length]!.q);
  }
  return out.slice(0, size);
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      queries: { type: 'string', default: '1000' },
      scale: { type: 'string', default: '10' },
      seed: { type: 'string', default: '1' },
      engines: { type: 'string', default: 'resolver,fuse,ufuzzy' },
    },
  });
  const wanted = new Set(values.engines.split(','));
  const size = Number(values.queries);
  const scale = Number(values.scale);
  const seed = Number(values.seed);
  const out = (line = '') => process.stdout.write(`${line}\n`);

  const labelled = loadLabelledSet().queries.filter((q) => q.source === 'fixture');
  const queries = workload(labelled, size);
  const aliases = parseAliasTable(fixtureAliasJson());
  const rows = resolverRowsFromSections(generateDirectory({ rows: 24_890, seed }));
  out(
    `Resolver benchmark: ${int(rows.length)} rows (fixture seed ${seed}), ${int(queries.length)} queries (${QueryClasses.length} labelled classes in equal parts), Node ${process.version}`,
  );
  out();

  const header = (label: string, ...cols: string[]) => `${label.padEnd(14)}${cols.map((c) => c.padStart(11)).join('')}`;
  out(header('engine', 'timed', 'p50 ms', 'p99 ms', 'build ms', 'memory', 'top-1', 'top-3'));
  const results = [];
  const makers = { resolver: () => ours(rows, aliases), fuse: () => fuse(rows), ufuzzy: () => ufuzzy(rows) };
  for (const [key, make] of Object.entries(makers)) {
    if (!wanted.has(key)) continue;
    const engine = make();
    // Fuse.js scans every row per query (hundreds of ms here), so it is timed on every tenth query of the workload.
    const slow = engine.name.startsWith('Fuse');
    const times = timeQueries(engine, slow ? queries.filter((_, i) => i % 10 === 0) : queries, engine.name === 'resolver' ? 5 : 1, slow ? 10 : queries.length);
    const acc = accuracy(labelled, (q) => engine.search(q.q));
    const r = { engine, p50: percentile(times, 0.5), p99: percentile(times, 0.99), measured: times.length, acc };
    results.push(r);
    const pct = (x: number) => `${fixed(100 * x, 1)}%`;
    out(header(engine.name, int(r.measured), fixed(r.p50, 3), fixed(r.p99, 3), fixed(engine.buildMs, 0), mb(engine.heapBytes), pct(acc.top1), pct(acc.top3)));
  }
  out(`(top-1/top-3 over the ${labelled.length} labelled fixture queries; timings over the ${int(queries.length)}-query workload, resolver 5 passes)`);
  out();
  out('top-1 by class:');
  out(header('', ...results.map((r) => r.engine.name.split(' ')[0]!)));
  for (const cls of QueryClasses) {
    out(header(`  ${cls}`, ...results.map((r) => (r.acc.byClass[cls] ? `${fixed((100 * r.acc.byClass[cls]!.top1) / r.acc.byClass[cls]!.queries, 1)}%` : '-'))));
  }
  out();
  const mine = results.find((r) => r.engine.name === 'resolver');
  if (mine) {
    out(target('resolver p50 per query', `${fixed(mine.p50, 3)} ms`, `≤ ${targets.p50Ms} ms`, mine.p50 <= targets.p50Ms));
    out(target('resolver p99 per query', `${fixed(mine.p99, 3)} ms`, `≤ ${targets.p99Ms} ms`, mine.p99 <= targets.p99Ms));
    out(target('resolver index build', `${fixed(mine.engine.buildMs, 0)} ms`, `≤ ${targets.buildMs} ms`, mine.engine.buildMs <= targets.buildMs));
    out(target('resolver index heap (+ typed arrays)', mb(mine.engine.heapBytes), `≤ ${mb(targets.heapBytes)}`, mine.engine.heapBytes <= targets.heapBytes));
  }
  out();

  // Ten times the rows: our p99 on the same workload.
  results.length = 0;
  const bigRows = resolverRowsFromSections(generateDirectory({ rows: 24_890 * scale, seed }));
  const big = ours(bigRows, aliases);
  const times = timeQueries(big, queries, 3);
  const p99 = percentile(times, 0.99);
  out(
    `At ${scale}× rows (${int(bigRows.length)}): build ${fixed(big.buildMs, 0)} ms, heap + typed arrays ${mb(big.heapBytes)}, ${int(big.tokens)} distinct words, p50 ${fixed(percentile(times, 0.5), 3)} ms`,
  );
  out(target(`resolver p99 at ${int(bigRows.length)} rows`, `${fixed(p99, 3)} ms`, `≤ ${targets.p99AtScaleMs} ms`, p99 <= targets.p99AtScaleMs));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await run(process.argv.slice(2));
}
