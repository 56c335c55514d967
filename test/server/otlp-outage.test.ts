// While the ledger cannot write, POST /v1/traces answers 503 with Retry-After (a retryable status in
// the OTLP spec), and the official exporter's own retry lands the spans once the database is back;
// over the token's rate it answers 429 with Retry-After.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobufStatus } from '../../src/doors/otlp/proto.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds, databaseOutage } from '../helpers/database.ts';
import { childOf, exportSpans, ids, otlpJson, spanRecorder, succeeded } from '../helpers/otel.ts';
import { rawSql } from '../helpers/sql.ts';

describe.each(databaseKinds)('POST /v1/traces while the database is unavailable (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => {
    // The closed PGlite refuses to close twice; its data folder still goes.
    await t?.stop().catch(() => rm(t.dataDir, { recursive: true, force: true }));
  });

  if (kind === 'pglite') {
    it('answers 503 with Retry-After and a Status (UNAVAILABLE) in the request encoding', async () => {
      const { traceId, span } = ids();
      await t.app.services.db.pglite!.close();
      const json = await fetch(`${t.origin}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...t.auth },
        body: JSON.stringify(otlpJson([{ traceId, spanId: span(1) }])),
      });
      expect(json.status).toBe(503);
      expect(json.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await json.json()).toMatchObject({ code: 14, message: expect.stringMatching(/ledger database is unavailable/) });
      const recorder = spanRecorder();
      childOf(recorder.tracer, undefined, 'during the outage').end();
      const proto = await fetch(`${t.origin}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', ...t.auth },
        body: new Uint8Array((await import('@opentelemetry/otlp-transformer')).ProtobufTraceSerializer.serializeRequest(recorder.finished())!),
      });
      expect(proto.status).toBe(503);
      expect(decodeProtobufStatus(new Uint8Array(await proto.arrayBuffer())).code).toBe(14);
    });
    return;
  }

  const outage = databaseOutage(() => t.db.url!);

  it("the exporter's retries of a 503 land its spans once the database is back", async () => {
    const recorder = spanRecorder();
    const parent = childOf(recorder.tracer, undefined, 'invoke_agent a', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'a' });
    childOf(recorder.tracer, parent, 'execute_tool ECHO', { 'gen_ai.tool.name': 'ECHO' }).end();
    parent.end();
    const spans = recorder.finished();
    await outage.begin();
    const exported = exportSpans('proto', t.origin, spans, { token: t.token });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await outage.end();
    const result = await exported;
    expect(result.error).toBeUndefined();
    expect(succeeded(result)).toBe(true);
    const sql = await rawSql(t.db);
    try {
      const traceId = spans[0]!.spanContext().traceId;
      const rows = await sql.query<{ kind: string }>('SELECT kind FROM ledger_event WHERE id LIKE $1 ORDER BY id', [`otel:${traceId}:%`]);
      expect(rows.map((r) => r.kind).sort()).toEqual(['SPAN', 'TOOL_CALL', 'TOOL_RESULT']);
    } finally {
      await sql.close();
    }
  });
});

describe('POST /v1/traces over the token rate', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { AUTH_RATE_PER_SECOND: '0.01', AUTH_RATE_BURST: '1' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers 429 with Retry-After (retryable in the OTLP spec) and stores nothing of that request', async () => {
    const { traceId, span } = ids();
    const send = (n: number) =>
      fetch(`${t.origin}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...t.auth },
        body: JSON.stringify(otlpJson([{ traceId, spanId: span(n) }])),
      });
    expect((await send(1)).status).toBe(200);
    const limited = await send(2);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // As the spec answers every 4xx: a google.rpc.Status (RESOURCE_EXHAUSTED) in the request's encoding.
    expect(await limited.json()).toMatchObject({ code: 8, message: expect.stringMatching(/^RATE_LIMITED: /) });
    const sql = await rawSql(t.db);
    try {
      expect(await sql.query('SELECT id FROM ledger_event WHERE id LIKE $1', [`otel:${traceId}:%`])).toEqual([{ id: `otel:${traceId}:${span(1)}` }]);
    } finally {
      await sql.close();
    }
  });
});
