// Capture at the boundary: every door request runs inside an invocation context and becomes two
// ledger events linked by its action id, the request IN and the answer OUT, with exact bytes.
//
// Write timing, the rule: synchronous exactly where the other side can retry. A webhook's sender
// retries, so its events are written (writeNow) before it is answered, and a failed write answers
// 503 + Retry-After; every other door's events go to the background writer, durable in its spool
// (the request with the call's first durable step, the answer and everything the call staged before
// it is returned); a spool that cannot take them (SPOOL_UNAVAILABLE) is answered 503 + Retry-After too.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Response as AdapterResponse } from '@whatwg-node/server';
import { DomainError, ErrorCode } from '../errors.ts';
import { withTextBytes, type EventInput, type PayloadInput } from '../ledger/input.ts';
import type { Logger } from '../logger.ts';
import type { Door } from '../context/door.ts';
import { currentInvocation, eventFields, runInInvocation, type Invocation, type InvocationInput } from '../context/request.ts';
import { installOutboundCapture, type OutboundCapture } from './outbound.ts';
import { bytesPayload } from './payload.ts';
import { bodyBytes } from '../limits.ts';
import { unrecorded } from './unrecorded.ts';
import { isStreamedAnswer, teeResponse, type StreamChunk } from './tee.ts';
import type { LedgerWriter } from './writer.ts';

/** What the boundary needs of an app's services. */
export type BoundaryServices = {
  writer: LedgerWriter;
  logger: Logger;
  config: { PAYLOAD_MAX_BYTES: number; STREAM_CUTOFF_MS: number };
  /** Where a streamed answer's chunks go as they arrive (subscriptions: streamCapture). */
  streams?: { publish(actionId: string, chunk: StreamChunk): void };
};

export type HeaderRecord = Record<string, string | string[]>;

export type BoundaryRequest = {
  method: string;
  url: string;
  headers: HeaderRecord | Headers;
  /** The exact body bytes; null for none; `{ missing: size }` when not read (over the payload limit). */
  body?: Uint8Array | null | { missing: number };
};

export type BoundaryExchange = {
  door: Door;
  request: BoundaryRequest;
  /** Invocation fields (session, turn, task, agent, caller, actionId); see `invocationFromHeaders`. */
  invocation?: Omit<InvocationInput, 'door'>;
  /** The tool the request names, when the door knows it. */
  tool?: string;
  /** The model row the request means (the model door), carried like `tool`. */
  model?: string;
  /** Webhooks: awaited writes; a failed write throws DATABASE_UNAVAILABLE (retryAfterSeconds). */
  synchronous?: boolean;
  /** Aborted when the client goes away: a streamed answer's OUT event then says so, as the call's TOOL_RESULT does. */
  clientSignal?: AbortSignal;
};

/** An answer as the ledger records it: status, headers and the exact body bytes (empty: none). */
export type BoundaryAnswer = { status: number; headers: HeaderRecord; body: Uint8Array };

/** A JSON value answered in full (a GraphQL mutation's result, an MCP stdio reply): status 200, its JSON text. */
export function jsonAnswer(value: unknown): BoundaryAnswer {
  return { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(value) ?? '') };
}

/** Request headers that carry the invocation fields. */
export const InvocationHeaders = {
  actionId: 'x-dirledger-action',
  session: 'x-dirledger-session',
  turn: 'x-dirledger-turn',
  task: 'x-dirledger-task',
  agent: 'x-dirledger-agent',
  caller: 'x-dirledger-caller',
} as const;

