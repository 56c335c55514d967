// The limits every door applies to what arrives, before parsing deeper or storing, in one place:
//   JSON depth      at most JSON_MAX_DEPTH arrays/objects inside one another, the whole document
//                   counted; raw text is pre-scanned before JSON.parse, parsed values walked without
//                   recursion, so nothing downstream (redaction, hashing, Ajv) recurses past it
//   body size       PAYLOAD_MAX_BYTES (doors, GraphQL, WebSocket frames), BATCH_MAX_BYTES (ingest)
//   plain text      names, filters, ids, invocation headers, positions, cursors hold no NUL and no
//                   unpaired surrogate (PostgreSQL text cannot hold NUL; a lone surrogate has no
//                   UTF-8 form). Args, metadata and payloads are content and are not checked here.
//   whole numbers   positions and cursors fit PostgreSQL's bigint
import { badInput, DomainError, ErrorCode } from './errors.ts';

/** Deepest JSON nesting any door accepts (the recursive steps after it stay far from the stack limit). */
export const JSON_MAX_DEPTH = 512;
/** The largest value of a PostgreSQL bigint (positions). */
export const BIGINT_MAX = 9_223_372_036_854_775_807n;

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when raw JSON text nests deeper than `max`: one linear scan of brackets outside strings. */
export function jsonTextTooDeep(text: string | Uint8Array, max = JSON_MAX_DEPTH): boolean {
  // Nesting past `max` takes more than `max` opening brackets: a shorter text cannot (most requests).
  if (text.length <= max) return false;
  // Scanned as UTF-8 bytes (no byte of a multi-byte character is ASCII) in one monomorphic loop: reading a
  // string or bytes through one accessor was ~3% of a recorded GraphQL read's CPU.
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
  }
  return false;
}

/** True when a parsed value nests deeper than `max`, walked with an explicit stack. */
export function valueTooDeep(value: unknown, max = JSON_MAX_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** The BAD_INPUT for JSON past the depth limit, naming where it arrived. */
export function tooDeep(what: string, max = JSON_MAX_DEPTH): DomainError {
  return badInput(`Expected ${what} as JSON nested at most ${max} levels deep, got JSON nested deeper than ${max}.`, { limit: 'depth', max });
}

/** JSON.parse behind the depth pre-scan; throws BAD_INPUT naming `what`. */
export function parseJsonText(text: string, what: string): unknown {
  if (jsonTextTooDeep(text)) throw tooDeep(what);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badInput(`Expected ${what} as JSON, got invalid JSON (${(error as Error).message}).`);
  }
}

/** What makes text unfit for a name, filter, id, header or position; undefined when it is fit. */
export function plainTextProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'a NUL character';
  if (!text.isWellFormed()) return 'an unpaired surrogate';
  return undefined;
}

/** A name a column can hold: plain text, 1 to `max` characters. */
export function isPlainName(text: string, max = 512): boolean {
  return text.length >= 1 && text.length <= max && !plainTextProblem(text);
}

export const plainTextExpected = 'text without NUL characters or unpaired surrogates';

/** Throws BAD_INPUT naming `field` when `text` holds NUL or an unpaired surrogate. */
export function requirePlainText(field: string, text: string): string {
  const problem = plainTextProblem(text);
  if (problem) throw badInput(`Invalid ${field}: expected ${plainTextExpected}, got ${JSON.stringify(text.slice(0, 80))} (it holds ${problem}).`, { field });
  return text;
}

/** A whole number in decimal that fits a bigint position (0 … 2^63−1). */
export function isBigintText(text: string): boolean {
  return /^\d{1,19}$/.test(text) && BigInt(text) <= BIGINT_MAX;
}

/**
 * A body read with `arrayBuffer()` (or a chunk of one) as a Buffer over the same bytes, not a copy: the
 * server adapter's Request and Response answer a Buffer there (not an ArrayBuffer), which `Buffer.from` would copy.
 */
export function bodyBytes(body: ArrayBuffer | ArrayBufferView): Buffer<ArrayBuffer> {
  return ArrayBuffer.isView(body) ? Buffer.from(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength) : Buffer.from(body);
}

/** Reads a request body, refusing (413) as soon as it passes `limit` bytes. */
export async function readBody(request: Request, limit: number): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limit) throw tooLarge(limit, declared);
  if (declared <= limit) {
    // Node's parser ends a body at its declared length, so it is read whole: the adapter collects its
    // chunks without the web stream and async iterator a reader builds over them (~30 µs a dispatched call under the profiler).
    const whole = bodyBytes(await request.arrayBuffer());
    if (whole.length > limit) throw tooLarge(limit, whole.length);
    return whole;
  }
  if (!request.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit, size);
    }
    chunks.push(value);
  }
  // One chunk (a small body) is the body: a view over it, not a copy.
  if (chunks.length === 1) return bodyBytes(chunks[0]!);
  return Buffer.concat(chunks, size);
}

export function tooLarge(limit: number, size: number): DomainError {
  return new DomainError(
    ErrorCode.PAYLOAD_TOO_LARGE,
    `Request body too large: expected at most ${limit} bytes, got ${Number.isNaN(size) ? 'more' : `at least ${size}`}.`,
    {
      limit,
    },
  );
}
