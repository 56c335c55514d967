// Every door asks for a token, refuses without one (plainly, whatever was wrong with it), and puts
// each refusal on the record; caveats, use counts and rate limits hold through the real transports.
import { createHmac, randomBytes } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Authority } from '../../src/auth/authority.ts';
import { inspect } from '../../src/auth/tokens.ts';
import { parse, serialize } from '../../src/auth/macaroon.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';

const PLAIN = { error: { code: 'UNAUTHENTICATED', message: 'Missing or invalid credential.' } };
/** The same refusal in the GraphQL response's shape, at the GraphQL doors (GraphiQL and clients read `errors`). */
const PLAIN_GRAPHQL = { errors: [{ message: 'Missing or invalid credential.', extensions: { code: 'UNAUTHENTICATED' } }] };

async function refusals(t: TestApp, where: Record<string, unknown> = {}) {
  await t.app.services.writer.flush();
  return t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL', ...where }, orderBy: { position: 'asc' } });
}

type Door = { door: string; request: (t: TestApp, headers: Record<string, string>) => Promise<Response> };

const json = { 'content-type': 'application/json' };
const httpDoors: Door[] = [
  { door: 'GRAPHQL', request: (t, h) => fetch(t.url, { method: 'POST', headers: { ...json, ...h }, body: '{"query":"{ __typename }"}' }) },
  {
    door: 'GRAPHQL_SSE',
    request: (t, h) => fetch(t.url, { method: 'POST', headers: { ...json, accept: 'text/event-stream', ...h }, body: '{"query":"{ __typename }"}' }),
  },
  { door: 'REST', request: (t, h) => fetch(`${t.origin}/api/tools/ECHO`, { method: 'POST', headers: { ...json, ...h }, body: '{"text":"hi"}' }) },
  { door: 'URL', request: (t, h) => fetch(`${t.origin}/api/tools/ECHO?text=hi`, { headers: h }) },
  {
    door: 'DISPATCH',
    request: (t, h) => fetch(`${t.origin}/api/dispatch`, { method: 'POST', headers: { ...json, ...h }, body: '{"tool":"ECHO","args":{"text":"hi"}}' }),
  },
  {
    door: 'SSE',
    request: (t, h) =>
      fetch(`${t.origin}/api/dispatch`, {
        method: 'POST',
        headers: { ...json, accept: 'text/event-stream', ...h },
        body: '{"tool":"ECHO","args":{"text":"hi"}}',
      }),
  },
  {
    door: 'MCP',
    request: (t, h) =>
      fetch(`${t.origin}/mcp`, {
        method: 'POST',
        headers: { ...json, accept: 'application/json, text/event-stream', ...h },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      }),
  },
  { door: 'WEBHOOK', request: (t, h) => fetch(`${t.origin}/hooks/ECHO`, { method: 'POST', headers: { ...json, ...h }, body: '{"text":"hi"}' }) },
  {
    door: 'INGEST',
    request: (t, h) => fetch(`${t.origin}/ledger/batches`, { method: 'POST', headers: { ...json, ...h }, body: '{"collector":"c","events":[]}' }),
  },
  { door: 'BLOB', request: (t, h) => fetch(`${t.origin}/ledger/blob/${'0'.repeat(64)}`, { headers: h }) },
  { door: 'REST', request: (t, h) => fetch(`${t.origin}/api/directory`, { headers: h }) },
];