/** Reads the invocation fields from request headers (x-dirledger-session, …); absent ones stay absent. */
export function invocationFromHeaders(headers: Headers | HeaderRecord): Omit<InvocationInput, 'door'> {
  const get = (name: string): string | undefined => {
    const v = isHeaders(headers) ? headers.get(name) : headers[name];
    const s = Array.isArray(v) ? v[0] : v;
    return s ? s : undefined;
  };
  const out: Record<string, string> = {};
  for (const [field, header] of Object.entries(InvocationHeaders)) {
    const value = get(header);
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/** Fetch Headers of any implementation (undici's, @whatwg-node's ponyfill). */
const isHeaders = (h: unknown): h is Headers => typeof (h as Headers)?.get === 'function' && typeof (h as Headers)?.forEach === 'function';

/**
 * A header record as Response init: a copy (the adapter's Response adds content-length to the object
 * it is given, and the record is a recorded event's), or name/value pairs when a header repeats (set-cookie).
 */
function plainHeaders(record: HeaderRecord): Record<string, string> | [string, string][] {
  const values = Object.values(record);
  if (!values.some(Array.isArray)) return { ...record } as Record<string, string>;
  return Object.entries(record).flatMap(([name, value]) =>
    Array.isArray(value) ? value.map((v): [string, string] => [name, v]) : [[name, value] as [string, string]],
  );
}

/** Headers as the ledger records them: a plain record (lowercase names; set-cookie a list when it repeats). */
export function headerRecord(headers: Headers | HeaderRecord): HeaderRecord {
  if (!isHeaders(headers)) return headers;
  const out: HeaderRecord = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  const cookies = headers.getSetCookie?.() ?? [];
  if (cookies.length > 1) out['set-cookie'] = cookies;
  return out;
}

function bodyPayload(body: BoundaryRequest['body'], maxBytes: number): PayloadInput {
  if (body === undefined || body === null) return { state: 'NONE' };
  if ('missing' in body) return { state: 'MISSING', size: body.missing };
  if (body.byteLength === 0) return { state: 'NONE' };
  if (body.byteLength > maxBytes) return { state: 'MISSING', size: body.byteLength };
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return withTextBytes(bytesPayload(bytes), bytes);
}

function baseOf(invocation: Invocation, exchange: BoundaryExchange) {
  return { ...eventFields(invocation), ...(exchange.tool && { tool: exchange.tool }), ...(exchange.model && { model: exchange.model }) };
}

const appStore = new AsyncLocalStorage<BoundaryServices>();

/**
 * Runs `handler` inside a new invocation and records the request IN and the answer OUT. A streamed
 * answer (text/event-stream, or no length) is teed: the ledger reads on after a client disconnect up
 * to STREAM_CUTOFF_MS. A webhook's request is written before the handler runs and its answer before
 * it is returned; a DomainError from the handler is answered by the door, not here.
 */
export function captureExchange(services: BoundaryServices, exchange: BoundaryExchange, handler: () => Promise<Response>): Promise<Response> {
  return inInvocation(services, exchange, (invocation) => record(services, exchange, invocation, handler));
}

/**
 * Records one exchange whose answer is not an HTTP Response (a GraphQL mutation, a graphql-ws
 * operation, an MCP stdio message): the request IN, then `answerOf(value)` as the answer OUT.
 */
export function captureCall<T>(
  services: BoundaryServices,
  exchange: BoundaryExchange,
  handler: () => Promise<T>,
  answerOf: (value: T) => BoundaryAnswer,
): Promise<T> {
  return inInvocation(services, exchange, async (invocation) => {
    await recordRequest(services, exchange, invocation);
    const value = await handled(services, handler);
    await afterRun(recordAnswer(services, exchange, invocation, answerOf(value)));
    return value;
  });
}

function inInvocation<T>(services: BoundaryServices, exchange: BoundaryExchange, fn: (invocation: Invocation) => Promise<T>): Promise<T> {
  return appStore.run(services, () =>
    runInInvocation({ ...(exchange.invocation ?? {}), door: exchange.door, answerWaitsForRecord: true }, () => fn(currentInvocation()!)),
  );
}

function answerFields(exchange: BoundaryExchange, invocation: Invocation, status: number, headers: HeaderRecord) {
  return {
    ...baseOf(invocation, exchange),
    id: `${invocation.actionId}:door:answer`,
    kind: 'RESPONSE',
    direction: 'OUT' as const,
    status: String(status),
    headers,
    metadata: { capture: 'boundary', door: exchange.door },
  };
}

/** The answer OUT; a synchronous exchange's is written once what the handler recorded has committed. */
async function recordAnswer(services: BoundaryServices, exchange: BoundaryExchange, invocation: Invocation, answer: BoundaryAnswer): Promise<void> {
  const bytes = answer.body;
  const answerEvent: EventInput = {
    ...answerFields(exchange, invocation, answer.status, answer.headers),
    occurredAt: new Date(),
    payload: bytes.byteLength ? bodyPayload(bytes, services.config.PAYLOAD_MAX_BYTES) : { state: 'NONE' },
  };
  if (exchange.synchronous) {
    await services.writer.durable();
    // What the handler recorded in the background (the runner's call) commits before the answer.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([services.writer.flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 10_000)))]);
    clearTimeout(timer);
    await services.writer.writeNow([answerEvent]);
  } else await services.writer.enqueue(answerEvent);
}

async function recordRequest(services: BoundaryServices, exchange: BoundaryExchange, invocation: Invocation): Promise<void> {
  const base = baseOf(invocation, exchange);
  const maxBytes = services.config.PAYLOAD_MAX_BYTES;
  const requestEvent: EventInput = {
    ...base,
    id: `${invocation.actionId}:door:request`,
    kind: 'REQUEST',
    direction: 'IN',
    method: exchange.request.method,
    url: exchange.request.url.slice(0, 16_384),
    headers: headerRecord(exchange.request.headers),
    occurredAt: invocation.startedAt,
    payload: bodyPayload(exchange.request.body, maxBytes),
    metadata: { capture: 'boundary', door: exchange.door, ...(invocation.caller && { caller: invocation.caller }) },
  };
  if (exchange.synchronous) await services.writer.writeNow([requestEvent]).catch((error) => failed(error, false));
  // Durable with the call's first durable step (its TOOL_CALL) or with the answer, whichever comes first.
  else
    void services.writer
      .stage(requestEvent)
      .catch((error) => services.logger.error({ err: error, actionId: invocation.actionId }, 'the request event could not be made durable'));
}

/** The handler's value; when it throws, what the call staged is made durable before the door answers the error. */
async function handled<T>(services: BoundaryServices, handler: () => Promise<T>): Promise<T> {
  try {
    return await handler();
  } catch (error) {
    try {
      await services.writer.durable();
    } catch (unwritten) {
      // A refusal from the handler (its TOOL_CALL could not be written) already says what it means for the call.
      throw isRetryable(error) ? error : unwritten;
    }
    throw error;
  }
}

/** A write refused after the handler ran: the refusal says the call ran. */
function afterRun<T>(write: Promise<T>): Promise<T> {
  return write.catch((error) => failed(error, true));
}

function failed(error: unknown, ran: boolean): never {
  throw isRetryable(error) ? unrecorded(error, ran) : error;
}

async function record(services: BoundaryServices, exchange: BoundaryExchange, invocation: Invocation, handler: () => Promise<Response>): Promise<Response> {
  await recordRequest(services, exchange, invocation);
  const answer = await handled(services, handler);
  const answerBase = answerFields(exchange, invocation, answer.status, headerRecord(answer.headers));
  const maxBytes = services.config.PAYLOAD_MAX_BYTES;
  if (!exchange.synchronous && isStreamedAnswer(answer)) {
    let answerRecorded: Promise<void> | undefined;
    const teed = teeResponse(answer, {
      cutoffMs: services.config.STREAM_CUTOFF_MS,
      payloadMaxBytes: maxBytes,
      publish: (chunk) => services.streams?.publish(invocation.actionId, chunk),
      ...(exchange.clientSignal && { clientSignal: exchange.clientSignal }),
      // A client that read the stream to its end has its answer OUT (and what the call staged with it) durable.
      beforeClose: () => answerRecorded!,
    });
    answerRecorded = teed.recorded.then((result) =>
      services.writer.enqueue({
        ...answerBase,
        occurredAt: new Date(),
        payload: result.payload,
        metadata: { ...answerBase.metadata, stream: true, clientDisconnected: result.clientDisconnected, ...(result.cut && { cut: result.cut }) },
      }),
    );
    const recording = answerRecorded.catch((error) => services.logger.error({ err: error }, 'recording a streamed answer failed'));
    services.writer.track(recording);
    // What the call staged (its result) is durable before the first byte of the answer leaves.
    await afterRun(services.writer.durable());
    return teed.response;
  }
  // Read without asking for `body` first, which builds a stream over the bytes; only an empty answer asks whether it had one.
  const bytes = bodyBytes(await answer.arrayBuffer());
  const hasBody = bytes.length > 0 || Boolean(answer.body);
  await afterRun(recordAnswer(services, exchange, invocation, { status: answer.status, headers: answerBase.headers, body: bytes }));
  // The adapter's Response with plain headers: written in one go (see src/doors/respond.ts).
  return new AdapterResponse(hasBody ? bytes : null, { status: answer.status, statusText: answer.statusText, headers: plainHeaders(answerBase.headers) });
}

/** The app whose boundary the calling code runs under (for the process-wide outbound capture). */
export function currentBoundaryServices(): BoundaryServices | undefined {
  return appStore.getStore();
}

let shared: { capture: OutboundCapture; users: number; last: BoundaryServices } | undefined;

/**
 * Installs the outbound capture as the global dispatcher once per process, however many apps run in
 * it (tests, benchmarks): each exchange goes to the writer of the app whose boundary it runs under.
 * The returned function uninstalls it when the last app stops.
 */
export function useOutboundCapture(services: BoundaryServices, excludeOrigins: string[] = []): () => Promise<void> {
  if (!shared) {
    const capture = installOutboundCapture({
      // The capture records in the async context the exchange started in, so this is its own app.
      record: (event) => (currentBoundaryServices() ?? shared?.last)?.writer.enqueue(event),
      payloadMaxBytes: services.config.PAYLOAD_MAX_BYTES,
      excludeOrigins,
      logger: services.logger,
    });
    shared = { capture, users: 0, last: services };
  }
  shared.users++;
  shared.last = services;
  let released = false;
  return async () => {
    if (released || !shared) return;
    released = true;
    if (--shared.users === 0) {
      const { capture } = shared;
      shared = undefined;
      await capture.uninstall();
    }
  };
}

/** A DomainError for a door to answer when a write failed (a synchronous one, or the spool): 503 + Retry-After. */
export function isRetryable(error: unknown): error is DomainError {
  return error instanceof DomainError && (error.code === ErrorCode.DATABASE_UNAVAILABLE || error.code === ErrorCode.SPOOL_UNAVAILABLE);
}
