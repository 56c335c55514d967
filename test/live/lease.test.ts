// Live expiry: a subscription (graphql-ws, GraphQL over SSE, streamCapture, `dirledger tail`) ends
// with TOKEN_EXPIRED when its token expires and TOKEN_REVOKED when it is revoked, and a raw /api/ws
// socket closes (4403 TOKEN_EXPIRED, 4401 TOKEN_REVOKED), each recorded as a REFUSAL; on two
// instances, a subscription and a socket on each end.
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { inspect } from '../../src/auth/tokens.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { twoInstances } from '../helpers/instances.ts';
import { batch, event } from '../helpers/ledger.ts';
import { runCli } from '../helpers/process.ts';
import { eventsQuery, sseSubscribe, streamQuery, waitFor, wsClient, wsSubscribe, type Received } from './helpers.ts';

const revokeMutation = `mutation ($tokenId: String!, $reason: String!) { revokeToken(tokenId: $tokenId, reason: $reason) { tokenId } }`;
const expiringIn = (ms: number) => `expires = ${new Date(Date.now() + ms).toISOString()}`;
let n = 0;
const events = (count: number) =>
  Array.from({ length: count }, () => event(`lease-${process.pid}-${++n}-${Math.random().toString(36).slice(2)}`, { tool: 'lease' }));

