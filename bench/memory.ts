// Resident memory of a fresh `npm start`: the embedded default (PGlite in a new data folder) beside PostgreSQL.
//
//   npm run bench -- memory [--runs 3] [--idle-seconds 35] [--db both|pglite|postgres]
//
// Each run starts the server exactly as `npm start` does (node with the start script's flags on
// src/server.ts, the demo Directory) on a new data folder or a fresh PostgreSQL database, waits until it
// listens, samples its RSS every 100 ms for --idle-seconds with no traffic, and stops it. Runs of
// the two databases alternate. Prints idle RSS (the last sample) and peak, medians over runs.
import { parseArgs } from 'node:util';
import { sampleRss } from './lib/rss.ts';
import { startServer } from './lib/server.ts';
import { fixed, mb, median, row, target } from './lib/stats.ts';
import { type BenchDbKind, createBenchTarget, dbLabel, parseDbKinds } from './lib/target-db.ts';

// Issue 23 (the embedded default) and issue 18 (the server on PostgreSQL).
const targets = { pgliteIdleBytes: 250 * 1_000_000, postgresIdleBytes: 150 * 1_000_000 };

type Run = { kind: BenchDbKind; startSeconds: number; idleBytes: number; peakBytes: number };

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { runs: { type: 'string', default: '3' }, 'idle-seconds': { type: 'string', default: '35' }, db: { type: 'string', default: 'both' } },
    strict: true,
  });
  const runs = Number(values.runs);
  const idleSeconds = Number(values['idle-seconds']);
  const kinds = parseDbKinds(values.db!);
  console.log(`memory: ${runs} fresh start(s) per database (${kinds.map(dbLabel).join(', ')}), idle ${idleSeconds} s each, as npm start runs the server`);
  const results: Run[] = [];
  for (let i = 0; i < runs; i++) {
    for (const kind of kinds) {
      const db = await createBenchTarget(kind, 'memory');
      try {
        const t0 = performance.now();
        const server = await startServer({ ...db.env, LOG_LEVEL: 'warn', GRAPHIQL: 'true' }, { timeoutMs: 180_000 });
        const startSeconds = (performance.now() - t0) / 1000;
        const sampler = sampleRss(server.pid, 100);
        await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
        const { lastBytes, maxBytes } = sampler.stop();
        await server.stop();
        results.push({ kind, startSeconds, idleBytes: lastBytes, peakBytes: maxBytes });
        console.log(row(`run ${i + 1}, ${dbLabel(kind)}`, `idle ${mb(lastBytes)}`, `peak ${mb(maxBytes)}`, `listening after ${fixed(startSeconds, 1)} s`));
      } finally {
        await db.drop();
      }
    }
  }
  console.log(`\n== medians of ${runs}`);
  for (const kind of kinds) {
    const mine = results.filter((r) => r.kind === kind);
    const idle = median(mine.map((r) => r.idleBytes));
    const peak = median(mine.map((r) => r.peakBytes));
    if (kind === 'pglite')
      console.log(target(`idle RSS, ${dbLabel(kind)} (fresh folder)`, mb(idle), `≤ ${targets.pgliteIdleBytes / 1e6} MB`, idle <= targets.pgliteIdleBytes));
    else console.log(target(`idle RSS, ${dbLabel(kind)}`, mb(idle), `≤ ${targets.postgresIdleBytes / 1e6} MB`, idle <= targets.postgresIdleBytes));
    console.log(row(`peak RSS, ${dbLabel(kind)}`, mb(peak)));
    console.log(row(`start to listening, ${dbLabel(kind)}`, `${fixed(median(mine.map((r) => r.startSeconds)), 1)} s`));
  }
}