describe.each(databaseKinds)('authority at every door on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { DIRLEDGER_SECRET_HOOK_ECHO: 'hook-secret-value' });
  });
  afterAll(() => t?.stop());

  it.each(httpDoors.map((d, i) => [`${d.door} #${i}`, d] as const))(
    '%s: no token, a malformed one or a forged one gets the same plain 401, and each refusal is recorded',
    async (_name, { door, request }) => {
      const forged = serialize({ ...parse(t.token), signature: randomBytes(32) });
      const other = new Authority({
        rootKey: randomBytes(32),
        audience: 'dirledger',
        sql: t.app.services.db.sql,
        record: () => {},
        ratePerSecond: 0,
        rateBurst: 1,
      }).mintToken();
      const cases: [string, Record<string, string>][] = [
        ['none', {}],
        ['malformed', { authorization: 'Bearer not-a-token' }],
        ['forged', { authorization: `Bearer ${forged}` }],
        ['other-key', { authorization: `Bearer ${other}` }],
        ['truncated', { authorization: `Bearer ${t.token.slice(0, -5)}` }],
      ];
      for (const [label, headers] of cases) {
        const actionId = `refused-${kind}-${door}-${_name.replace(/\W/g, '')}-${label}`;
        const response = await request(t, { ...headers, 'x-dirledger-action': actionId });
        expect(response.status, `${label} at ${door}`).toBe(401);
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(await response.json()).toEqual(door.startsWith('GRAPHQL') ? PLAIN_GRAPHQL : PLAIN);
        const [event] = await refusals(t, { actionId });
        expect(event, `${label} at ${door} recorded`).toMatchObject({ direction: 'IN', status: 'REFUSED' });
        expect(event!.metadata).toMatchObject({ capture: 'authority', limit: 'credential', door });
        expect(String((event!.metadata as any).reason)).not.toBe('');
      }
      const reasons = (await refusals(t, { actionId: { startsWith: `refused-${kind}-${door}-${_name.replace(/\W/g, '')}-` } })).map(
        (e) => (e.metadata as any).reason,
      );
      // The caller heard one plain sentence; the ledger kept five different reasons.
      expect(new Set(reasons).size).toBe(5);
    },
  );

  it('the health check and GraphiQL page stay open; the token never reaches a stored byte', async () => {
    expect((await fetch(`${t.origin}/healthz`)).status).toBe(200);
    expect((await fetch(t.url, { headers: { accept: 'text/html' } })).status).toBe(200);
    const viaLink = await fetch(`${t.origin}/api/tools/ECHO?text=linked&token=${t.token}`, { headers: { 'x-dirledger-action': `link-${kind}` } });
    expect(viaLink.status).toBe(200);
    const viaHeader = await fetch(`${t.origin}/api/tools/ECHO?text=header`, { headers: { ...t.auth, 'x-dirledger-action': `header-${kind}` } });
    expect(viaHeader.status).toBe(200);
    await t.app.services.writer.flush();
    const events = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId: { in: [`link-${kind}`, `header-${kind}`] } } });
    expect(events.length).toBeGreaterThanOrEqual(4);
    const stored = JSON.stringify(events, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    expect(stored).not.toContain(t.token.slice(0, 40));
    expect(stored).toContain('[DIRLEDGER_TOKEN]');
    const request = events.find((e) => e.actionId === `link-${kind}` && e.kind === 'REQUEST')!;
    expect(request.url).toContain('token=[DIRLEDGER_TOKEN]');
    expect(request.redactedSecrets).toContain('DIRLEDGER_TOKEN');
  });

  it('graphql-ws: connection_init without a token is closed 4403 and recorded; with one it is served', async () => {
    const wsUrl = t.url.replace(/^http/, 'ws');
    const closed = await new Promise<number>((resolve) => {
      const client = createClient({
        url: wsUrl,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        connectionParams: { token: 'forged' },
        on: { closed: (e) => resolve((e as CloseEvent).code) },
      });
      client.subscribe({ query: '{ __typename }' }, { next: () => {}, error: () => {}, complete: () => {} });
    });
    expect(closed).toBe(4403);
    const recorded = (await refusals(t)).filter((e) => (e.metadata as any).door === 'GRAPHQL_WS');
    expect(recorded.length).toBeGreaterThanOrEqual(1);
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${t.token}` } });
    const value = await new Promise<any>((resolve, reject) =>
      client.subscribe({ query: '{ __typename }' }, { next: resolve, error: reject, complete: () => {} }),
    );
    expect(value).toEqual({ data: { __typename: 'Query' } });
    await client.dispose();
  });

  it('the raw WebSocket door, upgraded without a token, takes none but a first auth message: a call first is refused (4401), recorded', async () => {
    const ws = new WebSocket(`${t.origin.replace(/^http/, 'ws')}/api/ws`, { headers: { 'x-dirledger-action': `ws-refused-${kind}` } });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const replies: any[] = [];
    ws.on('message', (data) => replies.push(JSON.parse(String(data))));
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.send(JSON.stringify({ type: 'call', id: 'c', tool: 'ECHO', args: { text: 'x' } }));
    expect(await closed).toBe(4401);
    expect(replies).toEqual([{ type: 'error', error: { code: 'UNAUTHENTICATED', message: 'Missing or invalid credential.' } }]);
    expect((await refusals(t, { actionId: `ws-refused-${kind}` }))[0]!.metadata).toMatchObject({ door: 'WEBSOCKET', limit: 'credential' });
  });

  it('a webhook signed with its HOOK_<TOOL> secret is accepted; a bad signature is a plain 401, recorded', async () => {
    const body = '{"text":"signed"}';
    const signature = `sha256=${createHmac('sha256', 'hook-secret-value').update(body).digest('hex')}`;
    const ok = await fetch(`${t.origin}/hooks/ECHO`, { method: 'POST', headers: { ...json, 'x-dirledger-signature': signature }, body });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).output).toEqual({ text: 'signed' });
    const bad = await fetch(`${t.origin}/hooks/ECHO`, {
      method: 'POST',
      headers: { ...json, 'x-hub-signature-256': signature, 'x-dirledger-action': `hook-bad-${kind}` },
      body: '{"text":"tampered"}',
    });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual(PLAIN);
    expect((await refusals(t, { actionId: `hook-bad-${kind}` }))[0]!.metadata).toMatchObject({
      door: 'WEBHOOK',
      limit: 'credential',
      reason: expect.stringMatching(/HOOK_ECHO signature does not match/),
    });
    // A signature is good for its own hook only.
    const elsewhere = await fetch(`${t.origin}/hooks/CLOCK`, { method: 'POST', headers: { ...json, 'x-dirledger-signature': signature }, body });
    expect(elsewhere.status).toBe(401);
  });

  it('doors, tools, expiry and audience caveats refuse with the limit named (403) or plainly (401), each recorded', async () => {
    const restOnly = t.mint('doors = REST');
    expect(
      (await fetch(`${t.origin}/api/tools/ECHO`, { method: 'POST', headers: { ...json, authorization: `Bearer ${restOnly}` }, body: '{"text":"x"}' })).status,
    ).toBe(200);
    const viaUrl = await fetch(`${t.origin}/api/tools/ECHO?text=x`, {
      headers: { authorization: `Bearer ${restOnly}`, 'x-dirledger-action': `doors-${kind}` },
    });
    expect(viaUrl.status).toBe(403);
    expect(await viaUrl.json()).toEqual({
      error: { code: 'FORBIDDEN', message: 'This token may not be used through the URL door.', limit: 'doors', caveat: 'doors = REST' },
    });
    expect((await refusals(t, { actionId: `doors-${kind}` }))[0]!.metadata).toMatchObject({ limit: 'doors', caveat: 'doors = REST', door: 'URL' });

    const echoOnly = t.mint('tools = ECHO');
    const clock = await fetch(`${t.origin}/api/tools/CLOCK`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${echoOnly}`, 'x-dirledger-action': `tools-${kind}` },
      body: '{}',
    });
    expect(clock.status).toBe(403);
    expect(((await clock.json()) as any).error).toEqual({ code: 'FORBIDDEN', message: 'This token may not call "CLOCK".' });
    const [toolRefusal] = await refusals(t, { actionId: `tools-${kind}` });
    expect(toolRefusal).toMatchObject({ tool: 'CLOCK', status: 'REFUSED' });
    expect(toolRefusal!.metadata).toMatchObject({ code: 'FORBIDDEN', limit: 'tools', caveat: 'tools = ECHO', door: 'REST' });

    const expired = t.mint(`expires = ${new Date(Date.now() - 1000).toISOString()}`);
    const late = await fetch(`${t.origin}/api/tools/ECHO?text=x`, { headers: { authorization: `Bearer ${expired}` } });
    expect(late.status).toBe(403);
    expect(((await late.json()) as any).error.limit).toBe('expires');

    const elsewhere = t.mint('audience = another-server');
    const wrong = await fetch(`${t.origin}/api/tools/ECHO?text=x`, { headers: { authorization: `Bearer ${elsewhere}`, 'x-dirledger-action': `aud-${kind}` } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual(PLAIN);
    expect(((await refusals(t, { actionId: `aud-${kind}` }))[0]!.metadata as any).reason).toMatch(/audience "another-server"/);
  });

  it('a 5-use token used by 20 concurrent calls succeeds exactly 5 times; a dry run spends none', async () => {
    const five = t.mint('tools = ECHO', 'uses <= 5');
    const dry = await fetch(`${t.origin}/api/dispatch`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${five}` },
      body: '{"tool":"ECHO","args":{"text":"dry"},"dryRun":true}',
    });
    expect(dry.status).toBe(200);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${t.origin}/api/tools/ECHO`, {
          method: 'POST',
          headers: { ...json, authorization: `Bearer ${five}`, 'x-dirledger-action': `uses-${kind}-${i}` },
          body: `{"text":"${i}"}`,
        }).then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 403)).toHaveLength(15);
    const spent = (await refusals(t, { actionId: { startsWith: `uses-${kind}-` } })).filter((e) => (e.metadata as any).limit === 'uses');
    expect(spent).toHaveLength(15);
    const rows = await t.app.services.db.sql.query<{ uses: number; max_uses: number }>('SELECT uses, max_uses FROM token_uses WHERE token_id = $1', [
      parse(five).identifier.split(':')[2]!,
    ]);
    expect(rows).toEqual([{ uses: 5, max_uses: 5 }]);
  });

  it('powers: a call-only token may not ingest or issue', async () => {
    const callOnly = t.mint('powers = call');
    const ingest = await fetch(`${t.origin}/ledger/batches`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${callOnly}` },
      body: '{"collector":"c","events":[]}',
    });
    expect(ingest.status).toBe(403);
    expect(((await ingest.json()) as any).error).toMatchObject({ code: 'FORBIDDEN', limit: 'power' });
    const issue = await fetch(t.url, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${callOnly}` },
      body: JSON.stringify({ query: 'mutation { issueToken(input: { tools: ["ECHO"] }) { token } }' }),
    });
    const answer = (await issue.json()) as any;
    expect(answer.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'power' });
  });

  it('issueToken returns a working token and its limits in words; inspectToken reads them back', async () => {
    const issued = await t.gql<any>('mutation($input: IssueTokenInput!) { issueToken(input: $input) { token tokenId caveats limits } }', {
      input: { tools: ['ECHO'], uses: 2, read: 'NONE' },
    });
    expect(issued.errors).toBeUndefined();
    const { token, caveats, limits } = issued.data.issueToken;
    expect(caveats).toEqual(['tools = ECHO', 'uses <= 2', 'read = none']);
    expect(limits).toEqual(['Only the tool ECHO.', 'At most 2 calls, counted across every token narrowed from this one.', 'Reads nothing of the ledger.']);
    const call = await fetch(`${t.origin}/api/tools/ECHO?text=issued`, { headers: { authorization: `Bearer ${token}` } });
    expect(call.status).toBe(200);
    const inspected = await t.gql<any>('query($token: String!) { inspectToken(token: $token) { caveats limits valid uses { caveat used max } } }', { token });
    expect(inspected.data.inspectToken).toEqual({ caveats, limits, valid: true, uses: [{ caveat: 'uses <= 2', used: 1, max: 2 }] });
    const bad = await t.gql<any>('{ inspectToken(token: "!!") { limits } }');
    expect(bad.errors![0].extensions.code).toBe('BAD_INPUT');
    const invalid = await t.gql<any>('mutation { issueToken(input: { uses: 0 }) { token } }');
    expect(invalid.errors![0].extensions.code).toBe('BAD_INPUT');
    expect(invalid.errors![0].message).toMatch(/uses/);
  });
});

