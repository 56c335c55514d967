// Two parts of the OTLP mapping through a real server: the system instructions a span gives apart from
// the chat history are part of its prompt payload, and a span whose parent came in an earlier export
// request inherits the session and agent its parent was filed under (official SDK and exporters).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanFilings, spanActionId } from '../../src/capture/otel-lineage.ts';
import { filedUnder } from '../../src/ledger/action-filing.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { attributesJson, childOf, exportSpans, ids, otlpJson, spanRecorder, succeeded } from '../helpers/otel.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

type Row = Record<string, any>;

describe.each(databaseKinds)('OTLP prompts and lineage on %s', (kind) => {
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
  const rowsOf = (actionId: string) =>
    sql.query<Row>('SELECT id, kind, session, agent, payload_sha256, metadata FROM ledger_event WHERE action_id = $1 ORDER BY id', [actionId]);
  const payload = async (row: Row) => (await t.app.services.ledger.readBlob(row.payload_sha256))!.toString('utf8');

  it('gen_ai.system_instructions is part of the prompt: with the messages, one JSON object holding each as sent', async () => {
    const recorder = spanRecorder();
    const system = JSON.stringify([{ type: 'text', content: 'You are a language translator.' }]);
    const messages = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Translate: hello' }] }]);
    const span = recorder.tracer.startSpan('chat gpt-4o', {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.system_instructions': system,
        'gen_ai.input.messages': messages,
      },
    });
    span.end();
    expect(succeeded(await exportSpans('proto', t.origin, recorder.finished(), { token: t.token }))).toBe(true);
    const [call] = await rowsOf(spanActionId(span.spanContext().traceId, span.spanContext().spanId));
    expect(call).toMatchObject({ kind: 'MODEL_CALL', metadata: { payloadFrom: 'gen_ai.system_instructions + gen_ai.input.messages' } });
    expect(await payload(call!)).toBe(JSON.stringify({ system_instructions: system, input_messages: messages }));
    // Stored once: the attributes kept in metadata no longer hold them.
    expect(call!.metadata.otel.attributes).toEqual({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' });

    // In the details event, structured (OTLP/JSON): the prompt holds the structures as JSON.
    const { traceId, span: spanId } = ids();
    const parts = [{ type: 'text', content: 'Be brief.' }];
    const input = [{ role: 'user', parts: [{ type: 'text', content: 'x' }] }];
    const details = {
      name: 'gen_ai.client.inference.operation.details',
      timeUnixNano: '1764547201000000000',
      attributes: attributesJson({ 'gen_ai.system_instructions': parts, 'gen_ai.input.messages': input }),
    };
    const sent = await fetch(`${t.origin}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.auth },
      body: JSON.stringify(otlpJson([{ traceId, spanId: spanId(1), attributes: { 'gen_ai.operation.name': 'chat' }, events: [details] }])),
    });
    expect(await sent.json()).toEqual({});
    const [fromEvent] = await rowsOf(`otel:${traceId}:${spanId(1)}`);
    expect(JSON.parse(await payload(fromEvent!))).toEqual({ system_instructions: parts, input_messages: input });
    expect(fromEvent!.metadata.payloadFrom).toBe(
      'event:gen_ai.client.inference.operation.details/gen_ai.system_instructions + event:gen_ai.client.inference.operation.details/gen_ai.input.messages',
    );
    expect(fromEvent!.metadata.otel.events).toBeUndefined();
  });

  it('a span whose parent came in an earlier request inherits what the parent was filed under; a parent still to come is not waited for', async () => {
    const recorder = spanRecorder({ 'service.name': 'agents', 'service.instance.id': `lineage-${kind}` });
    const send = async (exporter: 'proto' | 'http') => {
      const result = await exportSpans(exporter, t.origin, recorder.finished(), { token: t.token });
      expect(succeeded(result)).toBe(true);
      recorder.reset();
    };
    const idOf = (s: { spanContext(): { traceId: string; spanId: string } }) => spanActionId(s.spanContext().traceId, s.spanContext().spanId);
    // Request 1: the agent run naming its conversation and agent.
    const root = recorder.tracer.startSpan('invoke_agent planner', {
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner', 'gen_ai.conversation.id': `conv-lineage-${kind}` },
    });
    root.end();
    await send('proto');
    // Request 2: a sub-agent naming only itself, and a model call under it, exported before the sub-agent ends.
    const sub = childOf(recorder.tracer, root, 'invoke_agent researcher', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'researcher' });
    const early = childOf(recorder.tracer, sub, 'chat gpt-4o', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' });
    early.end();
    await send('http');
    // Request 3: the sub-agent ends; request 4: a later model call under it.
    sub.end();
    await send('proto');
    const late = childOf(recorder.tracer, sub, 'chat gpt-4o', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' });
    const tool = childOf(recorder.tracer, late, 'execute_tool ECHO', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'ECHO' });
    tool.end();
    late.end();
    await send('http');

    const filed = async (s: Parameters<typeof idOf>[0]) => (await rowsOf(idOf(s))).map((r) => [r.kind, r.session, r.agent]);
    const conv = `conv-lineage-${kind}`;
    expect(await filed(root)).toEqual([['SPAN', conv, 'planner']]);
    // Its parent (the sub-agent) was not stored yet: nothing to inherit, and nothing is rewritten later.
    expect(await filed(early)).toEqual([
      ['MODEL_CALL', null, null],
      ['MODEL_RESULT', null, null],
    ]);
    // The session from the root (request 1), its own agent.
    expect(await filed(sub)).toEqual([['SPAN', conv, 'researcher']]);
    // From the sub-agent (request 3), as filed: the session it inherited and its agent; the tool through its parent in the same request.
    expect(await filed(late)).toEqual([
      ['MODEL_CALL', conv, 'researcher'],
      ['MODEL_RESULT', conv, 'researcher'],
    ]);
    expect(await filed(tool)).toEqual([
      ['TOOL_CALL', conv, 'researcher'],
      ['TOOL_RESULT', conv, 'researcher'],
    ]);

    // After a restart (or on another instance) the cache is empty: the ledger says the same.
    const fromLedger = await new SpanFilings((actionIds) => filedUnder(t.app.services.db.sql, actionIds)).of([
      idOf(root),
      idOf(sub),
      idOf(early),
      'otel:none:none',
    ]);
    expect(Object.fromEntries(fromLedger)).toEqual({
      [idOf(root)]: { session: conv, agent: 'planner' },
      [idOf(sub)]: { session: conv, agent: 'researcher' },
      [idOf(early)]: {},
    });
  });
});
