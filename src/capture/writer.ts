// The batched background ledger writer: what the boundary records reaches Ledger.append here.
//
// The rule: a write is synchronous exactly where the other side can retry (an inbound webhook's
// sender gets 503 + Retry-After and sends again: writeNow), and nowhere else (enqueue: no response
// waits on the database).
//
// With a spool (DIRLEDGER_SPOOL=durable, the default) enqueue resolves once the events are on disk
// and a crash loses nothing enqueued: the next start replays them. Without one (memory):
// what a crash can lose is every event enqueued and not yet committed, which is `stats().queued` at
// the moment of the crash (the batch in flight may or may not have committed; its ids make a
// replay harmless). Nothing else: a full queue slows callers instead of dropping, a failed append
// is retried with the same ids, and stop() flushes within its grace and counts what it abandoned.
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCode, badInput } from '../errors.ts';
import { type EventInput, parseEvent } from '../ledger/input.ts';
import type { AppendResult } from '../ledger/ledger.ts';
import type { BatchInput } from '../ledger/input.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Spool } from '../ledger/spool.ts';

/** The one thing the writer needs of the Ledger. */
export type AppendTarget = { append(batch: BatchInput): Promise<AppendResult> };

export type LedgerWriterOptions = {
  /** Collector id of the background batches; default unique to this process. */
  collector?: string;
  /** A batch is cut at this many events... */
  batchMaxEvents?: number;
  /** ...or this long after its first event was queued, whichever comes first. */
  batchMaxDelayMs?: number;
  /** Events held in memory at most; beyond it enqueue waits for room. */
  queueMaxEvents?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Attempts for an error that is not "database unavailable" before the batch is split to isolate a bad event. */
  maxAttemptsOnError?: number;
  /** writeNow gives up (DATABASE_UNAVAILABLE) after this long. */
  writeNowTimeoutMs?: number;
  logger?: Logger;
  /**
   * Durable mode: enqueue resolves once the events are on disk in the spool, which bounds what
   * is held (back-pressure) and lets a segment go once its events committed.
   */
  spool?: Spool;
};

export type LedgerWriterStats = {
  /** Events in memory now, waiting or in flight: what a crash would lose. */
  queued: number;
  /** Highest `queued` seen. */
  maxQueued: number;
  /** Callers waiting for room now, and in total. */
  waiting: number;
  slowedCallers: number;
  /** Events committed (inserted, or already present) by background batches. */
  written: number;
  duplicates: number;
  batches: number;
  /** Append attempts that failed, and attempts made again after a failure. */
  failedBatches: number;
  retried: number;
  /** Events given up on: a single event the ledger refused repeatedly, or abandoned when stop()'s grace ran out. */
  dropped: number;
  /** Synchronous writes that committed and that failed. */
  syncWritten: number;
  syncFailed: number;
  /** The collector position of the last committed background batch. */
  position: number;
};

type Pending = { events: EventInput[]; resolve: () => void; reject: (error: unknown) => void };
type Batch = { events: EventInput[]; position: number; attempts: number };

const defaults = {
  batchMaxEvents: 500,
  // Each batch costs a statement, a round trip and a block of the event loop whatever its size:
  // at 50 ms a dispatched call's added p50 was 0.2 ms lower than at 25 (bench dispatch, 3 pairs).
  batchMaxDelayMs: 50,
  queueMaxEvents: 20_000,
  retryBaseMs: 100,
  retryMaxMs: 5_000,
  maxAttemptsOnError: 5,
  writeNowTimeoutMs: 10_000,
};

