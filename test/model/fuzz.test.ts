// Property-based hostile input at every model door: generated bodies with NUL, lone surrogates,
// wrong types, huge numbers, deep JSON and invalid UTF-8. Each answer comes within a bound, is never a
// 5xx, and the server lives.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deepJson, send } from '../helpers/hostile.ts';
import { startModelApp, type ModelApp } from './helpers.ts';

const RUNS = 25;
const BOUND_MS = 10_000;

let t: ModelApp;
beforeAll(async () => {
  t = await startModelApp();
}, 60_000);
afterAll(async () => t?.stop());

const nasty = fc.constantFrom(
  '\u0000',
  '\ud800',
  '\udfff',
  '\udc00\ud800',
  '\uffff',
  '\ufeff',
  '\u202e',
  '"',
  '\\',
  '{',
  '%00',
  '\r\n',
  "'; DROP TABLE ledger_event; --",
);
const hostileText = fc.array(fc.oneof(nasty, fc.string({ maxLength: 8 })), { maxLength: 6 }).map((parts) => parts.join(''));
const hostileValue = fc.oneof(
  hostileText,
  fc.integer(),
  fc.double(),
  fc.constant(1e300),
  fc.constant(-1),
  fc.constant(null),
  fc.boolean(),
  fc.array(hostileText, { maxLength: 3 }),
);
const modelName = fc.oneof(fc.constantFrom('fake-gpt', 'fake-claude-sonnet', 'fake sonnet', 'fake-embed', 'unbound-gpt'), hostileText, hostileValue);
const body = fc.record(
  {
    model: modelName,
    messages: fc.oneof(fc.array(fc.record({ role: fc.constantFrom('user', 'system', '\u0000'), content: hostileValue }), { maxLength: 3 }), hostileValue),
    input: hostileValue,
    max_tokens: hostileValue,
    max_completion_tokens: hostileValue,
    stream: fc.oneof(fc.boolean(), hostileValue),
  },
  { requiredKeys: ['model'] },
);
/** Raw body text: JSON of the generated body (lone surrogates kept as \\u escapes), deep JSON, or bytes that are not UTF-8. */
const rawBody = fc.oneof(
  body.map((b) => JSON.stringify(b)),
  fc.integer({ min: 1, max: 20_000 }).map((n) => `{"model":"fake-gpt","messages":${deepJson(n)}}`),
  fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .map((bytes) => Buffer.concat([Buffer.from('{"model":"'), Buffer.from(bytes), Buffer.from([0xff]), Buffer.from('"}')])),
);
const paths = fc.constantFrom('/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/messages', '/v1/messages/count_tokens');

describe('model doors under generated hostile input', () => {
  it('never a 5xx, always within the bound, the server alive', async () => {
    await fc.assert(
      fc.asyncProperty(rawBody, paths, async (raw, path) => {
        const a = await send(t, path, { body: raw, headers: { 'anthropic-version': '2023-06-01' } }, BOUND_MS);
        expect(a.ms).toBeLessThan(BOUND_MS);
        expect([200, 400, 404, 413], `${path} ${a.status} ${a.text.slice(0, 300)}`).toContain(a.status);
      }),
      { numRuns: RUNS },
    );
    const alive = await send(t, '/v1/chat/completions', {
      body: JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'ok' }], max_tokens: 1 }),
    });
    expect(alive.status).toBe(200);
  }, 120_000);
});
