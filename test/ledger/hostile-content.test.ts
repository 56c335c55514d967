// Issue 15 part 3: no event is refused for its content. NUL, lone surrogates, a string that already
// looks escaped and deep JSON go through every dispatch door; each event of the call (REQUEST/IN,
// TOOL_CALL, TOOL_RESULT, RESPONSE/OUT) is stored and reads back exactly. Invalid UTF-8 in a JSON
// body is refused with a 400 naming it, and the raw request is still recorded as bytes.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor, wsClient, wsSubscribe } from '../live/helpers.ts';
import { databaseKinds } from '../helpers/database.ts';
import { JSON_MAX_DEPTH } from '../../src/limits.ts';
import { decodeJson, decodeText, encodeJson, encodeText, MARK } from '../../src/ledger/storable.ts';

const deep = (n: number): unknown => {
  let v: unknown = 'bottom\u0000';
  for (let i = 0; i < n; i++) v = { d: v };
  return v;
};

/** What each door sends as args: every kind of text PostgreSQL cannot hold, in values and keys. */
const hostile = {
  text: 'the text\u0000arg \ud800',
  nul: 'nul\u0000here',
  onlyNul: '\u0000',
  high: 'lone \ud800 high',
  low: 'lone \udc00 low',
  reversed: '\udc00\ud800',
  pair: 'a real pair \ud83d\ude00',
  looksEscaped: `${MARK}\\0 not a NUL \\ud800`,
  backslashes: 'a\\0b\u0000c\\\\',
  'key\u0000with nul': ['x\u0000', { '\ud800': 1 }],
  nested: deep(200),
};

const eventsQuery = `query($id: ID!) { action(id: $id) { events { kind direction status url headers metadata payload { text } } } }`;

/** The action's events as the GraphQL Ledger read gives them, once the writer has flushed. */
async function eventsOf(t: TestApp, actionId: string, expectKinds: string[]): Promise<any[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    await t.app.services.writer.flush();
    const r = await t.gql(eventsQuery, { id: actionId });
    expect(r.errors).toBeUndefined();
    const events = r.data?.action?.events ?? [];
    if (expectKinds.every((k) => events.some((e: any) => `${e.kind}/${e.direction}` === k))) return events;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`action ${actionId} never had all of ${expectKinds.join(', ')}`);
}

