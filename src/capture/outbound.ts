// Outbound capture: every HTTP request the process makes through undici (global fetch, undici's
// own fetch/request) inside an invocation becomes two events, request OUT and response IN, linked
// by the invocation's action id, with the bytes exactly as they passed on the wire (a compressed
// response is kept compressed; its content-encoding header says so). One exception: a file sent
// as the body (an fs read stream: a deploy) is recorded by reference, ARTIFACT with its file URI,
// size and SHA-256; its bytes pass on untouched and are never copied into the ledger.
//
// Record before send: the request body is read whole first (at most `payloadMaxBytes`; a larger one
// is refused unsent, and recorded so), its REQUEST/OUT recorded (durable, with the spool), and only
// then are the same bytes sent. A spool that cannot take it fails the request with nothing sent.
//
// The events are recorded in the async context of the request that started the exchange, even
// though undici calls back from the context of whichever request opened the pooled connection.
//
// An exchange the runner's MCP client makes carries the runner's tag (`outboundFor`): the tool,
// contract and step on its events, and the answer to its `tools/call` published as it arrives.
//
// Not captured: anything outside an invocation or with capture switched off (the runner records
// its own exchange); excluded origins (the object store); node:http / node:https requests (the AWS
// SDK, pg's raw sockets), which never pass through undici.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, ReadStream } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent, Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { DomainError, ErrorCode } from '../errors.ts';
import type { EventInput, PayloadInput } from '../ledger/input.ts';
import type { Logger } from '../logger.ts';
import { currentInvocation, eventFields, type Invocation } from '../context/request.ts';
import { BoundedBytes, bytesPayload } from './payload.ts';
import { StreamPublisher, type StreamState } from './tee.ts';

export type OutboundRecorder = (event: EventInput) => Promise<void> | void;

export type OutboundCaptureOptions = {
  /** Where the two events go: the background writer's enqueue. Runs in the async context the exchange started in. */
  record: OutboundRecorder;
  /** A request body larger than this is refused unsent (PAYLOAD_TOO_LARGE); a response body larger is recorded as MISSING with its size. */
  payloadMaxBytes: number;
  /** Origins (scheme://host:port) never recorded, such as the S3 endpoint. */
  excludeOrigins?: string[];
  logger?: Logger;
};

export type OutboundCapture = {
  /** Exchanges recorded, and capture failures (the request itself is never affected by one). */
  stats(): { exchanges: number; errors: number };
  /** Restores the global dispatcher that was there before. */
  uninstall(): Promise<void>;
};

type Headers = Record<string, string | string[]>;
type DispatchHandler = Dispatcher.DispatchHandler;
type Controller = Parameters<NonNullable<DispatchHandler['onResponseStart']>>[0];

/** A URL field holds at most this much (the ledger's limit); a longer URL is cut and flagged. */
const URL_MAX = 16_384;

let installed = false;

/**
 * Installs the capture as undici's global dispatcher (shared with Node's built-in fetch through the
 * global symbol), composed over the previous one when it is an undici v7 dispatcher.
 */
export function installOutboundCapture(options: OutboundCaptureOptions): OutboundCapture {
  if (installed) throw new Error('Outbound capture is already installed in this process.');
  installed = true;
  const previous = getGlobalDispatcher();
  const own = previous instanceof Dispatcher ? undefined : new Agent();
  const base = own ?? previous;
  const excluded = new Set((options.excludeOrigins ?? []).map((o) => new URL(o).origin));
  const counts = { exchanges: 0, errors: 0 };
  const failed = (error: unknown) => {
    counts.errors++;
    options.logger?.error({ err: error }, 'outbound capture failed; the request went on unrecorded');
  };

  const interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
    const invocation = currentInvocation();
    if (!invocation?.captureOutbound) return dispatch(opts, handler);
    let exchange: Exchange;
    try {
      const origin = typeof opts.origin === 'string' ? opts.origin : (opts.origin?.toString() ?? '');
      if (excluded.has(new URL(origin).origin)) return dispatch(opts, handler);
      exchange = new Exchange(invocation, opts, options, failed);
      counts.exchanges++;
    } catch (error) {
      failed(error);
      return dispatch(opts, handler);
    }
    const wrapped = exchange.handler(handler);
    exchange.prepare(opts.body).then(
      (body) => {
        try {
          dispatch({ ...opts, body: body as Dispatcher.DispatchOptions['body'] }, wrapped);
        } catch (error) {
          wrapped.onResponseError?.(refusedController(error as Error), error as Error);
        }
      },
      // Refused unsent: recorded as such when the spool took the REQUEST/OUT, else (the spool itself failed) nothing more to record.
      (error: Error) => (exchange.requestRecorded ? wrapped : handler).onResponseError?.(refusedController(error), error),
    );
    return true;
  };

  setGlobalDispatcher(base.compose(interceptor));
  return {
    stats: () => ({ ...counts }),
    async uninstall() {
      setGlobalDispatcher(previous);
      installed = false;
      await own?.close();
    },
  };
}

