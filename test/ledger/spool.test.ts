import { constants } from 'node:fs';
import { mkdtemp, open, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerWriter } from '../../src/capture/writer.ts';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import type { EventInput } from '../../src/ledger/input.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { Spool, type SpoolOptions } from '../../src/ledger/spool.ts';
import { defaultIo, type SpoolIo } from '../../src/ledger/spool-files.ts';
import { frame, SEGMENT_HEADER, segmentHeader, stamp, unframe } from '../../src/ledger/spool-frame.ts';
import { databaseKinds } from '../helpers/database.ts';
import { createTestLedger } from '../helpers/ledger.ts';
import { rawSql } from '../helpers/sql.ts';
import { canaryLeaks } from '../helpers/canary.ts';
import { parsedEvent, until } from '../capture/helpers.ts';

const events = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => parsedEvent(`${prefix}-${i}`));
const segmentsIn = async (dir: string) => (await readdir(dir)).filter((n) => n.endsWith('.spool')).sort();
/** Segments holding records (not the next one, zero-filled or recycled and waiting). */
const writtenSegments = async (dir: string) => {
  const names: string[] = [];
  for (const name of await segmentsIn(dir)) if (unframe(await readFile(path.join(dir, name))).events.length) names.push(name);
  return names;
};
/** Segment `number`'s bytes holding `records`, as the spool writes them. */
const segmentOf = (records: Buffer[], number = 1) => {
  const body = Buffer.concat(records.map((r) => Buffer.from(r)));
  stamp(body, number);
  return Buffer.concat([segmentHeader(number), body]);
};
const realIo: SpoolIo = {
  async write(file, bytes, position) {
    let offset = 0;
    while (offset < bytes.length) offset += (await file.write(bytes, offset, bytes.length - offset, position + offset)).bytesWritten;
  },
  sync: (file) => file.datasync(),
};

