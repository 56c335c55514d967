// Provider usage as the Ledger's token columns can hold it: a count past a 4-byte integer is no count (the door
// then estimates, marked as such), never a value the append would refuse forever.
import { describe, expect, it } from 'vitest';
const TOKEN_COUNT_MAX = 2_147_483_647;
import { factsOfStream, usageOfJson } from '../../src/model/usage.ts';

describe('provider usage within the token columns', () => {
  it('reads counts up to the largest a column holds', () => {
    expect(usageOfJson('openai', { usage: { prompt_tokens: TOKEN_COUNT_MAX, completion_tokens: 7 } })).toMatchObject({
      input: TOKEN_COUNT_MAX,
      output: 7,
      source: 'provider',
    });
    expect(usageOfJson('anthropic', { usage: { input_tokens: 10, output_tokens: 3, cache_read_input_tokens: 5 } })).toMatchObject({
      input: 15,
      output: 3,
      cached: 5,
    });
  });

  it('takes a count past it as no count', () => {
    expect(usageOfJson('openai', { usage: { prompt_tokens: TOKEN_COUNT_MAX + 1, completion_tokens: 7 } })).toBeNull();
    expect(usageOfJson('openai', { usage: { prompt_tokens: 3, completion_tokens: 2 ** 40 } })).toMatchObject({ input: 3, output: 0 });
    const stream = Buffer.from(`data: {"choices":[],"usage":{"prompt_tokens":${2 ** 53},"completion_tokens":1}}\n\ndata: [DONE]\n\n`);
    expect(factsOfStream('openai', stream).usage).toBeNull();
  });

  it('takes an Anthropic input whose parts sum past it as no count', () => {
    const half = Math.ceil(TOKEN_COUNT_MAX / 2);
    expect(usageOfJson('anthropic', { usage: { input_tokens: half, cache_read_input_tokens: half, output_tokens: 1 } })).toBeNull();
  });
});
