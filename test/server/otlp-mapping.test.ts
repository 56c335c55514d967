// Each attribute vocabulary the OTLP door reads, sent as OTLP/JSON to a real server: the stable GenAI
// conventions, the older experimental names, OpenLLMetry, OpenInference and the Vercel AI SDK.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOfSpans } from '../../src/capture/otel-events.ts';
import { decodeJsonTraces } from '../../src/doors/otlp/json.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { ids, type JsonSpan, otlpJson } from '../helpers/otel.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

type Row = Record<string, any>;

describe.each(databaseKinds)('OTLP attribute vocabularies on %s', (kind) => {
  let t: TestApp;
  let sql: RawSql;
  beforeAll(async () => {
    t = await startTestApp(kind);
    sql = await rawSql(t.db);
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  async function send(spans: JsonSpan[], options: { token?: string; resource?: Record<string, unknown> } = {}) {
    const response = await fetch(`${t.origin}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token ?? t.token}` },
      body: JSON.stringify(otlpJson(spans, options.resource)),
    });
    return { status: response.status, body: (await response.json()) as any };
  }
  const events = (traceId: string) =>
    sql.query<Row>(
      `SELECT id, kind, direction, tool, session, agent, task, model, status, input_tokens, output_tokens, payload_state::text, payload_sha256, metadata
       FROM ledger_event WHERE id LIKE $1 ORDER BY id`,
      [`otel:${traceId}:%`],
    );
  const payload = async (row: Row) => (row.payload_sha256 ? (await t.app.services.ledger.readBlob(row.payload_sha256))!.toString('utf8') : null);

  /** Sends one span and answers its events: [call, result] for a pair, [event] otherwise. */
  async function one(attributes: Record<string, unknown>, extra: Partial<JsonSpan> = {}) {
    const { traceId, span } = ids();
    const sent = await send([{ traceId, spanId: span(1), attributes, ...extra }]);
    expect(sent).toEqual({ status: 200, body: {} });
    const rows = await events(traceId);
    return rows.length === 2 ? [rows.find((r) => r.id.endsWith(':call'))!, rows.find((r) => r.id.endsWith(':result'))!] : rows;
  }

  it('OpenLLMetry: llm.request.type, gen_ai.prompt.N.* / gen_ai.completion.N.*, gen_ai.usage.prompt_tokens / completion_tokens', async () => {
    const [call, result] = await one({
      'llm.request.type': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.prompt.0.role': 'system',
      'gen_ai.prompt.0.content': 'Be brief.',
      'gen_ai.prompt.1.role': 'user',
      'gen_ai.prompt.1.content': 'Hi',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'Hello.',
      'gen_ai.completion.0.finish_reason': 'stop',
      'gen_ai.usage.prompt_tokens': 12,
      'gen_ai.usage.completion_tokens': 3,
      'llm.usage.total_tokens': 15,
    });
    expect(call).toMatchObject({ kind: 'MODEL_CALL', model: 'gpt-4o-mini', payload_state: 'COMPLETE' });
    expect(JSON.parse((await payload(call!))!)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(call!.metadata.payloadFrom).toBe('gen_ai.prompt.N.*');
    expect(call!.metadata.otel.attributes).toEqual({
      'llm.request.type': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.prompt_tokens': 12,
      'gen_ai.usage.completion_tokens': 3,
      'llm.usage.total_tokens': 15,
    });
    expect(result).toMatchObject({ kind: 'MODEL_RESULT', model: 'gpt-4o-mini', input_tokens: 12, output_tokens: 3 });
    expect(JSON.parse((await payload(result!))!)).toEqual([{ role: 'assistant', content: 'Hello.', finish_reason: 'stop' }]);
  });

  it('OpenLLMetry tools: traceloop.span.kind tool, traceloop.entity.name / input / output', async () => {
    const [call, result] = await one({
      'traceloop.span.kind': 'tool',
      'traceloop.entity.name': 'ECHO',
      'traceloop.entity.input': '{"text":"a"}',
      'traceloop.entity.output': '{"text":"a"}',
    });
    expect(call).toMatchObject({ kind: 'TOOL_CALL', tool: 'ECHO' });
    expect(call!.metadata.directoryRow).toEqual({ type: 'tool', name: 'ECHO' });
    expect(await payload(call!)).toBe('{"text":"a"}');
    expect(await payload(result!)).toBe('{"text":"a"}');
  });

  it('OpenInference: LLM kind, llm.model_name, llm.input_messages.N.message.*, llm.token_count.*, session.id', async () => {
    const [call, result] = await one({
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'claude-3-5-haiku',
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': 'Ping',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.content': 'Pong',
      'llm.token_count.prompt': 5,
      'llm.token_count.completion': 1,
      'session.id': 'oi-session',
      'input.value': '{"raw":"request"}',
    });
    expect(call).toMatchObject({ kind: 'MODEL_CALL', model: 'claude-3-5-haiku', session: 'oi-session' });
    expect(JSON.parse((await payload(call!))!)).toEqual([{ role: 'user', content: 'Ping' }]);
    expect(call!.metadata.payloadFrom).toBe('llm.input_messages.N.message.*');
    // The raw request stays in the metadata: only the content read is taken out.
    expect(call!.metadata.otel.attributes['input.value']).toBe('{"raw":"request"}');
    expect(result).toMatchObject({ input_tokens: 5, output_tokens: 1, session: 'oi-session' });
    expect(JSON.parse((await payload(result!))!)).toEqual([{ role: 'assistant', content: 'Pong' }]);
  });

  it('OpenInference tools: TOOL kind, tool.name, input.value / output.value', async () => {
    const [call, result] = await one({ 'openinference.span.kind': 'TOOL', 'tool.name': 'lookup', 'input.value': 'q=1', 'output.value': 'found' });
    expect(call).toMatchObject({ kind: 'TOOL_CALL', tool: 'lookup' });
    expect(call!.metadata.directoryRow).toBeNull();
    expect([await payload(call!), await payload(result!)]).toEqual(['q=1', 'found']);
  });

  it('older span events: gen_ai.content.prompt / gen_ai.content.completion with gen_ai.prompt / gen_ai.completion', async () => {
    const [call, result] = await one(
      { 'gen_ai.operation.name': 'text_completion', 'gen_ai.request.model': 'davinci' },
      {
        events: [
          { name: 'gen_ai.content.prompt', timeUnixNano: '1764547200100000000', attributes: [{ key: 'gen_ai.prompt', value: { stringValue: 'Once upon' } }] },
          {
            name: 'gen_ai.content.completion',
            timeUnixNano: '1764547201000000000',
            attributes: [{ key: 'gen_ai.completion', value: { stringValue: ' a time' } }],
          },
        ],
      },
    );
    expect([await payload(call!), await payload(result!)]).toEqual(['Once upon', ' a time']);
    expect(call!.metadata.payloadFrom).toBe('event:gen_ai.content.prompt/gen_ai.prompt');
    // The events whose content was taken are gone from the metadata; nothing else was in them.
    expect(call!.metadata.otel.events).toBeUndefined();
  });

  it('the stable details event with structured messages: the payload is their JSON', async () => {
    const messages = [{ role: 'user', parts: [{ type: 'text', content: 'x' }] }];
    const [call] = await one(
      { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm' },
      {
        events: [
          {
            name: 'gen_ai.client.inference.operation.details',
            timeUnixNano: '1764547201000000000',
            attributes: [
              {
                key: 'gen_ai.input.messages',
                value: {
                  arrayValue: {
                    values: [
                      {
                        kvlistValue: {
                          values: [
                            { key: 'role', value: { stringValue: 'user' } },
                            {
                              key: 'parts',
                              value: {
                                arrayValue: {
                                  values: [
                                    {
                                      kvlistValue: {
                                        values: [
                                          { key: 'type', value: { stringValue: 'text' } },
                                          { key: 'content', value: { stringValue: 'x' } },
                                        ],
                                      },
                                    },
                                  ],
                                },
                              },
                            },
                          ],
                        },
                      },
                    ],
                  },
                },
              },
              { key: 'gen_ai.response.finish_reasons', value: { arrayValue: { values: [{ stringValue: 'stop' }] } } },
            ],
          },
        ],
      },
    );
    expect(JSON.parse((await payload(call!))!)).toEqual(messages);
    expect(call!.metadata.otel.events).toEqual([
      { name: 'gen_ai.client.inference.operation.details', time: '1764547201000000000', attributes: { 'gen_ai.response.finish_reasons': ['stop'] } },
    ]);
  });

  it('Vercel AI SDK: ai.prompt.messages, ai.response.text, ai.usage.promptTokens / completionTokens', async () => {
    const [call, result] = await one({
      'gen_ai.request.model': 'gpt-4.1',
      'ai.prompt.messages': '[{"role":"user","content":"v"}]',
      'ai.response.text': 'w',
      'ai.usage.promptTokens': 9,
      'ai.usage.completionTokens': 2,
    });
    expect(call).toMatchObject({ kind: 'MODEL_CALL', model: 'gpt-4.1' });
    expect([await payload(call!), await payload(result!)]).toEqual(['[{"role":"user","content":"v"}]', 'w']);
    expect(result).toMatchObject({ input_tokens: 9, output_tokens: 2 });
  });

  it('embeddings: a model call with input tokens and no completion', async () => {
    const [call, result] = await one({
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.request.model': 'text-embedding-3-small',
      'gen_ai.usage.input_tokens': '4',
    });
    expect(call).toMatchObject({ kind: 'MODEL_CALL', model: 'text-embedding-3-small' });
    expect(result).toMatchObject({ kind: 'MODEL_RESULT', input_tokens: 4, payload_state: 'NONE' });
  });

  it('a token count past what the columns hold is no count: the span is stored, the figure kept in the call’s attributes', async () => {
    const [call, result] = await one({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': 2_147_483_648,
      'gen_ai.usage.output_tokens': '2147483647',
    });
    expect(result).toMatchObject({ kind: 'MODEL_RESULT', input_tokens: null, output_tokens: 2_147_483_647 });
    expect(call!.metadata.otel.attributes['gen_ai.usage.input_tokens']).toBe(2_147_483_648);
  });

  it('a span with gen_ai.tool.name and no operation is a tool call; gen_ai.agent.name is the agent', async () => {
    const [call] = await one({ 'gen_ai.tool.name': 'CLOCK', 'gen_ai.agent.name': 'timer-bot', 'gen_ai.conversation.id': 'c-9' });
    expect(call).toMatchObject({ kind: 'TOOL_CALL', tool: 'CLOCK', agent: 'timer-bot', session: 'c-9' });
  });

  it('attribute values of every type, and int64 past 2^53 as its decimal text', async () => {
    const { traceId, span } = ids();
    const sent = await send([
      {
        traceId,
        spanId: span(1),
        attributes: { b: true, d: 1.5, list: ['x', 2], map: { k: 'v' } },
        status: { code: 1 },
      },
    ]);
    expect(sent.status).toBe(200);
    const body = otlpJson([{ traceId, spanId: span(2), attributes: {} }]) as any;
    body.resourceSpans[0].scopeSpans[0].spans[0].attributes = [
      { key: 'big', value: { intValue: '9007199254740993' } },
      { key: 'nan', value: { doubleValue: 'NaN' } },
      { key: 'bytes', value: { bytesValue: 'AAEC' } },
      { key: 'empty', value: {} },
    ];
    const response = await fetch(`${t.origin}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.auth },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const [first, second] = await events(traceId);
    expect(first!.metadata.otel.attributes).toEqual({ b: true, d: 1.5, list: ['x', 2], map: { k: 'v' } });
    expect(first!.status).toBe('OK');
    expect(second!.metadata.otel.attributes).toEqual({ big: '9007199254740993', nan: 'NaN', bytes: 'AAEC', empty: null });
  });

  it('a task- and agent-bound token files every span under its task and agent, over what the spans say', async () => {
    const { traceId, span } = ids();
    const token = t.mint('task = T-otel', 'agent = bound-bot');
    expect((await send([{ traceId, spanId: span(1), attributes: { 'gen_ai.agent.name': 'claimed' } }], { token })).status).toBe(200);
    expect(await events(traceId)).toEqual([expect.objectContaining({ task: 'T-otel', agent: 'bound-bot' })]);
  });

  it('a tools caveat: a span naming another tool is refused 403 and nothing of the request is stored', async () => {
    const { traceId, span } = ids();
    const token = t.mint('tools = ECHO');
    const sent = await send(
      [
        { traceId, spanId: span(1), attributes: { 'gen_ai.tool.name': 'ECHO' } },
        { traceId, spanId: span(2), attributes: { 'gen_ai.tool.name': 'CLOCK' } },
      ],
      { token },
    );
    expect(sent.status).toBe(403);
    expect(await events(traceId)).toEqual([]);
  });

  it('a collector caveat is checked against service.instance.id', async () => {
    const { traceId, span } = ids();
    const token = t.mint('collector = agents-*');
    expect((await send([{ traceId, spanId: span(1) }], { token, resource: { 'service.name': 's', 'service.instance.id': 'other-1' } })).status).toBe(403);
    expect((await send([{ traceId, spanId: span(1) }], { token, resource: { 'service.name': 's', 'service.instance.id': 'agents-7' } })).status).toBe(200);
    expect(await events(traceId)).toHaveLength(1);
  });
});

describe('the charge hook', () => {
  it('a priced model gives both events its price row and the result its cost; an unpriced one none; cached tokens are read', async () => {
    const { traceId, span } = ids();
    const request = decodeJsonTraces(
      otlpJson([
        {
          traceId,
          spanId: span(1),
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'priced',
            'gen_ai.usage.input_tokens': 1000,
            'gen_ai.usage.output_tokens': 500,
            'gen_ai.usage.cache_read.input_tokens': 200,
          },
        },
        { traceId, spanId: span(2), attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'free' } },
      ]),
    );
    const seen: unknown[] = [];
    const mapped = await eventsOfSpans(request, {
      toolRow: async () => null,
      chargeOf: async (model, usage) => {
        seen.push([model, usage]);
        return model === 'priced' ? { costUsd: '0.0075', price: { id: 'p'.repeat(64), date: '2026-12-01' }, row: 'priced-row' } : undefined;
      },
    });
    expect(seen).toEqual([
      ['priced', { input: 1000, output: 500, cached: 200 }],
      ['free', { input: undefined, output: undefined, cached: undefined }],
    ]);
    const events = mapped.batches[0]!.events;
    const results = events.filter((e) => e.kind === 'MODEL_RESULT');
    expect(results.map((e) => e.costUsd)).toEqual(['0.0075', undefined]);
    const priced = events.filter((e) => e.id.includes(span(1)));
    for (const e of priced) expect(e.metadata).toMatchObject({ price: { id: 'p'.repeat(64), date: '2026-12-01', row: 'priced-row' }, cachedTokens: 200 });
    expect(events.filter((e) => e.id.includes(span(2))).every((e) => !('price' in (e.metadata as object)))).toBe(true);
  });
});

describe.each(databaseKinds)("model spans charged at the model row's price on %s", (kind) => {
  let t: TestApp;
  let sql: RawSql;
  beforeAll(async () => {
    t = await startTestApp(kind);
    sql = await rawSql(t.db);
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  it('a span naming the demo model row (exactly, or by an alias the resolver reads) costs what the model door would charge; an unknown model costs nothing', async () => {
    const { traceId, span } = ids();
    const model = (spanId: string, name: string, extra: Record<string, unknown> = {}) => ({
      traceId,
      spanId,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': name,
        'gen_ai.usage.input_tokens': 1_000_000,
        'gen_ai.usage.output_tokens': 2_000_000,
        'gen_ai.usage.cache_read.input_tokens': 400_000,
        ...extra,
      },
    });
    const spans = [
      model(span(1), 'demo-gpt'),
      model(span(2), 'no-such-model-anywhere'),
      model(span(3), 'demo-claude', { 'gen_ai.usage.cache_creation.input_tokens': 200_000 }),
    ];
    const response = await fetch(`${t.origin}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.auth },
      body: JSON.stringify(otlpJson(spans)),
    });
    expect(response.status).toBe(200);
    const rows = await sql.query<Row>(`SELECT id, cost_usd::text AS cost, metadata FROM ledger_event WHERE id LIKE $1 AND kind = 'MODEL_RESULT' ORDER BY id`, [
      `otel:${traceId}:%`,
    ]);
    const demo = rows.find((r) => r.id.includes(span(1)))!;
    // demo-gpt: $0.15 input, $0.60 output, $0.075 cached per million: 600,000 × 0.15 + 400,000 × 0.075 + 2,000,000 × 0.60 per million.
    expect(Number(demo.cost)).toBeCloseTo(0.09 + 0.03 + 1.2, 10);
    expect(demo.metadata.price).toMatchObject({ row: 'demo-gpt', date: '2026-12-01' });
    const [stored] = await sql.query<Row>('SELECT model, input_per_mtok::text AS input FROM model_price WHERE sha256 = $1', [demo.metadata.price.id]);
    expect(stored).toMatchObject({ model: 'demo-gpt' });
    expect(Number(stored!.input)).toBe(0.15);
    const unknown = rows.find((r) => r.id.includes(span(2)))!;
    expect(unknown.cost).toBeNull();
    expect(unknown.metadata.price).toBeUndefined();
    // demo-claude: cache writes at Anthropic's 5-minute rate, 1.25 × $3: 400,000 × 3 + 400,000 × 0.30 + 200,000 × 3.75 + 2,000,000 × 15 per million.
    const claude = rows.find((r) => r.id.includes(span(3)))!;
    expect(claude.cost).toBe('32.0700000000');
    expect(claude.metadata).toMatchObject({ cachedTokens: 400_000, cacheWriteTokens: 200_000, price: { row: 'demo-claude' } });
  });
});
