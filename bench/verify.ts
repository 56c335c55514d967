// Ledger verify: recomputing the hash chain over N events (default 1,000,000) against reading the same columns in the same pages (its floor).
//
//   npm run bench -- verify [--events 1000000] [--batch 1000] [--writers 2]
//
// Fills a fresh PostgreSQL database (BENCH_DATABASE_URL, default the machine's) through Ledger.append
// in process, then, in the same run: the floor (every event's hashed columns read in position pages
// of 5,000, as verify reads them, nothing computed) and verifyLedger over the whole chain.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/client.ts';
import { EVENT_FIELDS } from '../src/ledger/chain.ts';
import { BatchInput } from '../src/ledger/input.ts';
import { Ledger } from '../src/ledger/ledger.ts';
import { FolderObjectStore } from '../src/ledger/object-store.ts';
import { SecretRedactor } from '../src/secrets/redact.ts';
import { verifyLedger } from '../src/ledger/verify.ts';
import { createBenchDatabase } from './lib/postgres.ts';
import { sampleRss } from './lib/rss.ts';
import { fixed, int, mb, row } from './lib/stats.ts';

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { events: { type: 'string', default: '1000000' }, batch: { type: 'string', default: '1000' }, writers: { type: 'string', default: '2' } },
    strict: true,
  });
  const n = (name: keyof typeof values) => {
    const v = Number(values[name]);
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${name}: expected a positive whole number, got ${JSON.stringify(values[name])}`);
    return v;
  };
  const events = n('events');
  const batchSize = n('batch');
  const writers = n('writers');
  console.log(`verify: ${int(events)} events appended in batches of ${batchSize} by ${writers} writers, then the chain recomputed`);

  const db = await createBenchDatabase('verify');
  const blobDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-verify-'));
  const database = await openDatabase({ url: db.url }, { poolSize: writers + 1 });
  try {
    await database.migrate();
    const ledger = new Ledger(database.prisma, new FolderObjectStore(blobDir), new SecretRedactor({}), { inlineMaxBytes: 262_144, payloadMaxBytes: 8_388_608 });
    const batches = Math.ceil(events / batchSize);
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let b = next++; b < batches; b = next++) {
          const count = Math.min(batchSize, events - b * batchSize);
          const rows = Array.from({ length: count }, (_, i) => {
            const k = b * batchSize + i;
            return {
              id: `ev-${k}`,
              kind: k % 2 ? 'RESPONSE' : 'REQUEST',
              direction: k % 2 ? 'OUT' : 'IN',
              actionId: `act-${k >> 1}`,
              tool: `TOOL_${k % 97}`,
              session: `s-${k % 1000}`,
              occurredAt: new Date(1_764_500_000_000 + k).toISOString(),
              metadata: { door: 'REST', n: k },
              payload: { state: 'COMPLETE', text: `{"n":${k % 5000},"text":"payload ${k % 5000}"}` },
            };
          });
          await ledger.append(BatchInput.parse({ collector: `bench-${w}`, position: b + 1, events: rows }));
        }
      }),
    );
    const fillSeconds = (performance.now() - t0) / 1000;
    console.log(row('appended (chain on)', `${int(events / fillSeconds)} events/s`, `${fixed(fillSeconds)} s`));

    const texts = EVENT_FIELDS.map((f, i) => `${f.sql} AS f${i}`).join(', ');
    const t1 = performance.now();
    let read = 0;
    for (let after = 0n; ; ) {
      const page = await database.sql.query<{ f1: string }>(`SELECT ${texts} FROM ledger_event WHERE position > $1 ORDER BY position LIMIT 5000`, [after]);
      read += page.length;
      if (page.length < 5000) break;
      after = BigInt(page.at(-1)!.f1);
    }
    const floorSeconds = (performance.now() - t1) / 1000;

    // verifyLedger reads pages of 500 batches and 5,000 events: its memory must not grow with the ledger.
    const rss = sampleRss(process.pid, 50);
    const rssBefore = rss.stop().lastBytes;
    const during = sampleRss(process.pid, 50);
    const t2 = performance.now();
    const verified = await verifyLedger(database.sql);
    const verifySeconds = (performance.now() - t2) / 1000;
    const rssMax = during.stop().maxBytes;

    console.log(row('floor: read the hashed columns', `${int(read / floorSeconds)} events/s`, `${fixed(floorSeconds)} s`));
    console.log(
      row(
        'verifyLedger over the whole chain',
        `${int(verified.events / verifySeconds)} events/s`,
        `${fixed(verifySeconds)} s`,
        `${int(verified.batches)} batches`,
      ),
    );
    console.log(row('verify / floor', fixed(floorSeconds / verifySeconds, 2)));
    console.log(row('bench RSS before verify / max during', mb(rssBefore), mb(rssMax), `+${mb(Math.max(0, rssMax - rssBefore))}`));
    console.log(row('result', verified.ok ? 'intact' : `CHANGED (${verified.problemCount} problems)`, `${int(verified.events)} of ${int(events)} events`));
  } finally {
    await database.close();
    await db.drop();
    await rm(blobDir, { recursive: true, force: true });
  }
}
