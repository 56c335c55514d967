// Preallocated spool segments: zero-filled ahead of need, written over in place. A zero tail is the
// clean end of a segment; anything else after the last whole record is a torn write, reported and
// ignored; a SIGKILL at any moment of continuous writing loses no acknowledged append.
import { spawn } from 'node:child_process';
import { mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { Spool, type SpoolOptions } from '../../src/ledger/spool.ts';
import { defaultIo, type SpoolIo } from '../../src/ledger/spool-files.ts';
import { crc32 } from 'node:zlib';
import { frame, readSegmentHeader, stamp, unframe } from '../../src/ledger/spool-frame.ts';
import { parsedEvent, until } from '../capture/helpers.ts';
import { compileCacheEnv } from '../helpers/process.ts';

const events = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => parsedEvent(`${prefix}-${i}`));
const segmentsIn = async (dir: string) => (await readdir(dir)).filter((n) => n.endsWith('.spool')).sort();
const childScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'spool-child.ts');

let dir: string;
/** A spool "crashed" in process (crash()) may still be preparing its next segment in the folder: rm retries ENOTEMPTY. */
const removeAll = { recursive: true, force: true, maxRetries: 10, retryDelay: 50 };
const opened: Spool[] = [];
/** Warnings the spool logged (a torn segment is one). */
let warnings: { segment?: string; tornBytes?: number; validBytes?: number; msg: string }[];

async function openSpool(options: Partial<SpoolOptions> = {}) {
  const logger = createLogger('warn', {}, 1, { write: (line: string) => void warnings.push(JSON.parse(line)) });
  const result = await Spool.open({ dir, maxBytes: 1 << 30, maxEvents: 1_000_000, logger, ...options });
  opened.push(result.spool);
  return result;
}
/** What a SIGKILL leaves: the files as they are (the prepared next segment too), the lock naming a process that is gone. */
async function crash(): Promise<void> {
  opened.pop();
  await writeFile(path.join(dir, 'spool.lock'), '2147483646\nkilled\n');
}
async function overwrite(file: string, position: number, bytes: Buffer): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.write(bytes, 0, bytes.length, position);
  } finally {
    await handle.close();
  }
}
const torn = () => warnings.filter((w) => (w.tornBytes ?? 0) > 0);

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-spool-prealloc-'));
  warnings = [];
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close().catch(() => {});
  await rm(dir, removeAll);
});

