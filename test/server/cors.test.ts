// CORS: allowed origins are a setting (none by default); a preflight is answered without a token and
// never recorded; credentials are shared only with an allowed origin. Shown with fetch and Origin
// headers, and from real pages in Chromium (when /usr/bin/chromium exists) on two other origins.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const chromium = '/usr/bin/chromium';

/** A page server: its origin serves one empty HTML page, as a browser app would be served. */
async function pageServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>app</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://localhost:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const preflight = (t: TestApp, origin: string, path = '/graphql') =>
  fetch(`${t.origin}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });

const refusals = async (t: TestApp) => {
  await t.app.services.writer.flush();
  return t.app.services.db.prisma.ledgerEvent.count();
};

describe('CORS_ORIGINS unset (the default): no origin is allowed', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite');
  });
  afterAll(async () => t?.stop());

  it('a preflight is 204 without a token and without Access-Control-Allow-Origin; answers carry none either', async () => {
    const before = await refusals(t);
    const answer = await preflight(t, 'https://app.example.com');
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const authed = await fetch(`${t.origin}/graphql`, {
      method: 'POST',
      headers: { origin: 'https://app.example.com', 'content-type': 'application/json', ...t.auth },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(authed.status).toBe(200);
    expect(authed.headers.get('access-control-allow-origin')).toBeNull();
    expect(authed.headers.get('access-control-allow-credentials')).toBeNull();
    expect(await refusals(t)).toBe(before);
  });
});

describe('CORS_ORIGINS set', () => {
  let t: TestApp;
  let allowed: Awaited<ReturnType<typeof pageServer>>;
  let other: Awaited<ReturnType<typeof pageServer>>;
  beforeAll(async () => {
    allowed = await pageServer();
    other = await pageServer();
    t = await startTestApp('pglite', { CORS_ORIGINS: `${allowed.origin}, https://second.example.com` });
  });
  afterAll(async () => {
    await t?.stop();
    await allowed?.close();
    await other?.close();
  });

  it('a preflight from an allowed origin is answered without a token and not recorded; another origin gets no grant', async () => {
    const before = await refusals(t);
    for (const path of ['/graphql', '/mcp', '/api/dispatch', '/api/directory']) {
      const ok = await preflight(t, allowed.origin, path);
      expect(ok.status, path).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe(allowed.origin);
      expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
      expect(ok.headers.get('access-control-allow-headers')).toMatch(/authorization/);
      expect(ok.headers.get('vary')).toMatch(/Origin/);
      const no = await preflight(t, other.origin, path);
      expect(no.status).toBe(204);
      expect(no.headers.get('access-control-allow-origin')).toBeNull();
    }
    expect(await refusals(t)).toBe(before);
  });

  it('credentials only for an allowed origin: answers (and 401s) carry the grant for it alone', async () => {
    const post = (origin: string, headers: Record<string, string> = t.auth) =>
      fetch(`${t.origin}/graphql`, { method: 'POST', headers: { origin, 'content-type': 'application/json', ...headers }, body: '{"query":"{ __typename }"}' });
    const ok = await post(allowed.origin);
    expect(ok.headers.get('access-control-allow-origin')).toBe(allowed.origin);
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
    const refused = await post(allowed.origin, {});
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(allowed.origin);
    expect(refused.headers.get('access-control-expose-headers')).toMatch(/www-authenticate/);
    for (const origin of [other.origin, 'null', 'https://second.example.com.evil.test', `${allowed.origin}/`, 'x'.repeat(10_000)]) {
      const answer = await post(origin);
      expect(answer.headers.get('access-control-allow-origin'), origin.slice(0, 40)).toBeNull();
    }
  });

  it.runIf(existsSync(chromium))(
    'from real pages in Chromium: the allowed origin reads GraphQL with its token, another origin is blocked',
    async () => {
      const { chromium: launcher } = await import('playwright-core');
      const browser = await launcher.launch({ executablePath: chromium, args: ['--no-sandbox'] });
      try {
        const call = async (pageOrigin: string) => {
          const page = await browser.newPage();
          await page.goto(pageOrigin);
          return page.evaluate(
            async ({ url, token }) => {
              try {
                const response = await fetch(url, {
                  method: 'POST',
                  credentials: 'include',
                  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
                  body: JSON.stringify({ query: '{ __typename }' }),
                });
                return { status: response.status, body: await response.json() };
              } catch (error) {
                return { blocked: String(error) };
              }
            },
            { url: `${t.origin}/graphql`, token: t.token },
          );
        };
        expect(await call(allowed.origin)).toEqual({ status: 200, body: { data: { __typename: 'Query' } } });
        expect(await call(other.origin)).toEqual({ blocked: expect.stringMatching(/Failed to fetch/) });
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});

describe('the CORS_ORIGINS setting', () => {
  it('takes origins only: a wildcard, a path or garbage stops the start naming the setting', () => {
    expect(parseConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000' }).CORS_ORIGINS).toEqual(['https://a.example', 'http://localhost:3000']);
    for (const bad of ['*', 'https://a.example/app', 'not a url', 'null']) expect(() => parseConfig({ CORS_ORIGINS: bad }), bad).toThrow(ConfigError);
    expect(() => parseConfig({ CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS: expected/);
  });
});
