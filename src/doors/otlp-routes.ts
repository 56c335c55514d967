// The OTLP/HTTP traces door, `POST /v1/traces`: an OpenTelemetry exporter's spans become ledger
// events (src/capture/otel-events.ts). Answers as the OTLP/HTTP spec says: 200 with an
// ExportTraceServiceResponse (partial_success when spans were rejected), 400 undecodable, 413 too
// large, 415 another content type or encoding, 503 + Retry-After while the ledger cannot write
// (an exporter retries it), every answer in the request's own encoding.
import { isUtf8 } from 'node:buffer';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { Response } from '@whatwg-node/server';
import { currentGrant } from '../context/request.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { eventsOfSpans } from '../capture/otel-events.ts';
import type { OtelResourceSpans } from '../capture/otel-spans.ts';
import { DomainError, ErrorCode, httpStatusOf } from '../errors.ts';
import { jsonTextTooDeep, JSON_MAX_DEPTH, readBody } from '../limits.ts';
import { chargeOf } from '../model/charge.ts';
import type { Services } from '../services.ts';
import { recordRefusal, refusalResponse } from './authenticate.ts';
import { bodyBytesOf } from './ledger-routes.ts';
import { decodeJsonTraces } from './otlp/json.ts';
import { decodeProtobufTraces, encodeProtobufResponse, encodeProtobufStatus, protobufDepthLimit } from './otlp/proto.ts';

export const otlpTracesPath = '/v1/traces';

type Encoding = 'protobuf' | 'json';
const contentTypes: Record<Encoding, string> = { protobuf: 'application/x-protobuf', json: 'application/json' };

/** google.rpc.Code of each HTTP status this door answers with. */
const rpcCodeOf: Record<number, number> = { 400: 3, 401: 16, 403: 7, 413: 8, 415: 3, 429: 8, 500: 13, 503: 14 };

const gunzipAsync = promisify(gunzip);

function encodingOf(request: Request): Encoding | undefined {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return undefined;
}

export async function receiveTraces(request: Request, services: Services): Promise<Response> {
  const encoding = encodingOf(request);
  if (!encoding) {
    const type = request.headers.get('content-type');
    return failure('json', 415, `Expected content-type application/x-protobuf or application/json, got ${JSON.stringify(type ?? 'nothing')}.`);
  }
  const coding = (request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  if (coding !== 'identity' && coding !== 'gzip') {
    return failure(encoding, 415, `Expected content-encoding gzip or none, got ${JSON.stringify(coding.slice(0, 64))}.`);
  }
  try {
    const limit = services.config.BATCH_MAX_BYTES;
    return await services.ingestGate.run(bodyBytesOf(request, limit), async () => {
      const body = await inflate(await readBody(request, limit), coding === 'gzip', limit);
      const spans = decode(encoding, body);
      return await record(request, services, encoding, spans);
    });
  } catch (caught) {
    // The Directory's tool lookup reaches the database too: its outage is the ledger's 503, not a 500.
    const error = isDatabaseUnavailable(caught)
      ? new DomainError(ErrorCode.DATABASE_UNAVAILABLE, 'The ledger database is unavailable; nothing was written. Retry later.')
      : caught;
    if (!(error instanceof DomainError)) throw error;
    const status = httpStatusOf[error.code];
    const retry = status === 503 ? { 'retry-after': String(error.details.retryAfterSeconds ?? 5) } : undefined;
    return failure(encoding, status, error.message, retry);
  }
}

async function inflate(body: Buffer, gzipped: boolean, limit: number): Promise<Buffer> {
  if (!gzipped) return body;
  try {
    return await gunzipAsync(body, { maxOutputLength: limit });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new DomainError(ErrorCode.PAYLOAD_TOO_LARGE, `Request body too large: expected at most ${limit} bytes once gunzipped, got more.`, { limit });
    }
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected a gzip body (content-encoding: gzip), got bytes that do not gunzip (${(error as Error).message}).`);
  }
}

function decode(encoding: Encoding, body: Buffer): OtelResourceSpans[] {
  if (encoding === 'protobuf') {
    try {
      return decodeProtobufTraces(body);
    } catch (error) {
      const message = (error as Error).message;
      const why = message === 'max depth exceeded' ? `messages nested more than ${protobufDepthLimit} deep` : message;
      throw new DomainError(ErrorCode.BAD_INPUT, `Expected an OTLP ExportTraceServiceRequest in protobuf, got bytes that do not decode as one (${why}).`);
    }
  }
  if (!isUtf8(body)) throw new DomainError(ErrorCode.BAD_INPUT, 'Expected an OTLP/JSON body in UTF-8, got bytes that are not valid UTF-8.');
  const text = body.toString('utf8', body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0);
  if (jsonTextTooDeep(text))
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected OTLP/JSON nested at most ${JSON_MAX_DEPTH} levels deep, got JSON nested deeper.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected an OTLP/JSON body, got invalid JSON (${(error as Error).message}).`);
  }
  return decodeJsonTraces(parsed);
}

