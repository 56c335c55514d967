// The stream tee: a streamed answer goes to its client and to the ledger, which read independently.
// The ledger's branch does the reading; the client's branch is fed as it pulls. When the client
// goes away, the ledger keeps reading for up to the cut-off (STREAM_CUTOFF_MS, 25 s by default):
// a stream that finishes is COMPLETE, one cut off or broken is PARTIAL with what arrived, and one
// past the payload limit is MISSING with its size (memory is bounded by the limit).
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { PayloadInput } from '../ledger/input.ts';
import { BoundedBytes } from './payload.ts';

export type { StreamChunk, StreamCut, StreamState } from '../context/stream.ts';
import type { StreamChunk, StreamCut, StreamState } from '../context/stream.ts';

export type TeeResult = {
  state: StreamState;
  /** Bytes that arrived, whether or not they were kept. */
  size: number;
  /** SHA-256 of every byte that arrived (raw, before redaction). */
  sha256: string;
  /** The bytes, unless past the payload limit. */
  bytes: Buffer | null;
  clientDisconnected: boolean;
  cut?: StreamCut;
  error?: string;
  /** The ledger payload for these bytes. */
  payload: PayloadInput;
};

export type TeeOptions = {
  /** How long the ledger keeps reading after the client has gone. */
  cutoffMs: number;
  /** Bytes kept at most; a longer stream is MISSING. */
  payloadMaxBytes: number;
  /** Called for every chunk as it arrives, then once with the end. Exceptions are swallowed. */
  publish?: (chunk: StreamChunk) => void;
  /** Aborted when the client disconnects, for doors that learn it from the socket rather than a cancel. */
  clientSignal?: AbortSignal;
  /**
   * Awaited after the source ended and before the client's branch closes, so a client that read the
   * whole stream knows what `recorded` led to (its record durable); a rejection errors the client's branch.
   */
  beforeClose?: (result: TeeResult) => Promise<void>;
};

export type Tee = {
  /** What the client reads. */
  client: ReadableStream<Uint8Array>;
  /** Settles when the ledger's branch has finished: end, cut-off, error or limit. */
  recorded: Promise<TeeResult>;
};

type Source = ReadableStream<Uint8Array> | Readable | AsyncIterable<Uint8Array>;

/**
 * Publishes one stream's chunks in order (sequence, offset), then its END with the SHA-256 of every
 * byte published. It publishes in the async context it was made in (the invocation's), whoever
 * delivers the bytes, and a subscriber's failure never stops the recording.
 */
export class StreamPublisher {
  private sequence = 0;
  private offset = 0;
  private readonly hash = createHash('sha256');
  private readonly publish: ((chunk: StreamChunk) => void) | undefined;

  constructor(publish: ((chunk: StreamChunk) => void) | undefined) {
    this.publish = publish && AsyncLocalStorage.bind(publish);
  }

  chunk(bytes: Uint8Array): void {
    this.hash.update(bytes);
    this.send({ type: 'CHUNK', sequence: this.sequence++, offset: this.offset, bytes });
    this.offset += bytes.length;
  }

  /** Publishes the END and returns the SHA-256 of every byte published. */
  end(state: StreamState, cut?: StreamCut): string {
    const sha256 = this.hash.digest('hex');
    this.send({ type: 'END', sequence: this.sequence++, size: this.offset, state, sha256, ...(cut && { cut }) });
    return sha256;
  }

  private send(chunk: StreamChunk): void {
    try {
      this.publish?.(chunk);
    } catch {
      // A subscriber's failure never stops the recording.
    }
  }
}

function readerOf(source: Source): ReadableStreamDefaultReader<Uint8Array> {
  if (source instanceof ReadableStream) return source.getReader();
  if (source instanceof Readable) return (Readable.toWeb(source) as ReadableStream<Uint8Array>).getReader();
  return (Readable.toWeb(Readable.from(source)) as ReadableStream<Uint8Array>).getReader();
}

