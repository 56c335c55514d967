// One function per contract shape: sends an already rendered step (secret values in place) and
// reads the answer, bounded. None of them records anything: the dispatcher does.
import { spawn } from 'node:child_process';
import type { IncomingHttpHeaders } from 'node:http';
import { type Duplex, pipeline, Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import { Agent, request, type Dispatcher } from 'undici';
import type { StdioWire } from './mcp-stdio.ts';

export type Sent =
  | { method: string; url: string; headers: Record<string, string>; body?: unknown }
  /** MCP: `argv` (the command line in words) for a server over stdio, absent for one over HTTP. */
  | { server: string; argv?: string[]; headers: Record<string, string>; tool: string; arguments: Record<string, unknown> }
  | { argv: string[] };

export type StepAnswer = {
  /** An MCP step over stdio: the bytes that crossed the pipes (also on a thrown error, as `error.wire`). */
  wire?: StdioWire;
  /** HTTP status, or a CLI exit code (0 for an MCP answer). */
  status: number;
  ok?: boolean;
  bytes?: Buffer;
  headers?: Record<string, string | string[]>;
  contentType?: string;
  /** Set when the bytes are the JSON of this value. */
  value?: unknown;
  meta?: Record<string, unknown>;
  /** A streamed answer, unread: set only when the caller asked for streaming (`Limits.streaming`). */
  body?: ReadableStream<Uint8Array>;
};

/**
 * `streaming`: hand a successful streamed answer (event stream, or no length) back unread instead of
 * reading it whole. `onStdout`: an MCP server's stdout chunks as they arrive (for streamCapture).
 */
export type Limits = { signal: AbortSignal; maxBytes: number; streaming?: boolean; onStdout?: (chunk: Buffer) => void };

/**
 * An answer that arrives as a stream: an event stream, or a body without a length (chunked) that is
 * not one JSON document (a JSON answer is read whole, so the door can parse it into the result).
 */
export function isStreamedAnswer(method: string, status: number, headers: IncomingHttpHeaders): boolean {
  if (method === 'HEAD' || status < 200 || status >= 300 || status === 204 || status === 205) return false;
  const type = headerText(headers['content-type']).toLowerCase();
  return type.startsWith('text/event-stream') || (headers['content-length'] === undefined && !/^application\/(.+\+)?json\b/.test(type));
}

export class TooLarge extends Error {
  readonly code = 'RESPONSE_TOO_LARGE';
  readonly size: number;
  constructor(size: number) {
    super(`answer larger than the limit (${size} bytes read)`);
    this.size = size;
  }
}

function readBounded(body: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        reject(new TooLarge(size));
      } else chunks.push(chunk);
    });
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    body.once('error', reject);
  });
}

/** One keep-alive pool for every HTTP step. Not the global dispatcher, so generic outbound capture never sees these calls. */
const agent = new Agent();

/** The headers Node's fetch added when the contract does not set them; sent as before, so upstreams see the same request. */
const fetchDefaults: [string, string][] = [
  ['accept', '*/*'],
  ['accept-language', '*'],
  ['sec-fetch-mode', 'cors'],
  ['user-agent', 'node'],
  ['accept-encoding', 'gzip, deflate'],
];

/** Ports fetch refuses (https://fetch.spec.whatwg.org/#block-bad-port), still refused. */
const badPorts = new Set(
  '1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110 111 113 115 117 119 123 135 137 139 143 161 179 389 427 465 512 513 514 515 526 530 531 532 540 548 554 556 563 587 601 636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190 5060 5061 6000 6566 6665 6666 6667 6668 6669 6679 6697 10080'.split(
    ' ',
  ),
);

