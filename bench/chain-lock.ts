// The hash chain's work under the commit lock: PostgreSQL's time per batch before and after it takes the lock, chain off / v1 / v2.
//
//   npm run bench -- chain-lock [--events 40000] [--batch 500] [--seed 1]
//
// Ingest is bound by the commit lock once cores are spare, so what limits it is the time a batch
// holds the lock, not its CPU as a whole; on a loaded machine throughput cannot show it. Three
// Ledgers (chain off, version 1, version 2) append the same workload's batches in turn on one fresh
// database, one statement at a time, so no lock is waited for: the statement returns the moment it
// took the lock (clock_timestamp()), so the time before it (blobs, the casts, for v2 the digests) and
// under it (events, chain, batch row, triggers, commit) are told apart with no instrumentation.
// Prints medians per batch and per event of batch.
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

const now = () => performance.timeOrigin + performance.now();

/**
 * An executor that runs the append statement with the time it took the lock (clock_timestamp() in
 * its commit_lock CTE) returned beside its rows: before = lock taken − sent, under = answered − lock
 * taken (the serialized section: the rest of the statement, its triggers and the commit).
 */
function timing(inner: SqlExecutor, split: { before: number; under: number; events: number }[]): SqlExecutor {
  return {
    transaction: (work) => inner.transaction(work),
    async query<R extends SqlRow = SqlRow>(text: string, params?: readonly SqlParam[], options?: QueryOptions): Promise<R[]> {
      if (!options?.prepared?.startsWith('ledger_append')) return inner.query<R>(text, params, options);
      const timed = text
        .replace(/pg_advisory_xact_lock\((\d+)\) AS held/, '$& , clock_timestamp() AS locked_at')
        .replace('AS collector_position', 'AS collector_position, (SELECT (extract(epoch FROM locked_at) * 1000)::float8 FROM commit_lock) AS locked_ms');
      if (timed === text) throw new Error('chain-lock: the append statement no longer has the shape this bench times');
      const sent = now();
      const rows = await inner.query<R & { locked_ms: number }>(timed, params, { prepared: `${options.prepared}_timed` });
      const answered = now();
      const locked = rows[0]!.locked_ms;
      split.push({ before: locked - sent, under: answered - locked, events: (params![0] as unknown as { items: unknown[] }).items.length });
      return rows;
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
          timing(database.sql, splits.get(mode)!),
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
