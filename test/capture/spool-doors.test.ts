// Record before send, through the real doors: a call whose events the spool cannot make durable is
// refused 503 + Retry-After and nothing reaches the upstream; the spool's state is visible.
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/ledger/input.ts';
import type { SpoolIo } from '../../src/ledger/spool-files.ts';
import { segmentHeader, unframe } from '../../src/ledger/spool-frame.ts';
import { databaseKinds } from '../helpers/database.ts';
import { startDispatchApp, type DispatchApp } from '../dispatch/helpers.ts';
import { startMcpUpstream, type McpUpstream } from '../dispatch/mcp-upstream.ts';
import { readBody, startServer, type TestServer } from './helpers.ts';

/**
 * The real file operations, with a full disk switched on for every write, or for writes holding some
 * text (one kind of event, the outbound capture's); `synced` lists every event once its sync returned.
 */
function faultyIo() {
  const state: { full: boolean; failKind: string | undefined; failWhen: string | undefined } = { full: false, failKind: undefined, failWhen: undefined };
  const synced: EventInput[] = [];
  const written = new Map<FileHandle, Buffer[]>();
  const io: SpoolIo = {
    async write(file: FileHandle, bytes: Buffer, position: number) {
      if (state.full || (state.failKind && bytes.includes(`"kind":"${state.failKind}"`)) || (state.failWhen && bytes.includes(state.failWhen))) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      let offset = 0;
      while (offset < bytes.length) offset += (await file.write(bytes, offset, bytes.length - offset, position + offset)).bytesWritten;
      written.set(file, [...(written.get(file) ?? []), Buffer.from(bytes)]);
    },
    async sync(file) {
      await file.datasync();
      // Records as written, stamped with their segment's number (at byte 8 of each): read back behind that segment's header.
      const records = Buffer.concat(written.get(file) ?? []);
      if (records.length) synced.push(...unframe(Buffer.concat([segmentHeader(records.readUInt32LE(8)), records])).events);
      written.delete(file);
    },
  };
  return { io, state, synced };
}

