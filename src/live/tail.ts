// The live ledger: ONE tail reader per process follows the ledger by commit-ordered position
// (`position > head`, in pages) and fans each event out in memory to the subscriptions whose
// filter matches (FilterIndex). A subscription from an old cursor pages the database itself until
// it meets the tail, then joins it in one synchronous step, so there is no gap and no duplicate at
// the seam. Positions are taken under the commit lock, so no smaller position can become visible
// after a larger one has been read: `position > head` never skips a commit.
// With no subscription open the tail is idle: wakes and polls read nothing. The first subscription
// after that reads max(position) again and the tail follows from there (nobody was owed the
// events in between; a replay pages them itself).
import type { LedgerEvent, PrismaClient } from '../generated/prisma/client.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { encodeCursor } from '../ledger/cursor.ts';
import { filterWhere, type LedgerFilter } from '../ledger/filter.ts';
import type { Logger } from '../logger.ts';
import type { Caller } from '../context/request.ts';
import { FilterIndex } from './filter-index.ts';
import type { LiveSignal } from './signal.ts';

export type LiveOptions = {
  /** Rows per database read, for the tail and for replays. */
  pageSize: number;
  /** The safety poll: the tail reads at least this often even without a signal. */
  pollMs: number;
  /** Events a subscription may hold undelivered; past it, it is closed with SUBSCRIBER_TOO_SLOW. */
  bufferMax: number;
};

/** What a live iterator yields: an event, or the reason it ends (thrown by the GraphQL resolver). */
export type LiveItem = LedgerEvent | LiveEnd;
export type LiveEnd = { end: DomainError };
export const isLiveEnd = (item: object): item is LiveEnd => 'end' in item;

export type LiveStats = {
  subscribers: number;
  following: number;
  /** False while no subscription is open: the tail reads nothing then. */
  active: boolean;
  head: string | null;
  /** Database reads of the tail (head reads included); replays are not counted. */
  reads: number;
  rowsRead: number;
  wakes: number;
  /** Wakes for a position already read, which cost no read. */
  wakesSkipped: number;
  polls: number;
  dropped: number;
};

class Subscriber {
  /** Highest position handed to this subscriber's queue (the seam's de-duplication). */
  queuedUpTo: bigint;
  /** Highest position the consumer has taken (what SUBSCRIBER_TOO_SLOW reports). */
  deliveredUpTo: bigint;
  private queue: LedgerEvent[] = [];
  private head = 0;
  private waiting: (() => void) | undefined;
  overflowed = false;
  closed = false;

  readonly filter: LedgerFilter;
  readonly caller: Caller;
  private readonly max: number;
  constructor(filter: LedgerFilter, caller: Caller, max: number, from: bigint) {
    this.filter = filter;
    this.caller = caller;
    this.max = max;
    this.queuedUpTo = from;
    this.deliveredUpTo = from;
  }

  get pending(): number {
    return this.queue.length - this.head;
  }

  push(event: LedgerEvent): boolean {
    if (this.closed || event.position <= this.queuedUpTo) return true;
    if (this.pending >= this.max) {
      this.overflowed = true;
      this.queue = [];
      this.head = 0;
      this.wakeConsumer();
      return false;
    }
    this.queue.push(event);
    this.queuedUpTo = event.position;
    this.wakeConsumer();
    return true;
  }

  take(): LedgerEvent | undefined {
    if (this.head >= this.queue.length) return undefined;
    const event = this.queue[this.head++]!;
    // Drained: drop the taken rows now, so a subscriber never keeps old rows alive.
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.deliveredUpTo = event.position;
    return event;
  }

  wait(): Promise<void> {
    return new Promise((resolve) => (this.waiting = resolve));
  }

  wakeConsumer(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }
}

export class LedgerTail {
  private readonly index = new FilterIndex<Subscriber>();
  private readonly all = new Set<Subscriber>();
  /** The highest position dispatched; null until started. */
  private head: bigint | null = null;
  private starting: Promise<void> | undefined;
  /** Following the ledger: true from the first subscription until the last one closes. */
  private active = false;
  private resuming: Promise<void> | undefined;
  private reading = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribeSignal: (() => void) | undefined;
  private closed = false;
  private readonly counters = { reads: 0, rowsRead: 0, wakes: 0, wakesSkipped: 0, polls: 0, dropped: 0 };
  private readonly idleWaiters = new Set<() => void>();

  private readonly prisma: PrismaClient;
  private readonly signal: LiveSignal;
  private readonly logger: Logger;
  readonly options: LiveOptions;
  constructor(prisma: PrismaClient, signal: LiveSignal, logger: Logger, options: LiveOptions) {
    this.prisma = prisma;
    this.signal = signal;
    this.logger = logger;
    this.options = options;
  }

  stats(): LiveStats {
    return { subscribers: this.all.size, following: this.index.size, active: this.active, head: this.head?.toString() ?? null, ...this.counters };
  }

