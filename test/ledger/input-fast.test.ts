// The ingest door's hand-written fast path gives exactly what BatchInput (zod) gives, and gives up
// (so zod answers, naming the field) on anything zod would refuse.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BatchInput, EventInput, parseBatchFast, parseEvent, parseEventFast } from '../../src/ledger/input.ts';

/**
 * Holds a hand-written parser to its zod schema on one input: undefined where zod refuses, zod's very
 * output where it answers. True when the fast path answered (not the fallback).
 */
function agreesWithSchema<T>(
  schema: { safeParse(x: unknown): { success: true; data: T } | { success: false } },
  fast: (x: unknown) => T | undefined,
  input: unknown,
): boolean {
  const expected = schema.safeParse(input);
  const got = fast(input);
  if (!expected.success) expect(got).toBeUndefined();
  else if (got !== undefined) expect(got).toEqual(expected.data);
  return got !== undefined;
}

const base = {
  id: 'evt-1',
  kind: 'model.request',
  direction: 'OUT',
  actionId: 'act-1',
  occurredAt: '2026-10-01T00:00:00.000Z',
  payload: { state: 'COMPLETE', text: '{"a":1}' },
};

/** Values near every rule's edge, for any field. */
const awkward = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    '',
    'x',
    'a\u0000b',
    'x\ud800y',
    'IN',
    'OUT',
    'COMPLETE',
    'PARTIAL',
    'NONE',
    'MISSING',
    'ARTIFACT',
    '2026-02-29T00:00:00Z',
    '2028-02-29T00:00:00+01:00',
    '2026-10-01T25:00:00Z',
    '2026-10-01T00:00:00',
    '2026-10-01',
    '0.0000001',
    '-12.5',
    '12345678901',
    '1e3',
    1.5,
    -1,
    0,
    -0,
    42,
    2 ** 53,
    Number.NaN,
    '123',
    '12345678901234567890',
    'x'.repeat(33),
    'x'.repeat(129),
    'x'.repeat(257),
    'x'.repeat(513),
    [],
    {},
    true,
  ),
  fc.string({ maxLength: 8 }),
  fc.integer({ min: -5, max: 5 }),
);
const eventKeys = [
  'id',
  'kind',
  'direction',
  'actionId',
  'tool',
  'session',
  'turn',
  'task',
  'agent',
  'model',
  'status',
  'method',
  'url',
  'costUsd',
  'inputTokens',
  'outputTokens',
  'occurredAt',
  'payload',
  'headers',
  'metadata',
  'contract',
  'other',
];
const payloadKeys = ['state', 'text', 'base64', 'size', 'artifactUri', 'artifactSha256', 'other'];

/** The base event with a few fields (or payload fields) replaced, added or removed. */
const event = fc
  .tuple(
    fc.array(fc.tuple(fc.constantFrom(...eventKeys), awkward), { maxLength: 3 }),
    fc.array(fc.tuple(fc.constantFrom(...payloadKeys), awkward), { maxLength: 2 }),
    fc.boolean(),
  )
  .map(([changes, payloadChanges, dropPayload]) => {
    const e: Record<string, unknown> = { ...base, payload: { ...base.payload } };
    for (const [k, v] of payloadChanges) (e.payload as Record<string, unknown>)[k] = v;
    for (const [k, v] of changes) e[k] = v;
    if (dropPayload) delete e.payload;
    for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
    return e;
  });
const batch = fc.record(
  {
    collector: fc.oneof(fc.constant('c1'), awkward),
    position: fc.oneof(fc.constant(undefined), awkward),
    events: fc.array(event, { minLength: 0, maxLength: 4 }),
  },
  { requiredKeys: ['events'] },
);

describe('parseBatchFast', () => {
  it('gives what BatchInput gives, or undefined; never accepts what BatchInput refuses', () => {
    let fast = 0;
    fc.assert(
      fc.property(batch, (input) => {
        const json = JSON.parse(JSON.stringify(input)) as unknown; // what a door receives
        if (agreesWithSchema(BatchInput, parseBatchFast, json)) fast++;
      }),
      { numRuns: 3000 },
    );
    expect(fast).toBeGreaterThan(30); // the fast path was exercised, not only the fallback
  });

  it('takes the common shape itself', () => {
    const events = [
      base,
      { ...base, id: 'evt-2', tool: 'search', session: 's', status: '200', costUsd: '0.0012', inputTokens: 3, outputTokens: 4, url: 'https://x/y' },
      { ...base, id: 'evt-3', payload: undefined },
      { ...base, id: 'evt-4', headers: { 'x-a': 'b' }, metadata: { k: [1] } }, // the schema's own path, inside the fast one
    ];
    const input = JSON.parse(JSON.stringify({ collector: 'c', position: 7, events }));
    expect(parseBatchFast(input)).toEqual(BatchInput.parse(input));
  });
});