describe('preallocated spool segments', () => {
  it('replays a segment whose records end in a zero tail as a clean end: everything back, nothing reported', async () => {
    const { spool } = await openSpool({ segmentBytes: 256 * 1024 });
    for (let i = 0; i < 5; i++) await spool.append(events(`z${i}`, 3), () => {});
    // Prepared means written whole: the file appears before its zeros and header are in it.
    const prepared = async () => {
      const names = await segmentsIn(dir);
      return names.length === 2 && readSegmentHeader(await readFile(path.join(dir, names[1]!))) === 2;
    };
    await until(prepared, 'the next segment prepared');
    await crash();
    const [written, next] = await segmentsIn(dir);
    const bytes = await readFile(path.join(dir, written!));
    // Written over in place: the file keeps its zero-filled size, the records at its start.
    expect(bytes.length).toBe(256 * 1024);
    const { events: back, validBytes, tornBytes, zeroBytes } = unframe(bytes);
    expect(back).toHaveLength(15);
    expect(tornBytes).toBe(0);
    expect(zeroBytes).toBe(bytes.length - validBytes);
    const spare = await readFile(path.join(dir, next!));
    expect(readSegmentHeader(spare)).toBe(2);
    expect(unframe(spare)).toMatchObject({ events: [], tornBytes: 0 });

    const again = await openSpool({ segmentBytes: 256 * 1024 });
    expect(again.recovered.map((e) => e.id)).toEqual(Array.from({ length: 5 }, (_, i) => [0, 1, 2].map((j) => `z${i}-${j}`)).flat());
    expect(again.recovered[0]).toEqual(parsedEvent('z0-0'));
    expect(warnings).toEqual([]);
    // The prepared segment never written had nothing to replay: it is recycled as the next one; the replayed one stays until released.
    expect(await segmentsIn(dir)).toContain(written);
    await until(async () => !(await segmentsIn(dir)).includes(next!), 'the spare recycled under the next number');
  });

  it('reports a torn record inside preallocated space, keeps what came before it, and goes on in a new segment', async () => {
    const whole = frame(parsedEvent('t-3'));
    // As the spool writes it into the first segment.
    stamp(whole, 1);
    const cases: [string, (file: string, end: number) => Promise<void>][] = [
      // The write reached the disk in part: the header and some of the body, zeros after.
      ['a partial record', (file, end) => overwrite(file, end, whole.subarray(0, whole.length >> 1))],
      // The header's sector was lost but a later one of the same write landed: not a zero tail.
      ['a lost header', (file, end) => overwrite(file, end + 12 + 16, whole.subarray(12 + 16))],
      // A whole record whose checksum fails.
      [
        'a bad checksum',
        (file, end) => {
          const bad = Buffer.from(whole);
          bad[bad.length - 3] = bad[bad.length - 3]! ^ 0x20;
          return overwrite(file, end, bad);
        },
      ],
    ];
    for (const [what, tear] of cases) {
      await rm(dir, removeAll);
      dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-spool-prealloc-'));
      warnings = [];
      const { spool } = await openSpool();
      await spool.append(events('t', 3), () => {});
      await crash();
      const [segment] = await segmentsIn(dir);
      const file = path.join(dir, segment!);
      const end = unframe(await readFile(file)).validBytes;
      await tear(file, end);
      const again = await openSpool();
      expect(
        again.recovered.map((e) => e.id),
        what,
      ).toEqual(['t-0', 't-1', 't-2']);
      expect(torn(), what).toEqual([expect.objectContaining({ segment, validBytes: end, msg: expect.stringMatching(/torn or corrupt/) })]);
      await again.spool.append(events('after', 1), () => {});
      await crash();
      const third = await openSpool();
      expect(
        third.recovered.map((e) => e.id),
        what,
      ).toEqual(['t-0', 't-1', 't-2', 'after-0']);
    }
  });

  it('rolls over to the prepared segment: no record straddles two, one larger than a segment goes alone, all replay in order', async () => {
    const segmentBytes = 4096;
    const { spool } = await openSpool({ segmentBytes });
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      // Now and then a batch larger than a whole segment.
      const batch =
        i % 13 === 12 ? [parsedEvent(`big-${i}`, { payload: { state: 'COMPLETE', text: 'b'.repeat(segmentBytes * 2) } })] : events(`s${i}`, 1 + (i % 3));
      await spool.append(batch, () => {});
      ids.push(...batch.map((e) => e.id));
    }
    const prepared = (bytes: Buffer) => readSegmentHeader(bytes) !== undefined && unframe(bytes).events.length === 0;
    await until(async () => prepared(await readFile(path.join(dir, (await segmentsIn(dir)).at(-1)!))), 'the next segment prepared');
    const names = await segmentsIn(dir);
    expect(names.length).toBeGreaterThan(10);
    let records = 0;
    for (const name of names.slice(0, -1)) {
      const bytes = await readFile(path.join(dir, name));
      const { events: back, validBytes, tornBytes } = unframe(bytes);
      expect(tornBytes, name).toBe(0);
      expect(back.length, name).toBeGreaterThan(0);
      // Each segment is its preallocated size unless a single larger batch filled it alone.
      if (bytes.length > segmentBytes) expect(validBytes, name).toBe(bytes.length);
      else expect(bytes.length, name).toBe(segmentBytes);
      records += back.length;
    }
    expect(records).toBe(ids.length);
    expect((await stat(path.join(dir, names.at(-1)!))).size).toBe(segmentBytes);
    await crash();
    const again = await openSpool({ segmentBytes });
    expect(again.recovered.map((e) => e.id)).toEqual(ids);
    expect(warnings).toEqual([]);
    // Released and closed, every segment goes, the prepared ones too.
    again.spool.release(ids.length);
    await again.spool.close();
    expect(await segmentsIn(dir)).toEqual([]);
  });

  it('loses no acknowledged append when the writing process is killed (SIGKILL) at random moments while it writes, round after round', async () => {
    const segmentBytes = 64 * 1024;
    const acknowledged: string[] = [];
    let tornSeen = 0;
    for (let round = 0; round < 4; round++) {
      const child = spawn(process.execPath, [childScript, dir, `k${round}`, String(segmentBytes)], {
        env: { ...process.env, ...compileCacheEnv() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      const lines = () => out.split('\n').filter((l) => l.startsWith(`k${round}-`));
      await until(() => lines().length >= 20 || child.exitCode !== null, 'the child appending', 60_000);
      expect(child.exitCode, err).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
      child.kill('SIGKILL');
      await exited;
      expect(child.signalCode).toBe('SIGKILL');
      // Every earlier round's acknowledged appends were replayed by this child at its start.
      expect(Number(/^ready (\d+)$/m.exec(out)![1])).toBeGreaterThanOrEqual(acknowledged.length);
      acknowledged.push(...lines());
    }
    const { recovered } = await openSpool({ segmentBytes });
    tornSeen = torn().length;
    const ids = recovered.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Acknowledged in spool order, so they appear in the same order among what is recovered.
    const position = new Map(ids.map((id, i) => [id, i]));
    const lost = acknowledged.filter((id) => !position.has(id));
    expect(lost).toEqual([]);
    const positions = acknowledged.map((id) => position.get(id)!);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    for (const e of recovered) expect(e.payload.text!.startsWith(`${e.id}:`)).toBe(true);
    console.info(`spool kill -9: 4 kills, ${acknowledged.length} appends acknowledged, ${ids.length} recovered, ${tornSeen} torn tails reported`);
  }, 120_000);

  it('recycles committed segments: zeros are written for the first few only, and a replay finds no record of a recycled life', async () => {
    const segmentBytes = 8 * 1024;
    let zeroFills = 0;
    const io: SpoolIo = {
      ...defaultIo,
      fill: (file, bytes, at) => {
        if (bytes.length > 16) zeroFills++;
        return defaultIo.write(file, bytes, at);
      },
    };
    const { spool } = await openSpool({ segmentBytes, io });
    const ids: string[] = [];
    let released = 0;
    for (let i = 0; i < 200; i++) {
      const batch = events(`c${i}`, 1 + (i % 4)).map((e) => ({ ...e, payload: { state: 'COMPLETE' as const, text: `${e.id}:`.padEnd(300, 'y') } }));
      await spool.append(batch, () => {});
      ids.push(...batch.map((e) => e.id));
      // The Ledger commits all but the newest few.
      if (ids.length - 10 > released) {
        spool.release(ids.length - 10 - released);
        released = ids.length - 10;
      }
    }
    const numbers = (await segmentsIn(dir)).map((n) => Number(/(\d+)/.exec(n)![1]));
    // 500 events of ~370 bytes went through more than 20 segments; the folder holds a handful.
    expect(Math.max(...numbers)).toBeGreaterThan(20);
    expect(numbers.length).toBeLessThanOrEqual(5);
    expect(zeroFills).toBeLessThanOrEqual(4 * Math.ceil(segmentBytes / (256 * 1024)));
    await crash();
    const again = await openSpool({ segmentBytes });
    const back = again.recovered.map((e) => e.id);
    // The 10 not committed are there, after at most the rest of their segment; nothing older, nothing torn.
    expect(back.slice(-10)).toEqual(ids.slice(-10));
    expect(ids.slice(-back.length)).toEqual(back);
    expect(warnings).toEqual([]);
  });

  it('replays a segment of the first format (no header), then goes on in the current one', async () => {
    const legacy = (e: ReturnType<typeof parsedEvent>) => {
      const body = Buffer.from(JSON.stringify(e));
      const head = Buffer.alloc(8);
      head.writeUInt32LE(body.length, 0);
      head.writeUInt32LE(crc32(body), 4);
      return Buffer.concat([head, body]);
    };
    await writeFile(
      path.join(dir, 'segment-000000000007.spool'),
      Buffer.concat([legacy(parsedEvent('old-0')), legacy(parsedEvent('old-1')), Buffer.alloc(4096)]),
    );
    const { spool, recovered } = await openSpool();
    expect(recovered.map((e) => e.id)).toEqual(['old-0', 'old-1']);
    await spool.append(events('new', 2), () => {});
    await crash();
    const again = await openSpool();
    expect(again.recovered.map((e) => e.id)).toEqual(['old-0', 'old-1', 'new-0', 'new-1']);
    expect(warnings).toEqual([]);
  });

  it('loses no acknowledged append when killed (SIGKILL) while committed segments are recycled under it, and replays no recycled record', async () => {
    const segmentBytes = 64 * 1024;
    let required: string[] = [];
    let lastRound: string[] = [];
    for (let round = 0; round < 4; round++) {
      const child = spawn(process.execPath, [childScript, dir, `r${round}`, String(segmentBytes), 'release'], {
        env: { ...process.env, ...compileCacheEnv() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      const lines = () => out.split('\n').filter((l) => l.startsWith(`r${round}-`));
      await until(() => lines().length >= 400 || child.exitCode !== null, 'the child appending and releasing', 60_000);
      expect(child.exitCode, err).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
      child.kill('SIGKILL');
      await exited;
      // What the round before left unreleased was replayed by this child.
      expect(Number(/^ready (\d+)$/m.exec(out)![1])).toBeGreaterThanOrEqual(required.length);
      const released = Math.max(0, ...[...out.matchAll(/^released (\d+)$/gm)].map((m) => Number(m[1])));
      lastRound = lines();
      required = lastRound.slice(released);
    }
    const { recovered } = await openSpool({ segmentBytes });
    const ids = recovered.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(required.filter((id) => !ids.includes(id))).toEqual([]);
    // Only the last round's appends (some made durable as the kill came, never printed): everything earlier was released, and its segments recycled or deleted.
    expect(ids.filter((id) => !id.startsWith('r3-'))).toEqual([]);
    for (const e of recovered) expect(e.payload.text!.startsWith(`${e.id}:`)).toBe(true);
    console.info(`spool kill -9 with recycling: ${lastRound.length} appends in the last round, ${required.length} not released, ${ids.length} recovered`);
  }, 120_000);
});