export class LedgerWriter {
  readonly collector: string;
  private readonly options: typeof defaults;
  private readonly logger?: Logger;
  private readonly spool?: Spool;
  private readonly buffer: EventInput[] = [];
  private readonly waiters: Pending[] = [];
  private readonly flushWaiters: { target: number; resolve: () => void }[] = [];
  /** Events ever let into the buffer, and events whose delivery has finished (committed or dropped). */
  private admitted = 0;
  private done = 0;
  private inFlight = 0;
  private cutPosition = 0;
  private committedPosition = 0;
  private timer: NodeJS.Timeout | undefined;
  private wakeSleeper: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly recordings = new Set<Promise<unknown>>();
  private abandoned = false;
  private readonly counters: Omit<LedgerWriterStats, 'queued' | 'waiting' | 'position'> = {
    maxQueued: 0,
    slowedCallers: 0,
    written: 0,
    duplicates: 0,
    batches: 0,
    failedBatches: 0,
    retried: 0,
    dropped: 0,
    syncWritten: 0,
    syncFailed: 0,
  };

  private readonly target: AppendTarget;
  constructor(target: AppendTarget, options: LedgerWriterOptions = {}) {
    this.target = target;
    const { collector, logger, spool, ...rest } = options;
    this.spool = spool;
    this.options = { ...defaults, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) };
    this.collector = collector ?? `capture:${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.logger = logger;
  }

  stats(): LedgerWriterStats {
    return { ...this.counters, queued: this.queued, waiting: this.waiters.length, position: this.committedPosition };
  }

  private get queued(): number {
    return this.buffer.length + this.inFlight;
  }

  /**
   * Queues events for the background writer. Resolves at once while the queue has room, which is
   * the normal case; when it is full, resolves once there is room (the caller is slowed, nothing is
   * dropped). Rejects with BAD_INPUT for an event the ledger would refuse.
   */
  enqueue(events: EventInput | EventInput[]): Promise<void> {
    let list: EventInput[];
    try {
      list = this.accepted(events);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.take(list);
  }

  /**
   * Like enqueue, for events that need only be durable before the call's next durable step or its
   * answer: with a spool they ride with the next enqueue (or `durable()`), sparing a disk sync of
   * their own. Whoever answers the caller awaits `durable()` first. Throws (not rejects) for an
   * event the ledger would refuse.
   */
  stage(events: EventInput | EventInput[]): Promise<void> {
    return this.take(this.accepted(events), true);
  }

  /** Resolves once everything enqueued or staged so far is durable (at once without a spool). */
  durable(): Promise<void> {
    return this.spool ? this.spool.durable() : Promise.resolve();
  }

  /** The events validated; throws BAD_INPUT for one the ledger would refuse, DATABASE_UNAVAILABLE once stopped. */
  private accepted(events: EventInput | EventInput[]): EventInput[] {
    const list = (Array.isArray(events) ? events : [events]).map(validate);
    if (this.stopped) throw new DomainError(ErrorCode.DATABASE_UNAVAILABLE, 'The ledger writer has stopped; nothing more is accepted.');
    return list;
  }

  private take(list: EventInput[], linger = false): Promise<void> {
    if (list.length === 0) return Promise.resolve();
    if (this.spool) return this.spool.append(list, (durable) => this.admit(durable), linger);
    if (this.waiters.length === 0 && this.hasRoomFor(list.length)) {
      this.admit(list);
      return Promise.resolve();
    }
    this.counters.slowedCallers++;
    return new Promise<void>((resolve, reject) => this.waiters.push({ events: list, resolve, reject }));
  }

  /** An oversized group is let in alone, so it can never wait forever. */
  private hasRoomFor(count: number): boolean {
    return this.queued + count <= this.options.queueMaxEvents || this.queued === 0;
  }

  private admit(events: EventInput[]): void {
    this.buffer.push(...events);
    this.admitted += events.length;
    if (this.queued > this.counters.maxQueued) this.counters.maxQueued = this.queued;
    this.schedule();
  }

  private admitWaiters(): void {
    while (this.waiters.length && this.hasRoomFor(this.waiters[0]!.events.length)) {
      const next = this.waiters.shift()!;
      this.admit(next.events);
      next.resolve();
    }
  }

  private schedule(): void {
    if (this.running || this.abandoned || this.buffer.length === 0) return;
    if (this.buffer.length >= this.options.batchMaxEvents || this.flushWaiters.length > 0) {
      this.clearTimer();
      this.running = this.drain();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (!this.running) this.running = this.drain();
      }, this.options.batchMaxDelayMs);
    }
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One batch in flight at a time, so positions commit in order. */
  private async drain(): Promise<void> {
    try {
      while (this.buffer.length > 0 && !this.abandoned) {
        const events = this.buffer.splice(0, this.options.batchMaxEvents);
        this.inFlight = events.length;
        this.cutPosition += events.length;
        await this.deliver({ events, position: this.cutPosition, attempts: 0 });
        this.inFlight = 0;
        this.finished(events.length);
        this.admitWaiters();
        // A partial batch waits for the time threshold unless someone is flushing.
        if (this.buffer.length < this.options.batchMaxEvents && this.flushWaiters.length === 0) break;
      }
    } finally {
      this.inFlight = 0;
      this.running = undefined;
      this.schedule();
    }
  }

  /** Events a spool replay found on disk: moved to the Ledger before anything new (they are already durable). */
  recover(events: EventInput[]): void {
    if (events.length) this.admit(events);
  }

  private finished(count: number): void {
    this.done += count;
    this.spool?.release(count);
    for (let i = this.flushWaiters.length - 1; i >= 0; i--) {
      if (this.flushWaiters[i]!.target <= this.done) this.flushWaiters.splice(i, 1)[0]!.resolve();
    }
  }

  private async deliver(batch: Batch): Promise<void> {
    for (;;) {
      if (this.abandoned) return;
      try {
        const result = await this.target.append({ collector: this.collector, position: BigInt(batch.position), events: batch.events });
        this.counters.batches++;
        this.counters.written += batch.events.length;
        this.counters.duplicates += result.duplicates;
        this.committedPosition = Math.max(this.committedPosition, batch.position);
        return;
      } catch (error) {
        this.counters.failedBatches++;
        batch.attempts++;
        const code = error instanceof DomainError ? error.code : undefined;
        if (code !== ErrorCode.DATABASE_UNAVAILABLE && batch.attempts >= this.options.maxAttemptsOnError) {
          await this.isolate(batch, error);
          return;
        }
        const wait = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** Math.min(batch.attempts - 1, 16));
        this.logger?.warn(
          { collector: this.collector, position: batch.position, events: batch.events.length, attempts: batch.attempts, code, retryInMs: wait },
          'ledger append failed; retrying the same batch',
        );
        await this.sleep(wait);
        if (this.abandoned) return;
        this.counters.retried++;
      }
    }
  }

  /** A batch the ledger keeps refusing for a reason other than availability: halve it until the bad event stands alone. */
  private async isolate(batch: Batch, error: unknown): Promise<void> {
    if (batch.events.length === 1) {
      this.counters.dropped++;
      this.logger?.error(
        { collector: this.collector, eventId: batch.events[0]!.id, err: error },
        'the ledger refused one event repeatedly; it is dropped and counted',
      );
      return;
    }
    const half = Math.ceil(batch.events.length / 2);
    await this.deliver({ events: batch.events.slice(0, half), position: batch.position - (batch.events.length - half), attempts: 0 });
    await this.deliver({ events: batch.events.slice(half), position: batch.position, attempts: 0 });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(wake, ms);
      const self = this;
      function wake() {
        clearTimeout(timer);
        self.wakeSleeper = undefined;
        resolve();
      }
      this.wakeSleeper = wake;
    });
  }

  /** Writes everything queued before the call (callers waiting for room included); resolves once it is committed. */
  flush(): Promise<void> {
    const target = this.admitted + this.waiters.reduce((n, w) => n + w.events.length, 0);
    if (target <= this.done || this.abandoned) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.flushWaiters.push({ target, resolve });
      this.clearTimer();
      this.schedule();
    });
  }

  /**
   * Stops accepting and flushes for at most `graceMs`. What is still in memory after that is
   * abandoned, counted in `dropped` and returned (a batch in flight may still commit).
   */
  /** A recording still to come (a streamed answer's events, written when its stream ends): stop() waits for it within its grace. */
  track(recording: Promise<unknown>): void {
    this.recordings.add(recording);
    void recording.then(
      () => this.recordings.delete(recording),
      () => this.recordings.delete(recording),
    );
  }

  async stop(graceMs = 10_000): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    if (this.recordings.size) {
      await Promise.race([Promise.allSettled([...this.recordings]), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    this.stopped = true;
    const expired = await Promise.race([this.flush().then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)))]);
    clearTimeout(timer);
    if (!expired) return 0;
    this.abandoned = true;
    this.clearTimer();
    const unwritten = this.buffer.length + this.inFlight + this.waiters.reduce((n, w) => n + w.events.length, 0);
    this.buffer.length = 0;
    if (this.spool) {
      // Durable: nothing is lost, the spool keeps them for the next start.
      this.wakeSleeper?.();
      this.logger?.warn({ collector: this.collector, unwritten }, 'ledger writer stopped with events unwritten; the spool replays them at the next start');
      return 0;
    }
    const lost = unwritten;
    this.counters.dropped += lost;
    const refusal = new DomainError(ErrorCode.DATABASE_UNAVAILABLE, 'The ledger writer stopped before these events could be written.');
    for (const waiter of this.waiters.splice(0)) waiter.reject(refusal);
    for (const waiter of this.flushWaiters.splice(0)) waiter.resolve();
    this.wakeSleeper?.();
    this.logger?.error({ collector: this.collector, lost }, 'ledger writer stopped with events unwritten');
    return lost;
  }

  /**
   * The synchronous path, for doors whose sender retries (webhooks): awaited, in its own batch,
   * and on failure throws DATABASE_UNAVAILABLE (details.retryAfterSeconds) so the door can answer
   * 503 + Retry-After. Not retried here: the sender's retry carries the same event ids.
   */
  async writeNow(events: EventInput[]): Promise<AppendResult> {
    const list = events.map(validate);
    if (list.length === 0) throw badInput('writeNow needs at least one event.');
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        // No position: concurrent synchronous writes commit in any order, so one would mean nothing.
        this.target.append({ collector: `${this.collector}:now`, events: list }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new DomainError(ErrorCode.DATABASE_UNAVAILABLE, `The ledger did not answer within ${this.options.writeNowTimeoutMs} ms.`)),
            this.options.writeNowTimeoutMs,
          );
        }),
      ]);
      this.counters.syncWritten += list.length;
      return result;
    } catch (error) {
      this.counters.syncFailed++;
      if (error instanceof DomainError && error.code === ErrorCode.DATABASE_UNAVAILABLE) {
        throw new DomainError(ErrorCode.DATABASE_UNAVAILABLE, error.message, { retryAfterSeconds: 1 });
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

function validate(event: EventInput): EventInput {
  const parsed = parseEvent(event);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw badInput(`Invalid ledger event ${JSON.stringify(String(event?.id ?? ''))}: ${issue.path.join('.')}: ${issue.message}.`, {
    field: issue.path.join('.'),
  });
}

/** The writer's settings from configuration. */
export function writerOptionsFromConfig(
  config: Pick<Config, 'CAPTURE_BATCH_MAX_EVENTS' | 'CAPTURE_BATCH_DELAY_MS' | 'CAPTURE_QUEUE_MAX_EVENTS'>,
  logger?: Logger,
): LedgerWriterOptions {
  return {
    batchMaxEvents: config.CAPTURE_BATCH_MAX_EVENTS,
    batchMaxDelayMs: config.CAPTURE_BATCH_DELAY_MS,
    queueMaxEvents: config.CAPTURE_QUEUE_MAX_EVENTS,
    ...(logger && { logger }),
  };
}
