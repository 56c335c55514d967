// Sending one model call to its upstream: the row's contract (base URL, headers with [SECRET] names)
// rendered with the secrets' values only in the copy that is sent, the client's body as it came (its
// `model` rewritten when the row names the upstream's model differently, stream_options when the door
// asks for a stream's usage), the answer unread.
// Its own keep-alive pool, not the global dispatcher: generic outbound capture never sees these calls.
import { Agent, request, type Dispatcher } from 'undici';
import { render } from '../dispatch/template.ts';
import type { ModelRow } from './catalog.ts';
import type { Endpoint } from './wire.ts';

const agent = new Agent({ keepAliveTimeout: 30_000 });

/** Client headers the upstream needs to read the request as the client meant it. */
const forwarded = ['content-type', 'accept', 'anthropic-version', 'anthropic-beta', 'openai-beta', 'openai-organization', 'openai-project', 'idempotency-key'];

/** Answer headers worth passing back: the type, the provider's request ids, rate-limit and retry hints. */
const answerHeader = /^(content-type|retry-after|x-request-id|request-id|openai-|anthropic-|x-ratelimit-|x-should-retry)/;

export type UpstreamRequest = {
  url: string;
  /** As recorded: the contract's headers with secrets as [NAMES]. */
  shownHeaders: Record<string, string>;
  /** As sent: with the secrets' values. */
  sentHeaders: Record<string, string>;
  body: Buffer;
};

export function upstreamRequest(
  row: ModelRow,
  endpoint: Endpoint,
  /** The client's headers as recorded (lowercase names). */
  client: Record<string, string | string[]>,
  body: Buffer,
  parsed: Record<string, unknown>,
  secrets: Record<string, string>,
  /** Body fields the door sets (stream_options to read a stream's usage). */
  set: Record<string, unknown> | null = null,
): UpstreamRequest {
  const base = row.upstream.url.replace(/\/+$/, '');
  const rendered = render(row.upstream.headers ?? {}, {}, secrets, 'header');
  const shown: Record<string, string> = {};
  for (const name of forwarded) {
    const value = client[name];
    if (value !== undefined) shown[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  // Plain bytes back, so the usage can be read (and recorded) as the provider wrote it.
  shown['accept-encoding'] = 'identity';
  const sent = { ...shown, ...(rendered.sent as Record<string, string>) };
  Object.assign(shown, rendered.shown as Record<string, string>);
  const rewritten = parsed.model !== row.upstreamModel || set ? Buffer.from(JSON.stringify({ ...parsed, ...set, model: row.upstreamModel })) : body;
  return { url: `${base}/${endpoint.path}`, shownHeaders: shown, sentHeaders: sent, body: rewritten };
}

export async function sendUpstream(
  req: UpstreamRequest,
  signal: AbortSignal,
): Promise<{ status: number; headers: Record<string, string | string[]>; body: Dispatcher.ResponseData['body'] }> {
  const response = await request(req.url, { method: 'POST', headers: req.sentHeaders, body: req.body, signal, dispatcher: agent });
  return { status: response.statusCode, headers: response.headers as Record<string, string | string[]>, body: response.body };
}

/** The answer headers passed to the client and recorded. */
export function answerHeaders(headers: Record<string, string | string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (answerHeader.test(name) && value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export const isEventStream = (headers: Record<string, string | string[]>) => String(headers['content-type'] ?? '').startsWith('text/event-stream');
