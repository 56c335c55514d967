// POST /v1/traces with the official OpenTelemetry SDK and OTLP exporters (protobuf and JSON over
// HTTP) against a real server: an agent run with a nested agent, model calls with usage, tool calls
// (one a Directory row, one not), a plain HTTP span; every event checked field by field.
import type { Span } from '@opentelemetry/api';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeProtobufStatus } from '../../src/doors/otlp/proto.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { childOf, type ExporterKind, exportSpans, spanRecorder, succeeded } from '../helpers/otel.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

type Row = {
  id: string;
  kind: string;
  direction: string;
  action_id: string;
  tool: string | null;
  session: string | null;
  agent: string | null;
  task: string | null;
  model: string | null;
  status: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: string | null;
  occurred_ms: string;
  payload_state: string;
  payload_sha256: string | null;
  metadata: any;
};

const inputMessages = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris? ünïcödé' }] }]);
const outputMessages = JSON.stringify([{ role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'ECHO', arguments: { text: 'hi' } }] }]);

/** One agent run: planner → (chat, ECHO tool, get_weather tool, researcher → chat), and an HTTP client span. */
function agentRun(kind: ExporterKind) {
  const recorder = spanRecorder({ 'service.name': 'agents', 'service.instance.id': `agents-${kind}`, 'deployment.environment': 'test' });
  const t = recorder.tracer;
  const end = (span: Span) => span.end();
  const planner = childOf(t, undefined, 'invoke_agent planner', {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'planner',
    'gen_ai.conversation.id': `conv-${kind}`,
  });
  const chat = childOf(t, planner, 'chat gpt-4o', {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.response.model': 'gpt-4o-2024-08-06',
    'gen_ai.usage.input_tokens': 120,
    'gen_ai.usage.output_tokens': 45,
    'gen_ai.input.messages': inputMessages,
    'gen_ai.output.messages': outputMessages,
  });
  end(chat);
  const echo = childOf(t, planner, 'execute_tool ECHO', {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'ECHO',
    'gen_ai.tool.call.id': 'call_1',
    'gen_ai.tool.call.arguments': '{"text":"hi"}',
    'gen_ai.tool.call.result': '{"text":"hi"}',
  });
  end(echo);
  const weather = childOf(t, planner, 'execute_tool get_weather', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather' });
  weather.setStatus({ code: 2, message: 'upstream timed out' });
  end(weather);
  const researcher = childOf(t, planner, 'invoke_agent researcher', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'researcher' });
  const inner = childOf(t, researcher, 'chat claude', {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'claude-sonnet-4',
    'gen_ai.usage.input_tokens': 7,
  });
  end(inner);
  end(researcher);
  const http = childOf(t, planner, 'GET', { 'http.request.method': 'GET', 'url.full': 'https://example.com/x' });
  end(http);
  end(planner);
  const spans = recorder.finished();
  const named = (name: string) => spans.find((s) => s.name === name)!;
  return { spans, named };
}

