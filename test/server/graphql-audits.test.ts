// graphql-http's server audits (GraphQL over HTTP spec conformance) against the real /graphql door,
// with a token sent on every request: every MUST audit passes.
import { auditServer } from 'graphql-http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp('pglite');
});
afterAll(async () => t?.stop());

it('every MUST audit of the GraphQL over HTTP spec passes', async () => {
  const fetchFn = (input: RequestInfo | URL, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', t.auth.authorization!);
    return fetch(input, { ...init, headers });
  };
  const results = await auditServer({ url: t.url, fetchFn });
  const failed = results.filter((r) => r.status === 'error' && r.name.startsWith('MUST'));
  expect(failed.map((r) => `${r.name}: ${'reason' in r ? r.reason : ''}`)).toEqual([]);
  expect(results.filter((r) => r.status === 'ok').length).toBeGreaterThan(20);
}, 60_000);
