// The GraphQL door reads a POST body once (UTF-8, depth and JSON checked there) and hands yoga the
// parsed object: the size limit, batches, and bodies that are not a JSON object answer as before.
import { Readable } from 'node:stream';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const limit = 4096;

/** POSTs `body` to /graphql, chunked (no content-length) when `chunked`, and returns status and parsed JSON. */
function post(t: TestApp, body: string | Buffer, chunked = false): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...t.auth };
    if (!chunked) headers['content-length'] = String(Buffer.byteLength(body));
    const req = request(t.url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    Readable.from([Buffer.from(body)]).pipe(req);
  });
}

describe('GraphQL POST bodies, parsed once at the door', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { PAYLOAD_MAX_BYTES: String(limit), BATCH_MAX_BYTES: String(limit) });
  });
  afterAll(async () => t?.stop());

  it('answers a read from the parsed body', async () => {
    const r = await post(t, JSON.stringify({ query: '{ events(first: 1) { edges { cursor } } }' }));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ data: { events: { edges: [] } } });
  });

  it('refuses a body over the limit with 413, declared or chunked', async () => {
    const big = JSON.stringify({ query: `{ __typename } # ${'x'.repeat(limit)}` });
    for (const chunked of [false, true]) {
      const r = await post(t, big, chunked);
      expect(r.status, `chunked: ${chunked}`).toBe(413);
      expect(r.json.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
      expect(r.json.errors[0].message).toMatch(/4,?096/);
    }
  });

  it('runs a batch (a JSON array) as before', async () => {
    const r = await post(t, JSON.stringify([{ query: '{ __typename }' }, { query: '{ events(first: 0) { edges { cursor } } }' }]));
    expect(r.status).toBe(200);
    expect(r.json).toEqual([{ data: { __typename: 'Query' } }, { data: { events: { edges: [] } } }]);
  });

  it('answers a body that is JSON but not an object, or not JSON, with 400 naming what arrived', async () => {
    for (const body of ['null', '"a string"', '42', '{"query": ']) {
      const r = await post(t, body);
      expect(r.status, body).toBe(400);
      expect(r.json.errors[0].message, body).toMatch(/JSON/);
    }
  });

  it('answers hostile text in variables as bad input, never a 500', async () => {
    for (const id of ['\u0000', '\ud800', 'x'.repeat(10)]) {
      const r = await post(t, JSON.stringify({ query: 'query ($id: ID!) { event(id: $id) { id } }', variables: { id } }));
      expect([200, 400], JSON.stringify(id)).toContain(r.status);
      if (id === 'x'.repeat(10)) expect(r.json).toEqual({ data: { event: null } });
      else expect(r.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    }
    const deep = `{"query":"{ __typename }","variables":{"v":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`;
    const r = await post(t, deep, true);
    expect(r.status).toBe(400);
    expect(r.json.errors[0].message).toMatch(/nested/);
  });
});
