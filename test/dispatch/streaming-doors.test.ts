// The raw WebSocket door (/api/ws) and the SSE door (POST /api/dispatch, accept: text/event-stream):
// message shapes, failure paths, and that each exchange is recorded; /api/ws and graphql-ws share one server.
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { streamQuery, waitFor, wsClient, wsSubscribe } from '../live/helpers.ts';
import { boundaryPair, eventsOf } from './door-helpers.ts';

function open(url: string, protocols?: string[], headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

/** Sends each message and collects that many replies. */
function exchange(ws: WebSocket, messages: (string | Buffer)[], replies = messages.length): Promise<any[]> {
  return new Promise((resolve) => {
    const got: any[] = [];
    const onMessage = (data: WebSocket.RawData) => {
      got.push(JSON.parse(data.toString()));
      if (got.length === replies) {
        ws.off('message', onMessage);
        resolve(got);
      }
    };
    ws.on('message', onMessage);
    for (const m of messages) ws.send(m);
  });
}

describe.each(databaseKinds)('streaming doors on %s', (kind) => {
  let t: TestApp;
  let wsUrl: string;
  beforeAll(async () => {
    t = await startTestApp(kind);
    wsUrl = `${t.origin.replace(/^http/, 'ws')}/api/ws`;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('WebSocket: concurrent calls on one socket are answered by id, each its own recorded exchange', async () => {
    const ws = await open(wsUrl, ['dirledger'], t.auth);
    try {
      expect(ws.protocol).toBe('dirledger');
      const replies = await exchange(ws, [
        JSON.stringify({ type: 'call', id: 'a', tool: 'ECHO', args: { text: 'first' } }),
        JSON.stringify({ type: 'call', id: 'b', tool: 'ECHO', args: { text: 'second' }, dryRun: true }),
        JSON.stringify({ type: 'ping', id: 'p' }),
      ]);
      const byId = Object.fromEntries(replies.map((r) => [r.id, r]));
      expect(byId.a).toMatchObject({ type: 'result', result: { tool: 'ECHO', outcome: 'OK', output: { text: 'first' } } });
      expect(byId.b).toMatchObject({ type: 'result', result: { tool: 'ECHO', outcome: 'DRY_RUN' } });
      expect(byId.p).toEqual({ type: 'pong', id: 'p' });
      expect(byId.a.result.actionId).not.toBe(byId.b.result.actionId);
      const { request, answer } = boundaryPair(await eventsOf(t, byId.a.result.actionId));
      expect(request).toMatchObject({ tool: 'ECHO', payloadState: 'COMPLETE', metadata: { door: 'WEBSOCKET' } });
      expect(answer).toMatchObject({ tool: 'ECHO', status: '200', metadata: { door: 'WEBSOCKET' } });
    } finally {
      ws.close();
    }
  });

  it('WebSocket: a message that is not a call is answered with BAD_INPUT naming what arrived, and recorded; the socket stays open', async () => {
    const ws = await open(wsUrl, undefined, { authorization: `Bearer ${t.token}` });
    try {
      const [notJson, unknownType, missingTool, extra, binary] = await exchange(ws, [
        '{not json',
        JSON.stringify({ type: 'subscribe', id: 'u' }),
        JSON.stringify({ type: 'call', id: 'm', args: {} }),
        JSON.stringify({ type: 'call', id: 'x', tool: 'ECHO', args: { text: 'x' }, extra: 1 }),
        Buffer.from([0xff, 0x00]),
      ]).then((r) => {
        const order = (r: any) => ({ m: 2, u: 1, x: 3 })[r.id as string] ?? (/binary/.test(r.error.message) ? 4 : 0);
        return [...r].sort((p, q) => order(p) - order(q));
      });
      expect(notJson).toMatchObject({ type: 'error', error: { code: 'BAD_INPUT' } });
      expect(notJson.error.message).toMatch(/^Expected one JSON message in UTF-8/);
      expect(unknownType).toMatchObject({ type: 'error', id: 'u', error: { code: 'BAD_INPUT' } });
      expect(missingTool.error.message).toMatch(/tool: expected string, got nothing/);
      expect(extra.error.message).toMatch(/expected only known fields, got unknown extra/);
      expect(binary.error.message).toMatch(/got a binary frame/);
      const [still] = await exchange(ws, [JSON.stringify({ type: 'ping' })]);
      expect(still).toEqual({ type: 'pong' });
    } finally {
      ws.close();
    }
  });

  it('graphql-ws still answers on /graphql beside /api/ws, and any other upgrade path is refused', async () => {
    const client = createClient({
      url: `${t.origin.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${t.token}` },
    });
    try {
      const result = await new Promise<any>((resolve, reject) => {
        let value: unknown;
        client.subscribe({ query: '{ __typename }' }, { next: (v) => (value = v), error: reject, complete: () => resolve(value) });
      });
      expect(result).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await client.dispose();
    }
    await expect(open(`${t.origin.replace(/^http/, 'ws')}/elsewhere`)).rejects.toThrow(/404/);
  });

  it('SSE: accepted (the action id) then result, then the stream ends; the streamed answer is recorded whole', async () => {
    const response = await fetch(`${t.origin}/api/dispatch`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json', accept: 'text/event-stream', 'x-dirledger-session': 'sse-session' },
      body: JSON.stringify({ tool: 'ECHO', args: { text: 'streamed' } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = text
      .trim()
      .split('\n\n')
      .map((block) => Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])));
    expect(events.map((e) => e.event)).toEqual(['accepted', 'result']);
    const result = JSON.parse(events[1]!.data!);
    expect(result).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'streamed' } });
    expect(events[0]!.id).toBe(result.actionId);
    expect(response.headers.get('x-dirledger-action')).toBe(result.actionId);
    const recorded = await eventsOf(t, result.actionId);
    const { request, answer } = boundaryPair(recorded);
    expect(request).toMatchObject({ tool: 'ECHO', metadata: { door: 'SSE' } });
    expect(answer).toMatchObject({ payloadState: 'COMPLETE', metadata: { door: 'SSE', stream: true } });
    const sessions = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId: result.actionId, session: 'sse-session' } });
    expect(sessions.length).toBeGreaterThanOrEqual(2);
  });

  it('SSE: the streamed answer is published to streamCapture subscribers as it is recorded', async () => {
    const actionId = `sse-stream-${kind}`;
    const client = wsClient(t.url, t.token);
    const sub = wsSubscribe(client, streamQuery, { actionId }, 'streamCapture');
    await waitFor(() => t.app.services.streams.size >= 1, 'the subscriber waiting');
    const response = await fetch(`${t.origin}/api/dispatch`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json', accept: 'text/event-stream', 'x-dirledger-action': actionId },
      body: JSON.stringify({ tool: 'ECHO', args: { text: 'published' } }),
    });
    const text = await response.text();
    await sub.done;
    await client.dispose();
    const chunks = sub.events.filter((c: any) => !c.final);
    expect(Buffer.concat(chunks.map((c: any) => Buffer.from(c.base64, 'base64'))).toString()).toBe(text);
    expect(sub.events.at(-1)).toMatchObject({ final: true, state: 'COMPLETE', totalSize: Buffer.byteLength(text) });
  });

  it('SSE: bad input is answered before any stream, as JSON with its status, and recorded', async () => {
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${t.origin}/api/dispatch`, { method: 'POST', headers: { ...t.auth, accept: 'text/event-stream', ...headers }, body });
    const noType = await post({}, '{"tool":"ECHO"}');
    expect(noType.status).toBe(400);
    expect(((await noType.json()) as any).error.message).toMatch(/Expected content-type application\/json/);
    const badField = await post({ 'content-type': 'application/json' }, '{"tool":"ECHO","args":[]}');
    expect(badField.status).toBe(400);
    expect(((await badField.json()) as any).error.message).toMatch(/args: expected record, got \[\]/);
    const badForm = await post({ 'content-type': 'application/json' }, '{"tool":"ECHO","form":"CARRIER_PIGEON"}');
    expect(badForm.status).toBe(400);
    const badHeader = await post({ 'content-type': 'application/json', 'x-dirledger-session': 'x'.repeat(600) }, '{"tool":"ECHO","args":{"text":"x"}}');
    expect(badHeader.status).toBe(400);
    expect(((await badHeader.json()) as any).error.message).toMatch(/session/);
  });
});