/** One request and its response: builds the two events as the bytes pass. */
class Exchange {
  private readonly id = randomUUID();
  /** `options.record`, bound to the async context the exchange started in. */
  private readonly record: OutboundRecorder;
  private readonly responseBody: BoundedBytes;
  private readonly sentAt = new Date();
  private readonly url: string;
  private readonly urlCut: boolean;
  private readonly method: string;
  private readonly requestHeaders: Headers;
  /** What the REQUEST/OUT says of the body: its bytes, a file's reference, NONE or MISSING. */
  private requestPayload: PayloadInput = { state: 'NONE' };
  /** The body's bytes when it was read whole (to tell a runner's `tools/call`). */
  private requestBytes: Buffer | undefined;
  /** Why the request was refused unsent (on its REQUEST/OUT). */
  private notSent: string | undefined;
  /** The REQUEST/OUT was recorded (or its recording failed for a reason other than the spool). */
  requestRecorded = false;
  private response: { status: number; headers: Headers; at: Date } | undefined;
  /** Set for the answer to a runner's `tools/call` when the door publishes its stream. */
  private published: StreamPublisher | undefined;

  private readonly invocation: Invocation;
  private readonly options: OutboundCaptureOptions;
  private readonly failed: (error: unknown) => void;
  constructor(invocation: Invocation, opts: Dispatcher.DispatchOptions, options: OutboundCaptureOptions, failed: (error: unknown) => void) {
    this.invocation = invocation;
    this.options = options;
    this.failed = failed;
    this.record = AsyncLocalStorage.bind(options.record);
    this.responseBody = new BoundedBytes(options.payloadMaxBytes);
    const full = new URL(opts.path, opts.origin).toString();
    this.urlCut = full.length > URL_MAX;
    this.url = this.urlCut ? full.slice(0, URL_MAX) : full;
    this.method = opts.method;
    this.requestHeaders = normaliseHeaders(opts.headers);
  }

  private base(): Omit<EventInput, 'id' | 'kind' | 'direction' | 'occurredAt' | 'payload'> {
    const of = this.invocation.outboundFor;
    return {
      ...eventFields(this.invocation),
      ...(of && { tool: of.tool }),
      method: this.method,
      url: this.url,
      metadata: {
        capture: 'outbound',
        exchange: this.id,
        door: this.invocation.door,
        ...(this.invocation.caller && { caller: this.invocation.caller }),
        ...(of && { via: of.via, ...(of.contract && { contract: of.contract }), ...(of.step && { step: of.step }) }),
        ...(this.urlCut && { urlTruncatedAt: URL_MAX }),
      },
    };
  }

