// The filter that takes out of a caller's stream what the door's own include_usage added, whatever
// the chunk boundaries: cut at every byte, the caller gets the same bytes as from one chunk.
import { describe, expect, it } from 'vitest';
import { usageAsked, withoutUsageChunks } from '../../src/model/stream-usage.ts';
import { Endpoints } from '../../src/model/wire.ts';

const upstream = [
  'data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}\n\n',
  'data: {"id":"c","choices":[{"index":0,"delta":{"content":"usage is a word"}}],"usage":null}\r\n\r\n',
  'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}\n\n',
  'data: {"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}\n\n',
  'data: [DONE]\n\n',
].join('');
const expected = [
  'data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n',
  'data: {"id":"c","choices":[{"index":0,"delta":{"content":"usage is a word"}}]}\r\n\r\n',
  'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
  'data: [DONE]\n\n',
].join('');

async function through(chunks: Uint8Array[]): Promise<string> {
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  return Buffer.from(await new Response(source.pipeThrough(withoutUsageChunks())).arrayBuffer()).toString('utf8');
}

describe('withoutUsageChunks', () => {
  it('drops the usage chunk and the null usage of every other chunk, in one chunk and cut at every byte', async () => {
    const bytes = Buffer.from(upstream);
    expect(await through([bytes])).toBe(expected);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(await through([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at ${cut}`).toBe(expected);
    }
    expect(await through([...bytes].map((b) => Uint8Array.of(b)))).toBe(expected);
  });

  it('passes a stream without usage as it came, a last line without its line break included', async () => {
    const plain = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]';
    expect(await through([Buffer.from(plain)])).toBe(plain);
    const broken = 'data: {"choices":[],"usage":{"prompt_tokens":1}'; // not JSON: kept
    expect(await through([Buffer.from(`${broken}\n\n`)])).toBe(`${broken}\n\n`);
  });
});

describe('usageAsked', () => {
  const chat = Endpoints.CHAT_COMPLETIONS;
  it('asks only for a streamed chat completion whose caller did not', () => {
    expect(usageAsked(chat, { stream: true })).toEqual({ stream_options: { include_usage: true } });
    expect(usageAsked(chat, { stream: true, stream_options: { include_usage: false, x: 1 } })).toEqual({ stream_options: { include_usage: true, x: 1 } });
    expect(usageAsked(chat, { stream: true, stream_options: { include_usage: true } })).toBeNull();
    expect(usageAsked(chat, { stream: false })).toBeNull();
    expect(usageAsked(chat, { stream: true, stream_options: 'odd' })).toBeNull();
    expect(usageAsked(Endpoints.RESPONSES, { stream: true })).toBeNull();
  });
});
