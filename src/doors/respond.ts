// Small helpers every HTTP door shares: JSON answers, error bodies, bounded body reads.
import { isUtf8 } from 'node:buffer';
// The server adapter's own Response: it writes a string or buffer body in one go, where a global
// Response is streamed through a reader (about half the CPU of a small JSON answer).
import { Response } from '@whatwg-node/server';
import { DomainError, ErrorCode, httpStatusOf } from '../errors.ts';
import { jsonTextTooDeep, readBody, tooDeep } from '../limits.ts';

export { readBody };

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(
    JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
    {
      status,
      headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    },
  );
}

export function errorResponse(error: DomainError, headers: Record<string, string> = {}): Response {
  const extra: Record<string, string> =
    error.code === ErrorCode.DATABASE_UNAVAILABLE || error.code === ErrorCode.SPOOL_UNAVAILABLE || error.code === ErrorCode.SERVER_BUSY
      ? { 'retry-after': String(error.details.retryAfterSeconds ?? 5) }
      : {};
  return json({ error: { code: error.code, message: error.message, ...error.details } }, httpStatusOf[error.code], {
    ...extra,
    ...headers,
  });
}

/** A DomainError as a GraphQL answer (`errors[0].extensions.code`): a GraphQL door failing outside its operation (its record could not be written). */
export function graphqlErrorResponse(error: DomainError): Response {
  const retry = error.details.retryAfterSeconds;
  return json({ errors: [{ message: error.message, extensions: { code: error.code, ...error.details } }] }, httpStatusOf[error.code], {
    ...(retry !== undefined && { 'retry-after': String(retry) }),
  });
}

// Never coerce: replacing invalid bytes with U+FFFD would record bytes nobody sent.

export async function readJson(request: Request, limit: number): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected content-type application/json, got ${JSON.stringify(type || 'nothing')}.`);
  }
  const body = await readBody(request, limit);
  // isUtf8 (native validation) + toString decode the same as the strict TextDecoder, BOM dropped
  // alike, at a fraction of its cost on a megabyte batch.
  if (!isUtf8(body)) {
    throw new DomainError(ErrorCode.BAD_INPUT, 'Expected a JSON body in UTF-8, got bytes that are not valid UTF-8 (send such payloads as base64).');
  }
  const bom = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  const text = body.toString('utf8', bom);
  if (jsonTextTooDeep(text)) throw tooDeep('the body');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected a JSON body, got invalid JSON (${(error as Error).message}).`);
  }
}
