import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/database.ts';
import { readBody, startServer, type TestServer } from '../capture/helpers.ts';
import { startDispatchApp, type DispatchApp } from './helpers.ts';

const SECRET = 'canary-s3cr3t-value-9f8e7d';

describe.each(databaseKinds)('dispatch over HTTP doors (%s)', (kind) => {
  let upstream: TestServer;
  let app: DispatchApp;
  const seen: { method: string; url: string; headers: Record<string, unknown>; body: string }[] = [];

  beforeAll(async () => {
    upstream = await startServer(async (request, response) => {
      const body = (await readBody(request)).toString('utf8');
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      const url = new URL(request.url!, 'http://x');
      if (url.pathname === '/fail') {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end('boom');
        return;
      }
      if (url.pathname === '/slow') {
        setTimeout(() => response.end('late'), 3_000).unref();
        return;
      }
      if (url.pathname === '/big') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(Buffer.alloc(300_000, 7));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ method: request.method, url: request.url, auth: request.headers.authorization ?? null, body }));
    });
    const o = upstream.origin;
    app = await startDispatchApp(
      kind,
      [
        {
          name: 'UP_ECHO',
          way: {
            method: 'POST',
            url: `${o}/echo?q={{q}}`,
            headers: { 'content-type': 'application/json', authorization: 'Bearer [UP_KEY]' },
            body: { q: '{{q}}', n: '{{n}}' },
          },
          args: { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'] },
        },
        { name: 'UP_GET', way: { method: 'GET', url: `${o}/get/{{id}}` }, args: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
        { name: 'UNBOUND', way: { method: 'GET', url: `${o}/x?key=[NOT_BOUND_KEY]` }, args: { type: 'object' } },
        { name: 'FAILS', way: { method: 'GET', url: `${o}/fail` } },
        { name: 'SLOW', way: { method: 'GET', url: `${o}/slow` } },
        { name: 'BIG', way: { method: 'GET', url: `${o}/big` } },
        { name: 'SNIPPET', way: { method: 'CODE', language: 'javascript', code: 'export default () => 1' } },
        {
          name: 'ECHO',
          kind: 'builtin',
          way: { method: 'CODE', language: 'javascript', code: 'export default async (args) => args;' },
          args: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
        {
          name: 'SEQ',
          way: [
            { method: 'GET', url: `${o}/one` },
            { method: 'GET', url: `${o}/fail` },
            { method: 'GET', url: `${o}/three` },
          ],
        },
      ],
      { DIRLEDGER_SECRET_UP_KEY: SECRET, DISPATCH_TIMEOUT_MS: '500', DISPATCH_RESPONSE_MAX_BYTES: '200000' },
    );
  });
  afterAll(async () => {
    await app?.stop();
    await upstream?.stop();
  });

  it('a dispatched HTTP call is exactly four events: request in, call out, response in, answer out', async () => {
    seen.length = 0;
    const r = await app.post(
      '/api/tools/UP_ECHO',
      { q: 'a b&c', n: 3 },
      { 'x-dirledger-session': 's-1', 'x-dirledger-task': 't-1', 'x-dirledger-agent': 'agent-7' },
    );
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe('OK');
    expect(r.body.status).toBe(200);
    // The upstream got the secret value; the caller's answer shows only its name.
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(seen[0]!.url).toBe('/echo?q=a%20b%26c');
    expect(JSON.parse(seen[0]!.body)).toEqual({ q: 'a b&c', n: 3 });
    expect(r.body.output.auth).toBe('Bearer [UP_KEY]');
    expect(JSON.stringify(r.body)).not.toContain(SECRET);

    const events = await app.events(r.body.actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
    for (const e of events) {
      expect(e.session).toBe('s-1');
      expect(e.task).toBe('t-1');
      expect(e.agent).toBe('agent-7');
      expect(e.tool).toBe('UP_ECHO');
    }
    const call = events[1]!;
    expect(call.url).toBe(`${upstream.origin}/echo?q=a%20b%26c`);
    expect(call.contractForm).toBe('way');
    expect(call.contractSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(call.redactedSecrets).toEqual(['UP_KEY']);
    expect((call.headers as any).authorization).toBe('Bearer [UP_KEY]');
    expect(events[2]!.status).toBe('200');
    expect(events[3]!.status).toBe('200');
    const answer = await app.app.services.ledger.readBlob(events[3]!.payloadSha256!);
    expect(JSON.parse(answer!.toString()).actionId).toBe(r.body.actionId);
    const request = await app.app.services.ledger.readBlob(events[0]!.payloadSha256!);
    expect(request!.toString()).toBe(JSON.stringify({ q: 'a b&c', n: 3 }));
  });

  it('the one-line URL door types query values by the args schema; POST /api/dispatch takes the canonical call', async () => {
    const u = await fetch(`${app.origin}/api/tools/UP_GET?id=007`, { headers: app.auth });
    const body = await u.json();
    expect(body.outcome).toBe('OK');
    expect(body.output.url).toBe('/get/007');
    const d = await app.post('/api/dispatch', { tool: 'UP_ECHO', args: { q: 'x', n: 1 } });
    expect(d.body.outcome).toBe('OK');
    const bad = await app.post('/api/dispatch', { tool: 'UP_ECHO', args: {}, extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('"extra"');
  });

  it('a dry run renders the request with secrets as names, records DRY_RUN and sends nothing', async () => {
    seen.length = 0;
    const r = await app.post('/api/dispatch', { tool: 'UP_ECHO', args: { q: 'dry' }, dryRun: true });
    expect(r.body.outcome).toBe('DRY_RUN');
    expect(r.body.requests).toEqual([
      {
        method: 'POST',
        url: `${upstream.origin}/echo?q=dry`,
        headers: { 'content-type': 'application/json', authorization: 'Bearer [UP_KEY]' },
        body: { q: 'dry' },
      },
    ]);
    expect(seen).toHaveLength(0);
    const events = await app.events(r.body.actionId);
    expect(events.map((e) => e.kind)).toEqual(['REQUEST', 'DRY_RUN', 'RESPONSE']);
  });

  it('args are checked against the schema before anything leaves; the error names the field and what arrived', async () => {
    seen.length = 0;
    const r = await app.post('/api/tools/UP_ECHO', { q: 'x', n: 'three' });
    expect(r.status).toBe(400);
    expect(r.body.outcome).toBe('REFUSED');
    expect(r.body.error.code).toBe('ARGS_INVALID');
    expect(r.body.error.message).toContain('"n"');
    expect(r.body.error.message).toContain('"three"');
    const missing = await app.post('/api/tools/UP_ECHO', {});
    expect(missing.body.error.message).toContain('"q"');
    expect(seen).toHaveLength(0);
    const events = await app.events(r.body.actionId);
    expect(events.map((e) => e.kind)).toEqual(['REQUEST', 'REFUSAL', 'RESPONSE']);
  });

  it('an unbound secret refuses before anything is sent, with a refusal event naming it', async () => {
    seen.length = 0;
    const r = await app.post('/api/tools/UNBOUND', {});
    expect(r.body.outcome).toBe('REFUSED');
    expect(r.body.error.code).toBe('SECRET_UNBOUND');
    expect(r.body.error.message).toContain('[NOT_BOUND_KEY]');
    expect(seen).toHaveLength(0);
    const refusal = (await app.events(r.body.actionId)).find((e) => e.kind === 'REFUSAL')!;
    expect((refusal.metadata as any).secrets).toEqual(['NOT_BOUND_KEY']);
  });

  it('CODE is refused with a pointer to the runnable ways; a builtin answers in process', async () => {
    const r = await app.post('/api/tools/SNIPPET', {});
    expect(r.body.error.code).toBe('CODE_NOT_EXECUTED');
    expect(r.body.error.message).toContain('never executes');
    const echo = await app.post('/api/tools/ECHO', { text: 'hi' });
    expect(echo.body.outcome).toBe('OK');
    expect(echo.body.output).toEqual({ text: 'hi' });
    expect((await app.events(echo.body.actionId)).map((e) => e.kind)).toEqual(['REQUEST', 'TOOL_CALL', 'TOOL_RESULT', 'RESPONSE']);
  });

  it('an upstream error, a timeout and an oversized answer are ERRORs with their codes', async () => {
    const f = await app.post('/api/tools/FAILS', {});
    expect(f.body).toMatchObject({ outcome: 'ERROR', status: 500, output: 'boom', error: { code: 'UPSTREAM_STATUS' } });
    const started = Date.now();
    const s = await app.post('/api/tools/SLOW', {});
    expect(s.status).toBe(504);
    expect(s.body.error.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2_500);
    // A chunked binary answer streams through the REST door; the JSON door reads it whole, bounded.
    const b = await app.post('/api/dispatch', { tool: 'BIG', args: {} });
    expect(b.body.error.code).toBe('RESPONSE_TOO_LARGE');
    const result = (await app.events(b.body.actionId)).find((e) => e.kind === 'TOOL_RESULT')!;
    expect(result.payloadState).toBe('MISSING');
  });

  it('a sequence runs in order and stops at the first failure, each step its own sub-call', async () => {
    seen.length = 0;
    const r = await app.post('/api/tools/SEQ', {});
    expect(r.body.outcome).toBe('ERROR');
    expect(r.body.steps.map((s: any) => s.outcome)).toEqual(['OK', 'ERROR']);
    expect(seen.map((s) => s.url)).toEqual(['/one', '/fail']);
    expect(r.body.error.message).toContain('Step 2 of 3');
    const events = await app.events(r.body.actionId);
    expect(events.map((e) => e.kind)).toEqual(['REQUEST', 'TOOL_CALL', 'TOOL_RESULT', 'TOOL_CALL', 'TOOL_RESULT', 'RESPONSE']);
    expect(events.filter((e) => e.kind === 'TOOL_CALL').map((e) => e.contractForm)).toEqual(['way step 1', 'way step 2']);
  });

  it('a body over the payload limit is answered 413 and recorded MISSING', async () => {
    const big = 'x'.repeat(app.config.PAYLOAD_MAX_BYTES + 10);
    const r = await fetch(`${app.origin}/api/tools/UP_ECHO`, {
      method: 'POST',
      headers: { ...app.auth, 'content-type': 'application/json', 'x-dirledger-action': `big-${kind}` },
      body: big,
    });
    expect(r.status).toBe(413);
    const events = await app.events(`big-${kind}`);
    expect(events.map((e) => `${e.kind}/${e.payloadState}`)).toEqual(['REQUEST/MISSING', 'RESPONSE/COMPLETE']);
  });

  it("health checks are not recorded; a Directory read is (issue 15: only the Ledger's own reads go unrecorded)", async () => {
    const before = await app.app.services.db.prisma.ledgerEvent.count();
    await fetch(`${app.origin}/healthz`);
    await app.app.services.writer.flush();
    expect(await app.app.services.db.prisma.ledgerEvent.count()).toBe(before);
    await fetch(`${app.origin}/api/directory`, { headers: { ...app.auth, 'x-dirledger-action': `listing-${kind}` } });
    expect((await app.events(`listing-${kind}`)).map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'RESPONSE/OUT']);
  });
});