  /**
   * Reads the body whole, records the REQUEST/OUT, and resolves with the body to send: the same
   * bytes. Rejects with nothing sent when the body is over the limit or its source fails (both
   * recorded, the reason on the REQUEST/OUT), or with SPOOL_UNAVAILABLE when the REQUEST/OUT cannot
   * be recorded. Any other capture failure is counted and the request goes on.
   */
  async prepare(body: unknown): Promise<unknown> {
    let sent: unknown;
    let refusal: Error | undefined;
    try {
      sent = await this.readBody(body);
    } catch (error) {
      refusal = error instanceof Error ? error : new Error(String(error));
      this.notSent = `${refusal instanceof DomainError ? refusal.code : refusal.name}: ${refusal.message}`;
    }
    const event: EventInput = {
      ...this.base(),
      id: `${this.id}:request`,
      kind: 'REQUEST',
      direction: 'OUT',
      headers: this.requestHeaders,
      occurredAt: this.sentAt,
      payload: this.requestPayload,
    };
    if (this.notSent) event.metadata = { ...event.metadata, notSent: this.notSent };
    try {
      await this.record(event);
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.SPOOL_UNAVAILABLE) {
        if (body instanceof ReadStream) body.destroy();
        throw error;
      }
      this.failed(error);
    }
    this.requestRecorded = true;
    if (refusal) throw refusal;
    return sent;
  }

  private async readBody(body: unknown): Promise<unknown> {
    if (body === null || body === undefined) return body;
    if (body instanceof ReadStream && (typeof body.path === 'string' || Buffer.isBuffer(body.path))) return this.readFile(body, body.path.toString());
    const max = this.options.payloadMaxBytes;
    if (typeof body === 'string' || body instanceof Uint8Array) {
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      if (bytes.length > max) throw this.tooLarge(bytes.length);
      this.keep(Buffer.from(bytes));
      return body;
    }
    if (body instanceof Blob) {
      if (body.size > max) throw this.tooLarge(body.size);
      const bytes = Buffer.from(await body.arrayBuffer());
      this.keep(bytes);
      return bytes;
    }
    const iterate = (body as AsyncIterable<unknown>)[Symbol.asyncIterator] ?? (body as Iterable<unknown>)[Symbol.iterator];
    if (typeof iterate === 'function') {
      const chunks = iterate.call(body) as AsyncIterator<Uint8Array | string> | Iterator<Uint8Array | string>;
      const kept: Buffer[] = [];
      let size = 0;
      try {
        for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
          // Copied: the sender may reuse its buffer.
          const bytes = typeof next.value === 'string' ? Buffer.from(next.value, 'utf8') : Buffer.from(next.value);
          size += bytes.length;
          if (size > max) {
            // Not awaited: fetch's body generator settles its return only once the request has failed.
            void Promise.resolve(chunks.return?.()).catch(() => {});
            throw this.tooLarge();
          }
          kept.push(bytes);
        }
      } catch (error) {
        if (!(error instanceof DomainError)) this.requestPayload = bytesPayload(Buffer.concat(kept), 'PARTIAL');
        throw error;
      }
      const bytes = Buffer.concat(kept, size);
      this.keep(bytes);
      return bytes;
    }
    // FormData and other shapes undici serialises itself: sent as is, recorded as MISSING.
    this.requestPayload = { state: 'MISSING' };
    return body;
  }

  private keep(bytes: Buffer): void {
    this.requestBytes = bytes;
    this.requestPayload = bytesPayload(bytes);
  }

  /** Refused unsent: recorded as MISSING (with the size when it is known). */
  private tooLarge(size?: number): DomainError {
    const max = this.options.payloadMaxBytes;
    this.requestPayload = { state: 'MISSING', ...(size !== undefined && { size }) };
    return new DomainError(ErrorCode.PAYLOAD_TOO_LARGE, `An outbound request body is larger than ${max} bytes (PAYLOAD_MAX_BYTES); it was not sent.`, {
      limit: max,
    });
  }

  /**
   * A file sent as the body (a deploy): hashed from its path first, recorded by reference, then
   * sent from the caller's stream, hashed again as it passes. A file that changed in between is
   * broken off before its last chunk, so the upstream never gets a whole body the record does not name.
   */
  private async readFile(stream: ReadStream, filePath: string): Promise<AsyncGenerator<Buffer>> {
    const artifactUri = pathToFileURL(path.resolve(filePath)).href;
    this.requestPayload = { state: 'ARTIFACT', artifactUri };
    const { start, end } = stream as unknown as { start?: number; end?: number };
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of createReadStream(filePath, {
        ...(start !== undefined && { start }),
        ...(end !== undefined && { end }),
      }) as AsyncIterable<Buffer>) {
        hash.update(chunk);
        size += chunk.length;
      }
    } catch (error) {
      stream.destroy();
      throw error;
    }
    const artifactSha256 = hash.digest('hex');
    this.requestPayload = { state: 'ARTIFACT', artifactUri, size, artifactSha256 };
    return sendFile(stream, artifactUri, size, artifactSha256);
  }

  /** At the response's start: publish its chunks when the request was a runner's MCP `tools/call` and the door streams. */
  private startPublishing(): void {
    const publish = this.invocation.outboundFor?.publish;
    if (!publish) return;
    const body = this.requestBytes;
    if (body && isToolsCall(body)) this.published = new StreamPublisher(publish);
  }

  private publishEnd(state: StreamState, error: Error | undefined): void {
    const published = this.published!;
    this.published = undefined;
    published.end(state, error ? (this.invocation.outboundFor?.cut?.() ?? 'SOURCE_ERROR') : undefined);
  }

  private recordResponse(error?: Error): Promise<void> | void {
    const base = this.base();
    if (error) base.metadata = { ...base.metadata, error: `${error.name}: ${error.message}` };
    const event: EventInput = this.response
      ? {
          ...base,
          id: `${this.id}:response`,
          kind: 'RESPONSE',
          direction: 'IN',
          status: String(this.response.status),
          headers: this.response.headers,
          occurredAt: this.response.at,
          payload: this.responseBody.payload(error ? 'PARTIAL' : 'COMPLETE'),
        }
      : { ...base, id: `${this.id}:response`, kind: 'RESPONSE', direction: 'IN', status: 'ERROR', occurredAt: new Date(), payload: { state: 'NONE' } };
    if (this.published) this.publishEnd(event.payload.state === 'MISSING' ? 'MISSING' : error ? 'PARTIAL' : 'COMPLETE', error);
    return this.emit(event);
  }

  private emit(event: EventInput): Promise<void> | void {
    try {
      const pending = this.record(event);
      return pending?.catch(this.failed);
    } catch (error) {
      this.failed(error);
    }
  }

  /** Wraps the caller's handler: every callback is passed on; the copy is taken on the way. */
  handler(inner: DispatchHandler): DispatchHandler {
    const guard = (fn: () => void) => {
      try {
        fn();
      } catch (error) {
        this.failed(error);
      }
    };
    return {
      onRequestStart: (controller, context) => inner.onRequestStart?.(controller, context),
      onRequestUpgrade: (controller, statusCode, headers, socket) => {
        guard(() => {
          this.response = { status: statusCode, headers: normaliseHeaders(headers), at: new Date() };
          void this.recordResponse();
        });
        return inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
      },
      onResponseStart: (controller, statusCode, headers, statusMessage) => {
        guard(() => {
          this.response = { status: statusCode, headers: normaliseHeaders(headers), at: new Date() };
          this.startPublishing();
        });
        return inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
      },
      onResponseData: (controller, chunk) => {
        guard(() => {
          this.responseBody.push(chunk);
          this.published?.chunk(chunk);
        });
        return inner.onResponseData?.(controller, chunk);
      },
      onResponseEnd: (controller: Controller, trailers) => {
        let pending: Promise<void> | undefined;
        guard(() => {
          pending = this.recordResponse() ?? undefined;
        });
        // A full ledger queue slows the caller here, at the end of the exchange, rather than drop.
        if (pending) void (pending as Promise<void>).then(() => inner.onResponseEnd?.(controller, trailers));
        else inner.onResponseEnd?.(controller, trailers);
      },
      onResponseError: (controller, error) => {
        guard(() => void this.recordResponse(error));
        inner.onResponseError?.(controller, error);
      },
    };
  }
}

