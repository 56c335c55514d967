// The durable spool in front of the Ledger: a write-ahead log of captured events in local segment
// files. append() returns once its events are on disk (one O_DSYNC write serving every append that
// waited for it: group commit); the background writer then moves them to the Ledger, whose
// append is idempotent by event id, and release() lets a segment go once all its events committed.
//
// Segments are zero-filled ahead of need (or recycled once committed) and written over in place
// (spool-files.ts), so a durable write commits data only, never a new file size. Framing and
// replay: spool-frame.ts.
import { readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DomainError, ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { EventInput } from './input.ts';
import type { SecretRedactor } from '../secrets/redact.ts';
import { frame, SEGMENT_HEADER, stamp, unframe } from './spool-frame.ts';
import { redactForSpool } from './redacted-event.ts';
import {
  defaultIo,
  markSpare,
  prepareSegment,
  recycleSegment,
  releaseLock,
  segmentPattern,
  takeLock,
  type PreparedSegment,
  type SpoolIo,
} from './spool-files.ts';

export type SpoolOptions = {
  dir: string;
  /** Bytes and events spooled and not yet committed, at most; past either, append waits. */
  maxBytes: number;
  maxEvents: number;
  /** A segment's size, zero-filled ahead of need: a write that does not fit in what is left of it begins the next (one larger than a whole segment goes alone). */
  segmentBytes?: number;
  /** An append that waits this long for room is refused (SPOOL_UNAVAILABLE) instead. */
  waitMs?: number;
  /** A lingering append is written with the next durable one, or after this long at the latest. */
  lingerMs?: number;
  logger?: Logger;
  io?: SpoolIo;
  /** Replaces secret values before an event touches the disk; the Ledger takes that pass's columns (redacted-event.ts). A replayed event's redacted names are not kept. */
  redactor?: SecretRedactor;
};

export type SpoolStats = {
  /** Events on disk not yet committed to the Ledger, and their bytes. */
  events: number;
  bytes: number;
  /** Age of the oldest of them; 0 when there is none. */
  oldestAgeMs: number;
  segments: number;
  /** Durable writes made, appends they served, appends refused because the disk failed or room never came. */
  writes: number;
  appends: number;
  refused: number;
  /** Callers waiting for room now. */
  waiting: number;
  /** Over the last durable writes (up to 1,024), in ms: the write itself, and an append's wait from its call to durable (lingering ones left out). Null before the first. */
  writeP50Ms: number | null;
  writeP99Ms: number | null;
  appendP50Ms: number | null;
  appendP99Ms: number | null;
};

/** The last `size` durations, for percentiles an operator reads (not an average that hides the tail). */
class RecentDurations {
  private readonly values: Float64Array;
  private count = 0;
  constructor(size = 1024) {
    this.values = new Float64Array(size);
  }
  add(ms: number): void {
    this.values[this.count++ % this.values.length] = ms;
  }
  /** The median and the 99th percentile, in ms to the µs, from one sort; nulls before the first. */
  p50p99(): [number | null, number | null] {
    const n = Math.min(this.count, this.values.length);
    if (n === 0) return [null, null];
    const sorted = this.values.slice(0, n).sort();
    const at = (q: number) => Math.round(sorted[Math.min(n - 1, Math.floor(q * n))]! * 1000) / 1000;
    return [at(0.5), at(0.99)];
  }
}

/** `bytes`: where the next write goes (after the header and the records so far); `capacity`: the file's prepared size (0 for one replayed). */
type Segment = { name: string; number: number; file: FileHandle | undefined; bytes: number; capacity: number; firstSeq: number; endSeq: number };
type Group = { endSeq: number; bytes: number; at: number };
type Pending = {
  records: Buffer[];
  events: EventInput[];
  bytes: number;
  /** When the append was called (performance.now()); undefined for a lingering one, whose wait is chosen. */
  calledAt: number | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
  done: Promise<void>;
};
type Waiter = { pending: Pending; timer: NodeJS.Timeout | undefined };

/** Committed segments kept for recycling: one covers a steady load (the one before the current is done by the time it fills). */
const maxSpares = 2;

export const spoolUnavailable = (message: string) => new DomainError(ErrorCode.SPOOL_UNAVAILABLE, message, { retryAfterSeconds: 1 });

export class Spool {
  private readonly io: SpoolIo;
  private readonly segmentBytes: number;
  private readonly waitMs: number;
  private readonly lingerMs: number;
  private readonly segments: Segment[] = [];
  private readonly groups: Group[] = [];
  private groupHead = 0;
  private readonly queue: Pending[] = [];
  private readonly waiters: Waiter[] = [];
  /** Next sequence number to assign, and how many (from 0, in order) have been released. */
  private nextSeq = 0;
  private releasedSeq = 0;
  private nextSegment = 1;
  /** Segment files whose events all committed, kept to be recycled as the next ones (oldest first). */
  private readonly spares: string[] = [];
  /** The next segment, being zero-filled while the current one is written. */
  private prepared: Promise<PreparedSegment> | undefined;
  /** Counted at admission, so queued appends hold their room. */
  private heldEvents = 0;
  private heldBytes = 0;
  private flushing: Promise<void> | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;
  /** The newest append let in: once it is durable (or refused), so is every one before it. */
  private newest: Pending | undefined;
  private closed = false;
  private readonly counters = { writes: 0, appends: 0, refused: 0 };
  private readonly writeTimes = new RecentDurations();
  private readonly appendTimes = new RecentDurations();
  private alone: (() => boolean) | undefined;

  private readonly options: SpoolOptions;
  private constructor(options: SpoolOptions) {
    this.options = options;
    this.io = options.io ?? defaultIo;
    this.segmentBytes = options.segmentBytes ?? 4 * 1024 * 1024;
    this.waitMs = options.waitMs ?? 10_000;
    this.lingerMs = options.lingerMs ?? 2;
  }

  /**
   * Takes the folder (a second process on it fails at once, naming the holder) and reads every
   * segment left by an earlier run. The recovered events count as the first ones appended: the
   * caller hands them to the Ledger and releases them like any other.
   */
  static async open(options: SpoolOptions): Promise<{ spool: Spool; recovered: EventInput[] }> {
    mkdirSync(options.dir, { recursive: true });
    await takeLock(options.dir);
    const spool = new Spool(options);
    const names = (await readdir(options.dir)).filter((n) => segmentPattern.test(n)).sort();
    const recovered: EventInput[] = [];
    const now = Date.now();
    for (const name of names) {
      const bytes = await readFile(path.join(options.dir, name));
      // A zero tail or an earlier life's records are the clean end; anything else after the records is a torn or corrupt write.
      const { segment, events, validBytes, tornBytes } = unframe(bytes);
      const number = Math.max(Number(segmentPattern.exec(name)![1]), segment ?? 0);
      spool.nextSegment = Math.max(spool.nextSegment, number + 1);
      if (events.length === 0 && tornBytes === 0) {
        // Prepared or recycled and never written: a spare when it is whole.
        if (segment !== undefined && bytes.length === spool.segmentBytes && spool.spares.length < maxSpares) spool.spares.push(name);
        else await unlink(path.join(options.dir, name));
        continue;
      }
      if (tornBytes > 0)
        options.logger?.warn(
          { segment: name, validBytes, tornBytes, events: events.length },
          'spool segment ends in a torn or corrupt record; the rest is ignored',
        );
      const firstSeq = spool.nextSeq;
      spool.nextSeq += events.length;
      spool.segments.push({ name, number, file: undefined, bytes: validBytes, capacity: 0, firstSeq, endSeq: spool.nextSeq });
      if (events.length) spool.groups.push({ endSeq: spool.nextSeq, bytes: validBytes, at: now });
      spool.heldEvents += events.length;
      spool.heldBytes += validBytes;
      recovered.push(...events);
    }
    // Segments with nothing to replay go now; the others once their events are released.
    await spool.deleteReleased();
    spool.prepareNext();
    return { spool, recovered };
  }

  stats(): SpoolStats {
    const oldest = this.groups[this.groupHead];
    const [writeP50Ms, writeP99Ms] = this.writeTimes.p50p99();
    const [appendP50Ms, appendP99Ms] = this.appendTimes.p50p99();
    return {
      events: this.heldEvents,
      bytes: this.heldBytes,
      oldestAgeMs: oldest ? Date.now() - oldest.at : 0,
      segments: this.segments.length,
      ...this.counters,
      waiting: this.waiters.length,
      writeP50Ms,
      writeP99Ms,
      appendP50Ms,
      appendP99Ms,
    };
  }

  /** `alone` says whether the server is serving one call and nothing else now (see flush). */
  writeInPlaceWhen(alone: () => boolean): void {
    this.alone = alone;
  }

  /**
   * Resolves once every event is durable on disk; `admit` receives them first, synchronously and in
   * spool order (the order release() counts in). Waits while the spool is full; rejects with
   * SPOOL_UNAVAILABLE when the disk fails or room does not come within `waitMs`, and then nothing
   * of it was admitted. A `linger`ing append starts no write of its own: it rides with the next
   * append that does, or is written after `lingerMs`; for events that need only be durable before
   * a later durable step of the same call (the request before the call it leads to).
   */
  append(events: EventInput[], admit: (events: EventInput[]) => void, linger = false): Promise<void> {
    if (this.closed) return Promise.reject(spoolUnavailable('The spool is closed; nothing more is accepted.'));
    if (events.length === 0) return Promise.resolve();
    const redactor = this.options.redactor;
    const records = events.map((e) => frame(redactor ? redactForSpool(e, redactor) : e));
    const bytes = records.reduce((n, r) => n + r.length, 0);
    let settle!: { resolve: () => void; reject: (error: unknown) => void };
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    const pending: Pending = {
      records,
      events,
      bytes,
      calledAt: linger ? undefined : performance.now(),
      resolve: () => {
        admit(events);
        settle.resolve();
      },
      reject: settle.reject,
      done,
    };
    if (this.waiters.length === 0 && this.hasRoom(pending)) this.enter(pending, linger);
    else this.wait(pending);
    return pending.done;
  }

  /**
   * Resolves once every append let in so far is durable, writing the lingering ones now; rejects
   * with SPOOL_UNAVAILABLE when the newest of them could not be made durable.
   */
  durable(): Promise<void> {
    // An append still waiting for room is newer than any let in.
    const newest = this.waiters.at(-1)?.pending ?? this.newest;
    if (!newest) return Promise.resolve();
    if (this.queue.length) this.startFlush();
    return newest.done;
  }

  /** An oversized append is let in alone, so it never waits forever. */
  private hasRoom(p: Pending): boolean {
    if (this.heldEvents === 0) return true;
    return this.heldEvents + p.events.length <= this.options.maxEvents && this.heldBytes + p.bytes <= this.options.maxBytes;
  }

  private enter(p: Pending, linger = false): void {
    this.heldEvents += p.events.length;
    this.heldBytes += p.bytes;
    this.queue.push(p);
    this.newest = p;
    void p.done.then(
      () => this.forget(p),
      () => this.forget(p),
    );
    if (!linger) this.startFlush();
    else if (!this.flushing && !this.lingerTimer) this.lingerTimer = setTimeout(() => this.startFlush(), this.lingerMs);
  }

  private forget(p: Pending): void {
    if (this.newest === p) this.newest = undefined;
  }

  private startFlush(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.flushing ??= this.flush();
  }

  private wait(pending: Pending): void {
    const waiter: Waiter = { pending, timer: undefined };
    waiter.timer = setTimeout(() => {
      const i = this.waiters.indexOf(waiter);
      if (i < 0) return;
      this.waiters.splice(i, 1);
      this.counters.refused++;
      pending.reject(
        spoolUnavailable(`The spool stayed full (${this.heldEvents} events, ${this.heldBytes} bytes not yet in the Ledger) for ${this.waitMs} ms.`),
      );
      this.admitWaiters();
    }, this.waitMs);
    this.waiters.push(waiter);
  }

  private admitWaiters(): void {
    while (this.waiters.length && this.hasRoom(this.waiters[0]!.pending)) {
      const { pending, timer } = this.waiters.shift()!;
      clearTimeout(timer);
      this.enter(pending);
    }
  }

  /**
   * One write and one sync at a time; appends that arrive meanwhile share the next. A lone append
   * (with whatever lingered) into an idle spool, while the server serves one call alone, is written
   * on this thread: there the thread pool's round trip costs more than the disk (bench dispatch,
   * sequential: disk write p50 0.47–0.57 ms through the pool, 0.27 ms in place). Otherwise the write
   * goes through the pool and the event loop serves the other calls while the disk works (writing
   * in place whenever the spool was idle cut throughput at 32 concurrent from ~1,300 to ~800 calls/s).
   */
  private async flush(): Promise<void> {
    let fresh = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0);
        const records = batch.flatMap((p) => p.records);
        const bytes = batch.reduce((n, p) => n + p.bytes, 0);
        const count = batch.reduce((n, p) => n + p.events.length, 0);
        // Lingering appends ride along and do not count: they are the same call's earlier events.
        const inPlace = fresh && this.io.writeNow !== undefined && this.alone?.() === true && batch.filter((p) => p.calledAt !== undefined).length === 1;
        fresh = false;
        let segment: Segment | undefined;
        try {
          segment = await this.activeSegment(bytes);
          for (const record of records) stamp(record, segment.number);
          const started = performance.now();
          await this.writeRecords(segment.file!, records, bytes, segment.bytes, inPlace);
          await this.io.sync(segment.file!);
          this.writeTimes.add(performance.now() - started);
        } catch (error) {
          await this.abandonWrite(segment, error);
          this.heldEvents -= count;
          this.heldBytes -= bytes;
          this.counters.refused += batch.length;
          const refusal = spoolUnavailable(`The spool could not make the record durable (${(error as Error).message}).`);
          for (const p of batch) p.reject(refusal);
          this.admitWaiters();
          continue;
        }
        segment.bytes += bytes;
        this.nextSeq += count;
        segment.endSeq = this.nextSeq;
        this.groups.push({ endSeq: this.nextSeq, bytes, at: Date.now() });
        this.counters.writes++;
        this.counters.appends += batch.length;
        const now = performance.now();
        for (const p of batch) {
          if (p.calledAt !== undefined) this.appendTimes.add(now - p.calledAt);
          p.resolve();
        }
      }
    } finally {
      this.flushing = undefined;
      // Appends that lingered while this write ran go with the next one now.
      if (this.queue.length) this.startFlush();
    }
  }

  /** One group's records at `position`: vectored where the io can, else concatenated (an io a test replaces). */
  private async writeRecords(file: FileHandle, records: Buffer[], bytes: number, position: number, inPlace: boolean): Promise<void> {
    const io = this.io;
    if (inPlace) {
      if (io.writevNow) io.writevNow(file, records, position);
      else io.writeNow!(file, Buffer.concat(records, bytes), position);
    } else if (io.writev) await io.writev(file, records, position);
    else await io.write(file, Buffer.concat(records, bytes), position);
  }

  /**
   * The segment a write of `bytes` goes to: the current one while it fits in its prepared space
   * (or the segment is empty), else the prepared next one, whose successor is then prepared.
   */
  private async activeSegment(bytes: number): Promise<Segment> {
    const last = this.segments.at(-1);
    if (last?.file && (last.bytes === SEGMENT_HEADER || last.bytes + bytes <= last.capacity)) return last;
    if (last?.file) {
      const full = last.file;
      last.file = undefined;
      void full.close().catch((error) => this.options.logger?.error({ err: error, segment: last.name }, 'closing a full spool segment failed'));
    }
    const next = this.prepared ?? this.prepare();
    this.prepared = undefined;
    let ready: PreparedSegment;
    try {
      ready = await next;
    } finally {
      this.prepareNext();
    }
    const segment: Segment = {
      name: ready.name,
      number: ready.number,
      file: ready.file,
      bytes: SEGMENT_HEADER,
      capacity: ready.capacity,
      firstSeq: this.nextSeq,
      endSeq: this.nextSeq,
    };
    this.segments.push(segment);
    return segment;
  }

  /** Begins preparing the next segment in the background (a spare recycled, else a new one zero-filled), unless one is ready or under way. */
  private prepareNext(): void {
    if (this.prepared || this.closed) return;
    const next = this.prepare();
    // A failure is met (and reported) by the write that needs the segment.
    next.catch(() => {});
    this.prepared = next;
  }

  private prepare(): Promise<PreparedSegment> {
    const spare = this.spares.shift();
    const number = this.nextSegment++;
    if (spare) return recycleSegment(this.options.dir, spare, number, this.segmentBytes, this.io);
    return prepareSegment(this.options.dir, number, this.segmentBytes, this.io);
  }

  /** After a failed write or sync the file's tail is unknown: cut it back to what was durable and begin a new segment. */
  private async abandonWrite(segment: Segment | undefined, error: unknown): Promise<void> {
    this.options.logger?.error({ err: error, segment: segment?.name }, 'spool write failed; the appends waiting for it are refused');
    if (!segment?.file) return;
    const file = segment.file;
    segment.file = undefined;
    // Cut short, it is no longer a whole segment to recycle.
    segment.capacity = 0;
    try {
      await file.truncate(segment.bytes);
      await file.sync();
    } catch (cut) {
      this.options.logger?.error({ err: cut, segment: segment.name }, 'could not cut a failed spool segment back; a replay may find its last records');
    }
    await file.close().catch(() => {});
  }

  /** `count` more events, in spool order, are committed to the Ledger (or given up by it). */
  release(count: number): void {
    if (count <= 0) return;
    this.releasedSeq += count;
    while (this.groupHead < this.groups.length && this.groups[this.groupHead]!.endSeq <= this.releasedSeq) {
      const group = this.groups[this.groupHead++]!;
      this.heldBytes -= group.bytes;
    }
    if (this.groupHead > 1024 && this.groupHead * 2 > this.groups.length) {
      this.groups.splice(0, this.groupHead);
      this.groupHead = 0;
    }
    this.heldEvents -= count;
    void this.deleteReleased().catch((error) => this.options.logger?.error({ err: error }, 'deleting a committed spool segment failed'));
    this.admitWaiters();
  }

  /** Closed segments whose events are all released are kept as spares (up to a few, whole ones) or deleted. */
  private async deleteReleased(): Promise<void> {
    while (this.segments.length && !this.segments[0]!.file && this.segments[0]!.endSeq <= this.releasedSeq) {
      const segment = this.segments.shift()!;
      const whole = segment.capacity === this.segmentBytes && segment.bytes <= segment.capacity;
      if (whole && !this.closed && this.spares.length < maxSpares) {
        await markSpare(this.options.dir, segment.name, this.io);
        // close() may have removed the spares while the mark was written: this one goes too.
        if (this.closed) await unlink(path.join(this.options.dir, segment.name));
        else this.spares.push(segment.name);
      } else await unlink(path.join(this.options.dir, segment.name));
    }
  }

  /**
   * Stops accepting. Segments whose events are all released are deleted (the last one too); the
   * others stay for the next start to replay. Waiting appends are refused.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.queue.length) this.startFlush();
    for (const { pending, timer } of this.waiters.splice(0)) {
      clearTimeout(timer);
      pending.reject(spoolUnavailable('The spool closed before there was room.'));
    }
    await this.flushing;
    for (const segment of this.segments) {
      await segment.file?.close();
      segment.file = undefined;
    }
    // The next segment, never written, goes.
    const unused = await this.prepared?.catch(() => undefined);
    this.prepared = undefined;
    if (unused) {
      await unused.file.close();
      await unlink(path.join(this.options.dir, unused.name));
    }
    await this.deleteReleased();
    for (const spare of this.spares.splice(0)) await unlink(path.join(this.options.dir, spare));
    await releaseLock(this.options.dir);
  }
}