export function teeStream(source: Source, options: TeeOptions): Tee {
  const reader = readerOf(source);
  const kept = new BoundedBytes(options.payloadMaxBytes);
  // Chunks are pulled by whoever reads the client's branch: the publisher publishes in the tee's context (the invocation's).
  const publisher = new StreamPublisher(options.publish);
  let clientGone = false;
  let finished: TeeResult | undefined;
  let settle!: (result: TeeResult) => void;
  const recorded = new Promise<TeeResult>((resolve) => (settle = resolve));
  let reading: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  let clientController: ReadableStreamDefaultController<Uint8Array> | undefined;

  const finish = (state: 'COMPLETE' | 'PARTIAL', cut?: StreamCut, error?: unknown) => {
    if (finished) return finished;
    const bytes = kept.bytes();
    const finalState: StreamState = bytes ? state : 'MISSING';
    const sha256 = publisher.end(finalState, cut);
    finished = {
      state: finalState,
      size: kept.size,
      sha256,
      bytes,
      clientDisconnected: clientGone,
      ...(cut && { cut }),
      ...(error !== undefined && { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
      payload: kept.payload(state),
    };
    settle(finished);
    return finished;
  };

  /** The one reader of the source: every chunk is kept and published before anyone else sees it. */
  const next = async (): Promise<ReadableStreamReadResult<Uint8Array>> => {
    if (!reading) {
      reading = reader.read().then((result) => {
        reading = undefined;
        if (!result.done && !finished) {
          kept.push(result.value);
          publisher.chunk(result.value);
        }
        return result;
      });
    }
    return reading;
  };

  /** The source failed because the client went away (a runner's stream errored with the client's abort): not a source error. */
  const byClient = (error: unknown) => Boolean(options.clientSignal?.aborted) && error === options.clientSignal!.reason;
  const drainAfterDisconnect = async () => {
    if (clientGone || finished) return;
    clientGone = true;
    let timer: NodeJS.Timeout | undefined;
    const cutoff = new Promise<'CUTOFF'>((resolve) => (timer = setTimeout(() => resolve('CUTOFF'), options.cutoffMs)));
    try {
      for (;;) {
        const result = await Promise.race([next(), cutoff]);
        if (result === 'CUTOFF') {
          finish('PARTIAL', 'CUTOFF');
          await reader.cancel('the client disconnected and the stream ran past the cut-off').catch(() => {});
          return;
        }
        if (result.done) {
          finish('COMPLETE');
          return;
        }
      }
    } catch (error) {
      if (byClient(error)) finish('PARTIAL');
      else finish('PARTIAL', 'SOURCE_ERROR', error);
    } finally {
      clearTimeout(timer);
    }
  };

  const client = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        clientController = controller;
      },
      async pull(controller) {
        if (clientGone) return;
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await next();
        } catch (error) {
          if (byClient(error)) finish('PARTIAL');
          else finish('PARTIAL', 'SOURCE_ERROR', error);
          if (!clientGone) controller.error(error);
          return;
        }
        if (clientGone) return;
        if (!result.done) {
          controller.enqueue(result.value);
          return;
        }
        const ended = finish('COMPLETE');
        try {
          await options.beforeClose?.(ended);
        } catch (error) {
          if (!clientGone) controller.error(error);
          return;
        }
        if (!clientGone) controller.close();
      },
      cancel() {
        void drainAfterDisconnect();
      },
    },
    { highWaterMark: 0 },
  );

  options.clientSignal?.addEventListener(
    'abort',
    () => {
      if (finished || clientGone) return;
      void drainAfterDisconnect();
      try {
        clientController?.error(options.clientSignal!.reason);
      } catch {
        // Already closed.
      }
    },
    { once: true },
  );

  return { client, recorded };
}

const streamedAnswers = new WeakSet<Response>();

/** Marks a door's answer as streamed (e.g. a chunked upstream passed through), so the boundary tees it whatever its type. */
export function markStreamed(response: Response): Response {
  streamedAnswers.add(response);
  return response;
}

/** An answer to tee rather than read whole: an event stream, or one marked by its door. */
export function isStreamedAnswer(response: Response): boolean {
  // `body` last: asking for it builds a stream over a body held as bytes.
  return ((response.headers.get('content-type') ?? '').startsWith('text/event-stream') || streamedAnswers.has(response)) && Boolean(response.body);
}

/** Tees a streamed Response: the client gets a Response with the same status and headers over its branch. */
export function teeResponse(response: Response, options: TeeOptions): { response: Response; recorded: Promise<TeeResult> } {
  if (!response.body) {
    const empty = new BoundedBytes(options.payloadMaxBytes);
    const sha256 = new StreamPublisher(options.publish).end('COMPLETE');
    return {
      response,
      recorded: Promise.resolve({ state: 'COMPLETE', size: 0, sha256, bytes: Buffer.alloc(0), clientDisconnected: false, payload: empty.payload() }),
    };
  }
  const { client, recorded } = teeStream(response.body, options);
  return { response: new Response(client, { status: response.status, statusText: response.statusText, headers: response.headers }), recorded };
}
