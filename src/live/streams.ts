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
// final hash is computed over the whole, as the ledger stores it.
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

/** `task`: a task-scoped subscriber's task (absent: it may read every stream). */
type Listener = { task?: string; push(chunk: LiveChunk): boolean };

class Stream {
  readonly chunks: LiveChunk[] = [];
  /** The raw bytes of `chunks`, for the stored hash (redaction runs over the whole, as the ledger's does). */
  readonly raw: Buffer[] = [];
  /** Raw bytes kept so far; past `retainMaxBytes` the prefix is no longer complete. */
  keptBytes = 0;
  truncated = false;
  final: LiveChunk | undefined;
  /** Set by the first chunk: the task of the invocation that published it. */
  owner: { task: string | undefined } | undefined;
  readonly listeners = new Set<Listener>();
  timer: NodeJS.Timeout | undefined;
  readonly actionId: string;
  readonly redacting: StreamRedactor;
  constructor(actionId: string, redacting: StreamRedactor) {
    this.actionId = actionId;
    this.redacting = redacting;
  }
}

export class StreamRegistry {
  private readonly streams = new Map<string, Stream>();

  private readonly redactor: SecretRedactor;
  private readonly options: StreamRegistryOptions;
  constructor(redactor: SecretRedactor, options: StreamRegistryOptions) {
    this.redactor = redactor;
    this.options = options;
  }

  /** Streams currently known (live or retained). */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Records one chunk of the stream of `actionId` and hands it to its subscribers. Never throws.
   * `task` defaults to the current invocation's (the tee publishes inside it).
   */
  publish(actionId: string, chunk: StreamChunk, task: string | undefined = currentInvocation()?.task): void {
    const stream = this.streamOf(actionId);
    if (stream.final) return;
    stream.owner ??= { task };
    let live: LiveChunk;
    if (chunk.type === 'CHUNK') {
      const raw = Buffer.from(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.byteLength);
      live = {
        actionId,
        sequence: chunk.sequence,
        offset: chunk.offset,
        bytes: Buffer.from(stream.redacting.push(raw)),
        final: false,
        state: null,
        sha256: null,
        size: null,
        cut: null,
      };
      if (!stream.truncated && stream.keptBytes + raw.length <= this.options.retainMaxBytes) {
        stream.chunks.push(live);
        stream.raw.push(Buffer.from(raw));
        stream.keptBytes += raw.length;
      } else stream.truncated = true;
    } else {
      live = {
        actionId,
        sequence: chunk.sequence,
        offset: chunk.size,
        bytes: stream.redacting.end(),
        final: true,
        state: chunk.state,
        sha256: chunk.state === 'MISSING' ? null : this.storedHash(stream, chunk.sha256),
        size: chunk.size,
        cut: chunk.cut ?? null,
      };
      stream.final = live;
      stream.timer = setTimeout(() => this.forget(stream), this.options.retainMs);
      stream.timer.unref();
    }
    for (const listener of stream.listeners) {
      // Another task's stream: the listener is dropped and keeps waiting, as for a stream that never starts.
      if (!visible(stream, listener.task) || !listener.push(live)) stream.listeners.delete(listener);
    }
  }

  /**
   * The stream's chunks: those so far, then live ones, ending with the final chunk. Waits for a
   * stream that has not started yet. Ends with a DomainError item when the subscriber is too slow.
   * With `task` (a task-scoped reader) only a stream published under that task is delivered.
   */
  subscribe(actionId: string, task?: string): AsyncIterableIterator<LiveChunk | { end: DomainError }> {
    const queue: LiveChunk[] = [];
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
      queue.push(...stream.chunks);
      if (stream.final) queue.push(stream.final);
      else stream.listeners.add(listener);
    }
    const bufferMax = this.options.bufferMax;
    const forgetIfUnused = () => this.forgetIfUnused(stream);
    async function* generate(): AsyncGenerator<LiveChunk | { end: DomainError }> {
      try {
        for (;;) {
          const chunk = queue.shift();
          if (chunk) {
            lastSequence = chunk.sequence;
            yield chunk;
            if (chunk.final) return;
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
      stream = new Stream(actionId, this.redactor.stream());
      this.streams.set(actionId, stream);
    }
    return stream;
  }

  /** The hash of the bytes as the ledger stores them: redacted, then hashed (Ledger.prepare does the same). */
  private storedHash(stream: Stream, rawSha256: string): string {
    if (stream.truncated) return rawSha256;
    const raw = Buffer.concat(stream.raw);
    const stored = this.redactor.bytes(raw, new Set());
    return stored === raw ? rawSha256 : createHash('sha256').update(stored).digest('hex');
  }

  private forget(stream: Stream): void {
    if (this.streams.get(stream.actionId) === stream) this.streams.delete(stream.actionId);
  }

  /** A stream nobody published to and nobody waits for leaves no entry behind. */
  private forgetIfUnused(stream: Stream): void {
    if (!stream.final && stream.chunks.length === 0 && stream.listeners.size === 0 && !stream.truncated) this.forget(stream);
  }
}

/** Whether a subscriber scoped to `task` (undefined: unscoped) may see this started stream. */
function visible(stream: Stream, task: string | undefined): boolean {
  return task === undefined || stream.owner?.task === task;
}