/** Every event of one call holds the args exactly: the runner's args, the echoed answer and the door's answer. */
async function expectWhole(t: TestApp, actionId: string, args: unknown, door: string) {
  const events = await eventsOf(t, actionId, ['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
  const kinds = events.map((e) => `${e.kind}/${e.direction}`);
  expect(kinds).toEqual(expect.arrayContaining(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']));
  const call = events.find((e) => e.kind === 'TOOL_CALL')!;
  const result = events.find((e) => e.kind === 'TOOL_RESULT')!;
  const answer = events.find((e) => e.kind === 'RESPONSE' && e.direction === 'OUT')!;
  expect(call.metadata.args, `${door}: TOOL_CALL args`).toStrictEqual(args);
  expect(result.metadata.args, `${door}: TOOL_RESULT args`).toStrictEqual(args);
  expect(JSON.parse(result.payload.text), `${door}: TOOL_RESULT payload`).toStrictEqual(args);
  expect(answer.metadata).toMatchObject({ capture: 'boundary' });
  return events;
}

describe('storable text: the escape', () => {
  it('round-trips NUL, lone surrogates, backslashes and strings that already start with the mark; leaves other text alone', () => {
    const samples = [
      '',
      'plain',
      'ümlaut 😀',
      '\u0000',
      'a\u0000b',
      '\ud800',
      '\udfff',
      'x\ud800\ud800y',
      '\udc00\ud800',
      MARK,
      `${MARK}plain`,
      `${MARK}\\0`,
      '\\0',
      '\\u0000\u0000',
      '\\',
      `\\${MARK}\u0000`,
    ];
    for (const s of samples) {
      const stored = encodeText(s);
      expect(stored.includes('\u0000'), JSON.stringify(s)).toBe(false);
      expect(stored.isWellFormed(), JSON.stringify(s)).toBe(true);
      expect(decodeText(stored), JSON.stringify(s)).toBe(s);
    }
    for (const s of ['plain', 'ümlaut 😀', '\\0', '']) expect(encodeText(s)).toBe(s);
    const value = { a: ['\u0000', { '\ud800k': 'v' }], plain: 1, __proto__: 'own' };
    const parsed = JSON.parse(JSON.stringify(value));
    expect(decodeJson(JSON.parse(JSON.stringify(encodeJson(parsed))))).toStrictEqual(parsed);
    const untouched = { a: ['b', { c: 1 }] };
    expect(encodeJson(untouched)).toBe(untouched);
  });
});

describe.each(databaseKinds)('hostile content through every dispatch door on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => {
    await t?.stop();
  });

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${t.origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.auth, ...headers },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });

  it('HTTP /api/dispatch: every event holds the args exactly', async () => {
    const r = await post('/api/dispatch', JSON.stringify({ tool: 'ECHO', args: hostile }));
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ outcome: 'OK', output: hostile });
    const events = await expectWhole(t, body.actionId, hostile, 'DISPATCH');
    const request = events.find((e) => e.kind === 'REQUEST' && e.direction === 'IN');
    expect(JSON.parse(request.payload.text)).toStrictEqual({ tool: 'ECHO', args: hostile });
  });

  it('a live subscription (graphql-ws ledgerEvents) delivers the same events exactly', async () => {
    const session = `hostile-live-${kind}`;
    const client = wsClient(t.url, t.token);
    const sub = wsSubscribe(
      client,
      `subscription ($filter: LedgerFilter) { ledgerEvents(filter: $filter) { kind direction url headers metadata } }`,
      { filter: { session: [session] } },
      'ledgerEvents',
    );
    try {
      // The subscription is live once a warm-up call of the session arrives on it.
      for (let i = 0; i < 120 && !sub.events.some((e) => e.kind === 'RESPONSE') && sub.errors.length === 0; i++) {
        await post('/api/dispatch', JSON.stringify({ tool: 'ECHO', args: { text: 'warm' } }), { 'x-dirledger-session': session });
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const r = await post('/api/dispatch', JSON.stringify({ tool: 'ECHO', args: hostile }), { 'x-dirledger-session': session });
      expect(r.status).toBe(200);
      await waitFor(() => sub.events.filter((e) => e.kind === 'TOOL_RESULT').length >= 2, 'the hostile call on the subscription', 60_000);
      expect(sub.errors).toEqual([]);
      const [call, result] = ['TOOL_CALL', 'TOOL_RESULT'].map((k) => sub.events.filter((e) => e.kind === k).at(-1));
      expect(call.metadata.args).toStrictEqual(hostile);
      expect(result.metadata.args).toStrictEqual(hostile);
    } finally {
      sub.stop();
      await client.dispose();
    }
  });

  it('REST POST /api/tools/ECHO: every event holds the args exactly', async () => {
    const r = await post('/api/tools/ECHO', JSON.stringify(hostile));
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).toBe(200);
    await expectWhole(t, body.actionId, hostile, 'REST');
  });

  it('URL door GET /api/tools/ECHO?…: a NUL in the query is an arg like any other', async () => {
    const r = await fetch(`${t.origin}/api/tools/ECHO?text=${encodeURIComponent('nul\u0000here')}&k%00ey=v`, { headers: t.auth });
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).toBe(200);
    await expectWhole(t, body.actionId, { text: 'nul\u0000here', 'k\u0000ey': 'v' }, 'URL');
  });

  it('GraphQL dispatch: every event holds the args exactly', async () => {
    const r = await t.gql(`mutation($args: JSON) { dispatch(tool: "ECHO", args: $args) { actionId outcome output } }`, { args: hostile });
    expect(r.errors).toBeUndefined();
    expect(r.data.dispatch).toMatchObject({ outcome: 'OK', output: hostile });
    await expectWhole(t, r.data.dispatch.actionId, hostile, 'GRAPHQL');
  });

  it('MCP tools/call: every event holds the args exactly', async () => {
    const client = new Client({ name: 'hostile', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', t.origin), { requestInit: { headers: t.auth } }));
    try {
      const result: any = await client.callTool({ name: 'ECHO', arguments: hostile });
      expect(result.isError).toBeFalsy();
      const actionId = result._meta?.actionId ?? result.structuredContent?.actionId ?? /"actionId"\s*:\s*"([^"]+)"/.exec(JSON.stringify(result))?.[1];
      expect(actionId).toBeTruthy();
      await expectWhole(t, actionId, hostile, 'MCP');
    } finally {
      await client.close();
    }
  });

  it('WebSocket door: every event holds the args exactly', async () => {
    const ws = new WebSocket(`${t.origin.replace(/^http/, 'ws')}/api/ws`, ['dirledger'], { headers: t.auth });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    try {
      const reply = new Promise<any>((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()))));
      ws.send(JSON.stringify({ type: 'call', id: 'h', tool: 'ECHO', args: hostile }));
      const message = await reply;
      expect(message).toMatchObject({ type: 'result', id: 'h', result: { outcome: 'OK', output: hostile } });
      await expectWhole(t, message.result.actionId, hostile, 'WEBSOCKET');
    } finally {
      ws.close();
    }
  });

  it('args nested to the door limit are recorded whole; deeper ones (10,000) are refused with a 400 naming the depth, the request still recorded (built and compared without recursion)', async () => {
    const call = (n: number) => `{"tool":"ECHO","args":{"text":"deep","deep":${'{"d":'.repeat(n)}"bottom\\u0000"${'}'.repeat(n)}}}`;
    const n = JSON_MAX_DEPTH - 2; // the body and args are the first two levels of the document
    const text = call(n);
    const r = await post('/api/dispatch', text);
    const body = await r.json();
    expect(r.status, JSON.stringify(body).slice(0, 300)).toBe(200);
    const events = await eventsOf(t, body.actionId, ['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
    const depthOf = (v: any) => {
      let depth = 0;
      while (v && typeof v === 'object' && 'd' in v) {
        v = v.d;
        depth++;
      }
      return { depth, bottom: v };
    };
    for (const e of events.filter((e) => e.kind === 'TOOL_CALL' || e.kind === 'TOOL_RESULT')) {
      expect(depthOf(e.metadata.args.deep), e.kind).toEqual({ depth: n, bottom: 'bottom\u0000' });
    }
    expect(depthOf(JSON.parse(events.find((e) => e.kind === 'TOOL_RESULT').payload.text).deep)).toEqual({ depth: n, bottom: 'bottom\u0000' });
    expect(events.find((e) => e.kind === 'REQUEST' && e.direction === 'IN').payload.text).toBe(text);

    const tooDeep = call(10_000);
    // Refused by the door's depth pre-scan before any action starts: the invocation header names it.
    const actionId = `too-deep-${Date.now()}`;
    const refused = await post('/api/dispatch', tooDeep, { 'x-dirledger-action': actionId });
    const refusal = await refused.json();
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refusal)).toContain(`at most ${JSON_MAX_DEPTH} levels`);
    const recorded = await eventsOf(t, actionId, ['REQUEST/IN', 'RESPONSE/OUT']);
    expect(recorded.some((e) => e.kind === 'TOOL_CALL')).toBe(false);
    expect(recorded.find((e) => e.kind === 'REQUEST').payload.text).toBe(tooDeep);
  });

  it.each([
    ['/api/dispatch', 'DISPATCH'],
    ['/api/tools/ECHO', 'REST'],
    ['/graphql', 'GRAPHQL'],
    ['/mcp', 'MCP'],
  ])('invalid UTF-8 in a JSON body at %s: 400 naming it, nothing runs, the request recorded as its exact bytes', async (path, door) => {
    const marker = `bad-utf8-${door}-${Date.now()}`;
    const bytes = Buffer.concat([Buffer.from(`{"tool":"ECHO","args":{"text":"${marker} `), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}}')]);
    const r = await post(path, bytes, { accept: 'application/json, text/event-stream', 'x-dirledger-session': marker });
    const text = await r.text();
    expect(r.status, text).toBe(400);
    expect(text).toMatch(/UTF-8/);
    await t.app.services.writer.flush();
    const rows = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { session: marker }, orderBy: { position: 'asc' } });
    expect(rows.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'RESPONSE/OUT']);
    expect(rows[0]!.payloadState).toBe('COMPLETE');
    expect(rows[0]!.payloadEncoding).toBe('BINARY');
    expect(await t.app.services.ledger.readBlob(rows[0]!.payloadSha256!)).toEqual(bytes);
    expect(rows[1]!.status).toBe('400');
  });
});
