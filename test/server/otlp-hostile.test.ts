// Hostile input at POST /v1/traces: NUL, lone surrogates, invalid UTF-8 in protobuf strings,
// 10,000-deep AnyValue nesting, huge and gzip-bombed bodies, and a canary secret in every field a
// span has, which no table or blob may hold afterwards. No answer is a 5xx.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobufResponse, decodeProtobufStatus, encodeProtobufRequest } from '../../src/doors/otlp/proto.ts';
import { decodeInline } from '../../src/ledger/payload.ts';
import { decodeText } from '../../src/ledger/storable.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { canaryLeaks } from '../helpers/canary.ts';
import { databaseKinds } from '../helpers/database.ts';
import { deepJson } from '../helpers/hostile.ts';
import { ids, type JsonSpan, otlpJson } from '../helpers/otel.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const CANARY = 'Otl9/Cnry-7Q2z+secret';
const BATCH_MAX_BYTES = 262_144;
const notUtf8 = Buffer.from([0x61, 0xff, 0xfe, 0x62, 0xc3]);

/** Protobuf field bytes: tag and length prefix (wire type 2) before `content`. */
const varint = (n: number): number[] => {
  const out: number[] = [];
  for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return out;
};
const field = (number: number, content: Buffer) => Buffer.concat([Buffer.from([(number << 3) | 2, ...varint(content.length)]), content]);

/** An ExportTraceServiceRequest whose one span has an attribute nested `depth` arrays deep, built without recursion. */
function deepProtobuf(depth: number, traceId: Buffer, spanId: Buffer): Buffer {
  const prefixes: Buffer[] = [];
  let length = 3; // the innermost AnyValue: string_value "x"
  for (let i = 0; i < depth; i++) {
    for (const tag of [0x0a, 0x2a]) {
      // ArrayValue.values (1) around the AnyValue, then AnyValue.array_value (5) around that.
      const prefix = Buffer.from([tag, ...varint(length)]);
      prefixes.push(prefix);
      length += prefix.length;
    }
  }
  const value = Buffer.concat([...prefixes.reverse(), Buffer.from([0x0a, 0x01, 0x78])]);
  const attribute = Buffer.concat([field(1, Buffer.from('deep')), field(2, value)]);
  const span = Buffer.concat([field(1, traceId), field(2, spanId), field(5, Buffer.from('deep span')), field(9, attribute)]);
  return field(1, field(2, field(2, span)));
}

