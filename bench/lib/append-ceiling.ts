// How fast the ledger can take a benchmark's own captured events, with nothing else running: the
// events one run recorded are read back (bytes included) and appended again, with fresh ids, to a
// fresh database through Ledger.append in batches: one in flight, as the background writer sends
// them, or several (separate writers). It bounds what any proxy in front of this ledger could
// sustain on this machine.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../src/db/client.ts';
import type { EventInput } from '../../src/ledger/input.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { FolderObjectStore } from '../../src/ledger/object-store.ts';
import { bytesPayload } from '../../src/capture/payload.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { commandCpuSeconds } from './cpu.ts';
import { createBenchDatabase } from './postgres.ts';

type Recorded = {
  kind: string;
  direction: 'IN' | 'OUT';
  actionId: string;
  tool: string | null;
  status: string | null;
  method: string | null;
  url: string | null;
  headers: unknown;
  metadata: unknown;
  payloadSha256: string | null;
  contractForm: string | null;
  contractSha256: string | null;
};

const limits = { inlineMaxBytes: 262_144, payloadMaxBytes: 8_388_608 };

/** The first `calls` calls of `tool` in the database at `url` (large blobs in `blobDir`), as the events the capture sent (bytes read back). */
async function sampleOf(url: string, blobDir: string, tool: string, calls: number): Promise<EventInput[][]> {
  const source = await openDatabase({ url }, { poolSize: 2 });
  try {
    const ledger = new Ledger(source.prisma, new FolderObjectStore(blobDir), new SecretRedactor({}), limits);
    const actions = await source.prisma.ledgerEvent.findMany({
      where: { tool, kind: 'REQUEST', direction: 'IN' },
      select: { actionId: true },
      orderBy: { position: 'asc' },
      take: calls,
    });
    const rows = (await source.prisma.ledgerEvent.findMany({
      where: { actionId: { in: actions.map((a) => a.actionId) } },
      orderBy: { position: 'asc' },
      select: {
        kind: true,
        direction: true,
        actionId: true,
        tool: true,
        status: true,
        method: true,
        url: true,
        headers: true,
        metadata: true,
        payloadSha256: true,
        contractForm: true,
        contractSha256: true,
      },
    })) as Recorded[];
    const bytes = new Map<string, Buffer>();
    for (const sha of new Set(rows.map((r) => r.payloadSha256).filter((s): s is string => s !== null))) bytes.set(sha, (await ledger.readBlob(sha))!);
    const byAction = new Map<string, EventInput[]>();
    for (const r of rows) {
      const event: EventInput = {
        id: '',
        kind: r.kind,
        direction: r.direction,
        actionId: r.actionId,
        ...(r.tool && { tool: r.tool }),
        ...(r.status && { status: r.status }),
        ...(r.method && { method: r.method }),
        ...(r.url && { url: r.url }),
        ...(r.headers !== null && { headers: r.headers as Record<string, string> }),
        ...(r.metadata !== null && { metadata: r.metadata as Record<string, unknown> }),
        ...(r.contractForm && r.contractSha256 && { contract: { form: r.contractForm, sha256: r.contractSha256 } }),
        occurredAt: new Date(),
        payload: r.payloadSha256 ? bytesPayload(bytes.get(r.payloadSha256)!) : { state: 'NONE' },
      } as EventInput;
      byAction.set(r.actionId, [...(byAction.get(r.actionId) ?? []), event]);
    }
    return [...byAction.values()];
  } finally {
    await source.close();
  }
}

/** A copy of one call's events under a new action id: fresh ids, and the action id replaced wherever it appears, so answers stay unique blobs. */
function copyOf(events: EventInput[]): EventInput[] {
  const old = events[0]!.actionId;
  const actionId = randomUUID();
  const swap = (text: string) => text.split(old).join(actionId);
  return events.map((e) => ({
    ...e,
    id: randomUUID(),
    actionId,
    occurredAt: new Date(),
    ...(e.metadata && { metadata: JSON.parse(swap(JSON.stringify(e.metadata))) }),
    payload: e.payload.text !== undefined ? { ...e.payload, text: swap(e.payload.text) } : e.payload,
  }));
}