describe.each(databaseKinds)('POST /v1/traces with the official exporters on %s', (kind) => {
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

  const eventsOf = (traceId: string) =>
    sql.query<Row>(
      `SELECT id, kind, direction, action_id, tool, session, agent, task, model, status, input_tokens, output_tokens, cost_usd::text,
              (extract(epoch FROM occurred_at) * 1000)::bigint::text AS occurred_ms, payload_state::text, payload_sha256, metadata
       FROM ledger_event WHERE id LIKE $1 ORDER BY position`,
      [`otel:${traceId}:%`],
    );
  const payloadText = async (sha: string | null) => (sha ? (await t.app.services.ledger.readBlob(sha))!.toString('utf8') : null);
  // Refusals are written by the background writer, so counts leave them out and tests wait for them.
  const countAll = async () => (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_event WHERE kind <> 'REFUSAL'"))[0]!.n;
  const refusalsAt = async (door: string) =>
    sql.query<{ metadata: any }>("SELECT metadata FROM ledger_event WHERE kind = 'REFUSAL' AND metadata->>'door' = $1 ORDER BY position", [door]);
  const ms = (time: [number, number]) => String(time[0] * 1000 + Math.floor(time[1] / 1e6));

  describe.each(['proto', 'http'] as const)('exporter %s', (exporter) => {
    const run = agentRun(exporter);
    const traceId = run.spans[0]!.spanContext().traceId;
    const idOf = (name: string) => `otel:${traceId}:${run.named(name).spanContext().spanId}`;
    let rows: Row[];
    const row = (id: string) => rows.find((r) => r.id === id)!;

    beforeAll(async () => {
      const result = await exportSpans(exporter, t.origin, run.spans, { token: t.token });
      expect(result.error).toBeUndefined();
      expect(succeeded(result)).toBe(true);
      rows = await eventsOf(traceId);
    });

    it('stores every span: two events per model or tool span, one per other span', () => {
      // chat, ECHO, get_weather, chat claude: pairs; planner, researcher, GET: one each.
      expect(rows.length).toBe(4 * 2 + 3);
    });

    it('a model call: MODEL_CALL with the prompt, MODEL_RESULT with model, tokens and the completion', async () => {
      const id = idOf('chat gpt-4o');
      const span = run.named('chat gpt-4o');
      const call = row(`${id}:call`);
      expect(call).toMatchObject({ kind: 'MODEL_CALL', direction: 'OUT', action_id: id, model: 'gpt-4o', session: `conv-${exporter}`, agent: 'planner' });
      expect(call.occurred_ms).toBe(ms(span.startTime));
      expect(call.payload_state).toBe('COMPLETE');
      expect(await payloadText(call.payload_sha256)).toBe(inputMessages);
      expect(call.metadata).toMatchObject({ operation: 'chat', payloadFrom: 'gen_ai.input.messages' });
      expect(call.metadata.otel).toMatchObject({
        traceId,
        spanId: span.spanContext().spanId,
        parentSpanId: run.named('invoke_agent planner').spanContext().spanId,
      });
      expect(call.metadata.otel.attributes).toEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 45,
      });
      expect(call.metadata.otel.resource).toMatchObject({
        'service.name': 'agents',
        'service.instance.id': `agents-${exporter}`,
        'deployment.environment': 'test',
      });
      expect(call.metadata.otel.scope).toEqual({ name: 'dirledger-test', version: '1.2.3' });
      const result = row(`${id}:result`);
      expect(result).toMatchObject({
        kind: 'MODEL_RESULT',
        direction: 'IN',
        action_id: id,
        model: 'gpt-4o-2024-08-06',
        input_tokens: 120,
        output_tokens: 45,
        cost_usd: null,
        status: null,
        session: `conv-${exporter}`,
        agent: 'planner',
      });
      expect(result.occurred_ms).toBe(ms(span.endTime));
      expect(await payloadText(result.payload_sha256)).toBe(outputMessages);
      expect(result.metadata).toEqual({
        otel: { traceId, spanId: span.spanContext().spanId, name: 'chat gpt-4o' },
        operation: 'chat',
        payloadFrom: 'gen_ai.output.messages',
      });
    });

    it('a tool call naming a Directory row: TOOL_CALL/TOOL_RESULT linked to the row, arguments and result as payloads', async () => {
      const id = idOf('execute_tool ECHO');
      const call = row(`${id}:call`);
      const result = row(`${id}:result`);
      expect(call).toMatchObject({
        kind: 'TOOL_CALL',
        direction: 'OUT',
        tool: 'ECHO',
        session: `conv-${exporter}`,
        agent: 'planner',
        payload_state: 'COMPLETE',
      });
      expect(result).toMatchObject({ kind: 'TOOL_RESULT', direction: 'IN', tool: 'ECHO', payload_state: 'COMPLETE' });
      expect(call.metadata).toMatchObject({ directoryRow: { type: 'tool', name: 'ECHO' }, toolCallId: 'call_1', payloadFrom: 'gen_ai.tool.call.arguments' });
      expect(result.metadata).toMatchObject({ directoryRow: { type: 'tool', name: 'ECHO' }, payloadFrom: 'gen_ai.tool.call.result' });
      expect(await payloadText(call.payload_sha256)).toBe('{"text":"hi"}');
      expect(await payloadText(result.payload_sha256)).toBe('{"text":"hi"}');
    });

    it('a tool with no Directory row keeps its name, unlinked; an error status is the result status', () => {
      const id = idOf('execute_tool get_weather');
      expect(row(`${id}:call`)).toMatchObject({ kind: 'TOOL_CALL', tool: 'get_weather', payload_state: 'NONE', payload_sha256: null });
      expect(row(`${id}:call`).metadata.directoryRow).toBeNull();
      expect(row(`${id}:result`)).toMatchObject({ kind: 'TOOL_RESULT', tool: 'get_weather', status: 'ERROR' });
      expect(row(`${id}:call`).metadata.otel.status).toEqual({ code: 'ERROR', message: 'upstream timed out' });
    });

    it('a nested agent: its spans take the nearest agent and the run’s session', () => {
      const researcher = row(idOf('invoke_agent researcher'));
      expect(researcher).toMatchObject({ kind: 'SPAN', agent: 'researcher', session: `conv-${exporter}` });
      expect(researcher.metadata.operation).toBe('invoke_agent');
      const inner = idOf('chat claude');
      expect(row(`${inner}:call`)).toMatchObject({
        kind: 'MODEL_CALL',
        model: 'claude-sonnet-4',
        agent: 'researcher',
        session: `conv-${exporter}`,
        payload_state: 'NONE',
      });
      expect(row(`${inner}:result`)).toMatchObject({ kind: 'MODEL_RESULT', input_tokens: 7, output_tokens: null });
      expect(row(idOf('invoke_agent planner'))).toMatchObject({ kind: 'SPAN', agent: 'planner', session: `conv-${exporter}` });
    });

    it('a span that is not GenAI is kept as a SPAN event with its attributes', () => {
      const http = row(idOf('GET'));
      expect(http).toMatchObject({ kind: 'SPAN', direction: 'IN', payload_state: 'NONE', agent: 'planner' });
      expect(http.metadata.otel).toMatchObject({
        name: 'GET',
        kind: 'INTERNAL',
        attributes: { 'http.request.method': 'GET', 'url.full': 'https://example.com/x' },
      });
    });

    it("the collector is the exporter's service.instance.id, its position the latest span end", async () => {
      const [collector] = await sql.query<{ delivered_position: string }>('SELECT delivered_position::text FROM collector WHERE id = $1', [
        `agents-${exporter}`,
      ]);
      const latest = run.spans
        .map((s) => BigInt(s.endTime[0]) * 1_000_000_000n + BigInt(s.endTime[1]))
        .sort((a, b) => (a < b ? -1 : 1))
        .at(-1)!;
      expect(collector?.delivered_position).toBe(latest.toString());
    });

    it("an exporter's retry of the same batch adds 0 events", async () => {
      const before = await countAll();
      const again = await exportSpans(exporter, t.origin, run.spans, { token: t.token });
      expect(succeeded(again)).toBe(true);
      expect(await countAll()).toBe(before);
      const [batch] = await sql.query<{ received: number; inserted: number; duplicates: number }>(
        'SELECT received, inserted, duplicates FROM ledger_batch WHERE collector = $1 ORDER BY received_at DESC LIMIT 1',
        [`agents-${exporter}`],
      );
      expect(batch).toEqual({ received: 11, inserted: 0, duplicates: 11 });
    });

    it('gzip: the exporter compressing its body is read the same', async () => {
      const gz = agentRun(exporter);
      const result = await exportSpans(exporter, t.origin, gz.spans, { token: t.token, gzip: true });
      expect(succeeded(result)).toBe(true);
      expect((await eventsOf(gz.spans[0]!.spanContext().traceId)).length).toBe(11);
    });

    it('a wrong token is refused 401 and nothing is stored', async () => {
      const before = await countAll();
      const result = await exportSpans(exporter, t.origin, agentRun(exporter).spans, { token: 'not-a-token' });
      expect(succeeded(result)).toBe(false);
      expect((result.error as { code?: number }).code).toBe(401);
      expect(await countAll()).toBe(before);
      await vi.waitFor(async () => expect((await refusalsAt('OTLP')).some((r) => r.metadata.limit === 'credential')).toBe(true));
    });

    it('a token without the ingest power is refused 403 and nothing is stored', async () => {
      const before = await countAll();
      const result = await exportSpans(exporter, t.origin, agentRun(exporter).spans, { token: t.mint('powers = call') });
      expect(succeeded(result)).toBe(false);
      expect((result.error as { code?: number }).code).toBe(403);
      expect(await countAll()).toBe(before);
      await vi.waitFor(async () => expect((await refusalsAt('OTLP')).some((r) => r.metadata.limit === 'power')).toBe(true));
    });
  });

  describe('answers as the OTLP/HTTP spec says', () => {
    const post = (body: BodyInit, headers: Record<string, string>) =>
      fetch(`${t.origin}/v1/traces`, { method: 'POST', headers: { ...t.auth, ...headers }, body });

    it('a refusal at admission (no token, a missing power) is a google.rpc.Status in the request encoding, with the Bearer challenge on 401', async () => {
      const anonymous = await fetch(`${t.origin}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body: new Uint8Array(0),
      });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('content-type')).toBe('application/x-protobuf');
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(decodeProtobufStatus(new Uint8Array(await anonymous.arrayBuffer()))).toEqual({
        code: 16,
        message: 'UNAUTHENTICATED: Missing or invalid credential.',
      });
      const powerless = await fetch(`${t.origin}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.mint('powers = call')}` },
        body: '{}',
      });
      expect(powerless.status).toBe(403);
      expect(powerless.headers.get('content-type')).toBe('application/json');
      const status = (await powerless.json()) as { code: number; message: string };
      expect(status.code).toBe(7);
      expect(status.message).toMatch(/^FORBIDDEN: This token may not append/);
    });

    it('a malformed protobuf body: 400 with a google.rpc.Status in protobuf', async () => {
      const response = await post(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2]), { 'content-type': 'application/x-protobuf' });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toBe('application/x-protobuf');
      const status = decodeProtobufStatus(new Uint8Array(await response.arrayBuffer()));
      expect(status.code).toBe(3);
      expect(status.message).toMatch(/^Expected an OTLP ExportTraceServiceRequest in protobuf, got bytes that do not decode as one/);
    });

    it('a malformed JSON body: 400 with a Status in JSON', async () => {
      const response = await post('{"resourceSpans": [', { 'content-type': 'application/json' });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.json()).toMatchObject({ code: 3, message: expect.stringMatching(/^Expected an OTLP\/JSON body, got invalid JSON/) });
    });

    it('a body that does not gunzip: 400', async () => {
      const response = await post('not gzip', { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      expect(response.status).toBe(400);
      expect((await response.json()).message).toMatch(/do not gunzip/);
    });

    it('another content type: 415; another content encoding: 415', async () => {
      const text = await post('{}', { 'content-type': 'text/plain' });
      expect(text.status).toBe(415);
      expect((await text.json()).message).toBe('Expected content-type application/x-protobuf or application/json, got "text/plain".');
      const br = await post('{}', { 'content-type': 'application/json', 'content-encoding': 'br' });
      expect(br.status).toBe(415);
      expect((await br.json()).message).toBe('Expected content-encoding gzip or none, got "br".');
    });

    it('an empty request: 200 with an empty response', async () => {
      const response = await post(gzipSync('{"resourceSpans":[]}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({});
    });

    it('GET: 405', async () => {
      const response = await fetch(`${t.origin}/v1/traces`, { headers: t.auth });
      expect(response.status).toBe(405);
    });
  });
});