async function ended(received: Received, code: string) {
  await Promise.race([
    received.done,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${code} within 10 s: ${JSON.stringify(received.errors)}`)), 10_000)),
  ]);
  expect(received.errors.map((e) => e.extensions?.code ?? e.message)).toEqual([code]);
  expect(received.completed).toBe(true);
}

async function refusalsOf(t: TestApp, tokenId: string, limit: string) {
  await t.app.services.writer.flush();
  return t.app.services.db.sql.query<{ metadata: any }>(
    `SELECT metadata FROM ledger_event WHERE kind = 'REFUSAL' AND metadata->>'tokenId' = $1 AND metadata->>'limit' = $2`,
    [tokenId, limit],
  );
}

/** An /api/ws socket, its token in the Authorization header or (`authMessage`) in its first message. */
async function wsDoor(origin: string, token: string, { authMessage = false } = {}) {
  const socket = new WebSocket(`${origin.replace(/^http/, 'ws')}/api/ws`, authMessage ? {} : { headers: { authorization: `Bearer ${token}` } });
  const messages: any[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  if (authMessage) socket.send(JSON.stringify({ type: 'auth', token }));
  // A ping answered: the socket is admitted.
  socket.send(JSON.stringify({ type: 'ping', id: 'admitted' }));
  await waitFor(() => messages.some((m) => m.type === 'pong' && m.id === 'admitted'), 'the pong');
  return { socket, messages, closed };
}

async function closedWith(door: Awaited<ReturnType<typeof wsDoor>>, code: number, reason: string) {
  const closed = await Promise.race([
    door.closed,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`not closed within 10 s: ${JSON.stringify(door.messages)}`)), 10_000)),
  ]);
  expect(closed).toEqual({ code, reason });
  expect(door.messages.at(-1)).toEqual({ type: 'error', error: { code: reason, message: expect.stringContaining('This socket is closed') } });
}

describe('a live subscription lives no longer than its token (PGlite)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { LIVE_POLL_MS: '60000' });
  });
  afterAll(() => t?.stop());

  it('graphql-ws: events flow, then TOKEN_EXPIRED at the expiry, recorded', async () => {
    const token = t.mint('read = all', expiringIn(2_500));
    // Not lazy: the socket stays open after the subscription ends.
    const client = createClient({ url: t.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0, lazy: false, connectionParams: { token } });
    const received = wsSubscribe(client, eventsQuery, { filter: { tool: ['lease'] } }, 'ledgerEvents');
    await waitFor(() => t.app.services.live.stats().following === 1, 'subscribed');
    await t.app.services.ledger.append(batch('lease', events(2)));
    await waitFor(() => received.events.length === 2, 'two events');
    const started = Date.now();
    await ended(received, 'TOKEN_EXPIRED');
    expect(Date.now() - started).toBeLessThan(4_000);
    await waitFor(() => t.app.services.live.stats().following === 0, 'the tail let go of the subscriber');
    const [row] = await refusalsOf(t, inspect(token).tokenId!, 'expires');
    expect(row!.metadata).toMatchObject({ door: 'GRAPHQL_WS', reason: expect.stringMatching(/expired at .*, ending a ledgerEvents subscription$/) });
    // The socket stays open, but a new operation on it is refused: its token has expired.
    const again = wsSubscribe(client, eventsQuery, {}, 'ledgerEvents');
    await again.done;
    expect(again.errors.flat().map((e: any) => e.extensions?.code)).toEqual(['TOKEN_EXPIRED']);
    await client.dispose();
  });

  it('GraphQL over SSE: TOKEN_REVOKED as soon as the token is revoked, recorded', async () => {
    const token = t.mint('read = all');
    const received = sseSubscribe(t.url, eventsQuery, { filter: { tool: ['lease'] } }, 'ledgerEvents', token);
    await waitFor(() => t.app.services.live.stats().following === 1, 'subscribed');
    await t.app.services.ledger.append(batch('lease', events(1)));
    await waitFor(() => received.events.length === 1, 'one event');
    expect((await t.gql(revokeMutation, { tokenId: inspect(token).tokenId, reason: 'lease test' })).errors).toBeUndefined();
    await ended(received, 'TOKEN_REVOKED');
    const [row] = await refusalsOf(t, inspect(token).tokenId!, 'revoked');
    expect(row!.metadata).toMatchObject({ door: 'GRAPHQL_SSE', reason: 'the token was revoked, ending a ledgerEvents subscription' });
  });

  it('streamCapture over graphql-ws: TOKEN_REVOKED when a token it was issued under is revoked', async () => {
    const parent = t.mint('read = all');
    const child = (await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${parent}` },
      body: JSON.stringify({ query: 'mutation { issueToken(input: {}) { token } }' }),
    }).then((r) => r.json())) as any;
    const client = wsClient(t.url, child.data.issueToken.token);
    const received = wsSubscribe(client, streamQuery, { actionId: 'a-stream-that-never-starts' }, 'streamCapture');
    await new Promise((r) => setTimeout(r, 200));
    await t.gql(revokeMutation, { tokenId: inspect(parent).tokenId, reason: 'lease test' });
    await ended(received, 'TOKEN_REVOKED');
    await client.dispose();
  });

  it('/api/ws: the socket closes with 4403 TOKEN_EXPIRED at the expiry, recorded', async () => {
    const token = t.mint('read = all', expiringIn(2_000));
    const door = await wsDoor(t.origin, token);
    const started = Date.now();
    await closedWith(door, 4403, 'TOKEN_EXPIRED');
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(door.messages.at(-1).error.message).toMatch(/^This token expired at .*; connect again with a valid token\.$/);
    const [row] = await refusalsOf(t, inspect(token).tokenId!, 'expires');
    expect(row!.metadata).toMatchObject({ door: 'WEBSOCKET', reason: expect.stringMatching(/expired at .*, closing a WebSocket$/) });
  });

  it('/api/ws: admitted by its auth message, the socket closes with 4401 TOKEN_REVOKED when a token it was issued under is revoked, recorded', async () => {
    const parent = t.mint('read = all');
    const child = (await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${parent}` },
      body: JSON.stringify({ query: 'mutation { issueToken(input: {}) { token } }' }),
    }).then((r) => r.json())) as any;
    const token = child.data.issueToken.token as string;
    const door = await wsDoor(t.origin, token, { authMessage: true });
    const other = await wsDoor(t.origin, t.mint('read = all'));
    await t.gql(revokeMutation, { tokenId: inspect(parent).tokenId, reason: 'lease test' });
    await closedWith(door, 4401, 'TOKEN_REVOKED');
    const [row] = await refusalsOf(t, inspect(token).tokenId!, 'revoked');
    expect(row!.metadata).toMatchObject({
      door: 'WEBSOCKET',
      reason: `the token was issued under token ${inspect(parent).tokenId}, which was revoked, closing a WebSocket`,
    });
    // Another token's socket stays open and answers.
    other.socket.send(JSON.stringify({ type: 'ping', id: 'still' }));
    await waitFor(() => other.messages.some((m) => m.id === 'still'), 'the other socket answering');
    other.socket.close();
  });

  it('`dirledger tail` prints TOKEN_EXPIRED and exits 4 when its token expires', async () => {
    const token = t.mint('read = all', expiringIn(15_000));
    const child = runCli(['tail', '--url', t.origin, '--json'], { DIRLEDGER_TOKEN: token });
    await waitFor(() => t.app.services.live.stats().following === 1, 'the CLI following live', 15_000);
    const { code } = await child.exited;
    expect(code).toBe(4);
    expect(child.output()).toMatch(/TOKEN_EXPIRED: This token expired at .*The subscription has ended/);
  }, 60_000);
});

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!pgUrl) process.stdout.write('test/live/lease.test.ts (two instances) skipped: TEST_DATABASE_URL is not set\n');

describe.skipIf(!pgUrl)('two instances: a subscription on each ends', () => {
  let pair: Awaited<ReturnType<typeof twoInstances>>;
  beforeAll(async () => {
    pair = await twoInstances({
      LIVE_POLL_MS: '60000',
      ...(redisUrl && { REDIS_URL: redisUrl, LIVE_CHANNEL: `dirledger-lease-${process.pid}-${Date.now()}` }),
    });
  });
  afterAll(() => pair?.stop());

  it('when the token is revoked on A', async () => {
    const token = pair.a.mint('read = all');
    const clients = [wsClient(pair.a.url, token), wsClient(pair.b.url, token)];
    const subs = clients.map((c) => wsSubscribe(c, eventsQuery, { filter: { tool: ['lease'] } }, 'ledgerEvents'));
    await waitFor(() => pair.a.app.services.live.stats().following === 1 && pair.b.app.services.live.stats().following === 1, 'subscribed on both');
    await pair.a.app.services.ledger.append(batch('lease', events(1)));
    await waitFor(() => subs.every((s) => s.events.length === 1), 'the event on both');
    const started = Date.now();
    await pair.a.gql(revokeMutation, { tokenId: inspect(token).tokenId, reason: 'two instances' });
    for (const sub of subs) await ended(sub, 'TOKEN_REVOKED');
    expect(Date.now() - started).toBeLessThan(1_500);
    await Promise.all(clients.map((c) => c.dispose()));
  });

  it('/api/ws: a socket on each closes when the token is revoked on A, recorded by each', async () => {
    const token = pair.a.mint('read = all');
    const doors = [await wsDoor(pair.a.origin, token), await wsDoor(pair.b.origin, token)];
    const started = Date.now();
    await pair.a.gql(revokeMutation, { tokenId: inspect(token).tokenId, reason: 'two instances' });
    for (const door of doors) await closedWith(door, 4401, 'TOKEN_REVOKED');
    expect(Date.now() - started).toBeLessThan(1_500);
    await pair.b.app.services.writer.flush();
    const rows = await refusalsOf(pair.a, inspect(token).tokenId!, 'revoked');
    expect(rows.map((r) => r.metadata.door)).toEqual(['WEBSOCKET', 'WEBSOCKET']);
  });

  it('when the token expires', async () => {
    const token = pair.a.mint('read = all', expiringIn(2_000));
    const clients = [wsClient(pair.a.url, token), wsClient(pair.b.url, token)];
    const subs = clients.map((c) => wsSubscribe(c, eventsQuery, {}, 'ledgerEvents'));
    for (const sub of subs) await ended(sub, 'TOKEN_EXPIRED');
    await Promise.all(clients.map((c) => c.dispose()));
  });
});
