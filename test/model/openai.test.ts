// The model door driven by the official openai client against a fake OpenAI upstream: every event,
// token count and cost checked against the fake's own figures.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamQuery, wsClient, wsSubscribe } from '../live/helpers.ts';
import { startModelApp, UPSTREAM_KEY, type ModelApp } from './helpers.ts';

let t: ModelApp;
let client: OpenAI;
beforeAll(async () => {
  t = await startModelApp();
  client = new OpenAI({ baseURL: `${t.origin}/v1`, apiKey: t.token, maxRetries: 0 });
}, 60_000);
afterAll(async () => t?.stop());

/** Cost in USD at per-million prices, as the exact decimal the ledger stores (10 places). */
const cost = (input: number, cached: number, output: number, p: { input: number; cached: number; output: number }) =>
  (((input - cached) * p.input + cached * p.cached + output * p.output) / 1e6).toFixed(10);
const gpt = { input: 0.15, cached: 0.075, output: 0.6 };

describe('OpenAI wire', () => {
  it('chat completion: four events, exact bytes, tokens and cost from the provider usage, upstream key never stored', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'hello FAKE_CACHED' }], max_tokens: 7 })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('w0 w1 w2 w3 w4 w5 w6');
    const actionId = response.headers.get('x-dirledger-action')!;
    const fake = t.fake.calls.at(-1)!;
    expect(fake.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(data.usage!.prompt_tokens).toBe(fake.usage!.input);
    const events = await t.events(actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'MODEL_CALL/OUT', 'MODEL_RESULT/IN', 'RESPONSE/OUT']);
    const [reqIn, callOut, resultIn, answerOut] = events;
    // The boundary's request IN and answer OUT carry the model row like the door's own events.
    expect(events.map((e) => e.model)).toEqual(['fake-gpt', 'fake-gpt', 'fake-gpt', 'fake-gpt']);
    expect(callOut.headers.authorization).toBe('Bearer [OPENAI_API_KEY]');
    expect(callOut.url).toBe(`${t.fake.origin}/openai/v1/chat/completions`);
    expect(await t.payloadText(callOut.payloadSha256)).toBe(fake.body.toString('utf8'));
    expect(await t.payloadText(reqIn.payloadSha256)).toBe(fake.body.toString('utf8'));
    expect(await t.payloadText(resultIn.payloadSha256)).toBe(await t.payloadText(answerOut.payloadSha256));
    expect(resultIn.inputTokens).toBe(fake.usage!.input);
    expect(resultIn.outputTokens).toBe(7);
    expect(resultIn.metadata.cachedTokens).toBe(fake.usage!.cached);
    expect(resultIn.metadata.usage).toBe('provider');
    expect(resultIn.costUsd.toFixed(10)).toBe(cost(fake.usage!.input, fake.usage!.cached, 7, gpt));
    expect(resultIn.metadata.route).toEqual({ query: 'fake-gpt', layer: 'EXACT_NAME', score: 1000 });
    const price = await t.app.services.db.sql.query('SELECT * FROM model_price WHERE sha256 = $1', [resultIn.metadata.price.id]);
    expect(price[0]).toMatchObject({ model: 'fake-gpt', provider: 'openai', price_date: '2026-12-01' });
    expect(resultIn.contractSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a JSON answer reaches the client as the upstream wrote it, and the answer IN and OUT record those very bytes', async () => {
    const body = JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'héllo ✓' }], max_tokens: 3 });
    const response = await fetch(`${t.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', 'idempotency-key': 'idem-1', 'x-dirledger-session': 'sess-1' },
      body,
    });
    const received = Buffer.from(await response.arrayBuffer());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(received.length));
    expect(JSON.parse(received.toString('utf8')).choices[0].message.content).toBe('w0 w1 w2');
    const [reqIn, , resultIn, answerOut] = await t.events(response.headers.get('x-dirledger-action')!);
    expect(await t.payloadText(reqIn.payloadSha256)).toBe(body);
    expect(await t.payloadText(resultIn.payloadSha256)).toBe(received.toString('utf8'));
    expect(await t.payloadText(answerOut.payloadSha256)).toBe(received.toString('utf8'));
    expect(answerOut.headers['content-type']).toBe(response.headers.get('content-type'));
    // The answer OUT's headers are the ones sent, the length the client read included.
    expect(answerOut.headers['content-length']).toBe(String(received.length));
    // The client's headers, read once: forwarded upstream, recorded on the request IN, and the invocation's session.
    expect(t.fake.calls.at(-1)!.headers['idempotency-key']).toBe('idem-1');
    expect(reqIn.headers['idempotency-key']).toBe('idem-1');
    expect([reqIn.session, resultIn.session, answerOut.session]).toEqual(['sess-1', 'sess-1', 'sess-1']);
  });

  it('streams chunks as the provider does; the final usage chunk gives the tokens', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'fake-gpt',
        messages: [{ role: 'user', content: 'stream please' }],
        max_completion_tokens: 9,
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text.trim()).toBe('w0 w1 w2 w3 w4 w5 w6 w7 w8');
    const fake = t.fake.calls.at(-1)!;
    expect(usage!.prompt_tokens).toBe(fake.usage!.input);
    const events = await t.events(response.headers.get('x-dirledger-action')!);
    const result = events.find((e) => e.kind === 'MODEL_RESULT')!;
    const out = events.find((e) => e.kind === 'RESPONSE')!;
    expect(result.payloadState).toBe('COMPLETE');
    expect(result.metadata.stream).toBe(true);
    expect(result.inputTokens).toBe(fake.usage!.input);
    expect(result.outputTokens).toBe(9);
    expect(result.costUsd.toFixed(10)).toBe(cost(fake.usage!.input, 0, 9, gpt));
    expect(out.payloadSha256).toBe(result.payloadSha256);
  });

  it('a streamed answer nobody watched: a late streamCapture subscriber reads the bytes the client read, ending with the answer OUT hash', async () => {
    const response = await fetch(`${t.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'fake-gpt',
        messages: [{ role: 'user', content: 'unwatched' }],
        max_tokens: 5,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    const clientBytes = Buffer.from(await response.arrayBuffer());
    const actionId = response.headers.get('x-dirledger-action')!;
    const out = (await t.events(actionId)).find((e) => e.kind === 'RESPONSE' && e.direction === 'OUT')!;
    const ws = wsClient(t.url, t.token);
    const late = wsSubscribe(ws, streamQuery, { actionId }, 'streamCapture');
    await late.done;
    await ws.dispose();
    expect(late.errors).toEqual([]);
    expect(Buffer.concat(late.events.map((c) => Buffer.from(c.base64, 'base64')))).toEqual(clientBytes);
    expect(late.events.at(-1)).toMatchObject({ final: true, state: 'COMPLETE', totalSize: clientBytes.length, sha256: out.payloadSha256 });
  });

  it('a stream the caller asked no usage for: the door asks upstream, charges the exact count, and the caller gets no usage', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'no usage asked' }], max_tokens: 4, stream: true, stream_options: {} })
      .withResponse();
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('w0 w1 w2 w3 ');
    expect(chunks.filter((c) => 'usage' in c)).toEqual([]);
    const fake = t.fake.calls.at(-1)!;
    expect(JSON.parse(fake.body.toString()).stream_options).toEqual({ include_usage: true });
    const events = await t.events(response.headers.get('x-dirledger-action')!);
    const [reqIn, callOut, resultIn, answerOut] = events;
    expect(JSON.parse((await t.payloadText(reqIn.payloadSha256))!).stream_options).toEqual({});
    expect(await t.payloadText(callOut.payloadSha256)).toBe(fake.body.toString('utf8'));
    expect(resultIn).toMatchObject({ inputTokens: fake.usage!.input, outputTokens: 4, metadata: { usage: 'provider' } });
    // The answer IN is the upstream's bytes (usage chunk and all); the answer OUT is what the caller received.
    const upstreamText = (await t.payloadText(resultIn.payloadSha256))!;
    const callerText = (await t.payloadText(answerOut.payloadSha256))!;
    expect(upstreamText).toMatch(/"choices":\[\],"usage":\{"prompt_tokens":\d+/);
    expect(upstreamText).toContain(',"usage":null}');
    expect(callerText).not.toContain('"usage"');
    expect(callerText).toBe(upstreamText.replaceAll(',"usage":null}', '}').replace(/data: \{[^\n]*"choices":\[\],"usage":\{[^\n]*\n\n/, ''));
    expect(callerText).toMatch(/data: \[DONE\]\n\n$/);
  });

  it('a stream whose upstream gives no usage even when asked is charged an estimate, marked as such', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'FAKE_NO_USAGE' }], max_tokens: 4, stream: true })
      .withResponse();
    for await (const _ of stream);
    const result = (await t.events(response.headers.get('x-dirledger-action')!)).find((e) => e.kind === 'MODEL_RESULT')!;
    expect(result.metadata.usage).toBe('estimate');
    expect(result.inputTokens).toBeGreaterThan(0);
  });

  it('tool calls pass through, JSON and streamed', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const done = await client.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'FAKE_TOOL' }], tools });
    expect(done.choices[0]!.message.tool_calls![0]).toMatchObject({ function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' } });
    const stream = client.chat.completions.stream({ model: 'fake-gpt', messages: [{ role: 'user', content: 'FAKE_TOOL' }], tools });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.tool_calls![0]!.function.arguments).toBe('{"city":"Lisbon"}');
  });

  it('responses and embeddings', async () => {
    const r = await client.responses.create({ model: 'fake-gpt', input: 'hi', max_output_tokens: 3 });
    expect(r.output_text).toBe('w0 w1 w2');
    expect(r.usage!.output_tokens).toBe(3);
    let streamed = '';
    const { data: events, response } = await client.responses.create({ model: 'fake-gpt', input: 'hi', max_output_tokens: 5, stream: true }).withResponse();
    for await (const e of events) {
      if (e.type === 'response.output_text.delta') streamed += e.delta;
    }
    expect(streamed.trim()).toBe('w0 w1 w2 w3 w4');
    const result = (await t.events(response.headers.get('x-dirledger-action')!)).find((e) => e.kind === 'MODEL_RESULT')!;
    expect(result.outputTokens).toBe(5);
    expect(result.metadata.usage).toBe('provider');
    const { data: emb, response: embResponse } = await client.embeddings.create({ model: 'fake-embed', input: 'vector me' }).withResponse();
    expect(emb.data[0]!.embedding).toEqual([0.25, -0.5, 0.125]);
    const er = (await t.events(embResponse.headers.get('x-dirledger-action')!)).filter((e) => e.kind === 'MODEL_RESULT');
    expect(er[0]!.outputTokens).toBe(0);
    expect(er[0]!.costUsd!.toFixed(10)).toBe(((er[0]!.inputTokens! * 0.02) / 1e6).toFixed(10));
  });

  it('lists the usable model rows', async () => {
    const names = [];
    for await (const m of client.models.list()) names.push(m.id);
    expect(names).toEqual(['fake-gpt', 'fake-claude-sonnet', 'fake-embed', 'fake-unbounded']);
  });

  it('provider errors pass through with their status and shape; an unknown model lists the nearest rows', async () => {
    const e400 = await client.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'FAKE_ERROR_400' }] }).catch((e) => e);
    expect(e400).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e400.message).toContain('you asked for a 400');
    const e500 = await client.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'FAKE_ERROR_500' }] }).catch((e) => e);
    expect(e500).toBeInstanceOf(OpenAI.InternalServerError);
    const rows = (await t.events(e500.headers.get('x-dirledger-action'))).filter((e) => e.kind === 'MODEL_RESULT');
    expect(rows[0]!.status).toBe('500');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.costUsd).toBeNull();
    const unknown = await client.chat.completions
      .create({ model: 'fake-gtp', messages: [{ role: 'user', content: 'x' }] }, { headers: { 'x-dirledger-action': 'openai-unknown-model' } })
      .catch((e) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.code).toBe('model_not_found');
    expect(unknown.message).toContain('Nearest: fake-gpt');
    const unbound = await client.chat.completions.create({ model: 'unbound-gpt', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(unbound.message).toContain('[NOT_BOUND_KEY]');
    const wrongWire = await client.chat.completions
      .create({ model: 'fake-claude-sonnet', messages: [{ role: 'user', content: 'x' }] }, { headers: { 'x-dirledger-action': 'openai-wrong-wire' } })
      .catch((e) => e);
    expect(wrongWire.message).toContain('/v1/messages');
    // The boundary's events name the row a request means, even one it cannot call here; a name meaning no row leaves it empty.
    const wrongWireEvents = await t.events('openai-wrong-wire', ['REQUEST', 'RESPONSE']);
    expect(wrongWireEvents.map((e) => `${e.kind}:${e.model}`)).toEqual(['REQUEST:fake-claude-sonnet', 'RESPONSE:fake-claude-sonnet']);
    const unknownEvents = await t.events('openai-unknown-model', ['REQUEST', 'RESPONSE']);
    expect(unknownEvents.map((e) => `${e.kind}:${e.model}`)).toEqual(['REQUEST:null', 'RESPONSE:null']);
  });

  it('a mid-stream error reaches the client as the provider sent it, and is recorded', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'FAKE_MIDSTREAM_ERROR' }], stream: true })
      .withResponse();
    const failure = await (async () => {
      for await (const _ of stream);
    })().catch((e) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    const result = (await t.events(response.headers.get('x-dirledger-action')!)).find((e) => e.kind === 'MODEL_RESULT')!;
    expect(result.metadata.streamError).toMatchObject({ message: 'fake upstream broke mid-stream' });
  });
});
