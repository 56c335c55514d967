// The console's assets route: open, files only, built by `npm install` (console/build.ts), with a
// strict CSP; every /console path is the page; hostile paths find nothing and never another file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('/console assets', () => {
  let t: TestApp;
  let files: string[];
  beforeAll(async () => {
    files = await buildConsole();
    t = await startTestApp('pglite');
  }, 120_000);
  afterAll(() => t?.stop());

  it('serves the page without a token, with a CSP that allows nothing but this server', async () => {
    for (const at of ['/console', '/console/', '/console/live', '/console/action/a%20b', '/console/tool/ECHO']) {
      const response = await fetch(`${t.origin}${at}`);
      expect(response.status, at).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).not.toContain('unsafe');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const html = await response.text();
      expect(html).toMatch(/<script type="module" src="\/console\/assets\/app-[0-9a-f]{12}\.js"><\/script>/);
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });

  it('serves each hashed asset for good, gzipped when asked, and HEAD without a body', async () => {
    for (const file of files.filter((f) => f.startsWith('assets/'))) {
      const plain = await fetch(`${t.origin}/console/${file}`, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get('cache-control')).toContain('immutable');
      expect(plain.headers.get('content-type')).toMatch(file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      const head = await fetch(`${t.origin}/console/${file}`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
    }
    const zipped = await fetch(`${t.origin}/console/${files[1]}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(Number(zipped.headers.get('content-length'))).toBeLessThan(150_000);
  });

  it('answers hostile and unknown paths with 404 or the page, never another file; other methods 405', async () => {
    for (const at of [
      '/console/assets/nope.js',
      '/console/assets/..%2f..%2fpackage.json',
      '/console/assets/%2e%2e/%2e%2e/package.json',
      '/console/assets/%00',
      '/console/assets/\ud800',
    ]) {
      const response = await fetch(`${t.origin}${at}`);
      expect([404, 200], at).toContain(response.status);
      const text = await response.text();
      expect(text, at).not.toContain('"dependencies"');
    }
    const traversal = await fetch(`${t.origin}/console/assets/..%2f..%2fpackage.json`);
    expect(traversal.status).toBe(404);
    const post = await fetch(`${t.origin}/console/`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
  });

  it('holds no data: the page carries no token, and its GraphQL requests need one', async () => {
    const page = await (await fetch(`${t.origin}/console/`)).text();
    expect(page).not.toContain(t.token);
    const data = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ directoryStats { rows } }"}' });
    expect(data.status).toBe(401);
  });
});

describe('switched off', () => {
  it('CONSOLE=false and GRAPHIQL=false: /console is an unknown path, and an HTML GET of /graphql is a GraphQL request like any other', async () => {
    const off = await startTestApp('pglite', { CONSOLE: 'false', GRAPHIQL: 'false' });
    try {
      for (const at of ['/console', '/console/live', '/console/assets/app.js']) {
        const response = await fetch(`${off.origin}${at}`);
        expect(response.status, at).toBe(404);
        expect(await response.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
      }
      const page = await fetch(off.url, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(401);
      expect(await page.text()).not.toContain('YogaGraphiQL');
      // The GraphQL door itself stays: the console's switch turns off files, not data.
      const data = await fetch(off.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${off.token}` },
        body: '{"query":"{ directoryStats { rows } }"}',
      });
      expect(data.status).toBe(200);
    } finally {
      await off.stop();
    }
  }, 120_000);
});
