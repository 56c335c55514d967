// The model door driven by the official @anthropic-ai/sdk client against a fake Anthropic upstream.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelApp, UPSTREAM_KEY, type ModelApp } from './helpers.ts';

let t: ModelApp;
let client: Anthropic;
beforeAll(async () => {
  t = await startModelApp();
  // The two-line setup: this server as the base URL, a dirledger token as the key (sent as x-api-key).
  client = new Anthropic({ baseURL: t.origin, apiKey: t.token, maxRetries: 0 });
}, 60_000);
afterAll(async () => t?.stop());

const claude = { input: 3, cached: 0.3, output: 15 };
const cost = (input: number, cached: number, output: number) =>
  (((input - cached) * claude.input + cached * claude.cached + output * claude.output) / 1e6).toFixed(10);

describe('Anthropic wire', () => {
  it('a message, routed through the resolver ("fake sonnet"), sent as the upstream model id, charged at the row price', async () => {
    const { data, response } = await client.messages
      .create({ model: 'fake sonnet', max_tokens: 6, messages: [{ role: 'user', content: 'hello FAKE_CACHED' }] })
      .withResponse();
    expect(data.content[0]).toMatchObject({ type: 'text', text: 'w0 w1 w2 w3 w4 w5' });
    const fake = t.fake.calls.at(-1)!;
    expect(JSON.parse(fake.body.toString()).model).toBe('claude-upstream-id');
    expect(fake.headers['x-api-key']).toBe(UPSTREAM_KEY);
    expect(fake.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const events = await t.events(response.headers.get('x-dirledger-action')!);
    expect(events.map((e) => e.kind)).toEqual(['REQUEST', 'MODEL_CALL', 'MODEL_RESULT', 'RESPONSE']);
    const call = events[1]!;
    const result = events[2]!;
    expect(call.headers['x-api-key']).toBe('[OPENAI_API_KEY]');
    expect(call.metadata.route).toMatchObject({ query: 'fake sonnet', layer: 'NAME_WORDS' });
    expect(result.model).toBe('fake-claude-sonnet');
    expect(result.inputTokens).toBe(fake.usage!.input);
    expect(result.metadata.cachedTokens).toBe(fake.usage!.cached);
    expect(result.outputTokens).toBe(6);
    expect(result.costUsd.toFixed(10)).toBe(cost(fake.usage!.input, fake.usage!.cached, 6));
  });

  it('cache writes are charged at their own rates (5-minute 1.25×, 1-hour 2× the input price), JSON and streamed', async () => {
    // units of 10^-10 USD per token: 3, 3.75, 6, 0.30 and 15 USD per million.
    const units = (u: { input: number; cached: number; cacheWrite: number; cacheWrite1h: number; output: number }) => {
      const plain = u.input - u.cached - u.cacheWrite - u.cacheWrite1h;
      const sum =
        BigInt(plain) * 30_000n + BigInt(u.cacheWrite) * 37_500n + BigInt(u.cacheWrite1h) * 60_000n + BigInt(u.cached) * 3_000n + BigInt(u.output) * 150_000n;
      return `${sum / 10n ** 10n}.${(sum % 10n ** 10n).toString().padStart(10, '0')}`;
    };
    const asked = {
      model: 'fake-claude-sonnet',
      max_tokens: 5,
      messages: [{ role: 'user' as const, content: 'long system prompt FAKE_CACHE_WRITE FAKE_CACHED' }],
    };
    const { data, response } = await client.messages.create(asked).withResponse();
    const jsonUsage = t.fake.calls.at(-1)!.usage!;
    expect(jsonUsage.cacheWrite).toBeGreaterThan(0);
    expect(jsonUsage.cacheWrite1h).toBeGreaterThan(0);
    expect(data.usage).toMatchObject({ cache_creation_input_tokens: jsonUsage.cacheWrite + jsonUsage.cacheWrite1h });
    const streamed = client.messages.stream(asked);
    await streamed.finalMessage();
    const { response: streamedResponse } = await streamed.withResponse();
    const calls = [
      [response, jsonUsage],
      [streamedResponse, t.fake.calls.at(-1)!.usage!],
    ] as const;
    for (const [answer, fake] of calls) {
      const result = (await t.events(answer.headers.get('x-dirledger-action')!)).find((e) => e.kind === 'MODEL_RESULT')!;
      expect(result.inputTokens).toBe(fake.input);
      expect(result.metadata).toMatchObject({ cachedTokens: fake.cached, cacheWriteTokens: fake.cacheWrite, cacheWrite1hTokens: fake.cacheWrite1h });
      expect(result.costUsd.toFixed(10)).toBe(units(fake));
    }
    const price = await t.gql('{ model(name: "fake-claude-sonnet") { price { input cached cacheWrite cacheWrite1h } } }');
    expect(price.data.model.price).toEqual({ input: '3', cached: '0.30', cacheWrite: '3.75', cacheWrite1h: '6' });
  });

  it('streams events as Anthropic does; message_start and message_delta usage are merged', async () => {
    const stream = client.messages.stream({ model: 'fake-claude-sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'stream' }] });
    const final = await stream.finalMessage();
    expect(final.usage.output_tokens).toBe(10);
    const { response } = await stream.withResponse();
    const events = await t.events(response.headers.get('x-dirledger-action')!);
    const result = events.find((e) => e.kind === 'MODEL_RESULT')!;
    const fake = t.fake.calls.at(-1)!;
    expect(result.metadata).toMatchObject({ stream: true, usage: 'provider', clientDisconnected: false });
    expect(result.inputTokens).toBe(fake.usage!.input);
    expect(result.outputTokens).toBe(10);
    expect(result.costUsd.toFixed(10)).toBe(cost(fake.usage!.input, 0, 10));
    expect(events.find((e) => e.kind === 'RESPONSE')!.payloadSha256).toBe(result.payloadSha256);
  });

  it('tool use, JSON and streamed; count_tokens is free', async () => {
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const done = await client.messages.create({ model: 'fake-claude-sonnet', max_tokens: 20, tools, messages: [{ role: 'user', content: 'FAKE_TOOL' }] });
    expect(done.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Lisbon' } });
    const streamed = await client.messages
      .stream({ model: 'fake-claude-sonnet', max_tokens: 20, tools, messages: [{ role: 'user', content: 'FAKE_TOOL' }] })
      .finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: 'tool_use', input: { city: 'Lisbon' } });
    const { data: counted, response } = await client.messages
      .countTokens({ model: 'fake-claude-sonnet', messages: [{ role: 'user', content: 'count me' }] })
      .withResponse();
    expect(counted.input_tokens).toBeGreaterThan(0);
    const result = (await t.events(response.headers.get('x-dirledger-action')!)).find((e) => e.kind === 'MODEL_RESULT')!;
    expect(result.costUsd).toBeNull();
    expect(result.inputTokens).toBeNull();
  });

  it('errors keep the provider shape: 4xx/5xx passed through, a mid-stream error event, an unknown model', async () => {
    const e400 = await client.messages
      .create({ model: 'fake-claude-sonnet', max_tokens: 5, messages: [{ role: 'user', content: 'FAKE_ERROR_400' }] })
      .catch((e) => e);
    expect(e400).toBeInstanceOf(Anthropic.BadRequestError);
    expect(e400.error.error.message).toContain('you asked for a 400');
    const e500 = await client.messages
      .create({ model: 'fake-claude-sonnet', max_tokens: 5, messages: [{ role: 'user', content: 'FAKE_ERROR_500' }] })
      .catch((e) => e);
    expect(e500).toBeInstanceOf(Anthropic.InternalServerError);
    const broken = await client.messages
      .stream({ model: 'fake-claude-sonnet', max_tokens: 12, messages: [{ role: 'user', content: 'FAKE_MIDSTREAM_ERROR' }] })
      .finalMessage()
      .catch((e) => e);
    expect(broken).toBeInstanceOf(Anthropic.APIError);
    const unknown = await client.messages.create({ model: 'gpt-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect(unknown.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'model_not_found' } });
    const wrongKey = await new Anthropic({ baseURL: t.origin, apiKey: 'not-a-token', maxRetries: 0 }).messages
      .create({ model: 'fake-claude-sonnet', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(wrongKey).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('a client that disconnects mid-stream: its answer OUT is PARTIAL, the upstream answer IN read on and charged in full', async () => {
    const controller = new AbortController();
    const response = await fetch(`${t.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.token, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'fake-claude-sonnet', max_tokens: 40, stream: true, messages: [{ role: 'user', content: 'FAKE_SLOW' }] }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const events = await t.events(response.headers.get('x-dirledger-action')!);
    const out = events.find((e) => e.kind === 'RESPONSE')!;
    const result = events.find((e) => e.kind === 'MODEL_RESULT')!;
    expect(out.payloadState).toBe('PARTIAL');
    expect(out.metadata.clientDisconnected).toBe(true);
    expect(result.payloadState).toBe('COMPLETE');
    expect(result.metadata.clientDisconnected).toBe(true);
    expect(result.outputTokens).toBe(40);
    expect(result.metadata.usage).toBe('provider');
  });
});
