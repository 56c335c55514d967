// POST /v1/traces driven with generated hostile requests (fast-check): OTLP/JSON with hostile text,
// wrong types, overflowing numbers and deep values in every field, protobuf requests with arbitrary
// bytes in every string field, and random bytes. No answer is a 5xx or slower than the bound; a 200
// counts every span it did not store, and every span it counts as stored is in the ledger.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobufResponse, encodeProtobufRequest } from '../../src/doors/otlp/proto.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const RUNS = Number(process.env.OTLP_FUZZ_RUNS ?? 25);
const BOUND_MS = 10_000;

const nasty = fc.constantFrom('\u0000', '\ud800', '\udfff', '\uffff', '\ufeff', '"', '\\', '%ff', '__proto__', 'constructor', '');
const text = fc.array(fc.oneof(nasty, fc.string({ maxLength: 8 })), { minLength: 0, maxLength: 4 }).map((p) => p.join(''));
const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'));
const wrong = fc.constantFrom<unknown>(
  null,
  true,
  -1,
  1.5,
  2 ** 64,
  'NaN',
  '18446744073709551616',
  [],
  {},
  [[['x']]],
  { __proto__: { a: 1 } },
  'x'.repeat(70_000),
);
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text.map((s) => ({ stringValue: s })),
    fc.oneof(fc.integer(), fc.constantFrom('9223372036854775807', '-9223372036854775808', '99999999999999999999')).map((n) => ({ intValue: n })),
    fc.oneof(fc.double(), fc.constantFrom('NaN', 'Infinity', 'x')).map((d) => ({ doubleValue: d })),
    fc.boolean().map((b) => ({ boolValue: b })),
    fc.array(tie('value'), { maxLength: 3 }).map((values) => ({ arrayValue: { values } })),
    fc.array(fc.record({ key: text, value: tie('value') }), { maxLength: 3 }).map((values) => ({ kvlistValue: { values } })),
    wrong.map((w) => ({ stringValue: w })),
  ),
})).value;
const gen = (keys: string[]) =>
  fc.array(
    fc.record({
      key: fc.oneof(text, fc.constantFrom(...keys)),
      value: fc.oneof(
        anyValue,
        text.map((s) => ({ stringValue: s })),
      ),
    }),
    { maxLength: 6 },
  );
const genaiKeys = [
  'gen_ai.operation.name',
  'gen_ai.tool.name',
  'gen_ai.request.model',
  'gen_ai.conversation.id',
  'gen_ai.agent.name',
  'gen_ai.input.messages',
  'gen_ai.prompt.0.content',
  'llm.request.type',
  'gen_ai.usage.input_tokens',
  'service.instance.id',
];
const time = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String), wrong);
const span = fc.record(
  {
    traceId: fc.oneof(hex(16), text, wrong),
    spanId: fc.oneof(hex(8), text, wrong),
    parentSpanId: fc.oneof(hex(8), text),
    name: fc.oneof(text, wrong),
    kind: fc.oneof(fc.integer({ min: -2, max: 9 }), wrong),
    startTimeUnixNano: time,
    endTimeUnixNano: time,
    attributes: fc.oneof(gen(genaiKeys), wrong),
    status: fc.oneof(fc.record({ code: fc.integer({ min: -1, max: 4 }), message: text }), wrong),
    events: fc.oneof(fc.array(fc.record({ name: text, timeUnixNano: time, attributes: gen(['gen_ai.prompt', 'gen_ai.completion']) }), { maxLength: 2 }), wrong),
  },
  { requiredKeys: [] },
);
const request = fc.record({
  resourceSpans: fc.array(
    fc.record({
      resource: fc.record({ attributes: gen(['service.name', 'service.instance.id']) }),
      scopeSpans: fc.array(fc.record({ scope: fc.record({ name: text }), spans: fc.array(span, { maxLength: 4 }) }), { maxLength: 2 }),
    }),
    { maxLength: 2 },
  ),
});

describe.each(databaseKinds)('generated hostile OTLP requests on %s', (kind) => {
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

  async function post(body: BodyInit, type: string) {
    const t0 = performance.now();
    const response = await fetch(`${t.origin}/v1/traces`, { method: 'POST', headers: { 'content-type': type, ...t.auth }, body });
    const bytes = new Uint8Array(await response.arrayBuffer());
    return { status: response.status, bytes, ms: performance.now() - t0 };
  }
  const events = async () => (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_event WHERE id LIKE 'otel:%'"))[0]!.n;
  const spansIn = (r: { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] }) =>
    r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)).length;

  it('OTLP/JSON with hostile fields: a 4xx or a 200 that counts what it rejected, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const before = await events();
        const answer = await post(JSON.stringify(r), 'application/json');
        const where = JSON.stringify(r).slice(0, 300);
        expect(answer.status, where).toBeLessThan(500);
        expect(answer.ms, where).toBeLessThan(BOUND_MS);
        if (answer.status !== 200) {
          expect(await events(), where).toBe(before);
          return;
        }
        const body = JSON.parse(Buffer.from(answer.bytes).toString('utf8'));
        const rejected = Number(body.partialSuccess?.rejectedSpans ?? 0);
        expect(rejected, where).toBeLessThanOrEqual(spansIn(r));
        if (rejected > 0) expect(body.partialSuccess.errorMessage, where).toMatch(/spans rejected: span /);
        // Every span not rejected became at least one event (or was one already stored).
        if (rejected < spansIn(r)) expect(await events(), where).toBeGreaterThanOrEqual(before);
      }),
      { numRuns: RUNS },
    );
  });

  it('protobuf with arbitrary bytes in every string field, and random bytes: never a 5xx', async () => {
    const bytes = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b));
    const pbValue = fc.oneof(
      bytes.map((b) => ({ stringValue: b })),
      fc.integer().map((n) => ({ intValue: n })),
      fc.double().map((d) => ({ doubleValue: d })),
    );
    const pbSpan = fc.record({
      traceId: fc.oneof(
        bytes,
        fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b)),
      ),
      spanId: fc.oneof(
        bytes,
        fc.uint8Array({ minLength: 8, maxLength: 8 }).map((b) => Buffer.from(b)),
      ),
      name: bytes,
      attributes: fc.array(
        fc.record({
          key: fc.oneof(
            bytes,
            fc.constantFrom(...genaiKeys).map((k) => Buffer.from(k)),
          ),
          value: pbValue,
        }),
        { maxLength: 5 },
      ),
    });
    const pbRequest = fc.array(pbSpan, { maxLength: 4 }).map((spans) => ({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          pbRequest.map((r) => Buffer.from(encodeProtobufRequest(r))),
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        ),
        async (body) => {
          const answer = await post(new Uint8Array(body), 'application/x-protobuf');
          expect(answer.status, body.toString('hex').slice(0, 200)).toBeLessThan(500);
          expect(answer.ms).toBeLessThan(BOUND_MS);
          if (answer.status === 200) expect(() => decodeProtobufResponse(answer.bytes)).not.toThrow();
        },
      ),
      { numRuns: RUNS },
    );
  });
});