describe.each(databaseKinds)('hostile input at POST /v1/traces on %s', (kind) => {
  let t: TestApp;
  let sql: RawSql;
  const statuses: number[] = [];
  beforeAll(async () => {
    t = await startTestApp(kind, { DIRLEDGER_SECRET_CANARY: CANARY, BATCH_MAX_BYTES: String(BATCH_MAX_BYTES) });
    sql = await rawSql(t.db);
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  async function post(body: BodyInit, type: string, headers: Record<string, string> = {}) {
    const response = await fetch(`${t.origin}/v1/traces`, { method: 'POST', headers: { 'content-type': type, ...t.auth, ...headers }, body });
    statuses.push(response.status);
    return response;
  }
  const postJson = async (spans: JsonSpan[], resource?: Record<string, unknown>) => {
    const response = await post(JSON.stringify(otlpJson(spans, resource)), 'application/json');
    return { status: response.status, body: (await response.json()) as any };
  };
  const postProto = async (request: Record<string, unknown>) => {
    const response = await post(new Uint8Array(encodeProtobufRequest(request)), 'application/x-protobuf');
    const bytes = new Uint8Array(await response.arrayBuffer());
    return { status: response.status, body: (response.status === 200 ? decodeProtobufResponse(bytes) : decodeProtobufStatus(bytes)) as any };
  };
  const rows = (traceId: string) =>
    sql.query<{ id: string; kind: string; metadata: any; payload_sha256: string | null; payload_encoding: string | null }>(
      'SELECT id, kind, metadata, payload_sha256, payload_encoding::text FROM ledger_event WHERE id LIKE $1 ORDER BY id',
      [`otel:${traceId}:%`],
    );
  const protoSpan = (traceId: string, spanId: string, name: Buffer | string, attributes: { key: Buffer | string; value: Record<string, unknown> }[]) => ({
    resourceSpans: [
      {
        resource: { attributes: [{ key: Buffer.from('service.name'), value: { stringValue: Buffer.from('proto-hostile') } }] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: Buffer.from(traceId, 'hex'),
                spanId: Buffer.from(spanId, 'hex'),
                name: Buffer.from(name),
                startTimeUnixNano: '1764547200000000000',
                endTimeUnixNano: '1764547200000000001',
                attributes: attributes.map((a) => ({ key: Buffer.from(a.key), value: a.value })),
              },
            ],
          },
        ],
      },
    ],
  });

  it('NUL and lone surrogates in attribute values are kept exactly in the metadata', async () => {
    const { traceId, span } = ids();
    const sent = await postJson([{ traceId, spanId: span(1), name: 'n\u0000ul', attributes: { nul: 'a\u0000b', lone: 'x\ud800y' } }]);
    expect(sent).toEqual({ status: 200, body: {} });
    const [row] = await rows(traceId);
    expect(decodeText(row!.metadata.otel.attributes.nul)).toBe('a\u0000b');
    expect(decodeText(row!.metadata.otel.attributes.lone)).toBe('x\ud800y');
    expect(decodeText(row!.metadata.otel.name)).toBe('n\u0000ul');
  });

  it('NUL in a session id, or a lone surrogate in a prompt: that span is rejected as a partial success, the others stored', async () => {
    const { traceId, span } = ids();
    const sent = await postJson([
      { traceId, spanId: span(1), attributes: { 'gen_ai.conversation.id': 'se\u0000ss' } },
      { traceId, spanId: span(2), attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': 'half \udc00 pair' } },
      { traceId, spanId: span(3), attributes: { fine: true } },
    ]);
    expect(sent.status).toBe(200);
    expect(sent.body.partialSuccess.rejectedSpans).toBe('2');
    expect(sent.body.partialSuccess.errorMessage).toContain(`2 of 3 spans rejected: span ${traceId}/${span(1)}: its SPAN event cannot hold it: session:`);
    expect(sent.body.partialSuccess.errorMessage).toContain(`span ${traceId}/${span(2)}: gen_ai.input.messages holds an unpaired surrogate`);
    expect((await rows(traceId)).map((r) => r.id)).toEqual([`otel:${traceId}:${span(3)}`]);
  });

  it('a JSON body that is not UTF-8: 400', async () => {
    const response = await post(Buffer.concat([Buffer.from('{"resourceSpans":[],"x":"'), notUtf8, Buffer.from('"}')]), 'application/json');
    expect(response.status).toBe(400);
    expect((await response.json()).message).toBe('Expected an OTLP/JSON body in UTF-8, got bytes that are not valid UTF-8.');
  });

  it('invalid UTF-8 in protobuf strings: a prompt keeps its exact bytes; a span name or plain attribute rejects the span', async () => {
    const { traceId, span } = ids();
    const prompt = await postProto(
      protoSpan(traceId, span(1), 'chat', [
        { key: 'gen_ai.operation.name', value: { stringValue: Buffer.from('chat') } },
        { key: 'gen_ai.input.messages', value: { stringValue: notUtf8 } },
      ]),
    );
    expect(prompt).toEqual({ status: 200, body: {} });
    const [call] = (await rows(traceId)).filter((r) => r.kind === 'MODEL_CALL');
    expect(call!.payload_encoding).not.toBe('UTF8');
    expect(Buffer.compare((await t.app.services.ledger.readBlob(call!.payload_sha256!))!, notUtf8)).toBe(0);
    const name = await postProto(protoSpan(traceId, span(2), notUtf8, []));
    expect(name.body.partialSuccess).toEqual({
      rejectedSpans: '1',
      errorMessage: `1 of 1 spans rejected: span ${traceId}/${span(2)}: its span name is not UTF-8`,
    });
    const attribute = await postProto(protoSpan(traceId, span(3), 'ok', [{ key: 'plain', value: { stringValue: notUtf8 } }]));
    expect(attribute.body.partialSuccess.errorMessage).toContain('attribute plain holds text that is not UTF-8');
    const key = await postProto(protoSpan(traceId, span(4), 'ok', [{ key: notUtf8, value: { boolValue: true } }]));
    expect(key.body.partialSuccess.errorMessage).toContain('its attribute key is not UTF-8');
    expect((await rows(traceId)).map((r) => r.kind)).toEqual(['MODEL_CALL', 'MODEL_RESULT']);
  });

  it('ids of the wrong length are rejected spans, not errors', async () => {
    const { traceId, span } = ids();
    const sent = await postJson([
      { traceId: traceId.slice(2), spanId: span(1) },
      { traceId, spanId: '0000000000000000' },
    ]);
    expect(sent.body.partialSuccess.rejectedSpans).toBe('2');
    expect(sent.body.partialSuccess.errorMessage).toMatch(/expected a trace id of 32 hex digits.*expected a span id of 16 hex digits, not all zero/);
  });

  it('a span ending past 2^63 ns is stored but moves no collector position past a bigint', async () => {
    const { traceId, span } = ids();
    const resource = { 'service.name': 's', 'service.instance.id': `far-future-${traceId}` };
    const sent = await postJson(
      [
        { traceId, spanId: span(1), endTimeUnixNano: '18446744073709551615' },
        { traceId, spanId: span(2) },
      ],
      resource,
    );
    expect(sent).toEqual({ status: 200, body: {} });
    expect(await rows(traceId)).toHaveLength(2);
    const [collector] = await sql.query<{ p: string }>('SELECT delivered_position::text AS p FROM collector WHERE id = $1', [`far-future-${traceId}`]);
    expect(collector!.p).toBe('1764547201500000000');
  });

  it('10,000-deep AnyValue nesting: 400 in protobuf and in JSON; 100-deep JSON rejects only its span', async () => {
    const { traceId, span } = ids();
    const deep = await post(new Uint8Array(deepProtobuf(10_000, Buffer.from(traceId, 'hex'), Buffer.from(span(1), 'hex'))), 'application/x-protobuf');
    expect(deep.status).toBe(400);
    expect(decodeProtobufStatus(new Uint8Array(await deep.arrayBuffer())).message).toBe(
      'Expected an OTLP ExportTraceServiceRequest in protobuf, got bytes that do not decode as one (messages nested more than 100 deep).',
    );
    const json = await post(`{"resourceSpans":${deepJson(10_000)}}`, 'application/json');
    expect(json.status).toBe(400);
    expect((await json.json()).message).toMatch(/nested at most 512 levels deep/);
    let value: unknown = { stringValue: 'x' };
    for (let i = 0; i < 100; i++) value = { arrayValue: { values: [value] } };
    const body = otlpJson([
      { traceId, spanId: span(2) },
      { traceId, spanId: span(3) },
    ]) as any;
    body.resourceSpans[0].scopeSpans[0].spans[0].attributes = [{ key: 'deep', value }];
    const hundred = await post(JSON.stringify(body), 'application/json');
    expect(hundred.status).toBe(200);
    expect((await hundred.json()).partialSuccess.errorMessage).toContain('attribute deep nests values deeper than 64 levels');
    const shallow = await post(new Uint8Array(deepProtobuf(10, Buffer.from(traceId, 'hex'), Buffer.from(span(4), 'hex'))), 'application/x-protobuf');
    expect(decodeProtobufResponse(new Uint8Array(await shallow.arrayBuffer()))).toEqual({});
    expect((await rows(traceId)).map((r) => r.id)).toEqual([`otel:${traceId}:${span(3)}`, `otel:${traceId}:${span(4)}`]);
    expect((await rows(traceId))[1]!.metadata.otel.attributes.deep.flat(10)).toEqual(['x']);
  });

  it('a body over BATCH_MAX_BYTES: 413; a gzip bomb past it once inflated: 413', async () => {
    const big = await post(new Uint8Array(BATCH_MAX_BYTES + 1), 'application/x-protobuf');
    expect(big.status).toBe(413);
    expect(decodeProtobufStatus(new Uint8Array(await big.arrayBuffer())).code).toBe(8);
    const bomb = gzipSync(Buffer.alloc(50 * BATCH_MAX_BYTES, 0x20));
    expect(bomb.length).toBeLessThan(BATCH_MAX_BYTES);
    const inflated = await post(new Uint8Array(bomb), 'application/json', { 'content-encoding': 'gzip' });
    expect(inflated.status).toBe(413);
    expect((await inflated.json()).message).toBe(`Request body too large: expected at most ${BATCH_MAX_BYTES} bytes once gunzipped, got more.`);
  });

  it('a canary secret in every field of a span, in JSON, protobuf and gzip: stored as [CANARY]', async () => {
    const { traceId, span } = ids();
    const spansWithCanary = (n: number): JsonSpan[] => [
      {
        traceId,
        spanId: span(n),
        name: `chat ${CANARY}`,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': `m-${CANARY}`,
          'gen_ai.conversation.id': `s-${CANARY}`,
          'gen_ai.agent.name': `a-${CANARY}`,
          'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: `key is ${CANARY}` }]),
          'gen_ai.output.messages': `no, ${encodeURIComponent(CANARY)}`,
          [`k-${CANARY}`]: { nested: [CANARY, Buffer.from(CANARY).toString('base64')] },
        },
        events: [{ name: `e-${CANARY}`, timeUnixNano: '1764547200500000000', attributes: [{ key: 'x', value: { stringValue: CANARY } }] }],
      },
      { traceId, spanId: span(n + 1), attributes: { 'gen_ai.tool.name': `t-${CANARY}`, 'gen_ai.tool.call.arguments': `{"token":"${CANARY}"}` } },
    ];
    const resource = { 'service.name': 'canary', 'service.instance.id': `i-${CANARY}`, 'host.secret': CANARY };
    expect((await postJson(spansWithCanary(1), resource)).status).toBe(200);
    const gz = await post(new Uint8Array(gzipSync(JSON.stringify(otlpJson(spansWithCanary(3), resource)))), 'application/json', { 'content-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    const proto = otlpJson(spansWithCanary(5), resource) as any;
    const bytesFields = new Set(['stringValue', 'name', 'key', 'version']);
    const asProto = JSON.parse(JSON.stringify(proto), (key, value) => (bytesFields.has(key) ? Buffer.from(String(value)) : value));
    for (const s of asProto.resourceSpans[0].scopeSpans[0].spans) {
      s.traceId = Buffer.from(s.traceId, 'hex');
      s.spanId = Buffer.from(s.spanId, 'hex');
    }
    expect((await postProto(asProto)).status).toBe(200);
    const stored = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_event WHERE id LIKE $1 AND 'CANARY' = ANY(redacted_secrets)`, [
      `otel:${traceId}:%`,
    ]);
    expect(stored[0]!.n).toBe(12);
    const [collector] = await sql.query<{ id: string }>("SELECT id FROM collector WHERE id LIKE 'i-%'");
    expect(collector!.id).toBe('i-[CANARY]');
  });

  it('no table and no blob holds the canary in any spelling; no answer was a 5xx', async () => {
    const tables = await sql.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
    );
    for (const { name } of tables) {
      const found = await sql.query<{ r: string }>(`SELECT row_to_json(x)::text AS r FROM "${name}" x`);
      for (const row of found) expect(canaryLeaks(row.r, CANARY), `${name}: ${row.r.slice(0, 200)}`).toEqual([]);
    }
    const blobs = await sql.query<{ sha256: string; codec: string; data: Uint8Array | null }>('SELECT sha256, codec, data FROM blob');
    for (const blob of blobs) {
      const bytes = blob.data ? await decodeInline(blob.codec, blob.data) : (await t.app.services.ledger.readBlob(blob.sha256))!;
      expect(canaryLeaks(bytes, CANARY), blob.sha256).toEqual([]);
    }
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  });
});
