// Record before send, through the real doors: a call whose events the spool cannot make durable is
// refused 503 + Retry-After and nothing reaches the upstream; the spool's state is visible.
import type { FileHandle } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpoolIo } from '../../src/ledger/spool.ts';
import { databaseKinds } from '../helpers/database.ts';
import { startDispatchApp, type DispatchApp } from '../dispatch/helpers.ts';
import { readBody, startServer, type TestServer } from './helpers.ts';

/** The real file operations, with a full disk switched on for every write, or for writes holding one kind of event. */
function faultyIo() {
  const state: { full: boolean; failKind: string | undefined } = { full: false, failKind: undefined };
  const io: SpoolIo = {
    async write(file: FileHandle, bytes: Buffer) {
      if (state.full || (state.failKind && bytes.includes(`"kind":"${state.failKind}"`))) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      let offset = 0;
      while (offset < bytes.length) offset += (await file.write(bytes, offset, bytes.length - offset)).bytesWritten;
    },
    sync: (file) => file.datasync(),
  };
  return { io, state };
}

describe.each(databaseKinds)('the spool at the doors (%s)', (kind) => {
  let upstream: TestServer;
  let app: DispatchApp;
  const seen: string[] = [];
  const faults = faultyIo();

  beforeAll(async () => {
    upstream = await startServer(async (request, response) => {
      seen.push((await readBody(request)).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
    // Lingering events wait for the next durable write however slow the machine, so the writes per call are exact.
    app = await startDispatchApp(kind, [{ name: 'UP', way: { method: 'POST', url: `${upstream.origin}/up`, body: { q: '{{q}}' } }, args: { type: 'object', properties: { q: { type: 'string' } } } }], { SPOOL_LINGER_MS: '600000' }, { spoolIo: faults.io });
  });
  afterAll(async () => {
    await app?.stop();
    await upstream?.stop();
  });

  const viaHttp = () => app.post('/api/dispatch', { tool: 'UP', args: { q: 'http' } });
  const viaGraphql = async () => {
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...app.auth },
      body: JSON.stringify({ query: 'mutation { dispatch(tool: "UP", args: {q: "gql"}) { outcome actionId } }' }),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  };
  const viaMcp = async () => {
    const response = await fetch(`${app.origin}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...app.auth },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'UP', arguments: { q: 'mcp' } } }),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  };

  it('shows its state on /healthz and in ledgerSpool (read = all only)', async () => {
    const health = (await (await fetch(`${app.origin}/healthz`)).json()) as any;
    expect(health.spool).toMatchObject({ mode: 'durable', events: expect.any(Number), bytes: expect.any(Number), oldestAgeMs: expect.any(Number) });
    const read = await app.gql('{ ledgerSpool { mode events bytes oldestAgeMs } }');
    expect(read.errors).toBeUndefined();
    expect(read.data.ledgerSpool).toMatchObject({ mode: 'DURABLE', events: expect.any(Number), bytes: expect.any(Number) });
    const scoped = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${app.mint('read = task', 'task = t1')}` },
      body: JSON.stringify({ query: '{ ledgerSpool { events } }' }),
    });
    const body = (await scoped.json()) as any;
    expect(body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'read' });
  });

  it('refuses 503 + Retry-After on every door when the TOOL_CALL cannot be made durable; the upstream sees nothing', async () => {
    seen.length = 0;
    faults.state.failKind = 'TOOL_CALL';
    try {
      const http = await viaHttp();
      expect(http.status).toBe(503);
      expect(http.headers.get('retry-after')).toBe('1');
      expect(http.body.error.code).toBe('SPOOL_UNAVAILABLE');
      expect(http.body.error.message).toMatch(/nothing was run/);

      const gql = await viaGraphql();
      expect(gql.status).toBe(503);
      expect(gql.headers.get('retry-after')).toBe('1');
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'SPOOL_UNAVAILABLE', retryAfterSeconds: 1 });
      expect(gql.body.errors[0].extensions.http).toBeUndefined();

      const mcp = await viaMcp();
      expect(mcp.status).toBe(503);
      expect(mcp.headers.get('retry-after')).toBe('1');
      expect(mcp.body.error.code).toBe('SPOOL_UNAVAILABLE');
    } finally {
      faults.state.failKind = undefined;
    }
    expect(seen).toEqual([]);
    // What was recorded says the calls were asked for, never that one was sent.
    await app.app.services.writer.flush();
    const calls = await app.app.services.db.prisma.ledgerEvent.count({ where: { kind: 'TOOL_CALL', tool: 'UP' } });
    expect(calls).toBe(0);
  });

  it('refuses 503 before the handler runs when nothing can be written at all, then recovers', async () => {
    seen.length = 0;
    faults.state.full = true;
    try {
      for (const door of [viaHttp, viaGraphql, viaMcp]) {
        const answer = await door();
        expect(answer.status).toBe(503);
        expect(answer.headers.get('retry-after')).toBeTruthy();
      }
    } finally {
      faults.state.full = false;
    }
    expect(seen).toEqual([]);
    const http = await viaHttp();
    expect(http.status).toBe(200);
    expect(http.body.outcome).toBe('OK');
    const gql = await viaGraphql();
    expect(gql.body.data.dispatch.outcome).toBe('OK');
    const mcp = await viaMcp();
    expect(mcp.status).toBe(200);
    expect(seen).toHaveLength(3);
    const events = await app.events(http.body.actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
    const state = app.app.services.spoolState();
    expect(state).toMatchObject({ mode: 'durable', events: 0 });
  });

  it('makes two durable writes per dispatched call: the request rides with its TOOL_CALL, the result with the answer', async () => {
    const writes = () => app.app.services.spoolState().writes!;
    for (const [door, call] of [
      ['HTTP', viaHttp],
      ['GraphQL', viaGraphql],
    ] as const) {
      const before = writes();
      const answer = await call();
      expect(answer.status, door).toBe(200);
      expect(writes() - before, door).toBe(2);
    }
    const before = writes();
    const http = await viaHttp();
    expect(writes() - before).toBe(2);
    // Everything the call recorded is there, whole, in order.
    const events = await app.events(http.body.actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
    const read = await app.gql('{ ledgerSpool { writes appends refused } }');
    expect(read.data.ledgerSpool).toMatchObject({ writes: expect.any(Number), appends: expect.any(Number), refused: expect.any(Number) });
  });
});

describe('DIRLEDGER_SPOOL=memory', () => {
  it('runs without a spool and says so', async () => {
    const app = await startDispatchApp('pglite', [], { DIRLEDGER_SPOOL: 'memory' });
    try {
      const health = (await (await fetch(`${app.origin}/healthz`)).json()) as any;
      expect(health.spool).toEqual({ mode: 'memory', events: expect.any(Number), bytes: null, oldestAgeMs: null, writes: null, appends: null, refused: null });
      expect(app.app.services.spool).toBeUndefined();
    } finally {
      await app.stop();
    }
  });
});