async function record(request: Request, services: Services, encoding: Encoding, spans: OtelResourceSpans[]): Promise<Response> {
  const grant = currentGrant();
  const mapped = await eventsOfSpans(spans, {
    toolRow: async (name) => {
      const row = await services.directory.runnableRow(name);
      return row && { type: row.type, name: row.name };
    },
    chargeOf: (model, usage) => chargeOf(services.models, services.prices, model, usage),
    filings: services.spanFilings,
    task: grant?.task,
    agent: grant?.agent,
  });
  // Every batch is checked before any is appended: a refused request appends nothing.
  for (const batch of mapped.batches) {
    const refusal = grant && services.authority.allowsIngest(grant, 'OTLP', batch);
    if (refusal) {
      await recordRefusal(services, refusal, grant, request);
      return refusalResponse(refusal);
    }
  }
  for (const batch of mapped.batches) {
    await services.ledger.append(batch);
    services.spanFilings.remember(batch.events);
  }
  const message = mapped.rejected > 0 ? `${mapped.rejected} of ${mapped.spans} spans rejected: ${mapped.reasons.join('; ')}` : '';
  return success(encoding, mapped.rejected, message);
}

function success(encoding: Encoding, rejected: number, message: string): Response {
  const body =
    encoding === 'protobuf'
      ? new Uint8Array(encodeProtobufResponse(rejected, message))
      : JSON.stringify(rejected > 0 ? { partialSuccess: { rejectedSpans: String(rejected), errorMessage: message } } : {});
  return new Response(body, { status: 200, headers: { 'content-type': contentTypes[encoding] } });
}

/**
 * A refusal at admission (no token, a limit, the rate) as the OTLP spec answers every 4xx: a
 * google.rpc.Status in the request's encoding, with the refusal's status and headers (WWW-Authenticate, Retry-After).
 */
export async function otlpRefusal(request: Request, refused: Response): Promise<Response> {
  const answer = (await refused.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
  const message = answer?.error ? `${answer.error.code ?? 'REFUSED'}: ${answer.error.message ?? 'refused'}` : `Refused (HTTP ${refused.status}).`;
  const kept = Object.fromEntries(
    ['www-authenticate', 'retry-after'].flatMap((name) => (refused.headers.has(name) ? [[name, refused.headers.get(name)!]] : [])),
  );
  return failure(encodingOf(request) ?? 'json', refused.status, message, kept);
}

function failure(encoding: Encoding, status: number, message: string, headers: Record<string, string> = {}): Response {
  const code = rpcCodeOf[status] ?? 2;
  const body = encoding === 'protobuf' ? new Uint8Array(encodeProtobufStatus(code, message)) : JSON.stringify({ code, message });
  return new Response(body, { status, headers: { 'content-type': contentTypes[encoding], ...headers } });
}