describe('per-token rate limits and GraphQL hardening', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { AUTH_RATE_PER_SECOND: '1', AUTH_RATE_BURST: '2', GRAPHQL_INTROSPECTION: 'false', GRAPHQL_MAX_BATCH: '2' });
  });
  afterAll(() => t?.stop());

  it('over the rate: 429 with Retry-After, recorded; another token is not slowed', async () => {
    const token = t.mint('tools = ECHO');
    const call = (bearer: string) =>
      fetch(`${t.origin}/api/tools/ECHO?text=r`, {
        headers: { authorization: `Bearer ${bearer}`, 'x-dirledger-action': `rate-${randomBytes(4).toString('hex')}` },
      });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(token)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const limited = await call(token);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await limited.json()) as any).error.code).toBe('RATE_LIMITED');
    // Narrowing does not buy a new bucket: the rate belongs to the token id.
    expect((await call(Authority.narrow(token, ['doors = URL']))).status).toBe(429);
    expect((await call(t.mint('tools = ECHO'))).status).toBe(200);
    await t.app.services.writer.flush();
    const recorded = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' } });
    expect(recorded.filter((e) => (e.metadata as any).limit === 'rate').length).toBeGreaterThanOrEqual(2);
  });

  it('/api/ws: each message spends one request of the rate; over it that message is RATE_LIMITED (recorded) and the socket stays open', async () => {
    const token = t.mint('tools = ECHO');
    const ws = new WebSocket(`${t.origin.replace(/^http/, 'ws')}/api/ws`, {
      headers: { authorization: `Bearer ${token}`, 'x-dirledger-action': 'ws-rate-socket' },
    });
    const replies: any[] = [];
    ws.on('message', (data) => replies.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    // The upgrade spent one of the burst of 2; the first ping the other.
    for (const id of ['p1', 'p2', 'p3']) ws.send(JSON.stringify({ type: 'ping', id }));
    const deadline = Date.now() + 5_000;
    while (replies.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // Messages on one socket run concurrently, so replies come in the order they finish.
    const byId = Object.fromEntries(replies.map((r) => [r.id, r]));
    expect(replies).toHaveLength(3);
    expect(byId.p1).toEqual({ type: 'pong', id: 'p1' });
    for (const id of ['p2', 'p3']) {
      expect(byId[id]).toMatchObject({
        type: 'error',
        id,
        error: { code: 'RATE_LIMITED', message: expect.stringMatching(/^Too many requests for this token; retry after \d+ s\.$/) },
      });
      expect(byId[id].error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.close();
    await t.app.services.writer.flush();
    const tokenId = inspect(token).tokenId;
    const rows = await t.app.services.db.sql.query<{ action_id: string; metadata: any }>(
      `SELECT action_id, metadata FROM ledger_event WHERE kind = 'REFUSAL' AND metadata->>'tokenId' = $1`,
      [tokenId],
    );
    expect(rows.map((r) => [r.metadata.door, r.metadata.limit])).toEqual([
      ['WEBSOCKET', 'rate'],
      ['WEBSOCKET', 'rate'],
    ]);
    // Each refusal is its own action, never the socket's.
    expect(new Set(rows.map((r) => r.action_id)).size).toBe(2);
    expect(rows.map((r) => r.action_id)).not.toContain('ws-rate-socket');
  });

  it('introspection can be turned off, and batched operations are bounded', async () => {
    const intro = await t.gql<any>('{ __schema { queryType { name } } }');
    expect(intro.errors![0].extensions.code).toBe('INTROSPECTION_DISABLED');
    const batch = (n: number) =>
      fetch(t.url, {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${t.mint()}` },
        body: JSON.stringify(Array.from({ length: n }, () => ({ query: '{ __typename }' }))),
      });
    const two = await batch(2);
    expect(two.status).toBe(200);
    expect(await two.json()).toEqual([{ data: { __typename: 'Query' } }, { data: { __typename: 'Query' } }]);
    const three = await batch(3);
    expect(three.status).toBe(413);
    expect(JSON.stringify(await three.json())).toMatch(/Batching is limited to 2 operations/);
  });
});
