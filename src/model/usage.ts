// Tokens as the provider counted them: from a JSON answer's `usage`, or from the usage an event
// stream carries (OpenAI's final chunk, Responses' `response.completed`, Anthropic's message_start and
// message_delta). Only when the provider gave none is an estimate made, and it says so.
import { TOKEN_COUNT_MAX } from '../ledger/input.ts';
import type { Wire } from './catalog.ts';

/** `input` counts every input token; `cached` of them were read from the prompt cache, `cacheWrite` / `cacheWrite1h` written to it for 5 minutes / 1 hour. */
export type Usage = { input: number; output: number; cached: number; cacheWrite: number; cacheWrite1h: number; source: 'provider' | 'estimate' };

type Raw = Record<string, unknown>;
/** A count as a provider reported it; past what the Ledger's token columns hold it is no count (the answer's bytes keep it). */
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= TOKEN_COUNT_MAX ? v : undefined);
const obj = (v: unknown): Raw | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : undefined);

/**
 * One provider `usage` object → input (cache reads and writes included), output, cache reads and
 * writes; null when it has no counts. Anthropic counts cache writes apart from `input_tokens`, split
 * by lifetime in `cache_creation` (without it, every write is a 5-minute one, the default).
 */
function normalise(wire: Wire, u: Raw): Usage | null {
  if (wire === 'anthropic') {
    const base = num(u.input_tokens);
    const read = num(u.cache_read_input_tokens) ?? 0;
    const created = num(u.cache_creation_input_tokens) ?? 0;
    const output = num(u.output_tokens);
    if (base === undefined && output === undefined) return null;
    const hour = Math.min(num(obj(u.cache_creation)?.ephemeral_1h_input_tokens) ?? 0, created);
    const input = (base ?? 0) + read + created;
    if (input > TOKEN_COUNT_MAX) return null;
    return { input, output: output ?? 0, cached: read, cacheWrite: created - hour, cacheWrite1h: hour, source: 'provider' };
  }
  const input = num(u.prompt_tokens) ?? num(u.input_tokens);
  const output = num(u.completion_tokens) ?? num(u.output_tokens) ?? 0;
  if (input === undefined) return null;
  const details = obj(u.prompt_tokens_details) ?? obj(u.input_tokens_details);
  return { input, output, cached: num(details?.cached_tokens) ?? 0, cacheWrite: 0, cacheWrite1h: 0, source: 'provider' };
}

/** The usage of a JSON answer (chat completion, response, embeddings, message). */
export function usageOfJson(wire: Wire, value: unknown): Usage | null {
  const u = obj(obj(value)?.usage) ?? obj(obj(obj(value)?.response)?.usage);
  return u ? normalise(wire, u) : null;
}

export type StreamFacts = { usage: Usage | null; error: unknown };

/**
 * Reads an event stream's `data:` lines. Usage objects are merged in order, field by field, so
 * Anthropic's message_start (input) and last message_delta (cumulative output) make one count; an
 * `error` object in the stream (a mid-stream failure) is returned too.
 */
export function factsOfStream(wire: Wire, bytes: Buffer): StreamFacts {
  const merged: Raw = {};
  let seen = false;
  let error: unknown;
  for (const line of bytes.toString('utf8').split(/\r\n|\r|\n/)) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (!data.startsWith('{')) continue;
    let event: Raw | undefined;
    try {
      event = obj(JSON.parse(data));
    } catch {
      continue;
    }
    if (!event) continue;
    if (event.error !== undefined && (event.type === 'error' || event.type === undefined || wire === 'openai')) error = event.error;
    const usage = obj(event.usage) ?? obj(obj(event.message)?.usage) ?? obj(obj(event.response)?.usage);
    if (!usage) continue;
    for (const [k, v] of Object.entries(usage)) if (v !== null && v !== undefined) merged[k] = v;
    seen = true;
  }
  return { usage: seen ? normalise(wire, merged) : null, error };
}

/** The estimate when the provider gave no usage: 4 bytes a token of the request and of the answer (marked `estimate`). */
export function estimateUsage(requestBytes: number, answerBytes: number, charged: { output: boolean }): Usage {
  return {
    input: Math.ceil(requestBytes / 4),
    output: charged.output ? Math.ceil(answerBytes / 4) : 0,
    cached: 0,
    cacheWrite: 0,
    cacheWrite1h: 0,
    source: 'estimate',
  };
}