describe.each(databaseKinds)('the spool at the doors (%s)', (kind) => {
  let upstream: TestServer;
  let mcp: McpUpstream;
  let app: DispatchApp;
  const seen: string[] = [];
  const faults = faultyIo();
  /** Each request the MCP upstream received, and whether its REQUEST/OUT was durable when its head arrived. */
  const mcpArrivals: { method: string; body: string; durable: boolean }[] = [];

  beforeAll(async () => {
    upstream = await startServer(async (request, response) => {
      seen.push((await readBody(request)).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
    mcp = await startMcpUpstream('', (method) => {
      // What was durable at the moment the request's head arrived: its REQUEST/OUT must be among it.
      const durableThen = faults.synced.slice();
      return (body) => {
        const same = (e: EventInput) =>
          e.kind === 'REQUEST' &&
          e.direction === 'OUT' &&
          e.url === mcp.url &&
          e.method === method &&
          (body === '' ? e.payload.state === 'NONE' : e.payload.text === body);
        const earlier = mcpArrivals.filter((a) => a.method === method && a.body === body).length;
        mcpArrivals.push({ method, body, durable: durableThen.filter(same).length > earlier });
      };
    });
    app = await startDispatchApp(
      kind,
      [
        {
          name: 'UP',
          way: { method: 'POST', url: `${upstream.origin}/up`, body: { q: '{{q}}' } },
          args: { type: 'object', properties: { q: { type: 'string' } } },
        },
        {
          name: 'MCP_ADD',
          way: { method: 'MCP', server: mcp.url, tool: 'add', arguments: { a: '{{a}}', b: '{{b}}' } },
          args: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
        },
      ],
      // Lingering events wait for the next durable write however slow the machine, so the writes per call are exact.
      { SPOOL_LINGER_MS: '600000' },
      { spoolIo: faults.io },
    );
  });
  afterAll(async () => {
    await app?.stop();
    await upstream?.stop();
    await mcp?.close();
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
      expect(http.body.error).toMatchObject({
        code: 'SPOOL_UNAVAILABLE',
        ran: false,
        message: expect.stringMatching(/Nothing was sent or run: send it again\.$/),
      });

      const gql = await viaGraphql();
      expect(gql.status).toBe(503);
      expect(gql.headers.get('retry-after')).toBe('1');
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'SPOOL_UNAVAILABLE', retryAfterSeconds: 1, ran: false });
      expect(gql.body.errors[0].message).toMatch(/Nothing was sent or run/);
      expect(gql.body.errors[0].extensions.http).toBeUndefined();

      const mcp = await viaMcp();
      expect(mcp.status).toBe(503);
      expect(mcp.headers.get('retry-after')).toBe('1');
      expect(mcp.body.error).toMatchObject({ code: 'SPOOL_UNAVAILABLE', ran: false, message: expect.stringMatching(/Nothing was sent or run/) });
    } finally {
      faults.state.failKind = undefined;
    }
    expect(seen).toEqual([]);
    // What was recorded says the calls were asked for, never that one was sent.
    await app.app.services.writer.flush();
    const calls = await app.app.services.db.prisma.ledgerEvent.count({ where: { kind: 'TOOL_CALL', tool: 'UP' } });
    expect(calls).toBe(0);
  });

  it('refuses 503 saying the call ran, never that nothing ran, on every door when its result cannot be made durable', async () => {
    seen.length = 0;
    faults.state.failKind = 'TOOL_RESULT';
    const ran = expect.stringMatching(/The call ran, but its result could not be recorded, so it is not returned/);
    try {
      const http = await viaHttp();
      expect(http.status).toBe(503);
      expect(http.headers.get('retry-after')).toBe('1');
      expect(http.body.error).toMatchObject({ code: 'SPOOL_UNAVAILABLE', ran: true, message: ran });
      expect(http.body.error.message).not.toMatch(/nothing was/i);

      const gql = await viaGraphql();
      expect(gql.status).toBe(503);
      expect(gql.headers.get('retry-after')).toBe('1');
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'SPOOL_UNAVAILABLE', ran: true });
      expect(gql.body.errors[0].message).toEqual(ran);

      const mcp = await viaMcp();
      expect(mcp.status).toBe(503);
      expect(mcp.body.error).toMatchObject({ code: 'SPOOL_UNAVAILABLE', ran: true, message: ran });
    } finally {
      faults.state.failKind = undefined;
    }
    // It did run: the upstream received each call, and each call's TOOL_CALL is on the record.
    expect(seen.map((b) => JSON.parse(b).q)).toEqual(['http', 'gql', 'mcp']);
  });

  it("an MCP step over HTTP: each of the client's requests is durable before it reaches the server; a spool that cannot take one sends nothing", async () => {
    mcpArrivals.length = 0;
    for (const [a, b] of [
      [1, 2],
      [3, 4],
    ]) {
      const r = await app.post('/api/tools/MCP_ADD', { a, b });
      expect(r.body).toMatchObject({ outcome: 'OK', output: { sum: a! + b! } });
    }
    const session = ['initialize', 'notifications/initialized', 'tools/call'];
    expect(mcpArrivals.filter((a) => a.method === 'POST').map((a) => JSON.parse(a.body).method)).toEqual([...session, ...session]);
    expect(mcpArrivals.filter((a) => !a.durable)).toEqual([]);

    mcpArrivals.length = 0;
    faults.state.failWhen = '"capture":"outbound"';
    try {
      const http = await app.post('/api/tools/MCP_ADD', { a: 5, b: 6 }, { 'x-dirledger-action': `mcp-unrecorded-${kind}` });
      expect(http.status).toBe(503);
      expect(http.headers.get('retry-after')).toBe('1');
      expect(http.body.error.code).toBe('SPOOL_UNAVAILABLE');
      const mcpDoor = await fetch(`${app.origin}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...app.auth },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'MCP_ADD', arguments: { a: 7, b: 8 } } }),
      });
      expect(mcpDoor.status).toBe(503);
      expect(((await mcpDoor.json()) as any).error.code).toBe('SPOOL_UNAVAILABLE');
    } finally {
      faults.state.failWhen = undefined;
    }
    expect(mcpArrivals).toEqual([]);
    // The call is on the record as asked for and ended unsent (the door's 503 is its own answer, as for a refused TOOL_CALL).
    const events = await app.events(`mcp-unrecorded-${kind}`);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN']);
    expect(events[2]).toMatchObject({
      status: 'ERROR',
      metadata: { code: 'SPOOL_UNAVAILABLE', message: expect.stringMatching(/^Nothing was sent: the request to the MCP server could not be recorded/) },
    });
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

  it('never streams a result over SSE before the result is durable: a failed write ends the stream with SPOOL_UNAVAILABLE instead', async () => {
    faults.state.failKind = 'TOOL_RESULT';
    let text: string;
    try {
      const response = await fetch(`${app.origin}/api/dispatch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...app.auth },
        body: JSON.stringify({ tool: 'UP', args: { q: 'sse' } }),
      });
      expect(response.status).toBe(200);
      text = await response.text();
    } finally {
      faults.state.failKind = undefined;
    }
    expect(text).toMatch(/^event: accepted$/m);
    expect(text).not.toMatch(/^event: result$/m);
    expect(text).toMatch(/^event: error$/m);
    expect(text).toContain('SPOOL_UNAVAILABLE');
    expect(text).toMatch(/The call ran, but its result could not be recorded/);
    // The door's answer is recorded as its stream ends: let it land before the next test counts writes.
    const actionId = JSON.parse(/^event: accepted\ndata: (.*)$/m.exec(text)![1]!).actionId as string;
    for (let i = 0; i < 100 && !(await app.events(actionId)).some((e) => e.kind === 'RESPONSE' && e.direction === 'OUT'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await app.events(actionId)).map((e) => `${e.kind}/${e.direction}`)).toContain('RESPONSE/OUT');
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
    const read = await app.gql('{ ledgerSpool { writes appends refused writeP50Ms writeP99Ms appendP50Ms appendP99Ms } }');
    expect(read.data.ledgerSpool).toMatchObject({ writes: expect.any(Number), appends: expect.any(Number), refused: expect.any(Number) });
    // The times the calls above waited for their records, beside the disk writes that served them.
    const { writeP50Ms, writeP99Ms, appendP50Ms, appendP99Ms } = read.data.ledgerSpool;
    for (const ms of [writeP50Ms, writeP99Ms, appendP50Ms, appendP99Ms]) expect(ms).toBeGreaterThan(0);
    expect(writeP99Ms).toBeGreaterThanOrEqual(writeP50Ms);
    expect(appendP99Ms).toBeGreaterThanOrEqual(appendP50Ms);
    // A wait holds the write that served it.
    expect(appendP50Ms).toBeGreaterThanOrEqual(writeP50Ms * 0.5);
  });

  it('makes one durable write per recorded Directory read: its request rides with its answer', async () => {
    const writes = () => app.app.services.spoolState().writes!;
    const actionId = `directory-read-${kind}`;
    const before = writes();
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-dirledger-action': actionId, ...app.auth },
      body: JSON.stringify({ query: '{ tool(name: "UP") { name events(first: 5) { edges { node { id } } } } }' }),
    });
    const text = await response.text();
    const body = JSON.parse(text);
    expect(body.errors).toBeUndefined();
    expect(body.data.tool.name).toBe('UP');
    expect(writes() - before).toBe(1);
    const events = await app.events(actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'RESPONSE/OUT']);
    // The answer recorded is the exact bytes the client read.
    expect(events[1]!.payloadSha256).toBe(createHash('sha256').update(text).digest('hex'));
  });
});

describe('DIRLEDGER_SPOOL=memory', () => {
  it('runs without a spool and says so', async () => {
    const app = await startDispatchApp('pglite', [], { DIRLEDGER_SPOOL: 'memory' });
    try {
      const health = (await (await fetch(`${app.origin}/healthz`)).json()) as any;
      expect(health.spool).toEqual({
        mode: 'memory',
        events: expect.any(Number),
        ...{ bytes: null, oldestAgeMs: null, writes: null, appends: null, refused: null },
        ...{ writeP50Ms: null, writeP99Ms: null, appendP50Ms: null, appendP99Ms: null },
      });
      expect(app.app.services.spool).toBeUndefined();
    } finally {
      await app.stop();
    }
  });
});
