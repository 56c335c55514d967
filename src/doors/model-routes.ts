// The model door: OpenAI-compatible POST /v1/chat/completions, /v1/responses, /v1/embeddings,
// GET /v1/models, and Anthropic's POST /v1/messages and /v1/messages/count_tokens. A client needs only
// this server as its base URL and a dirledger token as its key (Authorization: Bearer, or Anthropic's
// x-api-key). Thin: read the body, record the exchange at the boundary, hand it to services.gateway.
import { captureExchange, headerRecord, invocationFromHeaders, isRetryable, type BoundaryExchange } from '../capture/boundary.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { errorAnswer } from '../model/gateway.ts';
import { Endpoints, type Endpoint } from '../model/wire.ts';
import type { Services } from '../services.ts';
import { readBody } from './respond.ts';

/** /v1/<endpoint path> → the endpoint. */
export const modelPath = /^\/v1\/(chat\/completions|responses|embeddings|messages|messages\/count_tokens)$/;
export const modelsListPath = '/v1/models';

const byPath = new Map(Object.values(Endpoints).map((e) => [e.path, e]));

export function endpointOf(path: string): Endpoint {
  return byPath.get(path)!;
}

/** Whether a request speaks Anthropic's dialect (its SDK always sends anthropic-version). */
export const speaksAnthropic = (request: Request) => request.headers.has('anthropic-version');

export async function modelRoute(request: Request, services: Services, endpoint: Endpoint): Promise<Response> {
  let body: Buffer | { missing: number };
  let tooLarge: DomainError | undefined;
  try {
    body = await readBody(request, services.config.PAYLOAD_MAX_BYTES);
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== ErrorCode.PAYLOAD_TOO_LARGE) throw error;
    tooLarge = error;
    body = { missing: Number(request.headers.get('content-length')) || services.config.PAYLOAD_MAX_BYTES + 1 };
  }
  // Routed first, so the request IN and the answer OUT carry the model row's name as its calls do.
  const prepared = tooLarge ? undefined : await services.gateway.prepare(endpoint, body as Buffer).catch((error: unknown) => ({ error }));
  // Read once into the record the request IN stores, and the invocation fields and forwarded headers from it (Headers.get is not free).
  const headers = headerRecord(request.headers);
  const exchange: BoundaryExchange = {
    door: 'MODEL',
    request: { method: request.method, url: request.url, headers, body },
    invocation: invocationFromHeaders(headers),
    clientSignal: request.signal,
    ...(prepared && 'model' in prepared && prepared.model && { model: prepared.model }),
  };
  try {
    return await captureExchange(services, exchange, async () => {
      if (!prepared) return errorAnswer(endpoint, { kind: 'too_large', code: 'request_too_large', message: tooLarge!.message });
      if ('error' in prepared) throw prepared.error;
      return services.gateway.call(endpoint, prepared, headers, request.signal);
    });
  } catch (error) {
    if (isRetryable(error)) {
      const answer = errorAnswer(endpoint, {
        kind: 'overloaded',
        code: error.code,
        message: `The ledger could not record this call; nothing was sent. Send it again. (${error.message})`,
      });
      answer.headers.set('retry-after', String(error.details.retryAfterSeconds ?? 1));
      return answer;
    }
    throw error;
  }
}

export const listModels = (request: Request, services: Services) => services.gateway.list(speaksAnthropic(request));