export async function runHttp(sent: Extract<Sent, { url: string }>, { signal, maxBytes, streaming }: Limits): Promise<StepAnswer> {
  const body = sent.body === undefined ? undefined : typeof sent.body === 'string' ? sent.body : JSON.stringify(sent.body);
  if (body !== undefined && (sent.method === 'GET' || sent.method === 'HEAD')) throw new TypeError('Request with GET/HEAD method cannot have body.');
  const url = new URL(sent.url);
  if (url.username || url.password) throw new TypeError(`Request cannot be constructed from a URL that includes credentials: ${url.origin}`);
  if (badPorts.has(url.port)) throw new TypeError(`port ${url.port} is blocked (a bad port in the fetch standard)`);
  const headers = { ...sent.headers };
  const names = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
  if (body !== undefined && !names.has('content-type'))
    headers['content-type'] = typeof sent.body === 'string' ? 'text/plain;charset=UTF-8' : 'application/json';
  for (const [name, value] of fetchDefaults) if (!names.has(name)) headers[name] = value;
  const response = await request(url, {
    method: sent.method as Dispatcher.HttpMethod,
    headers,
    ...(body !== undefined && { body }),
    signal,
    dispatcher: agent,
  });
  const out = response.headers as Record<string, string | string[]>;
  const contentType = headerText(out['content-type']);
  const answer = decoded(sent.method, response.statusCode, out, response.body);
  if (streaming && isStreamedAnswer(sent.method, response.statusCode, out))
    return { status: response.statusCode, body: Readable.toWeb(answer) as ReadableStream<Uint8Array>, headers: out, contentType };
  const bytes = await readBounded(answer, maxBytes);
  return { status: response.statusCode, bytes, headers: out, contentType };
}

function headerText(value: string | string[] | undefined): string {
  return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
}

const zlibFlush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const brotliFlush = { flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH };

/** The body with its content codings undone, as fetch did (gzip, deflate, br; any other coding: left as it came). */
function decoded(method: string, status: number, headers: Record<string, string | string[]>, body: Readable): Readable {
  const encoding = headers['content-encoding'];
  if (encoding === undefined || method === 'HEAD' || status === 204 || status === 205 || status === 304) return body;
  const decoders: Duplex[] = [];
  for (const coding of headerText(encoding)
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') decoders.push(zlib.createGunzip(zlibFlush));
    else if (coding === 'deflate') decoders.push(inflate());
    else if (coding === 'br') decoders.push(zlib.createBrotliDecompress(brotliFlush));
    else return body;
  }
  return pipeline([body, ...decoders], () => {}) as unknown as Readable;
}

/** deflate as servers send it: zlib-wrapped, or raw (told apart by the first byte). */
function inflate(): Duplex {
  let inner: zlib.Inflate | zlib.InflateRaw | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!inner) {
        if (chunk.length === 0) return done();
        inner = (chunk[0]! & 0x0f) === 0x08 ? zlib.createInflate(zlibFlush) : zlib.createInflateRaw(zlibFlush);
        inner.on('data', (data: Buffer) => this.push(data));
        inner.on('error', (error) => this.destroy(error));
      }
      inner.write(chunk, () => done());
    },
    flush(done) {
      if (!inner) return done();
      inner.once('end', () => done());
      inner.end();
    },
  });
}

/** Spawns the program with its argument vector (no shell), stdin closed; stdout is the answer. */
export function runCli(sent: Extract<Sent, { argv: string[] }>, { signal, maxBytes }: Limits): Promise<StepAnswer> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = sent.argv;
    const child = spawn(command!, args, { shell: false, stdio: ['ignore', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let errSize = 0;
    let failed: Error | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        failed ??= new TooLarge(size);
        child.kill('SIGKILL');
      } else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errSize < 16_384) err.push(chunk.subarray(0, 16_384 - errSize));
      errSize += chunk.length;
    });
    child.on('error', (error) => {
      failed ??= error;
    });
    child.on('close', (code, killed) => {
      if (failed) return reject(failed);
      const stderr = Buffer.concat(err).toString('utf8');
      resolve({
        status: code ?? -1,
        bytes: Buffer.concat(out, size),
        meta: { exitCode: code, ...(killed && { signal: killed }), ...(stderr && { stderr }) },
      });
    });
  });
}