/** The file's bytes as they pass, the last chunk held back until the whole file hashed as recorded. */
async function* sendFile(source: ReadStream, uri: string, size: number, sha256: string): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  let sent = 0;
  let held: Buffer | undefined;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    if (held) yield held;
    hash.update(chunk);
    sent += chunk.length;
    held = chunk;
  }
  if (sent !== size || hash.digest('hex') !== sha256)
    throw new Error(`${uri} changed while it was being sent; the request was broken off before its last bytes.`);
  if (held) yield held;
}

/** The controller a handler is given when its request is failed before dispatch: already aborted, nothing to pause. */
function refusedController(reason: Error): Controller {
  return { abort() {}, pause() {}, resume() {}, aborted: true, paused: false, reason } as unknown as Controller;
}

/** A JSON-RPC request body whose method is `tools/call` (an MCP client's tool call). */
function isToolsCall(body: Buffer): boolean {
  const text = body.toString('utf8');
  if (!text.includes('"tools/call"')) return false;
  try {
    return (JSON.parse(text) as { method?: unknown }).method === 'tools/call';
  } catch {
    return false;
  }
}

/** Headers as undici passes them (object, flat array, pairs) → lower-case names, repeated values as a list. */
export function normaliseHeaders(raw: unknown): Headers {
  const out: Headers = {};
  const add = (name: unknown, value: unknown) => {
    if (value === undefined || value === null) return;
    const key = String(name).toLowerCase();
    const values = (Array.isArray(value) ? value : [value]).map(String);
    const existing = out[key];
    const merged = existing === undefined ? values : [...(Array.isArray(existing) ? existing : [existing]), ...values];
    out[key] = merged.length === 1 ? merged[0]! : merged;
  };
  if (!raw) return out;
  if (Array.isArray(raw)) {
    if (raw.length && Array.isArray(raw[0])) for (const [k, v] of raw as unknown[][]) add(text(k), text(v));
    else for (let i = 0; i + 1 < raw.length; i += 2) add(text(raw[i]), Array.isArray(raw[i + 1]) ? (raw[i + 1] as unknown[]).map(text) : text(raw[i + 1]));
  } else if (typeof (raw as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [k, v] of raw as Iterable<[unknown, unknown]>) add(text(k), text(v));
  } else {
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) add(k, Array.isArray(v) ? v.map(text) : text(v));
  }
  return out;
}

function text(value: unknown): unknown {
  return value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : value;
}
