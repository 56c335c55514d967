// GraphiQL works with no network beyond this server, sends the Headers tab's token with every
// operation (subscriptions included), and a GraphQL request without a valid token is answered in the
// GraphQL response's shape with the same 401.
// GRAPHIQL=false is tested with CONSOLE=false in test/console/assets.test.ts (one server for both switches).
import { existsSync, mkdirSync } from 'node:fs';
import { get } from 'node:http';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const chromium = '/usr/bin/chromium';
const screenshots = path.join(import.meta.dirname, '..', '..', '.screenshots');

describe('GraphiQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite');
  }, 60_000);
  afterAll(() => t?.stop());

  it('its page comes from this server alone: no script, style or font from elsewhere, subscriptions over SSE', async () => {
    const page = await fetch(t.url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    const html = await page.text();
    expect(html).toContain('YogaGraphiQL.renderYogaGraphiQL');
    expect(html).toContain('"subscriptionsProtocol":"SSE"');
    expect(html).toContain('"shouldPersistHeaders":false');
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="(https?:)?\/\//i);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|cdnjs/);
  });

  it('is gzipped for a browser that takes gzip, and decompresses to the same page', async () => {
    const plain = Buffer.from(await (await fetch(t.url, { headers: { accept: 'text/html', 'accept-encoding': 'identity' } })).arrayBuffer());
    // fetch would decompress: read the wire with node:http.
    const { encoding, zipped } = await new Promise<{ encoding: string | undefined; zipped: Buffer }>((resolve, reject) => {
      get(t.url, { headers: { accept: 'text/html', 'accept-encoding': 'gzip' } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ encoding: response.headers['content-encoding'], zipped: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    expect(encoding).toBe('gzip');
    expect(zipped.length).toBeLessThan(plain.length / 2);
    expect(gunzipSync(zipped).equals(plain)).toBe(true);
  });

  it('a GraphQL request without a valid token gets a GraphQL-shaped 401, on HTTP and SSE', async () => {
    for (const [accept, authorization] of [
      ['application/json', undefined],
      ['application/graphql-response+json', 'Bearer not-a-token'],
      ['text/event-stream', undefined],
    ] as const) {
      const response = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, ...(authorization && { authorization }) },
        body: '{"query":"{ __typename }"}',
      });
      expect(response.status, accept).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
      const body = (await response.json()) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
      expect(body).toEqual({ errors: [{ message: 'Missing or invalid credential.', extensions: { code: 'UNAUTHENTICATED' } }] });
      expect(body.data).toBeUndefined();
    }
  });

  it('a token refused for a limit is named in extensions (403), still GraphQL-shaped', async () => {
    const narrowed = t.mint('doors = REST');
    const response = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${narrowed}` },
      body: '{"query":"{ __typename }"}',
    });
    expect(response.status).toBe(403);
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string; limit: string } }[] };
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'doors' });
    expect(body.errors[0]!.message).toMatch(/door/i);
  });

  it.skipIf(!existsSync(chromium))(
    'in Chromium with no network beyond localhost: a query and a live subscription event, with the token from the Headers tab',
    async () => {
      const { chromium: launcher } = await import('playwright-core');
      const browser = await launcher.launch({ executablePath: chromium, args: ['--no-sandbox'] });
      try {
        const page = await browser.newPage();
        const elsewhere: string[] = [];
        await page.route('**/*', (route) => {
          const url = new URL(route.request().url());
          if (url.protocol === 'data:' || url.protocol === 'blob:' || url.hostname === '127.0.0.1') return route.continue();
          elsewhere.push(url.href);
          return route.abort();
        });
        await page.goto(t.url);
        await page.getByText('Headers', { exact: true }).first().click();
        const editors = page.locator('.monaco-editor');
        await expect.poll(() => editors.count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(4);

        const fill = async (model: string, text: string) => {
          const editor = page.locator(`.monaco-editor[data-uri$="-${model}"]`).first();
          await editor.click();
          await page.keyboard.press('Control+A');
          await page.keyboard.press('Delete');
          await page.keyboard.insertText(text);
        };
        // Monaco renders spaces as U+00A0.
        // biome-ignore lint/performance/useDomNodeTextContent: a Playwright locator, not a DOM node; Monaco's lines need innerText.
        const result = async () => (await page.locator('.monaco-editor[data-uri$="-response.json"]').innerText()).replace(/\u00a0/g, ' ');
        const run = () => page.getByRole('button', { name: /execute query/i }).click();

        await fill('request-headers.json', JSON.stringify({ Authorization: `Bearer ${t.token}` }));
        await fill('operation.graphql', '{ directoryStats { rows } }');
        // GraphiQL re-reads the operation's name a moment after an edit: run again until it has.
        await expect
          .poll(
            async () => {
              await run();
              return result();
            },
            { timeout: 20_000, interval: 500 },
          )
          .toMatch(/"rows": \d+/);

        await fill('operation.graphql', 'subscription Echoes { ledgerEvents(filter: { tool: ["ECHO"] }) { toolName kind } }');
        await run();
        // The subscription is open once the server has it: dispatch until an event shows.
        await expect
          .poll(
            async () => {
              await fetch(`${t.origin}/api/dispatch`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', ...t.auth },
                body: '{"tool":"ECHO","args":{"text":"seen in GraphiQL"}}',
              });
              return result();
            },
            { timeout: 20_000, interval: 300 },
          )
          .toMatch(/"toolName": "ECHO"/);
        mkdirSync(screenshots, { recursive: true });
        await page.screenshot({ path: path.join(screenshots, 'graphiql-subscription.png') });
        expect(elsewhere).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    90_000,
  );
});
