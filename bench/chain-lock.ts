// The hash chain's work under the commit lock: PostgreSQL's time per batch before and after it takes the lock, chain off / v1 / v2.
//
//   npm run bench -- chain-lock [--events 40000] [--batch 500] [--seed 1]
//
// Ingest is bound by the commit lock once cores are spare, so what limits it is the time a batch
// holds the lock, not its CPU as a whole; on a loaded machine throughput cannot show it. Three
// Ledgers (chain off, version 1, version 2) append the same workload's batches in turn on one fresh
// database and one connection each, every append statement run under EXPLAIN (ANALYZE, FORMAT JSON):
// the `commit_lock` CTE's total time is the time before the lock (blobs, and for v2 the digests),
// the statement's execution time less it is the time under the lock (events, chain, batch row,
// triggers). Prints medians per batch and per event; timings include EXPLAIN's own instrumentation.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/client.ts';
import type { QueryOptions, SqlExecutor, SqlParam, SqlRow } from '../src/db/sql.ts';
import type { ChainMode } from '../src/ledger/append.ts';
import { BatchInput } from '../src/ledger/input.ts';
import { Ledger } from '../src/ledger/ledger.ts';
import { FolderObjectStore } from '../src/ledger/object-store.ts';
import { SecretRedactor } from '../src/secrets/redact.ts';
import { workload } from './lib/ledger-workload.ts';
import { createBenchDatabase } from './lib/postgres.ts';
import { fixed, median, row } from './lib/stats.ts';

type PlanNode = { 'Subplan Name'?: string; 'CTE Name'?: string; 'Actual Total Time'?: number; Plans?: PlanNode[] };

function findCte(node: PlanNode, name: string): PlanNode | null {
  if (node['Subplan Name'] === `CTE ${name}`) return node;
  for (const child of node.Plans ?? []) {
    const found = findCte(child, name);
    if (found) return found;
  }
  return null;
}

/** An executor that runs the append statement under EXPLAIN ANALYZE and keeps its split. */
function explaining(inner: SqlExecutor, split: { before: number; under: number; events: number }[]): SqlExecutor {
  return {
    transaction: (work) => inner.transaction(work),
    async query<R extends SqlRow = SqlRow>(text: string, params?: readonly SqlParam[], options?: QueryOptions): Promise<R[]> {
      if (!options?.prepared?.startsWith('ledger_append')) return inner.query<R>(text, params, options);
      const [result] = await inner.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params);
      const plan = result!['QUERY PLAN'][0];
      const before = findCte(plan.Plan, 'commit_lock')?.['Actual Total Time'] ?? Number.NaN;
      split.push({ before, under: plan['Execution Time'] - before, events: (params![0] as unknown as { items: unknown[] }).items.length });
      return [];
    },
  };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { events: { type: 'string', default: '40000' }, batch: { type: 'string', default: '500' }, seed: { type: 'string', default: '1' } },
    strict: true,
  });
  const events = Number(values.events);
  const batchSize = Number(values.batch);
  const db = await createBenchDatabase('chainlock');
  const blobDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-chainlock-'));
  const database = await openDatabase({ url: db.url }, { poolSize: 4 });
  const modes: ChainMode[] = ['off', 1, 2];
  const splits = new Map(modes.map((m) => [m, [] as { before: number; under: number; events: number }[]]));
  try {
    await database.migrate();
    const ledgers = modes.map(
      (mode) =>
        new Ledger(
          database.prisma,
          new FolderObjectStore(blobDir),
          new SecretRedactor({}),
          { inlineMaxBytes: 262_144, payloadMaxBytes: 8_388_608, chain: mode },
          explaining(database.sql, splits.get(mode)!),
        ),
    );
    console.log(`chain-lock: ${events} events in batches of ${batchSize}, each batch appended by chain off, v1 and v2 in turn (ids made unique per mode)`);
    let b = 0;
    for (const batch of workload({ events, batchSize, repeatRatio: 0.3, resendRatio: 0.05, seed: Number(values.seed), collectors: 3 })) {
      // The order rotates, so no mode always follows the same one.
      for (let k = 0; k < modes.length; k++) {
        const m = (b + k) % modes.length;
        const mode = String(modes[m]);
        await ledgers[m]!.append(
          BatchInput.parse({
            collector: `${mode}-${batch.collector}`,
            position: batch.position,
            events: batch.events.map((e) => ({ ...e, id: `${mode}-${e.id}` })),
          }),
        );
      }
      b++;
    }
  } finally {
    await database.close();
    await db.drop();
    await rm(blobDir, { recursive: true, force: true });
  }
  console.log(row('per batch of ~events, ms (median)', 'before the lock', 'under the lock', 'under, µs/event'));
  for (const mode of modes) {
    const s = splits.get(mode)!.slice(2);
    console.log(
      row(
        `chain ${mode === 'off' ? 'off' : `v${mode}`} (${s.length} batches)`,
        fixed(median(s.map((x) => x.before)), 2),
        fixed(median(s.map((x) => x.under)), 2),
        fixed(median(s.map((x) => (x.under * 1000) / x.events)), 2),
      ),
    );
  }
}
