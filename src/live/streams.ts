// The registry of streamed answers as the ledger receives them. The stream tee (src/capture/tee.ts)
// publishes each chunk here; `streamCapture` subscribers read them. A late subscriber first gets
// the chunks so far, then the live ones, then the END. Finished streams are kept `retainMs` for
// late subscribers, then forgotten. Each stream remembers the task of the invocation that published
// its first chunk; a task-scoped subscriber sees only its task's streams, and another task's stream
// looks to it exactly like one that has not started (it waits, and learns nothing).
//
// Wiring a door (the API for dispatch):
//   const { response, recorded } = teeResponse(upstream, {
//     cutoffMs, payloadMaxBytes, publish: (chunk) => services.streams.publish(actionId, chunk),
//   });
// `publish` never throws and never blocks the tee; chunk bytes are redacted here before they leave
// the process, across chunk edges (a StreamRedactor per stream: the bytes that may begin a secret
// wait for the next chunk, and what is still held at the end goes out on the final chunk); the
// final hash is computed over the whole, as the ledger stores it. Redaction is lazy: while nobody
// listens, a chunk is only copied; the first subscriber redacts the copies kept so far in order,
// as they would have been live, and from then on each chunk is redacted as it arrives. The final
// chunk is built when someone reads it, so a stream nobody follows is never redacted here.
import { createHash } from 'node:crypto';
import { DomainError, ErrorCode } from '../errors.ts';
import type { SecretRedactor, StreamRedactor } from '../secrets/redact.ts';
import { currentInvocation } from '../context/request.ts';
import type { StreamChunk, StreamCut, StreamState } from '../capture/tee.ts';
import { cancellable } from './tail.ts';

/** One chunk as subscribers see it; the last one has `final: true` with the stored state and hash. */
export type LiveChunk = {
  actionId: string;
  sequence: number;
  /** Byte offset of this chunk in the stream as received. */
  offset: number;
  /**
   * The chunk's bytes, secrets replaced by `[NAME]`. Bytes that may begin a secret wait for the next
   * chunk, so a chunk may carry fewer bytes than arrived, or none; the final chunk carries what was
   * still held. All chunks' bytes together are the stream as sent on.
   */
  bytes: Buffer;
  final: boolean;
  /** On the final chunk: COMPLETE, PARTIAL or MISSING, as stored. */
  state: StreamState | null;
  /** On the final chunk: the SHA-256 of the stored (redacted) bytes; null when MISSING. */
  sha256: string | null;
  /** On the final chunk: the total bytes received. */
  size: number | null;
  cut: StreamCut | null;
};

export type StreamRegistryOptions = {
  /** How long a finished stream stays for late subscribers. */
  retainMs: number;
  /** Bytes kept per stream for late subscribers (the ledger keeps no more either). */
  retainMaxBytes: number;
  /** Chunks a subscriber may hold undelivered before it is closed with SUBSCRIBER_TOO_SLOW. */
  bufferMax: number;
};

/** Queued for a subscriber when the stream ends; it builds the final chunk when it reads this far. */
const ENDED = Symbol('ended');

/** `task`: a task-scoped subscriber's task (absent: it may read every stream). */
type Listener = { task?: string; push(chunk: LiveChunk | typeof ENDED): boolean };

type RawChunk = { sequence: number; offset: number; bytes: Buffer };
type StreamEnd = Extract<StreamChunk, { type: 'END' }>;

/** Raw bytes a stream nobody follows may keep unredacted; past them it is redacted as it goes, so a catch-up redacts no more at once. */
const LAZY_MAX_BYTES = 256 * 1024;

class Stream {
  /** The redacted chunks kept for late subscribers, once redaction has started. */
  readonly chunks: LiveChunk[] = [];
  /** Copies of the raw chunks kept, for the catch-up and the stored hash; dropped once neither needs them. */
  raw: RawChunk[] = [];
  /** Raw bytes kept so far; past `retainMaxBytes` the prefix is no longer complete. */
  keptBytes = 0;
  truncated = false;
  /** Set once a reader needs redacted chunks: every chunk so far has gone through it, in order. */
  redacting: StreamRedactor | undefined;
  end: StreamEnd | undefined;
  /** Built from `end` when first read. */
  final: LiveChunk | undefined;
  /** Set by the first chunk: the task of the invocation that published it. */
  owner: { task: string | undefined } | undefined;
  readonly listeners = new Set<Listener>();
  timer: NodeJS.Timeout | undefined;
  readonly actionId: string;
  constructor(actionId: string) {
    this.actionId = actionId;
  }
}

