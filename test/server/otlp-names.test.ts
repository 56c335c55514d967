// Every attribute name the OTLP door reads (src/capture/otel-genai.ts), each alone on a span of one
// request to a real server, and the column or payload it lands in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { ids, type JsonSpan, otlpJson } from '../helpers/otel.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const chat = { 'gen_ai.operation.name': 'chat' };
const tool = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'x' };
type Row = Record<string, any>;
/** [name, the span's attributes, which event, the field and what it holds ('payload' reads the blob)]. */
const cases: (readonly [string, Record<string, unknown>, 'call' | 'result' | 'span', string, unknown])[] = [
  ...['gen_ai.request.model', 'llm.model_name', 'embedding.model_name', 'ai.model.id', 'llm.request.model'].map(
    (k) => [k, { ...chat, [k]: `m-${k}` }, 'call', 'model', `m-${k}`] as const,
  ),
  ...['gen_ai.response.model', 'llm.response.model', 'ai.response.model'].map((k) => [k, { ...chat, [k]: `r-${k}` }, 'result', 'model', `r-${k}`] as const),
  ...['gen_ai.conversation.id', 'session.id', 'traceloop.association.properties.session_id', 'ai.telemetry.metadata.sessionId'].map(
    (k) => [k, { [k]: `s-${k}` }, 'span', 'session', `s-${k}`] as const,
  ),
  ...['gen_ai.agent.name', 'agent.name', 'traceloop.association.properties.agent_name'].map((k) => [k, { [k]: `a-${k}` }, 'span', 'agent', `a-${k}`] as const),
  ...['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens', 'llm.usage.prompt_tokens', 'llm.token_count.prompt', 'ai.usage.promptTokens'].map(
    (k, i) => [k, { ...chat, [k]: 10 + i }, 'result', 'input_tokens', 10 + i] as const,
  ),
  ...[
    'gen_ai.usage.output_tokens',
    'gen_ai.usage.completion_tokens',
    'llm.usage.completion_tokens',
    'llm.token_count.completion',
    'ai.usage.completionTokens',
  ].map((k, i) => [k, { ...chat, [k]: 20 + i }, 'result', 'output_tokens', 20 + i] as const),
  ...[
    'gen_ai.usage.cache_read.input_tokens',
    'gen_ai.usage.cache_read_input_tokens',
    'llm.token_count.prompt_details.cache_read',
    'ai.usage.cachedInputTokens',
  ].map((k, i) => [k, { ...chat, [k]: 30 + i }, 'result', 'metadata.cachedTokens', 30 + i] as const),
  ...['gen_ai.usage.cache_creation.input_tokens', 'gen_ai.usage.cache_creation_input_tokens', 'llm.token_count.prompt_details.cache_write'].map(
    (k, i) => [k, { ...chat, [k]: 40 + i }, 'result', 'metadata.cacheWriteTokens', 40 + i] as const,
  ),
  ...['gen_ai.tool.call.id', 'tool_call.id', 'ai.toolCall.id'].map((k) => [k, { ...tool, [k]: `c-${k}` }, 'call', 'metadata.toolCallId', `c-${k}`] as const),
  ...['gen_ai.input.messages', 'gen_ai.prompt', 'ai.prompt.messages', 'ai.prompt', 'input.value', 'traceloop.entity.input'].map(
    (k) => [k, { ...chat, [k]: `p-${k}` }, 'call', 'payload', `p-${k}`] as const,
  ),
  [
    'gen_ai.system_instructions (alone: the prompt holds it)',
    { ...chat, 'gen_ai.system_instructions': 'si' },
    'call',
    'payload',
    '{"system_instructions":"si"}',
  ],
  ...['gen_ai.output.messages', 'gen_ai.completion', 'ai.response.text', 'output.value', 'traceloop.entity.output'].map(
    (k) => [k, { ...chat, [k]: `o-${k}` }, 'result', 'payload', `o-${k}`] as const,
  ),
  ...['gen_ai.tool.call.arguments', 'ai.toolCall.args', 'input.value', 'traceloop.entity.input'].map(
    (k) => [`tool ${k}`, { ...tool, [k]: `g-${k}` }, 'call', 'payload', `g-${k}`] as const,
  ),
  ...['gen_ai.tool.call.result', 'ai.toolCall.result', 'output.value', 'traceloop.entity.output'].map(
    (k) => [`tool ${k}`, { ...tool, [k]: `t-${k}` }, 'result', 'payload', `t-${k}`] as const,
  ),
  ['gen_ai.tool.name', { 'gen_ai.tool.name': 'T1' }, 'call', 'tool', 'T1'],
  ['tool.name (OpenInference TOOL)', { 'openinference.span.kind': 'TOOL', 'tool.name': 'T2' }, 'call', 'tool', 'T2'],
  ['traceloop.entity.name (tool)', { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'T3' }, 'call', 'tool', 'T3'],
  ['ai.toolCall.name', { 'ai.toolCall.name': 'T4' }, 'call', 'tool', 'T4'],
  ['execute_tool with no name: the span name', { 'gen_ai.operation.name': 'execute_tool' }, 'call', 'tool', 'span'],
  ...['chat', 'text_completion', 'embeddings', 'generate_content'].map(
    (op) => [`gen_ai.operation.name ${op}`, { 'gen_ai.operation.name': op }, 'call', 'kind', 'MODEL_CALL'] as const,
  ),
  ...['chat', 'completion', 'embedding', 'rerank'].map((t) => [`llm.request.type ${t}`, { 'llm.request.type': t }, 'call', 'kind', 'MODEL_CALL'] as const),
  ...['LLM', 'EMBEDDING', 'RERANKER'].map((k) => [`openinference.span.kind ${k}`, { 'openinference.span.kind': k }, 'call', 'kind', 'MODEL_CALL'] as const),
  ...['invoke_agent', 'create_agent'].map((op) => [`gen_ai.operation.name ${op}`, { 'gen_ai.operation.name': op }, 'span', 'metadata.operation', op] as const),
];

describe.each(databaseKinds)('every attribute name the OTLP door reads, on %s', (kind) => {
  let t: TestApp;
  let sql: RawSql;
  const { traceId, span } = ids();
  let rows: Row[];
  beforeAll(async () => {
    t = await startTestApp(kind);
    sql = await rawSql(t.db);
    const spans: JsonSpan[] = cases.map(([, attributes], i) => ({ traceId, spanId: span(i + 1), attributes }));
    const response = await fetch(`${t.origin}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.auth },
      body: JSON.stringify(otlpJson(spans)),
    });
    expect(await response.json()).toEqual({});
    rows = await sql.query<Row>('SELECT * FROM ledger_event WHERE id LIKE $1', [`otel:${traceId}:%`]);
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  it.each(cases.map((c, i) => [c[0], i, c] as const))('%s', async (_name, i, [, , which, field, expected]) => {
    const id = `otel:${traceId}:${span(i + 1)}${which === 'span' ? '' : `:${which}`}`;
    const row = rows.find((r) => r.id === id);
    expect(row, id).toBeDefined();
    const actual =
      field === 'payload'
        ? (await t.app.services.ledger.readBlob(row!.payload_sha256))?.toString('utf8')
        : field.startsWith('metadata.')
          ? row!.metadata[field.slice('metadata.'.length)]
          : row![field];
    expect(actual).toBe(expected);
  });
});