  /** Listens to the signal and starts the safety poll, once; both do nothing while the tail is idle. */
  start(): Promise<void> {
    this.starting ??= (async () => {
      this.unsubscribeSignal = this.signal.onWake((position) => {
        this.counters.wakes++;
        if (position !== undefined && this.head !== null && position <= this.head) this.counters.wakesSkipped++;
        else this.wake();
      });
      const poll = () => {
        if (this.closed) return;
        if (this.active) {
          this.counters.polls++;
          this.wake();
        }
        this.timer = setTimeout(poll, this.options.pollMs);
        this.timer.unref();
      };
      this.timer = setTimeout(poll, this.options.pollMs);
      this.timer.unref();
    })().catch((error) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  /**
   * Makes the tail follow the ledger: after an idle spell it reads max(position) first, so it goes on
   * from the present, not from where it stopped. Concurrent callers share that one read.
   */
  private async follow(): Promise<void> {
    await this.start();
    if (this.active) return;
    this.resuming ??= (async () => {
      try {
        const rows = await this.prisma.$queryRaw<{ head: bigint | null }[]>`SELECT max(position) AS head FROM ledger_event`;
        this.counters.reads++;
        const head = rows[0]?.head === null || rows[0]?.head === undefined ? 0n : BigInt(rows[0].head);
        if (this.head === null || head > this.head) this.head = head;
        this.active = true;
      } finally {
        this.resuming = undefined;
      }
    })();
    await this.resuming;
  }

  /** Reads everything committed past the head now (coalesced: a wake during a read reads again after it). */
  wake(): void {
    if (this.closed || !this.active || this.head === null) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.readLoop();
  }

  private async readLoop(): Promise<void> {
    try {
      do {
        this.again = false;
        const rows = await this.prisma.ledgerEvent.findMany({
          where: { position: { gt: this.head! } },
          orderBy: { position: 'asc' },
          take: this.options.pageSize,
        });
        this.counters.reads++;
        this.counters.rowsRead += rows.length;
        for (const row of rows) this.dispatch(row);
        if (rows.length === this.options.pageSize) this.again = true;
      } while (this.again && this.active && !this.closed);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) this.logger.error({ err: error }, 'live tail read failed; retrying at the next wake or poll');
    } finally {
      this.reading = false;
      for (const w of this.idleWaiters) w();
      this.idleWaiters.clear();
    }
  }

  private dispatch(row: LedgerEvent): void {
    // A read begun before an idle spell can end after the head was read again: skip what it passed.
    if (row.position <= this.head!) return;
    this.head = row.position;
    this.index.match(row, (sub) => {
      if (!sub.push(row)) {
        this.counters.dropped++;
        this.index.delete(sub);
      }
    });
  }

  /**
   * The events matching `filter`: after `after` (replayed from the database, then live) or, without
   * it, from the current head on. Ends with a LiveEnd when the subscriber falls more than
   * `bufferMax` events behind (SUBSCRIBER_TOO_SLOW, with the cursor of the last event it took).
   */
  subscribe(filter: LedgerFilter, after: bigint | undefined, caller: Caller): AsyncIterableIterator<LiveItem> {
    const sub = new Subscriber(filter, caller, this.options.bufferMax, after ?? 0n);
    return cancellable(this.deliver(sub, after), () => {
      sub.closed = true;
      sub.wakeConsumer();
    });
  }

  private async *deliver(sub: Subscriber, after: bigint | undefined): AsyncGenerator<LiveItem> {
    const filter = sub.filter;
    let registered = false;
    this.all.add(sub);
    try {
      if (sub.closed) return;
      await this.follow();
      if (after === undefined) {
        sub.queuedUpTo = sub.deliveredUpTo = this.head!;
        this.index.add(sub);
        registered = true;
      } else {
        // Replay: page the database up to the tail's head, then join it with no await in between.
        let cursor = after;
        for (;;) {
          if (cursor >= this.head!) {
            sub.queuedUpTo = sub.deliveredUpTo = cursor;
            this.index.add(sub);
            registered = true;
            break;
          }
          const upTo = this.head!;
          const rows = await this.prisma.ledgerEvent.findMany({
            where: { AND: [filterWhere(filter), { position: { gt: cursor, lte: upTo } }] },
            orderBy: { position: 'asc' },
            take: this.options.pageSize,
          });
          for (const row of rows) {
            if (sub.closed) return;
            sub.deliveredUpTo = row.position;
            yield row;
          }
          cursor = rows.length === this.options.pageSize ? rows.at(-1)!.position : upTo;
        }
      }
      for (;;) {
        const event = sub.take();
        if (event) {
          yield event;
          continue;
        }
        if (sub.overflowed) {
          yield { end: tooSlow(sub.deliveredUpTo, this.options.bufferMax) };
          return;
        }
        if (this.closed || sub.closed) return;
        await sub.wait();
      }
    } catch (error) {
      if (error instanceof DomainError) yield { end: error };
      else if (isDatabaseUnavailable(error)) {
        yield {
          end: new DomainError(ErrorCode.DATABASE_UNAVAILABLE, 'The ledger database is unavailable; resume from your last cursor.', {
            cursor: encodeCursor(sub.deliveredUpTo),
          }),
        };
      } else throw error;
    } finally {
      sub.closed = true;
      this.all.delete(sub);
      if (registered) this.index.delete(sub);
      // The last one out: stop reading until someone subscribes again.
      if (this.all.size === 0) this.active = false;
    }
  }

  /** Resolves once the tail is not reading (tests use it to wait for a quiet moment). */
  idle(): Promise<void> {
    if (!this.reading) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.add(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.unsubscribeSignal?.();
    for (const sub of this.all) sub.wakeConsumer();
    await this.idle();
  }
}

/**
 * An async generator whose return() also works while it is parked on an await: `cancel` wakes it,
 * so a client that unsubscribes from an idle subscription is released at once, not at the next event.
 */
export function cancellable<T>(generator: AsyncGenerator<T>, cancel: () => void): AsyncIterableIterator<T> {
  return {
    next: () => generator.next(),
    return: (value?: unknown) => {
      cancel();
      return generator.return(value as T);
    },
    throw: (error?: unknown) => {
      cancel();
      return generator.throw(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

function tooSlow(deliveredUpTo: bigint, bufferMax: number): DomainError {
  return new DomainError(
    ErrorCode.SUBSCRIBER_TOO_SLOW,
    `The subscription fell more than ${bufferMax} events behind and was closed; subscribe again with after: extensions.cursor to resume with nothing lost.`,
    { cursor: encodeCursor(deliveredUpTo) },
  );
}
