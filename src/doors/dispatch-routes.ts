// The runner's HTTP doors: REST `POST /api/tools/:name` (JSON body = args), the one-line
// `GET /api/tools/:name?…` (query = args), `POST /api/dispatch` (the canonical call) and webhooks
// `POST /hooks/:name` (written to the ledger before answering; 503 + Retry-After when it cannot be).
// Every request runs in its own invocation and is recorded at the boundary: request IN, answer OUT.
// REST streams: when the upstream answers with a stream, its bytes go to the client as they arrive
// (status and content type of the upstream) instead of a DispatchResult.
import { isUtf8 } from 'node:buffer';
import { captureExchange, invocationFromHeaders, isRetryable, type BoundaryExchange, type BoundaryServices } from '../capture/boundary.ts';
import type { Door } from '../context/door.ts';
import { currentInvocation } from '../context/request.ts';
import { markStreamed } from '../capture/tee.ts';
import { TokenParam } from '../directory/forms.ts';
import type { DispatchRequest, DispatchResult, StreamedAnswer } from '../dispatch/result.ts';
import { httpStatusOfResult } from './dispatch-status.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { isPlainName, jsonTextTooDeep, parseJsonText, tooDeep } from '../limits.ts';
import type { Services } from '../services.ts';
import { errorResponse, json, readBody } from './respond.ts';

export const toolsPath = /^\/api\/tools\/([^/]*)$/;
export const hooksPath = /^\/hooks\/([^/]+)$/;
export const dispatchPath = '/api/dispatch';

type Parse = (body: Buffer, url: URL) => Promise<DispatchRequest> | DispatchRequest;

/**
 * Dispatches with streaming on, inside the current invocation: resolves with the streamed answer as
 * soon as the upstream streams (its chunks published to the stream registry), else with the result.
 */
export function dispatchStreaming(
  services: Services,
  call: DispatchRequest,
  signal: AbortSignal,
): Promise<{ result: DispatchResult } | { streamed: StreamedAnswer }> {
  const actionId = currentInvocation()!.actionId;
  return new Promise((resolve, reject) => {
    services.dispatcher
      .dispatch(call, {
        signal,
        stream: {
          cutoffMs: services.config.STREAM_CUTOFF_MS,
          payloadMaxBytes: services.config.PAYLOAD_MAX_BYTES,
          publish: (chunk) => services.streams.publish(actionId, chunk),
          onStream: (streamed) => resolve({ streamed }),
        },
      })
      .then((result) => resolve({ result }), reject);
  });
}

/** The boundary's services without the stream registry: a streamed upstream is published by the runner, not as the door's answer. */
export function boundaryWithoutStreams(services: Services): BoundaryServices {
  return { writer: services.writer, logger: services.logger, config: services.config };
}