export class StreamRegistry {
  private readonly streams = new Map<string, Stream>();

  private readonly redactor: SecretRedactor;
  private readonly options: StreamRegistryOptions;
  private readonly lazyMaxBytes: number;
  constructor(redactor: SecretRedactor, options: StreamRegistryOptions) {
    this.redactor = redactor;
    this.options = options;
    this.lazyMaxBytes = Math.min(LAZY_MAX_BYTES, options.retainMaxBytes);
  }

  /** Streams currently known (live or retained). */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Records one chunk of the stream of `actionId` and hands it to its subscribers. Never throws.
   * `task` defaults to the current invocation's (the tee publishes inside it).
   */
  publish(actionId: string, chunk: StreamChunk, task?: string): void {
    const stream = this.streamOf(actionId);
    if (stream.end) return;
    stream.owner ??= { task: task ?? currentInvocation()?.task };
    // Another task's stream: the listener is dropped and keeps waiting, as for a stream that never starts.
    for (const listener of stream.listeners) if (!visible(stream, listener.task)) stream.listeners.delete(listener);
    if (chunk.type === 'CHUNK') this.chunk(stream, chunk);
    else this.end(stream, chunk);
  }

  private chunk(stream: Stream, chunk: Extract<StreamChunk, { type: 'CHUNK' }>): void {
    const size = chunk.bytes.byteLength;
    const kept = !stream.truncated && stream.keptBytes + size <= this.options.retainMaxBytes;
    // Copied: the sender may reuse the chunk's memory once it has passed.
    const raw = kept || stream.listeners.size ? Buffer.from(chunk.bytes) : undefined;
    if (!stream.redacting) {
      if (raw && kept && stream.listeners.size === 0 && stream.keptBytes + size <= this.lazyMaxBytes) {
        stream.raw.push({ sequence: chunk.sequence, offset: chunk.offset, bytes: raw });
        stream.keptBytes += size;
        return;
      }
      this.startRedacting(stream);
    }
    const live = liveChunk(stream.actionId, chunk.sequence, chunk.offset, stream.redacting!.push(raw ?? chunk.bytes));
    if (kept) {
      stream.chunks.push(live);
      stream.raw.push({ sequence: chunk.sequence, offset: chunk.offset, bytes: raw! });
      stream.keptBytes += size;
    } else {
      stream.truncated = true;
      // The stored hash of a truncated stream is the raw one: nothing needs the copies any more.
      stream.raw = [];
    }
    for (const listener of stream.listeners) if (!listener.push(live)) stream.listeners.delete(listener);
  }

  private end(stream: Stream, end: StreamEnd): void {
    stream.end = end;
    stream.timer = setTimeout(() => this.forget(stream), this.options.retainMs);
    stream.timer.unref();
    for (const listener of stream.listeners) if (!listener.push(ENDED)) stream.listeners.delete(listener);
  }

  /** Redacts the raw chunks kept so far, in order, as they would have been live; then each chunk as it arrives. */
  private startRedacting(stream: Stream): void {
    const redacting = this.redactor.stream();
    for (const raw of stream.raw) stream.chunks.push(liveChunk(stream.actionId, raw.sequence, raw.offset, redacting.push(raw.bytes)));
    stream.redacting = redacting;
  }

  /** The final chunk, built once: what redaction still held, and the stored hash. */
  private finalOf(stream: Stream): LiveChunk {
    if (stream.final) return stream.final;
    const end = stream.end!;
    if (!stream.redacting) this.startRedacting(stream);
    stream.final = {
      actionId: stream.actionId,
      sequence: end.sequence,
      offset: end.size,
      bytes: stream.redacting!.end(),
      final: true,
      state: end.state,
      sha256: end.state === 'MISSING' ? null : this.storedHash(stream, end.sha256),
      size: end.size,
      cut: end.cut ?? null,
    };
    stream.raw = [];
    return stream.final;
  }