/** Values near the rules of the fields the server's own events carry (headers, metadata, contract, bytes, Dates). */
const sha = 'a'.repeat(64);
const rich = fc.constantFrom<unknown>(
  undefined,
  new Date('2026-10-01T00:00:00Z'),
  new Date(Number.NaN),
  '2026-10-01T00:00:00.123+02:00',
  { 'content-type': 'application/json' },
  { 'set-cookie': ['a=1', 'b=2'] },
  { x: ['a', 1] },
  { 'a\u0000': 'b' },
  { x: 'a\u0000' },
  { x: 'a\ud800' },
  [],
  {},
  { call: { tool: 'T', args: [1, 'two', null] } },
  { k: 'a\u0000b' },
  { k: { 'x\ud800': 1 } },
  JSON.parse('{"__proto__":{"polluted":1}}'),
  Object.create({ inherited: 1 }),
  { form: 'REST', sha256: sha },
  { form: '', sha256: sha },
  { form: 'REST', sha256: sha.toUpperCase() },
  { form: 'REST', sha256: sha, extra: 1 },
  { form: 'x'.repeat(129), sha256: sha },
  { state: 'COMPLETE', base64: 'YQ==' },
  { state: 'COMPLETE', base64: 'YQ=' },
  { state: 'PARTIAL', base64: '@@@@' },
  { state: 'COMPLETE', text: 'a', base64: 'YQ==' },
  { state: 'COMPLETE', text: 'a\u0000b' },
  { state: 'COMPLETE', text: 'x\udc00' },
  { state: 'MISSING', size: 9_000_000 },
  { state: 'MISSING', size: -1 },
  { state: 'MISSING', size: 1.5 },
  { state: 'ARTIFACT', artifactUri: 'file:///deploy/app.js', artifactSha256: sha },
  { state: 'ARTIFACT' },
  { state: 'NONE', artifactUri: 'file:///x' },
  { state: 'NONE', artifactSha256: sha },
  { state: 'COMPLETE', text: 'a', extra: 1 },
  { state: 'BOGUS' },
  { state: 'NONE', text: undefined },
);
const richKeys = ['occurredAt', 'headers', 'metadata', 'contract', 'payload', 'tool', 'costUsd', 'other'];
const internalEvent = fc.array(fc.tuple(fc.constantFrom(...richKeys), fc.oneof(rich, awkward)), { maxLength: 4 }).map((changes) => {
  const e: Record<string, unknown> = { ...base, occurredAt: new Date('2026-10-01T00:00:00Z'), payload: { ...base.payload } };
  for (const [k, v] of changes) e[k] = v;
  for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
  return e;
});

describe("parseEvent (the background writer takes the runner's events this way)", () => {
  it('gives what EventInput gives, or falls back to it; never accepts what EventInput refuses', () => {
    let fast = 0;
    fc.assert(
      fc.property(internalEvent, (input) => {
        if (agreesWithSchema(EventInput, parseEventFast, input)) fast++;
        const expected = EventInput.safeParse(input);
        const got = parseEvent(input);
        expect(got.success).toBe(expected.success);
        if (expected.success && got.success) expect(got.data).toEqual(expected.data);
        if (!expected.success && !got.success) expect(got.error.issues[0]?.path).toEqual(expected.error.issues[0]?.path);
      }),
      { numRuns: 3000 },
    );
    expect(fast).toBeGreaterThan(100); // the fast path was exercised, not only the fallback
  });

  it("takes a runner's exchange event (Date, headers, metadata, contract, base64 bytes) by hand", () => {
    const input = {
      id: 'act-1:call:request',
      kind: 'TOOL_REQUEST',
      direction: 'OUT',
      actionId: 'act-1',
      tool: 'BENCH_UP',
      method: 'POST',
      url: 'http://127.0.0.1:1/echo',
      headers: { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] },
      occurredAt: new Date('2026-11-30T08:00:00Z'),
      metadata: { form: 'REST', args: { q: 'bench' }, secrets: [] },
      contract: { form: 'REST', sha256: sha },
      payload: { state: 'COMPLETE', base64: Buffer.from([0xff, 0x00]).toString('base64') },
    };
    expect(parseEventFast(input)).toEqual(EventInput.parse(input));
  });

  it('keeps an own __proto__ key for zod to handle instead of setting a prototype', () => {
    const input = { ...base, occurredAt: new Date(), metadata: JSON.parse('{"__proto__":{"polluted":1}}') };
    const got = parseEvent(input);
    expect(got.success && Object.getPrototypeOf(got.data.metadata)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