/** Reads, records and answers one door request; `parse` turns it into the canonical call. */
async function door(
  request: Request,
  services: Services,
  door: Door,
  tool: string | undefined,
  parse: Parse,
  synchronous = false,
  streaming = false,
): Promise<Response> {
  const url = new URL(request.url);
  let body: Buffer | { missing: number } | null = null;
  let tooLarge: DomainError | undefined;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    try {
      body = await readBody(request, services.config.PAYLOAD_MAX_BYTES);
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== ErrorCode.PAYLOAD_TOO_LARGE) throw error;
      tooLarge = error;
      body = { missing: Number(request.headers.get('content-length')) || services.config.PAYLOAD_MAX_BYTES + 1 };
    }
  }
  const exchange: BoundaryExchange = {
    door,
    request: { method: request.method, url: request.url, headers: request.headers, body },
    invocation: invocationFromHeaders(request.headers),
    // A name no column can hold is refused by the runner (BAD_INPUT); the request is recorded without it.
    ...(tool && isPlainName(tool) && { tool }),
    synchronous,
    clientSignal: request.signal,
  };
  try {
    return await captureExchange(streaming ? boundaryWithoutStreams(services) : services, exchange, async () => {
      if (tooLarge) return errorResponse(tooLarge);
      let call: DispatchRequest;
      try {
        call = await parse(body instanceof Buffer ? body : Buffer.alloc(0), url);
      } catch (error) {
        if (error instanceof DomainError) return errorResponse(error);
        throw error;
      }
      if (!streaming) {
        const result = await services.dispatcher.dispatch(call, { signal: request.signal });
        return json(result, httpStatusOfResult(result));
      }
      const answer = await dispatchStreaming(services, call, request.signal);
      if ('result' in answer) return json(answer.result, httpStatusOfResult(answer.result));
      const { streamed } = answer;
      const headers = {
        'content-type': streamed.contentType || 'application/octet-stream',
        'cache-control': 'no-cache',
        'x-dirledger-action': currentInvocation()!.actionId,
      };
      return markStreamed(new Response(streamed.body, { status: streamed.status, headers }));
    });
  } catch (error) {
    if (isRetryable(error)) {
      // A refusal that says whether the call ran speaks for itself; otherwise the request could not be recorded before anything ran.
      const message =
        error.details.ran === undefined ? `The ledger could not record this delivery; nothing was run. Send it again. (${error.message})` : error.message;
      return json({ error: { code: error.code, message, ...(error.details.ran !== undefined && { ran: error.details.ran }) } }, 503, {
        'retry-after': String(error.details.retryAfterSeconds ?? 1),
      });
    }
    if (error instanceof DomainError) return errorResponse(error);
    throw error;
  }
}

function jsonOf(body: Buffer, what: string): unknown {
  if (body.length === 0) return undefined;
  if (!isUtf8(body)) throw new DomainError(ErrorCode.BAD_INPUT, `Expected ${what} as UTF-8 JSON, got bytes that are not valid UTF-8.`);
  return parseJsonText(body.toString('utf8'), what);
}

function argsObject(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new DomainError(
      ErrorCode.BAD_INPUT,
      `Expected ${what} to be a JSON object of arguments, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}.`,
    );
  }
  return value as Record<string, unknown>;
}

/**
 * Query → args, for the one-line URL form. A parameter the tool's args schema types as a string
 * stays text exactly as sent; any other is read as JSON when it parses (`n=3` → 3, `ok=true` →
 * true, `tags=["a"]` → an array) and kept as text when it does not. A repeated parameter is a list.
 * `token` is the credential a link carries, never an argument.
 */
export async function argsFromQuery(url: URL, services: Services, tool: string): Promise<Record<string, unknown>> {
  const schema = await services.dispatcher.argsSchema(tool);
  type Prop = { type?: unknown; items?: { type?: unknown } };
  const declared = schema && typeof schema === 'object' ? (schema as { properties?: unknown }).properties : undefined;
  const props = (declared && typeof declared === 'object' ? declared : {}) as Record<string, Prop | undefined>;
  const read = (name: string, raw: string): unknown => {
    const type = props[name]?.type;
    if (type === 'string' || (Array.isArray(type) && type.length === 1 && type[0] === 'string')) return raw;
    if (jsonTextTooDeep(raw)) throw tooDeep(`query parameter ${JSON.stringify(name)}`);
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  };
  const args: Record<string, unknown> = {};
  for (const name of new Set(url.searchParams.keys())) {
    if (name === TokenParam) continue;
    const values = url.searchParams.getAll(name);
    const itemType = props[name]?.items?.type;
    args[name] =
      values.length === 1 && props[name]?.type !== 'array' ? read(name, values[0]!) : values.map((v) => (itemType === 'string' ? v : read(`${name}[]`, v)));
  }
  return args;
}

/** The tool name in a path, percent-decoded; undefined when it does not decode to UTF-8 text. */
function decodedName(rawName: string): string | undefined {
  try {
    return decodeURIComponent(rawName);
  } catch {
    return undefined;
  }
}