  /**
   * The stream's chunks: those so far, then live ones, ending with the final chunk. Waits for a
   * stream that has not started yet. Ends with a DomainError item when the subscriber is too slow.
   * With `task` (a task-scoped reader) only a stream published under that task is delivered.
   */
  subscribe(actionId: string, task?: string): AsyncIterableIterator<LiveChunk | { end: DomainError }> {
    const queue: (LiveChunk | typeof ENDED)[] = [];
    let waiting: (() => void) | undefined;
    let overflowed = false;
    let closed = false;
    let lastSequence = -1;
    const wake = () => {
      const w = waiting;
      waiting = undefined;
      w?.();
    };
    const listener: Listener = {
      ...(task !== undefined && { task }),
      push: (chunk) => {
        if (closed) return false;
        if (queue.length >= this.options.bufferMax) {
          overflowed = true;
          queue.length = 0;
          wake();
          return false;
        }
        queue.push(chunk);
        wake();
        return true;
      },
    };
    const stream = this.streamOf(actionId);
    // The chunks so far, then live: one synchronous step, so none is missed or repeated.
    if (!stream.owner) stream.listeners.add(listener);
    else if (visible(stream, task)) {
      if (!stream.redacting) this.startRedacting(stream);
      queue.push(...stream.chunks);
      if (stream.end) queue.push(ENDED);
      else stream.listeners.add(listener);
    }
    const bufferMax = this.options.bufferMax;
    const forgetIfUnused = () => this.forgetIfUnused(stream);
    // Built by the first reader that gets this far, off the publisher's path (the tee's end).
    const final = () => this.finalOf(stream);
    async function* generate(): AsyncGenerator<LiveChunk | { end: DomainError }> {
      try {
        for (;;) {
          const chunk = queue.shift();
          if (chunk === ENDED) {
            yield final();
            return;
          }
          if (chunk) {
            lastSequence = chunk.sequence;
            yield chunk;
            continue;
          }
          if (overflowed) {
            yield {
              end: new DomainError(
                ErrorCode.SUBSCRIBER_TOO_SLOW,
                `The stream subscription fell more than ${bufferMax} chunks behind and was closed; subscribe again to read the stream from its start.`,
                { actionId, sequence: lastSequence },
              ),
            };
            return;
          }
          if (closed) return;
          await new Promise<void>((resolve) => (waiting = resolve));
        }
      } finally {
        closed = true;
        stream.listeners.delete(listener);
        forgetIfUnused();
      }
    }
    return cancellable(generate(), () => {
      closed = true;
      wake();
    });
  }

  /** Drops every stream (server stop). */
  close(): void {
    for (const stream of this.streams.values()) clearTimeout(stream.timer);
    this.streams.clear();
  }

  private streamOf(actionId: string): Stream {
    let stream = this.streams.get(actionId);
    if (!stream) {
      stream = new Stream(actionId);
      this.streams.set(actionId, stream);
    }
    return stream;
  }

  /** The hash of the bytes as the ledger stores them: redacted, then hashed (Ledger.prepare does the same). */
  private storedHash(stream: Stream, rawSha256: string): string {
    if (stream.truncated) return rawSha256;
    const raw = Buffer.concat(stream.raw.map((r) => r.bytes));
    const stored = this.redactor.bytes(raw, new Set());
    return stored === raw ? rawSha256 : createHash('sha256').update(stored).digest('hex');
  }

  private forget(stream: Stream): void {
    if (this.streams.get(stream.actionId) === stream) this.streams.delete(stream.actionId);
  }

  /** A stream nobody published to and nobody waits for leaves no entry behind. */
  private forgetIfUnused(stream: Stream): void {
    if (!stream.owner && stream.listeners.size === 0) this.forget(stream);
  }
}

function liveChunk(actionId: string, sequence: number, offset: number, bytes: Buffer): LiveChunk {
  return { actionId, sequence, offset, bytes, final: false, state: null, sha256: null, size: null, cut: null };
}

/** Whether a subscriber scoped to `task` (undefined: unscoped) may see this started stream. */
function visible(stream: Stream, task: string | undefined): boolean {
  return task === undefined || stream.owner?.task === task;
}