/** Batches appended, untimed, before the ceiling is timed (then ANALYZE). */
const settleBatches = 4;

export type AppendCeiling = {
  eventsPerSecond: number;
  events: number;
  seconds: number;
  eventsPerCall: number;
  inFlight: number;
  /** CPU µs per call the append took: this process (the Ledger, Prisma, pg) and every PostgreSQL process. */
  cpuPerCall: { node: number; postgres: number };
};

/**
 * Replays `calls` copies of the recorded calls of `tool` (the server's database at `recorded.url`,
 * its large blobs in `recorded.blobDir`) through Ledger.append, `batchSize` events a batch, once for
 * each number of batches in flight, each on a fresh database.
 */
export async function measureAppendCeilings(
  recorded: { url: string; blobDir: string },
  tool: string,
  inFlights: number[],
  calls = 10_000,
  batchSize = 500,
): Promise<AppendCeiling[]> {
  const sample = await sampleOf(recorded.url, recorded.blobDir, tool, 500);
  if (sample.length === 0) throw new Error(`no recorded calls of ${tool} to replay`);
  const ceilings: AppendCeiling[] = [];
  for (const inFlight of inFlights) ceilings.push(await measureOnce(sample, inFlight, calls, batchSize));
  return ceilings;
}

async function measureOnce(sample: EventInput[][], inFlight: number, calls: number, batchSize: number): Promise<AppendCeiling> {
  const eventsPerCall = sample.reduce((n, c) => n + c.length, 0) / sample.length;
  const target = await createBenchDatabase('dispatch_ceiling');
  const blobDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-ceiling-'));
  const db = await openDatabase({ url: target.url }, { poolSize: 2 });
  try {
    await db.migrate();
    const ledger = new Ledger(db.prisma, new FolderObjectStore(blobDir), new SecretRedactor({}), limits);
    // Built before the clock starts: the capture builds its events on the request's path, not the writer's.
    const batches: EventInput[][] = [];
    let batch: EventInput[] = [];
    for (let i = 0; i < calls; i++) {
      batch.push(...copyOf(sample[i % sample.length]!));
      if (batch.length >= batchSize) {
        batches.push(batch);
        batch = [];
      }
    }
    if (batch.length) batches.push(batch);
    // Timed on a settled ledger, as a server's is for nearly all its life: a few batches first, then
    // statistics, so no plan is one PostgreSQL made for the empty tables of a fresh database.
    for (let i = 0; i < Math.min(settleBatches, batches.length - 1); i++)
      await ledger.append({ collector: 'ceiling-settle', position: BigInt(i + 1), events: batches.shift()! });
    await db.sql.query('ANALYZE ledger_event, blob, ledger_batch');
    const events = batches.reduce((n, b) => n + b.length, 0);
    const start = performance.now();
    const nodeBefore = process.cpuUsage();
    const postgresBefore = commandCpuSeconds('postgres');
    let next = 0;
    // Each lane is a collector of its own, as separate writers would be.
    await Promise.all(
      Array.from({ length: inFlight }, async (_, lane) => {
        for (let i = next++; i < batches.length; i = next++)
          await ledger.append({ collector: `ceiling-${lane}`, position: BigInt(i + 1), events: batches[i]! });
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    const node = process.cpuUsage(nodeBefore);
    const postgres = commandCpuSeconds('postgres') - postgresBefore;
    const perCall = (cpuSeconds: number) => (cpuSeconds * 1e6 * eventsPerCall) / events;
    const cpuPerCall = { node: perCall((node.user + node.system) / 1e6), postgres: perCall(postgres) };
    return { eventsPerSecond: events / seconds, events, seconds, eventsPerCall, inFlight, cpuPerCall };
  } finally {
    await db.close();
    await target.drop();
    await rm(blobDir, { recursive: true, force: true });
  }
}