/** A path whose tool name does not decode: refused (400 naming the field), the request still recorded. */
function undecodableName(request: Request, services: Services, doorName: Door, rawName: string): Promise<Response> {
  return door(request, services, doorName, undefined, () => {
    throw new DomainError(ErrorCode.BAD_INPUT, `Invalid tool: expected a URL-encoded UTF-8 tool name, got ${JSON.stringify(rawName.slice(0, 80))}.`, {
      field: 'tool',
    });
  });
}

export function toolRoute(request: Request, services: Services, rawName: string): Promise<Response> | Response {
  const tool = decodedName(rawName);
  if (tool === undefined && (request.method === 'POST' || request.method === 'GET'))
    return undecodableName(request, services, request.method === 'GET' ? 'URL' : 'REST', rawName);
  if (tool === undefined)
    return errorResponse(new DomainError(ErrorCode.BAD_INPUT, `Expected a URL-encoded tool name, got ${JSON.stringify(rawName.slice(0, 80))}.`));
  if (request.method === 'POST')
    return door(request, services, 'REST', tool, (body) => ({ tool, args: argsObject(jsonOf(body, 'the body'), 'the body'), form: 'REST' }), false, true);
  if (request.method === 'GET')
    return door(request, services, 'URL', tool, async (_b, url) => ({ tool, args: await argsFromQuery(url, services, tool), form: 'URL' }));
  return json({ error: { code: 'METHOD_NOT_ALLOWED', message: 'Expected POST (JSON args) or GET (query args).' } }, 405, { allow: 'GET, POST' });
}

export function dispatchRoute(request: Request, services: Services): Promise<Response> | Response {
  if (request.method !== 'POST') return json({ error: { code: 'METHOD_NOT_ALLOWED', message: 'Expected POST.' } }, 405, { allow: 'POST' });
  return door(request, services, 'DISPATCH', undefined, (body) => {
    const call = jsonOf(body, 'the canonical call {"tool", "args", "dryRun"?}');
    if (!call || typeof call !== 'object' || Array.isArray(call))
      throw new DomainError(ErrorCode.BAD_INPUT, `Expected the canonical call {"tool": NAME, "args": {…}}, got ${JSON.stringify(call) ?? 'an empty body'}.`);
    const { tool, args, dryRun, form, ...rest } = call as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length)
      throw new DomainError(ErrorCode.BAD_INPUT, `Expected only tool, args, dryRun and form, got ${extra.map((k) => JSON.stringify(k)).join(', ')}.`, {
        field: extra[0],
      });
    if (typeof tool !== 'string' || !tool)
      throw new DomainError(ErrorCode.BAD_INPUT, `Expected "tool" to be a tool name, got ${JSON.stringify(tool) ?? 'nothing'}.`, { field: 'tool' });
    if (dryRun !== undefined && typeof dryRun !== 'boolean')
      throw new DomainError(ErrorCode.BAD_INPUT, `Expected "dryRun" to be true or false, got ${JSON.stringify(dryRun)}.`, { field: 'dryRun' });
    if (form !== undefined && typeof form !== 'string')
      throw new DomainError(ErrorCode.BAD_INPUT, `Expected "form" to be a form name, got ${JSON.stringify(form)}.`, { field: 'form' });
    return { tool, args: argsObject(args, '"args"'), dryRun: dryRun === true, form: form ?? (dryRun ? 'DRY_RUN' : 'DISPATCH') };
  });
}

/** Webhooks: the sender retries, so the write is synchronous (the rule in src/capture/boundary.ts). */
export function hookRoute(request: Request, services: Services, rawName: string): Promise<Response> | Response {
  if (request.method !== 'POST') return json({ error: { code: 'METHOD_NOT_ALLOWED', message: 'Expected POST.' } }, 405, { allow: 'POST' });
  const tool = decodedName(rawName);
  if (tool === undefined) return undecodableName(request, services, 'WEBHOOK', rawName);
  return door(request, services, 'WEBHOOK', tool, (body) => ({ tool, args: argsObject(jsonOf(body, 'the body'), 'the body'), form: 'WEBHOOK' }), true);
}
