// One function per contract shape: sends an already rendered step (secret values in place) and
// reads the answer, bounded. None of them records anything: the dispatcher does.
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { splitWords } from './template.ts';

export type Sent =
  | { method: string; url: string; headers: Record<string, string>; body?: unknown }
  | { server: string; headers: Record<string, string>; tool: string; arguments: Record<string, unknown> }
  | { argv: string[] };

export type StepAnswer = {
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

/** `streaming`: hand a successful streamed answer (event stream, or no length) back unread instead of reading it whole. */
export type Limits = { signal: AbortSignal; maxBytes: number; streaming?: boolean };

/**
 * An answer that arrives as a stream: an event stream, or a body without a length (chunked) that is
 * not one JSON document (a JSON answer is read whole, so the door can parse it into the result).
 */
export function isStreamedAnswer(response: Response): boolean {
  if (!response.body || response.status < 200 || response.status >= 300) return false;
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  return type.startsWith('text/event-stream') || (!response.headers.has('content-length') && !/^application\/(.+\+)?json\b/.test(type));
}

class TooLarge extends Error {
  readonly code = 'RESPONSE_TOO_LARGE';
  constructor(readonly size: number) {
    super(`answer larger than the limit (${size} bytes read)`);
  }
}

async function readBounded(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new TooLarge(size);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

export async function runHttp(sent: Extract<Sent, { url: string }>, { signal, maxBytes, streaming }: Limits): Promise<StepAnswer> {
  const body = sent.body === undefined ? undefined : typeof sent.body === 'string' ? sent.body : JSON.stringify(sent.body);
  const headers = { ...sent.headers };
  if (body !== undefined && typeof sent.body !== 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  const response = await fetch(sent.url, { method: sent.method, headers, ...(body !== undefined && { body }), signal, redirect: 'manual' });
  const out: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  const contentType = response.headers.get('content-type') ?? '';
  if (streaming && isStreamedAnswer(response)) return { status: response.status, body: response.body!, headers: out, contentType };
  const bytes = await readBounded(response.body, maxBytes);
  return { status: response.status, bytes, headers: out, contentType };
}

/** An MCP server is an http(s) URL (streamable HTTP) or a command line (stdio, split into words like a CLI contract). */
export async function runMcp(sent: Extract<Sent, { server: string }>, { signal, maxBytes }: Limits): Promise<StepAnswer> {
  const client = new Client({ name: 'dirledger-dispatch', version: '0.1.0' });
  const transport = /^https?:\/\//i.test(sent.server)
    ? new StreamableHTTPClientTransport(new URL(sent.server), { requestInit: { headers: sent.headers } })
    : (() => {
        const [command, ...args] = splitWords(sent.server);
        return new StdioClientTransport({ command: command!, args, stderr: 'ignore' });
      })();
  const abort = () => void client.close().catch(() => {});
  signal.addEventListener('abort', abort, { once: true });
  try {
    await client.connect(transport, { signal });
    const result = await client.callTool({ name: sent.tool, arguments: sent.arguments }, undefined, { signal, timeout: 2_147_483_647 });
    const text = JSON.stringify(result);
    const bytes = Buffer.from(text);
    if (bytes.length > maxBytes) throw new TooLarge(bytes.length);
    const value = answerOf(result);
    const valueBytes = Buffer.from(JSON.stringify(value ?? null));
    return { status: 0, ok: !result.isError, bytes: valueBytes, value, contentType: 'application/json', meta: { mcpResult: text.length > 65_536 ? '(large)' : result } };
  } finally {
    signal.removeEventListener('abort', abort);
    await client.close().catch(() => {});
  }
}

/** What an MCP tool answered: its structured content, else the JSON of a single text part, else the parts. */
function answerOf(result: Record<string, unknown>): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content as { type: string; text?: string }[] | undefined;
  if (content?.length === 1 && content[0]!.type === 'text') {
    try {
      return JSON.parse(content[0]!.text!);
    } catch {
      return content[0]!.text;
    }
  }
  return content ?? result;
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
