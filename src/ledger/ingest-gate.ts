// Admission of collectors' batches (the ingest and OTLP doors, and GraphQL appendBatch): how many
// bodies are read, parsed and appended at once, and how many of their bytes. A request waits here before its body is read, so
// its bytes stay in the socket (back-pressure); one that cannot be admitted in time is refused with
// 503 and Retry-After before anything is read or written, never dropped after being acknowledged.
import type { Config } from '../config.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { BatchInput } from './input.ts';

export type IngestGateLimits = {
  /** Batches at once: appends hold the commit lock one at a time, so a few keep both cores busy. */
  slots: number;
  /** Body bytes admitted at once; a larger body is admitted alone. */
  maxBytes: number;
  /** Requests waiting at most; one more is refused at once. */
  maxWaiting: number;
  /** How long a request waits at most before it is refused. */
  maxWaitMs: number;
};

/**
 * Batches read, parsed and appended at once per app; each batch held costs several times its body
 * in memory. On PostgreSQL appends hold the commit lock one at a time anyway; three in flight keep
 * both cores busy (one batch under the lock, one storing its blobs, one being parsed and hashed
 * here). PGlite runs every statement on this thread, so one batch in the database and one being
 * read and prepared is all the overlap there is.
 */
const INGEST_SLOTS = { postgres: 3, pglite: 2 } as const;
/** Requests waiting for the gate at most (each holds only its socket); one more is refused at once. */
const INGEST_MAX_WAITING = 256;

/** The app's one ingest gate, shared by every door that appends collectors' batches. */
export function ingestGateFor(kind: keyof typeof INGEST_SLOTS, config: Pick<Config, 'INGEST_INFLIGHT_MAX_BYTES' | 'INGEST_WAIT_MAX_MS'>): IngestGate {
  return new IngestGate({
    slots: INGEST_SLOTS[kind],
    maxBytes: config.INGEST_INFLIGHT_MAX_BYTES,
    maxWaiting: INGEST_MAX_WAITING,
    maxWaitMs: config.INGEST_WAIT_MAX_MS,
  });
}

/** What a batch parsed elsewhere (a GraphQL appendBatch) holds, for the gate: its payloads, and a little per event. */
export function batchBytesOf(batch: BatchInput): number {
  let bytes = 0;
  for (const e of batch.events) bytes += 512 + (e.payload.text?.length ?? 0) + (e.payload.base64?.length ?? 0);
  return bytes;
}

type Waiter = { bytes: number; admit: () => void; timer?: NodeJS.Timeout };

export class IngestGate {
  private active = 0;
  private bytes = 0;
  private readonly waiting: Waiter[] = [];
  private readonly limits: IngestGateLimits;

  constructor(limits: IngestGateLimits) {
    this.limits = limits;
  }

  /** Body bytes and batches admitted now, and requests waiting (for /healthz and tests). */
  get load(): { active: number; bytes: number; waiting: number } {
    return { active: this.active, bytes: this.bytes, waiting: this.waiting.length };
  }

  /** Runs `work` once `bytes` (what it will hold of the body) fit; refuses with SERVER_BUSY when the wait is too long. */
  async run<T>(bytes: number, work: () => Promise<T>): Promise<T> {
    const held = Math.min(Math.max(0, bytes), this.limits.maxBytes);
    if (this.waiting.length > 0 || !this.fits(held)) await this.wait(held);
    else this.take(held);
    try {
      return await work();
    } finally {
      this.active--;
      this.bytes -= held;
      this.admitNext();
    }
  }

  private fits(bytes: number): boolean {
    return this.active === 0 || (this.active < this.limits.slots && this.bytes + bytes <= this.limits.maxBytes);
  }

  private take(bytes: number): void {
    this.active++;
    this.bytes += bytes;
  }

  private wait(bytes: number): Promise<void> {
    if (this.waiting.length >= this.limits.maxWaiting) return Promise.reject(busy(this.limits.maxWaitMs, `${this.waiting.length} batches are already waiting`));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { bytes, admit: resolve };
      waiter.timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(busy(this.limits.maxWaitMs, `no room within ${this.limits.maxWaitMs} ms`));
        this.admitNext(); // a large body that timed out at the head no longer holds back smaller ones
      }, this.limits.maxWaitMs);
      this.waiting.push(waiter);
    });
  }

  /** First come, first admitted: a large body at the head is not overtaken by smaller ones forever. */
  private admitNext(): void {
    for (let head = this.waiting[0]; head && this.fits(head.bytes); head = this.waiting[0]) {
      this.waiting.shift();
      clearTimeout(head.timer);
      this.take(head.bytes);
      head.admit();
    }
  }
}

function busy(maxWaitMs: number, why: string): DomainError {
  const retryAfterSeconds = Math.max(1, Math.ceil(maxWaitMs / 1000));
  return new DomainError(ErrorCode.SERVER_BUSY, `The ingest door is busy (${why}); nothing was read or written. Retry later.`, { retryAfterSeconds });
}
