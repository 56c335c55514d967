// Outbound capture: every HTTP request the process makes through undici (global fetch, undici's
// own fetch/request) inside an invocation becomes two events, request OUT and response IN, linked
// by the invocation's action id, with the bytes exactly as they passed on the wire (a compressed
// response is kept compressed; its content-encoding header says so). One exception: a file sent
// as the body (an fs read stream: a deploy) is recorded by reference, ARTIFACT with its file URI,
// size and SHA-256; its bytes pass on untouched and are never copied into the ledger.
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
import { createHash, randomUUID, type Hash } from 'node:crypto';
import { ReadStream } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent, Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { DomainError, ErrorCode } from '../errors.ts';
import type { EventInput } from '../ledger/input.ts';
import type { Logger } from '../logger.ts';
import { currentInvocation, eventFields, type Invocation } from '../context/request.ts';
import { BoundedBytes } from './payload.ts';
import { StreamPublisher, type StreamState } from './tee.ts';

export type OutboundRecorder = (event: EventInput) => Promise<void> | void;

export type OutboundCaptureOptions = {
  /** Where the two events go: the background writer's enqueue. Runs in the async context the exchange started in. */
  record: OutboundRecorder;
  /** Bodies larger than this are recorded as MISSING with their size. */
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
    const sent = { ...opts, body: exchange.tapBody(opts.body) as Dispatcher.DispatchOptions['body'] };
    const wrapped = exchange.handler(handler);
    // A body known now: its REQUEST/OUT is recorded before the first byte leaves; a spool that cannot take it fails the request unsent.
    const recorded = exchange.recordBeforeSending();
    if (!recorded) return dispatch(sent, wrapped);
    recorded.then(
      () => {
        try {
          dispatch(sent, wrapped);
        } catch (error) {
          handler.onResponseError?.(refusedController(error as Error), error as Error);
        }
      },
      (error: Error) => handler.onResponseError?.(refusedController(error), error),
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
  private readonly requestBody: BoundedBytes;
  private readonly responseBody: BoundedBytes;
  private readonly sentAt = new Date();
  private readonly url: string;
  private readonly urlCut: boolean;
  private readonly method: string;
  private readonly requestHeaders: Headers;
  private bodyKind: 'NONE' | 'BYTES' | 'STREAM' | 'FILE' | 'UNREADABLE' = 'NONE';
  /** A file sent as the body (a deploy): recorded by reference, its bytes hashed as they pass, never copied. */
  private file: { uri: string; hash: Hash; size: number } | undefined;
  private requestDone = false;
  private requestRecorded = false;
  private response: { status: number; headers: Headers; at: Date } | undefined;
  /** Set for the answer to a runner's `tools/call` when the door publishes its stream. */
  private published: StreamPublisher | undefined;

  private readonly invocation: Invocation;
  private readonly options: OutboundCaptureOptions;
  private readonly failed: (error: unknown) => void;
  constructor(
    invocation: Invocation,
    opts: Dispatcher.DispatchOptions,
    options: OutboundCaptureOptions,
    failed: (error: unknown) => void,
  ) {
    this.invocation = invocation;
    this.options = options;
    this.failed = failed;
    this.record = AsyncLocalStorage.bind(options.record);
    this.requestBody = new BoundedBytes(options.payloadMaxBytes);
    this.responseBody = new BoundedBytes(options.payloadMaxBytes);
    const full = new URL(opts.path, opts.origin).toString();
    this.urlCut = full.length > URL_MAX;
    this.url = this.urlCut ? full.slice(0, URL_MAX) : full;
    this.method = opts.method;
    this.requestHeaders = normaliseHeaders(opts.headers);
  }

  /** Passes the body on unchanged, keeping a copy of each chunk as it is sent. */
  tapBody(body: unknown): unknown {
    if (body === null || body === undefined) {
      this.requestDone = true;
      return body;
    }
    if (typeof body === 'string' || body instanceof Uint8Array) {
      this.bodyKind = 'BYTES';
      this.requestBody.push(body);
      this.requestDone = true;
      return body;
    }
    if (body instanceof ReadStream && (typeof body.path === 'string' || Buffer.isBuffer(body.path))) {
      this.bodyKind = 'FILE';
      this.file = { uri: pathToFileURL(path.resolve(body.path.toString())).href, hash: createHash('sha256'), size: 0 };
      return this.tapFile(body);
    }
    if (typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' || typeof (body as Iterable<unknown>)[Symbol.iterator] === 'function') {
      this.bodyKind = 'STREAM';
      return this.tap(body as AsyncIterable<Uint8Array | string>);
    }
    // FormData and other shapes undici serialises itself: sent as is, recorded as MISSING.
    this.bodyKind = 'UNREADABLE';
    this.requestDone = true;
    return body;
  }

  private async *tapFile(source: ReadStream): AsyncGenerator<Uint8Array | string> {
    const file = this.file!;
    for await (const chunk of source as AsyncIterable<Buffer>) {
      file.hash.update(chunk);
      file.size += chunk.length;
      yield chunk;
    }
    this.requestDone = true;
    this.recordRequest();
  }

  private async *tap(source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>): AsyncGenerator<Uint8Array | string> {
    for await (const chunk of source) {
      this.requestBody.push(chunk);
      yield chunk;
    }
    this.requestDone = true;
    this.recordRequest();
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
   * For a body known before sending (none, bytes, or one undici serialises): records the REQUEST/OUT
   * now and resolves once it is recorded (durable, with the spool). Rejects only with
   * SPOOL_UNAVAILABLE; any other capture failure is counted and the request goes on. Undefined for
   * a streamed body, whose REQUEST/OUT is recorded when it has been sent.
   */
  recordBeforeSending(): Promise<void> | undefined {
    if (!this.requestDone || this.requestRecorded) return undefined;
    let pending: Promise<void> | void;
    try {
      pending = this.recordRequest(true);
    } catch (error) {
      this.failed(error);
      return undefined;
    }
    return pending?.catch((error: unknown) => {
      if (error instanceof DomainError && error.code === ErrorCode.SPOOL_UNAVAILABLE) throw error;
      this.failed(error);
    });
  }

  private recordRequest(raw = false): Promise<void> | void {
    if (this.requestRecorded) return;
    this.requestRecorded = true;
    const payload: EventInput['payload'] =
      this.bodyKind === 'NONE'
        ? { state: 'NONE' }
        : this.bodyKind === 'FILE'
          ? { state: 'ARTIFACT', artifactUri: this.file!.uri, size: this.file!.size, ...(this.requestDone && { artifactSha256: this.file!.hash.copy().digest('hex') }) }
        : this.bodyKind === 'UNREADABLE'
          ? { state: 'MISSING' }
          : this.requestBody.payload(this.requestDone ? 'COMPLETE' : 'PARTIAL');
    const event: EventInput = { ...this.base(), id: `${this.id}:request`, kind: 'REQUEST', direction: 'OUT', headers: this.requestHeaders, occurredAt: this.sentAt, payload };
    if (raw) return this.record(event);
    this.emit(event);
  }

  /** At the response's start: publish its chunks when the request was a runner's MCP `tools/call` and the door streams. */
  private startPublishing(): void {
    const publish = this.invocation.outboundFor?.publish;
    if (!publish || !this.requestDone) return;
    const body = this.requestBody.bytes();
    if (body && isToolsCall(body)) this.published = new StreamPublisher(publish);
  }

  private publishEnd(state: StreamState, error: Error | undefined): void {
    const published = this.published!;
    this.published = undefined;
    published.end(state, error ? (this.invocation.outboundFor?.cut?.() ?? 'SOURCE_ERROR') : undefined);
  }

  private recordResponse(error?: Error): Promise<void> | void {
    this.recordRequest();
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
          if (!this.requestDone) return;
          this.recordRequest();
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
