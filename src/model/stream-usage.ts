// OpenAI streams a chat completion's usage only when asked (`stream_options.include_usage`). The door
// always asks, so every streamed call is charged from the provider's own count, and gives a caller
// that did not ask the stream it would have had: without the extra last chunk (`choices: []` and the
// usage) and without the `"usage":null` OpenAI then adds to every other chunk. The ledger's answer IN
// keeps the upstream's bytes; the answer OUT is what the caller received.
import type { Endpoint } from './wire.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The fields to set on the upstream request so it streams its usage; null when the caller asked already, or it is not a streamed chat completion. */
export function usageAsked(endpoint: Endpoint, parsed: Record<string, unknown>): Record<string, unknown> | null {
  if (endpoint.name !== 'CHAT_COMPLETIONS' || parsed.stream !== true) return null;
  const options = parsed.stream_options;
  if (options !== undefined && options !== null && !isObject(options)) return null;
  if (isObject(options) && options.include_usage === true) return null;
  return { stream_options: { ...(isObject(options) ? options : {}), include_usage: true } };
}

const NEWLINE = 0x0a;
const USAGE = Buffer.from('"usage"');
const NULL_USAGE_END = ',"usage":null}';

/** The usage-only chunk: `data: {…, "choices": [], "usage": {…}}`. */
function isUsageChunk(line: string): boolean {
  if (!line.startsWith('data:') || !line.includes('"choices":[]')) return false;
  try {
    const value = JSON.parse(line.slice(5));
    return isObject(value) && Array.isArray(value.choices) && value.choices.length === 0 && isObject(value.usage);
  } catch {
    return false;
  }
}

/**
 * The caller's stream without what asking for usage added. Whole lines only are rewritten: bytes after
 * the last line break wait for the next chunk (an event's line rarely spans chunks); lines without
 * `"usage"` pass as they came.
 */
export function withoutUsageChunks(): TransformStream<Uint8Array, Uint8Array> {
  let carry: Buffer | undefined;
  let dropBlank = false;
  return new TransformStream({
    transform(chunk, controller) {
      const bytes = carry ? Buffer.concat([carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const end = bytes.lastIndexOf(NEWLINE) + 1;
      carry = end < bytes.length ? Buffer.from(bytes.subarray(end)) : undefined;
      if (end === 0) return;
      const whole = bytes.subarray(0, end);
      if (!dropBlank && !whole.includes(USAGE)) {
        controller.enqueue(whole);
        return;
      }
      const kept: string[] = [];
      for (const line of whole.toString('utf8').slice(0, -1).split('\n')) {
        const text = line.endsWith('\r') ? line.slice(0, -1) : line;
        if (dropBlank && text === '') {
          dropBlank = false;
          continue;
        }
        dropBlank = false;
        if (isUsageChunk(text)) {
          dropBlank = true;
          continue;
        }
        kept.push(text.endsWith(NULL_USAGE_END) ? `${text.slice(0, -NULL_USAGE_END.length)}}${line.slice(text.length)}` : line);
      }
      if (kept.length) controller.enqueue(Buffer.from(`${kept.join('\n')}\n`));
    },
    flush(controller) {
      if (carry) controller.enqueue(carry);
    },
  });
}
