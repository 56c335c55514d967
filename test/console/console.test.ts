// The reviewer console in Debian's Chromium against the real server: sign in, search, a tool's page,
// what varies between its forms, a dispatch from it arriving on the live page, a resume after the server
// ends the live subscription for slowness, the action's bytes, a PARTIAL stream growing, a
// narrowed token's refusal on its task page, counts, tokens and integrity; axe-core on every page.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.ts';
import { startDispatchApp, type DispatchApp } from '../dispatch/helpers.ts';
import { chromiumPath, launch, openPage, screenshot, seriousViolations, signIn } from './helpers.ts';

const hasChromium = existsSync(chromiumPath);
if (!hasChromium) process.stderr.write(`console browser tests skipped: ${chromiumPath} is missing (apt install chromium)\n`);

/** `/hello`: a JSON answer; `/tick`: an event stream, one event every 40 ms until the client leaves. */
function upstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/tick')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const timer = setInterval(() => res.write(`data: tick ${n++}\n\n`), 40);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"hello":"world","bytes":"\\u00e9\\u0000"}');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

// Under a loaded machine a page's steps and axe-core take tens of seconds.
describe.skipIf(!hasChromium)('the reviewer console in Chromium', { timeout: 120_000 }, () => {
  let app: DispatchApp;
  let up: { url: string; server: Server };
  let browser: Browser;
  const opened: Page[] = [];
  const elsewhere: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    await buildConsole();
    up = await upstream();
    app = await startDispatchApp(
      'pglite',
      [
        {
          name: 'ECHO',
          kind: 'builtin',
          column: 'way: code',
          way: { method: 'CODE', language: 'javascript', code: 'export default async (args) => args;' },
          args: { type: 'object', properties: { text: { type: 'string', examples: ['hello'] } }, required: ['text'] },
        },
        { name: 'HELLO', way: { method: 'GET', url: `${up.url}/hello`, headers: { authorization: 'Bearer [HELLO_KEY]' } } },
        { name: 'TICKS', way: { method: 'GET', url: `${up.url}/tick` } },
      ],
      // A small live buffer, so a burst of one commit ends a subscription for slowness for real.
      { STREAM_CUTOFF_MS: '300', DIRLEDGER_SECRET_HELLO_KEY: 'canary-console-hello-9f8e', LIVE_BUFFER_MAX: '16' },
    );
    browser = await launch();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    up?.server.close();
  });

  async function page(token = app.token, at?: string): Promise<Page> {
    const opening = await openPage(browser);
    opened.push(opening.page);
    opening.page.on('console', () => {});
    elsewhere.push(...opening.elsewhere);
    const { page: p } = opening;
    p.on('pageerror', (error) => problems.push(error.message));
    await signIn(p, app.origin, token, at);
    return p;
  }

  async function accessible(p: Page, name: string) {
    expect(await seriousViolations(p), name).toEqual([]);
    await screenshot(p, name);
  }

  it('signs in, searches as you type (score, layer, reason; the no-match sentence) and opens a tool', async () => {
    const p = await page();
    expect(await p.evaluate(() => Object.keys(sessionStorage))).toEqual(['dirledger.console.token']);
    expect(p.url()).not.toContain(app.token);
    await p.getByLabel('Words').fill('hello');
    const row = p.getByRole('row', { name: /HELLO/ });
    await expect.poll(() => row.count()).toBeGreaterThan(0);
    expect(await row.first().innerText()).toMatch(/HELLO\s+tool\s+\d+\s+[A-Z_]+\s+\S/);
    await accessible(p, 'search');
    await p.getByLabel('Words').fill('zzqxv wobblegrunt');
    await expect.poll(() => p.getByTestId('resolve-message').innerText()).toMatch(/no|nothing/i);
    await p.getByLabel('Words').fill('hello');
    await p.getByRole('link', { name: 'HELLO', exact: true }).click();
    await p.getByRole('heading', { name: 'HELLO', level: 1 }).waitFor();
    // Every form, each with its copy button; the secret appears as its name, never its value.
    expect(await p.locator('article.contract').count()).toBeGreaterThan(5);
    expect(await p.getByRole('button', { name: /^Copy the CURL form$/ }).count()).toBe(1);
    const text = await p.locator('main').innerText();
    expect(text).toContain('[HELLO_KEY]');
    expect(text).not.toContain('canary-console-hello');
    // What varies between forms: one row per form, each part as the writer states it; the call is the same in all.
    const forms = await p.locator('article.contract').count();
    const parts = p.getByTestId('forms-parts');
    expect(await parts.locator('tbody tr').count()).toBe(forms);
    const partsOf = (form: string) => parts.locator('tr', { has: p.getByRole('rowheader', { name: form, exact: true }) }).innerText();
    expect(await partsOf('CLI')).toContain('the environment variable DIRLEDGER_TOKEN=[DIRLEDGER_TOKEN]');
    expect(await partsOf('REST')).toContain('the authorization header: Bearer [DIRLEDGER_TOKEN]');
    expect(await partsOf('GRAPHQL_WS')).toContain('connection_init');
    expect(await p.getByTestId('forms-vary').innerText()).toMatch(new RegExp(`Between the ${forms} forms vary only where the call is sent \\(\\d+ doors\\)`));
    await p.getByLabel(/^Arguments as JSON/).fill('{"q":"same-everywhere"}');
    await p.getByRole('button', { name: 'Render the forms' }).click();
    await expect.poll(() => p.getByTestId('forms-same').innerText()).toContain('{"tool":"HELLO","args":{"q":"same-everywhere"}}');
    // Every form is rendered again with the new args; the summary above them can show before the last one is.
    await expect
      .poll(async () => (await p.locator('article.contract').allInnerTexts()).filter((written) => !written.includes('same-everywhere')).length)
      .toBe(0);
    await accessible(p, 'tool');
  });

  it('a dispatch from the tool page arrives on the live page; its action shows every event with its bytes and hash', async () => {
    const live = await page(app.token, '/console/live');
    await live.getByRole('heading', { name: 'Live ledger' }).waitFor();
    await live.getByLabel('Filter', { exact: true }).selectOption('tool');
    await live.getByLabel('Value').fill('HELLO');
    await live.getByRole('button', { name: 'Add filter' }).click();
    await live.getByText('tool = HELLO').waitFor();
    // graphql-ws acknowledges no subscribe: wait until the server holds it, then a moment for the filtered one.
    await expect.poll(() => app.app.services.live.stats().subscribers).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await accessible(live, 'live');

    const tool = await page(app.token, '/console/tool/HELLO');
    await tool.getByRole('button', { name: 'Dispatch', exact: true }).click();
    const outcome = tool.getByTestId('dispatch-outcome');
    await expect.poll(() => outcome.innerText().catch(() => ''), { timeout: 20_000 }).toMatch(/^OK/);

    await expect.poll(() => live.getByTestId('live-row').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await screenshot(live, 'live-event');
    // Paused, nothing arrives; resumed, what committed meanwhile arrives from the cursor.
    const before = await live.getByTestId('live-row').count();
    await live.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => app.app.services.live.stats().subscribers).toBe(0);
    const meanwhile = await app.post('/api/tools/HELLO', {});
    expect(meanwhile.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await live.getByTestId('live-row').count()).toBe(before);
    const missed = (await app.events(meanwhile.body.actionId)).filter((e) => e.tool === 'HELLO').length;
    expect(missed).toBeGreaterThan(0);
    await live.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => live.getByTestId('live-row').count(), { timeout: 20_000 }).toBe(before + missed);
    await live.getByTestId('live-row').first().getByRole('link').last().click();
    await live.getByRole('heading', { name: /^Action / }).waitFor();
    await expect.poll(() => live.getByTestId('action-event').count()).toBeGreaterThan(2);
    const page_ = await live.locator('main').innerText();
    expect(page_).toMatch(/RESPONSE/);
    expect(page_).toMatch(/sha256 [0-9a-f]{64}/);
    expect(page_).toContain('"hello": "world"');
    expect(page_).not.toContain('canary-console-hello');
    // The upstream's answer, as hex.
    const cards = await live.getByTestId('action-event').allInnerTexts();
    const answer = live.getByTestId('action-event').nth(cards.findIndex((card) => card.includes('"hello": "world"')));
    await answer.getByRole('button', { name: 'Hex' }).click();
    expect(await answer.getByTestId('payload-bytes').innerText()).toMatch(/00000000 {2}7b 22 68 65 6c 6c 6f 22/);
    await accessible(live, 'action');
  });

  it('a burst past LIVE_BUFFER_MAX: the server ends the live subscription for slowness, and the page resumes from its cursor, nothing missed or doubled', async () => {
    const live = await page(app.token, '/console/live');
    await live.getByLabel('Filter', { exact: true }).selectOption('session');
    await live.getByLabel('Value').fill('S-SLOW');
    await live.getByRole('button', { name: 'Add filter' }).click();
    await live.getByText('session = S-SLOW').waitFor();
    let sequence = 0;
    const append = async (count: number) => {
      const events = Array.from({ length: count }, () => ({
        id: `console-slow-${sequence++}`,
        actionId: `console-slow-${sequence}`,
        kind: 'TOOL_CALL',
        direction: 'OUT',
        tool: 'HELLO',
        session: 'S-SLOW',
        occurredAt: new Date().toISOString(),
        payload: { state: 'COMPLETE', text: 'slow' },
      }));
      const appended = await app.gql('mutation ($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }', {
        input: { collector: 'console-slow', events },
      });
      expect(appended.errors).toBeUndefined();
    };
    const shown = async () => Number(await live.getByTestId('live-shown').innerText());
    // Subscribed once a probe arrives (graphql-ws acknowledges no subscribe).
    await expect
      .poll(
        async () => {
          await append(1);
          return shown();
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBeGreaterThan(0);
    // The subscription starts live: a probe appended before it began is never shown. Count from where the shown number settles.
    let settled = -1;
    await expect
      .poll(
        async () => {
          const now = await shown();
          const same = now === settled;
          settled = now;
          return same;
        },
        { timeout: 20_000, interval: 1_000 },
      )
      .toBe(true);
    const base = { shown: settled, sequence };
    const shownSince = async () => (await shown()) - base.shown;
    // One commit of 120 events: more than the subscription may hold (LIVE_BUFFER_MAX=16) before the page takes them.
    await append(120);
    await expect.poll(shownSince, { timeout: 30_000 }).toBe(sequence - base.sequence);
    expect(await live.getByTestId('live-status').innerText()).toMatch(/resumed [1-9]\d*× after the server found this page too slow/);
    // Still live after the resume.
    await append(1);
    await expect.poll(shownSince, { timeout: 20_000 }).toBe(sequence - base.sequence);
    await screenshot(live, 'live-resumed');
  });

  it('a streamed answer grows live on its action page and ends PARTIAL when the caller leaves', async () => {
    const actionId = 'console-stream-1';
    const p = await page(app.token, `/console/action/${actionId}`);
    const status = p.getByTestId('stream-status');
    await expect.poll(() => status.innerText()).toMatch(/Waiting for the stream/);
    await expect.poll(() => app.app.services.streams.size).toBeGreaterThan(0);
    const leave = new AbortController();
    const call = fetch(`${app.origin}/api/tools/TICKS`, {
      method: 'POST',
      headers: { ...app.auth, 'content-type': 'application/json', 'x-dirledger-action': actionId },
      body: '{}',
      signal: leave.signal,
    });
    const response = await call;
    const reader = response.body!.getReader();
    await reader.read();
    const sizes: number[] = [];
    for (let i = 0; i < 3; i++) {
      await expect.poll(() => status.innerText(), { timeout: 10_000 }).toMatch(/Growing: \d+ bytes/);
      sizes.push(Number(/Growing: (\d+)/.exec(await status.innerText())![1]));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(sizes[2]!).toBeGreaterThan(sizes[0]!);
    expect(await p.getByTestId('payload-bytes').first().innerText()).toContain('data: tick 0');
    await screenshot(p, 'stream-growing');
    leave.abort();
    await expect.poll(() => status.innerText(), { timeout: 20_000 }).toMatch(/Ended: PARTIAL \(cut: CUTOFF\)/);
    await expect.poll(() => p.getByTestId('action-event').count(), { timeout: 20_000 }).toBeGreaterThan(2);
    await accessible(p, 'stream-partial');
  });

  it('a narrowed token is refused a tool; the task page names the limit', async () => {
    const narrowed = app.mint('tools = ECHO', 'task = T-CONSOLE', 'read = task');
    const p = await page(narrowed, '/console/tool/ECHO');
    await p.getByRole('button', { name: 'Dispatch', exact: true }).click();
    await expect
      .poll(
        () =>
          p
            .getByTestId('dispatch-outcome')
            .innerText()
            .catch(() => ''),
        { timeout: 20_000 },
      )
      .toMatch(/^OK/);
    await p.goto(`${app.origin}/console/tool/HELLO`);
    await p.getByRole('heading', { name: 'HELLO', level: 1 }).waitFor();
    await p.getByRole('button', { name: 'Dispatch', exact: true }).click();
    await expect.poll(() => p.locator('main').innerText(), { timeout: 20_000 }).toMatch(/REFUSED|FORBIDDEN/);
    await screenshot(p, 'refused');

    await p.goto(`${app.origin}/console/task/T-CONSOLE`);
    const refusals = p.getByTestId('task-refusals');
    await expect.poll(() => refusals.innerText().catch(() => ''), { timeout: 20_000 }).toMatch(/HELLO/);
    expect(await refusals.locator('td.limit').first().innerText()).toBe('tools');
    expect(await p.getByTestId('task-calls').innerText()).toMatch(/ECHO\s+OK/);
    await accessible(p, 'task');
  });

  it('counts chart and table with the ask box; tokens inspected and issued; the chain verified', async () => {
    const p = await page(app.token, '/console/counts');
    await p.locator('svg.chart').waitFor();
    expect(await p.locator('table.counts').first().innerText()).toMatch(/HELLO/);
    await p.getByRole('button', { name: 'By hour' }).click();
    await expect.poll(() => p.locator('table.counts').first().innerText()).toMatch(/T\d\d:00/);
    await p.getByLabel('A question in plain words').fill('events by tool');
    await p.getByRole('button', { name: 'Ask', exact: true }).click();
    await expect
      .poll(() =>
        p
          .getByTestId('ask-answer')
          .innerText()
          .catch(() => ''),
      )
      .toMatch(/tool/i);
    await accessible(p, 'counts');

    await p.getByRole('link', { name: 'Tokens' }).click();
    await p.getByLabel('Token', { exact: true }).fill(app.mint('tools = ECHO', 'uses <= 5'));
    await p.getByRole('button', { name: 'Inspect' }).click();
    const inspection = p.getByTestId('token-inspection');
    await expect.poll(() => inspection.innerText().catch(() => '')).toMatch(/0 of 5 spent, 5 left/);
    expect(await inspection.innerText()).toContain('tools = ECHO');
    await p.getByLabel(/^Tools/).fill('ECHO');
    await p.getByLabel('Uses').fill('3');
    await p.getByRole('button', { name: 'Issue' }).click();
    await expect
      .poll(() =>
        p
          .getByTestId('issued-token')
          .innerText()
          .catch(() => ''),
      )
      .toMatch(/Shown once/);
    await accessible(p, 'tokens');

    await p.getByRole('link', { name: 'Integrity' }).click();
    await expect
      .poll(
        () =>
          p
            .getByTestId('integrity-state')
            .innerText()
            .catch(() => ''),
        { timeout: 30_000 },
      )
      .toMatch(/The chain holds/);
    await accessible(p, 'integrity');
  });

  it('hostile bytes on an action page: NUL, invalid UTF-8, 10,000-deep JSON and markup render as data, nothing runs', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const payloads = [
      { text: `NUL \u0000 here <script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2">` },
      { base64: Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x00, 0x41]).toString('base64') },
      { text: deep },
    ];
    const events = payloads.map((payload, i) => ({
      id: `console-hostile-${i}`,
      actionId: 'console-hostile',
      kind: 'RESPONSE',
      direction: 'IN',
      tool: 'HELLO',
      occurredAt: new Date().toISOString(),
      payload: { state: 'COMPLETE', ...payload },
    }));
    const appended = await app.gql('mutation ($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }', {
      input: { collector: 'console-hostile', events },
    });
    expect(appended.errors).toBeUndefined();
    const p = await page(app.token, '/console/action/console-hostile');
    await expect.poll(() => p.getByTestId('action-event').count(), { timeout: 20_000 }).toBe(3);
    const cards = p.getByTestId('action-event');
    expect(await cards.nth(0).getByTestId('payload-bytes').innerText()).toContain('<script>window.__pwned = 1</script>');
    expect(await cards.nth(1).getByTestId('payload-bytes').innerText()).toMatch(/^00000000 {2}ff fe c3 28 00 41/);
    expect(await cards.nth(2).getByTestId('payload-bytes').innerText()).toContain('[[[[');
    expect(await p.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await accessible(p, 'hostile');
  });

  it('loaded nothing from beyond this machine, and no page threw', () => {
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  });
});
