// The ingest door's hand-written fast path gives exactly what BatchInput (zod) gives, and gives up
// (so zod answers, naming the field) on anything zod would refuse.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BatchInput, parseBatchFast } from '../../src/ledger/input.ts';

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
    undefined, null, '', 'x', 'a\u0000b', 'x\ud800y', 'IN', 'OUT', 'COMPLETE', 'PARTIAL', 'NONE', 'MISSING', 'ARTIFACT',
    '2026-02-29T00:00:00Z', '2028-02-29T00:00:00+01:00', '2026-10-01T25:00:00Z', '2026-10-01T00:00:00', '2026-10-01',
    '0.0000001', '-12.5', '12345678901', '1e3', 1.5, -1, 0, -0, 42, 2 ** 53, Number.NaN, '123', '12345678901234567890',
    'x'.repeat(33), 'x'.repeat(129), 'x'.repeat(257), 'x'.repeat(513), [], {}, true,
  ),
  fc.string({ maxLength: 8 }),
  fc.integer({ min: -5, max: 5 }),
);
const eventKeys = ['id', 'kind', 'direction', 'actionId', 'tool', 'session', 'turn', 'task', 'agent', 'model', 'status', 'method', 'url', 'costUsd', 'inputTokens', 'outputTokens', 'occurredAt', 'payload', 'headers', 'metadata', 'contract', 'other'];
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
        const expected = BatchInput.safeParse(json);
        const got = parseBatchFast(json);
        if (!expected.success) expect(got).toBeUndefined();
        else if (got !== undefined) {
          fast++;
          expect(got).toEqual(expected.data);
        }
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