let dir: string;
const opened: Spool[] = [];
async function openSpool(options: Partial<SpoolOptions> = {}) {
  const result = await Spool.open({ dir, maxBytes: 1 << 30, maxEvents: 1_000_000, ...options });
  opened.push(result.spool);
  return result;
}
/** Writes `bytes` into `file` at `position`, as a write the crash cut short would have. */
async function overwrite(file: string, position: number, bytes: Buffer): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.write(bytes, 0, bytes.length, position);
  } finally {
    await handle.close();
  }
}
/** What a SIGKILL leaves: the files as they are, the lock naming a process that is gone. */
async function crash(): Promise<void> {
  await writeFile(path.join(dir, 'spool.lock'), '2147483646\nkilled\n');
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-spool-'));
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close().catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

describe('spool framing', () => {
  it('round-trips events exactly: dates, binary payloads, astral text, deep JSON', () => {
    const rich = parsedEvent('rich', {
      metadata: { astral: '😀', deep: [[[{ a: null, n: 1.5 }]]] },
      headers: { 'x-a': 'b c' },
      payload: { state: 'COMPLETE', base64: Buffer.from([0, 0xff, 0xfe, 0x80]).toString('base64') },
    });
    const bytes = segmentOf([frame(rich), frame(parsedEvent('plain'))]);
    const { events: back, tornBytes } = unframe(bytes);
    expect(tornBytes).toBe(0);
    expect(back).toEqual([rich, parsedEvent('plain')]);
  });

  it('frames NUL and lone surrogates losslessly (JSON escapes), whatever the event parser accepts', () => {
    const text = 'nul\u0000here \ud800x\udfff';
    const record = frame({ ...parsedEvent('raw', { payload: { state: 'NONE' } }), metadata: { q: text } });
    const body = record.subarray(12);
    expect(record.readUInt32LE(0)).toBe(body.length);
    expect(body.includes(0)).toBe(false);
    expect(JSON.parse(body.toString('utf8')).metadata.q).toBe(text);
  });

  it('writes payload text as its bytes, not escaped into the JSON, and replays it exactly', () => {
    const answer = '{"data":{"tools":[{"name":"a \\"b\\"","emoji":"😀","nul":"\u0000"}]}}\n';
    const withText = parsedEvent('answer', { payload: { state: 'COMPLETE', text: answer } });
    const empty = parsedEvent('empty', { payload: { state: 'PARTIAL', text: '' } });
    const record = frame(withText);
    expect(record.includes(Buffer.from(answer))).toBe(true);
    expect(record.includes(Buffer.from(JSON.stringify(answer).slice(1, -1)))).toBe(false);
    const { events: back, tornBytes } = unframe(segmentOf([record, frame(empty)]));
    expect(tornBytes).toBe(0);
    expect(back).toEqual([withText, empty]);
  });

  it('replays records of the earlier layout (the whole event as JSON) beside the new ones', () => {
    const earlier = parsedEvent('earlier');
    const json = Buffer.from(JSON.stringify(earlier));
    const header = Buffer.alloc(12);
    header.writeUInt32LE(json.length, 0);
    header.writeUInt32LE(crc32(json), 4);
    expect(unframe(segmentOf([Buffer.concat([header, json]), frame(parsedEvent('later'))])).events).toEqual([earlier, parsedEvent('later')]);
  });

  it('stops at a torn last record, whatever byte the write was cut at', () => {
    const whole = segmentOf(events('torn', 3).map(frame));
    const lastStart = whole.length - frame(parsedEvent('torn-2')).length;
    for (let cut = lastStart; cut < whole.length; cut++) {
      const { events: back, validBytes, tornBytes } = unframe(whole.subarray(0, cut));
      expect(back.map((e) => e.id)).toEqual(['torn-0', 'torn-1']);
      expect(validBytes).toBe(lastStart);
      expect(tornBytes).toBe(cut - lastStart);
    }
  });

  it('stops at a record whose checksum fails, at zeros and at garbage', () => {
    const good = frame(parsedEvent('good'));
    const bad = frame(parsedEvent('bad'));
    bad[bad.length - 2] = bad[bad.length - 2]! ^ 0x01;
    expect(unframe(segmentOf([good, bad, good])).events.map((e) => e.id)).toEqual(['good']);
    expect(unframe(segmentOf([good, Buffer.alloc(64)])).events).toHaveLength(1);
    const lying = Buffer.alloc(12);
    lying.writeUInt32LE(0xffff_fff0, 0);
    expect(unframe(segmentOf([good, lying])).events).toHaveLength(1);
    expect(unframe(Buffer.from('not a spool at all')).events).toEqual([]);
  });
});

describe('Spool', () => {
  it('makes appends durable in order, one sync serving every append that waited for it', async () => {
    let syncs = 0;
    let release: (() => void) | undefined;
    const io: SpoolIo = {
      write: realIo.write,
      async sync(file) {
        syncs++;
        // The first sync is held until every append has arrived, so they must share the second.
        if (syncs === 1) await new Promise<void>((resolve) => (release = resolve));
        await file.datasync();
      },
    };
    const { spool } = await openSpool({ io });
    const admitted: string[] = [];
    const first = spool.append(events('g0', 1), (e) => admitted.push(...e.map((x) => x.id)));
    await until(() => release !== undefined, 'the first sync');
    const rest = Array.from({ length: 40 }, (_, i) => spool.append(events(`g${i + 1}`, 2), (e) => admitted.push(...e.map((x) => x.id))));
    release!();
    await Promise.all([first, ...rest]);
    expect(syncs).toBe(2);
    expect(spool.stats()).toMatchObject({ events: 81, writes: 2, appends: 41, refused: 0 });
    expect(admitted).toEqual(['g0-0', ...Array.from({ length: 40 }, (_, i) => [`g${i + 1}-0`, `g${i + 1}-1`]).flat()]);
    // What is on disk is exactly what was admitted, in the same order.
    const onDisk = unframe(await readFile(path.join(dir, (await segmentsIn(dir))[0]!)));
    expect(onDisk.events.map((e) => e.id)).toEqual(admitted);
  });

  it("reports its writes' and appends' times: an append queued behind a slow write waits for it, a lingering one is not counted", async () => {
    let held = true;
    const io: SpoolIo = {
      write: realIo.write,
      async sync(file) {
        if (held) {
          held = false;
          await new Promise((resolve) => setTimeout(resolve, 60));
        }
        await file.datasync();
      },
    };
    const { spool } = await openSpool({ io });
    expect(spool.stats()).toMatchObject({ writeP50Ms: null, writeP99Ms: null, appendP50Ms: null, appendP99Ms: null });
    const slow = spool.append(events('t0', 1), () => {});
    const queued = Array.from({ length: 9 }, (_, i) => spool.append(events(`t${i + 1}`, 1), () => {}));
    await Promise.all([slow, ...queued]);
    const lingering = spool.append(events('linger', 1), () => {}, true);
    await spool.durable();
    await lingering;
    const stats = spool.stats();
    expect(stats.writes).toBe(3);
    // The held write is the slowest; every timed append waited at least for it.
    expect(stats.writeP99Ms).toBeGreaterThanOrEqual(55);
    expect(stats.writeP50Ms).toBeLessThanOrEqual(stats.writeP99Ms!);
    expect(stats.appendP50Ms).toBeGreaterThanOrEqual(55);
    expect(stats.appendP99Ms).toBeGreaterThanOrEqual(stats.appendP50Ms!);
  });

  it('replays what an earlier run left, in order, and takes the lock of a dead process', async () => {
    const { spool } = await openSpool({ segmentBytes: 600 });
    for (let i = 0; i < 5; i++) await spool.append(events(`r${i}`, 3), () => {});
    expect((await segmentsIn(dir)).length).toBeGreaterThan(1);
    opened.pop();
    await crash();
    const again = await openSpool();
    expect(again.recovered.map((e) => e.id)).toEqual(Array.from({ length: 5 }, (_, i) => [0, 1, 2].map((j) => `r${i}-${j}`)).flat());
    expect(again.spool.stats()).toMatchObject({ events: 15 });
    expect(again.recovered[0]).toEqual(parsedEvent('r0-0'));
  });

  it('replays up to a torn tail, then appends to a new segment', async () => {
    const { spool } = await openSpool();
    await spool.append(events('t', 4), () => {});
    opened.pop();
    await crash();
    const [segment] = await segmentsIn(dir);
    const file = path.join(dir, segment!);
    // The last record's last bytes are not what was written: its checksum fails.
    const end = unframe(await readFile(file)).validBytes;
    await overwrite(file, end - 5, Buffer.from([1, 2, 3, 0, 0]));
    const again = await openSpool();
    expect(again.recovered.map((e) => e.id)).toEqual(['t-0', 't-1', 't-2']);
    await again.spool.append(events('after', 1), () => {});
    const segments = await writtenSegments(dir);
    expect(segments).toHaveLength(2);
    expect(unframe(await readFile(path.join(dir, segments[1]!))).events.map((e) => e.id)).toEqual(['after-0']);
  });

  it('deletes a segment only once all its events are released, and keeps the rest across close', async () => {
    const one = frame(parsedEvent('d-0')).length;
    const { spool } = await openSpool({ segmentBytes: SEGMENT_HEADER + one * 2 });
    for (let i = 0; i < 6; i++) await spool.append([parsedEvent(`d-${i}`)], () => {});
    const before = await writtenSegments(dir);
    expect(before).toHaveLength(3);
    spool.release(3);
    await until(async () => (await writtenSegments(dir)).length === 2, 'the first segment deleted');
    expect(await writtenSegments(dir)).toEqual(before.slice(1));
    expect(spool.stats()).toMatchObject({ events: 3 });
    await spool.close();
    // Not released: they stay for the next start.
    expect(await segmentsIn(dir)).toEqual(before.slice(1));
    const again = await openSpool();
    // A segment is replayed whole: d-2 committed, but shares its segment with d-3 (a replay is idempotent).
    expect(again.recovered.map((e) => e.id)).toEqual(['d-2', 'd-3', 'd-4', 'd-5']);
    again.spool.release(4);
    await again.spool.close();
    expect(await segmentsIn(dir)).toEqual([]);
  });

  it('makes callers wait when full (never drops), and refuses after the wait with SPOOL_UNAVAILABLE', async () => {
    const { spool } = await openSpool({ maxEvents: 3, waitMs: 60_000 });
    await spool.append(events('full', 3), () => {});
    const admitted: string[] = [];
    let done = false;
    const waiting = spool.append(events('wait', 2), (e) => admitted.push(...e.map((x) => x.id))).then(() => (done = true));
    await until(() => spool.stats().waiting === 1, 'the caller to wait');
    expect(done).toBe(false);
    spool.release(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    spool.release(1);
    await waiting;
    expect(admitted).toEqual(['wait-0', 'wait-1']);
    expect(spool.stats()).toMatchObject({ events: 3, waiting: 0, refused: 0 });
  });

  it('refuses after waitMs for room, admitting nothing', async () => {
    const { spool } = await openSpool({ maxEvents: 1, waitMs: 30 });
    await spool.append(events('a', 1), () => {});
    let admitted = 0;
    const refused = await spool.append(events('b', 1), () => admitted++).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe(ErrorCode.SPOOL_UNAVAILABLE);
    expect((refused as DomainError).details).toMatchObject({ retryAfterSeconds: 1 });
    expect(admitted).toBe(0);
    expect(spool.stats()).toMatchObject({ events: 1, refused: 1 });
  });

  it('refuses the appends of a failed write or sync, admits none of them, leaves nothing to replay, and recovers', async () => {
    let fail: 'write' | 'sync' | undefined = 'sync';
    const io: SpoolIo = {
      async write(file: FileHandle, bytes: Buffer, position: number) {
        if (fail === 'write') {
          // A full disk after half the bytes.
          await realIo.write(file, bytes.subarray(0, bytes.length >> 1), position);
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        }
        await realIo.write(file, bytes, position);
      },
      async sync(file: FileHandle) {
        if (fail === 'sync') throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
        await file.datasync();
      },
    };
    const { spool } = await openSpool({ io });
    const admitted: string[] = [];
    const admit = (e: EventInput[]) => admitted.push(...e.map((x) => x.id));
    await spool.append(events('ok1', 1), admit).catch(() => {});
    fail = undefined;
    await spool.append(events('ok1', 1), admit);
    fail = 'write';
    const refusals = await Promise.all([spool.append(events('w1', 2), admit).catch((e) => e), spool.append(events('w2', 1), admit).catch((e) => e)]);
    for (const r of refusals) expect((r as DomainError).code).toBe(ErrorCode.SPOOL_UNAVAILABLE);
    fail = undefined;
    await spool.append(events('ok2', 1), admit);
    expect(admitted).toEqual(['ok1-0', 'ok2-0']);
    expect(spool.stats()).toMatchObject({ events: 2 });
    opened.pop();
    await crash();
    const again = await openSpool();
    expect(again.recovered.map((e) => e.id)).toEqual(['ok1-0', 'ok2-0']);
  });

  it('writes a lone append in place only while the server serves one call; a failed write in place is refused like any other', async () => {
    const ways: string[] = [];
    let failInPlace = false;
    const io: SpoolIo = {
      async write(file, bytes, position) {
        ways.push('pool');
        await realIo.write(file, bytes, position);
      },
      writeNow(file, bytes, position) {
        ways.push('in place');
        if (failInPlace) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        defaultIo.writeNow!(file, bytes, position);
      },
      sync: async () => {},
    };
    const { spool } = await openSpool({ io });
    const admitted: string[] = [];
    const admit = (e: EventInput[]) => admitted.push(...e.map((x) => x.id));
    // Before the app says, and while it serves several calls, every write goes through the pool.
    await spool.append(events('before', 1), admit);
    let calls = 3;
    spool.writeInPlaceWhen(() => calls <= 1);
    await spool.append(events('busy', 1), admit);
    calls = 1;
    // A lingering append rides with the lone durable one, in place.
    const lingered = spool.append(events('lingered', 1), admit, true);
    await spool.append(events('alone', 1), admit);
    await lingered;
    // Two appends at once: the first is written alone, the second waits and goes through the pool.
    await Promise.all([spool.append(events('first', 1), admit), spool.append(events('second', 1), admit)]);
    expect(ways).toEqual(['pool', 'pool', 'in place', 'in place', 'pool']);
    failInPlace = true;
    const refusal = await spool.append(events('full', 1), admit).catch((e) => e);
    expect((refusal as DomainError).code).toBe(ErrorCode.SPOOL_UNAVAILABLE);
    failInPlace = false;
    await spool.append(events('after', 1), admit);
    const written = ['before-0', 'busy-0', 'lingered-0', 'alone-0', 'first-0', 'second-0', 'after-0'];
    expect(admitted).toEqual(written);
    opened.pop();
    await crash();
    expect((await openSpool()).recovered.map((e) => e.id)).toEqual(written);
  });

  it("writes a group's records as they are in one vectored call, and the rest of a short one after it", async () => {
    const groups: number[] = [];
    const io: SpoolIo = {
      ...defaultIo,
      async writev(file, records, position) {
        groups.push(records.length);
        await defaultIo.writev!(file, records, position);
      },
    };
    const { spool } = await openSpool({ io });
    const lingered = spool.append(events('lingered', 2), () => {}, true);
    await spool.append(events('durable', 1), () => {});
    await lingered;
    expect(groups).toEqual([3]);
    opened.pop();
    await crash();
    expect((await openSpool()).recovered.map((e) => e.id)).toEqual(['lingered-0', 'lingered-1', 'durable-0']);
    const written: [number, string][] = [];
    const shortFile = {
      writev: async () => ({ bytesWritten: 3, buffers: [] }),
      write: async (bytes: Buffer, offset: number, length: number, position: number) => {
        written.push([position, bytes.subarray(offset, offset + length).toString()]);
        return { bytesWritten: length, buffer: bytes };
      },
    } as unknown as FileHandle;
    await defaultIo.writev!(shortFile, [Buffer.from('abcd'), Buffer.from('efg')], 100);
    expect(written).toEqual([[103, 'defg']]);
  });

  it('opens its segments O_DSYNC and writes over zero-filled space in place, so a write returns only once its bytes are durable', async () => {
    const { spool } = await openSpool({ segmentBytes: 64 * 1024 });
    await spool.append(events('d', 1), () => {});
    const spoolFds = async () => {
      const flags: number[] = [];
      for (const fd of await readdir('/proc/self/fd')) {
        const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
        if (!target.startsWith(dir) || !target.endsWith('.spool')) continue;
        // The next segment's filler closes once it is zero-filled, maybe between the listing and this read.
        const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => undefined);
        if (info === undefined) continue;
        flags.push(parseInt(/^flags:\s+([0-7]+)/m.exec(info)![1]!, 8));
      }
      return flags;
    };
    // The segment written, and the next one once it is prepared.
    await until(async () => (await spoolFds()).filter((f) => f & constants.O_DSYNC).length === 2, 'the next segment prepared');
    for (const f of await spoolFds()) {
      expect(f & constants.O_DSYNC).toBe(constants.O_DSYNC);
      expect(f & constants.O_APPEND).toBe(0);
    }
    for (const name of await segmentsIn(dir)) expect((await stat(path.join(dir, name))).size).toBe(64 * 1024);
  });

  it('writes a lingering append with the next durable one, in one write and in order', async () => {
    let writes = 0;
    const io: SpoolIo = {
      write: (file, bytes, position) => {
        writes++;
        return realIo.write(file, bytes, position);
      },
      sync: realIo.sync,
    };
    const { spool } = await openSpool({ io, lingerMs: 60_000 });
    const admitted: string[] = [];
    const lingering = spool.append(events('linger', 2), (e) => admitted.push(...e.map((x) => x.id)), true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(writes).toBe(0);
    expect(admitted).toEqual([]);
    await spool.append(events('now', 1), (e) => admitted.push(...e.map((x) => x.id)));
    await lingering;
    expect(writes).toBe(1);
    expect(admitted).toEqual(['linger-0', 'linger-1', 'now-0']);
    expect(unframe(await readFile(path.join(dir, (await segmentsIn(dir))[0]!))).events.map((e) => e.id)).toEqual(admitted);
  });

  it('writes a lingering append alone after lingerMs, and at once when durable() is asked', async () => {
    const slow = await openSpool({ lingerMs: 60_000 });
    const staged = slow.spool.append(events('asked', 1), () => {}, true);
    await slow.spool.durable();
    await staged;
    expect(slow.spool.stats()).toMatchObject({ events: 1, writes: 1 });
    await slow.spool.close();
    opened.pop();

    const quick = await openSpool({ lingerMs: 5 });
    await quick.spool.append(events('timer', 1), () => {}, true);
    expect(quick.spool.stats()).toMatchObject({ events: 2, writes: 1 });
    await quick.spool.durable();
  });

  it('durable() also waits for a lingering append that is still waiting for room', async () => {
    const { spool } = await openSpool({ maxEvents: 1, lingerMs: 60_000 });
    await spool.append(events('first', 1), () => {});
    const admitted: string[] = [];
    const staged = spool.append(events('waiting', 1), (e) => admitted.push(...e.map((x) => x.id)), true);
    let done = false;
    const barrier = spool.durable().then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(done).toBe(false);
    expect(spool.stats()).toMatchObject({ waiting: 1 });
    spool.release(1);
    await barrier;
    await staged;
    expect(admitted).toEqual(['waiting-0']);
  });

  it('durable() rejects with SPOOL_UNAVAILABLE when what lingered could not be made durable, and admits none of it', async () => {
    let fail = true;
    const io: SpoolIo = {
      async write(file, bytes, position) {
        if (fail) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        await realIo.write(file, bytes, position);
      },
      sync: realIo.sync,
    };
    const { spool } = await openSpool({ io, lingerMs: 60_000 });
    const admitted: string[] = [];
    const staged = spool.append(events('lost', 1), (e) => admitted.push(...e.map((x) => x.id)), true);
    staged.catch(() => {});
    const barrier = spool.durable();
    await expect(barrier).rejects.toMatchObject({ code: ErrorCode.SPOOL_UNAVAILABLE });
    await expect(staged).rejects.toBeInstanceOf(DomainError);
    expect(admitted).toEqual([]);
    fail = false;
    const after = spool.append(events('after', 1), (e) => admitted.push(...e.map((x) => x.id)), true);
    await expect(spool.durable()).resolves.toBeUndefined();
    await after;
    expect(admitted).toEqual(['after-0']);
  });

  it('never writes a registered secret value to disk, in any field', async () => {
    const secret = 'canary-spool-s3cr3t-77';
    const { spool } = await openSpool({ redactor: new SecretRedactor({ CANARY: secret }) });
    const leaky = parsedEvent('leak', {
      url: `https://x.test/?k=${secret}`,
      headers: { authorization: `Bearer ${secret}` },
      metadata: { args: { key: secret } },
      payload: { state: 'COMPLETE', text: `body ${secret} body` },
    });
    const admitted: EventInput[] = [];
    await spool.append([leaky, parsedEvent('bin', { payload: { state: 'COMPLETE', base64: Buffer.from(`\u0000${secret}`).toString('base64') } })], (e) =>
      admitted.push(...e),
    );
    expect(admitted[0]).toBe(leaky);
    const bytes = await readFile(path.join(dir, (await segmentsIn(dir))[0]!));
    expect(bytes.includes(secret)).toBe(false);
    expect(bytes.includes(Buffer.from(secret).toString('base64'))).toBe(false);
    const back = unframe(bytes).events;
    expect(back[0]!.url).toBe('https://x.test/?k=[CANARY]');
    expect(Buffer.from(back[0]!.payload.base64!, 'base64').toString()).toBe('body [CANARY] body');
  });

  it('never writes a secret in an id or name either, and replays one its name made longer than the limit', async () => {
    const secret = 'k3y-9Wq';
    const name = 'A_SECRET_NAME_LONGER_THAN_ITS_VALUE';
    const { spool } = await openSpool({ redactor: new SecretRedactor({ [name]: secret }) });
    // 70 × 7 = 490 characters, within the limit of 512; redacted, 70 × 37 = 2,590.
    const long = secret.repeat(70);
    const named = parsedEvent(`id-${secret}`, {
      actionId: `act-${secret}`,
      kind: `kind-${secret}`,
      tool: `tool-${secret}`,
      session: long,
      turn: `turn-${secret}`,
      task: `task-${secret}`,
      agent: `agent-${secret}`,
      model: `model-${secret}`,
      status: `status-${secret}`,
      method: `M${secret}`,
      contract: { form: `form-${secret}`, sha256: 'a'.repeat(64) },
    });
    await spool.append([named, parsedEvent('after-it')], () => {});
    const bytes = await readFile(path.join(dir, (await segmentsIn(dir))[0]!));
    expect(canaryLeaks(bytes, secret)).toEqual([]);
    opened.pop();
    await crash();
    const { recovered } = await openSpool();
    expect(recovered.map((e) => e.id)).toEqual([`id-[${name}]`, 'after-it']);
    expect(recovered[0]).toMatchObject({
      actionId: `act-[${name}]`,
      kind: `kind-[${name}]`,
      tool: `tool-[${name}]`,
      session: `[${name}]`.repeat(70),
      task: `task-[${name}]`,
      method: `M[${name}]`,
      contract: { form: `form-[${name}]` },
    });
  });

  it('refuses a second process on the same folder, naming it', async () => {
    await writeFile(path.join(dir, 'spool.lock'), `${process.ppid}\nnode other-server\n`);
    const refused = await Spool.open({ dir, maxBytes: 1 << 20, maxEvents: 100 }).catch((e: unknown) => e);
    expect((refused as Error).message).toContain(`in use by process ${process.ppid} (node other-server)`);
    expect(await segmentsIn(dir)).toEqual([]);
  });
});

describe.each(databaseKinds)('LedgerWriter with a spool on %s', (kind) => {
  it('moves spooled events to the Ledger, releases them, and a replay of committed events adds nothing', async () => {
    const t = await createTestLedger(kind);
    const sql = await rawSql(t.db);
    try {
      const { spool } = await openSpool({ segmentBytes: 2_000 });
      const writer = new LedgerWriter(t.ledger, { spool, batchMaxEvents: 7, batchMaxDelayMs: 5, collector: 'spooled' });
      await Promise.all(Array.from({ length: 10 }, (_, i) => writer.enqueue(events(`w${i}`, 3))));
      await writer.flush();
      await until(() => spool.stats().events === 0, 'the spool drained');
      expect(writer.stats()).toMatchObject({ written: 30, dropped: 0 });
      const ids = await sql.query<{ id: string }>(`SELECT id FROM ledger_event WHERE id LIKE 'w%' ORDER BY position`);
      expect(ids).toHaveLength(30);

      // A crash right after commit and before the segments went: everything is replayed again.
      opened.pop();
      await crash();
      const again = await openSpool();
      expect(again.recovered.length).toBeGreaterThan(0);
      const writer2 = new LedgerWriter(t.ledger, { spool: again.spool, batchMaxDelayMs: 5, collector: 'replay' });
      writer2.recover(again.recovered);
      await writer2.flush();
      expect(writer2.stats()).toMatchObject({ written: again.recovered.length, duplicates: again.recovered.length, dropped: 0 });
      expect(await sql.query(`SELECT count(*)::int AS n FROM ledger_event WHERE id LIKE 'w%'`)).toEqual([{ n: 30 }]);
      await writer2.stop(1_000);
      await again.spool.close();
      expect(await segmentsIn(dir)).toEqual([]);
      await writer.stop(1_000);
    } finally {
      await sql.close();
      await t.stop();
    }
  });
});
