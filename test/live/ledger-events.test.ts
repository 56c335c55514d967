// ledgerEvents over both transports: live from the head, replay from a cursor joining the live
// tail, filters, slow subscribers closed with their cursor and resumed, unsubscribe releasing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { batch, event } from '../helpers/ledger.ts';
import { eventsQuery, sseSubscribe, waitFor, wsClient, wsSubscribe } from './helpers.ts';

let seq = 0;
function events(n: number, tools: string[], extra: Record<string, unknown> = {}) {
  return Array.from({ length: n }, (_, i) => event(`e${++seq}`, { tool: tools[i % tools.length], ...extra }));
}

describe.each(databaseKinds)('ledgerEvents on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { LIVE_POLL_MS: '60000' });
  });
  afterAll(() => t.stop());
  afterEach(() => waitFor(() => t.app.services.live.stats().subscribers === 0, 'every subscription released'));

  const following = (n: number) => waitFor(() => t.app.services.live.stats().following >= n, `${n} live subscriptions`);
  const append = (evs: Record<string, unknown>[]) => t.app.services.ledger.append(batch('test', evs));

  it('starts live at the head over graphql-ws, with the filter applied, and releases on unsubscribe', async () => {
    await append(events(3, ['before']));
    const client = wsClient(t.url, t.token);
    const all = wsSubscribe(client, eventsQuery, {}, 'ledgerEvents');
    const onlyA = wsSubscribe(client, eventsQuery, { filter: { tool: ['a'] } }, 'ledgerEvents');
    await following(2);
    const result = await append(events(10, ['a', 'b']));
    await waitFor(() => all.events.length === 10 && onlyA.events.length === 5, 'deliveries');
    expect(all.events.map((e) => BigInt(e.position))).toEqual(result.appended.map((a) => a.position));
    expect(onlyA.events.every((e) => e.toolName === 'a')).toBe(true);
    expect(all.errors).toEqual([]);
    all.stop();
    onlyA.stop();
    await waitFor(() => t.app.services.live.stats().subscribers === 0, 'subscriptions released');
    await client.dispose();
  });

  it('replays from a cursor, then continues live with no gap and no duplicate', async () => {
    const first = await append(events(30, ['r']));
    const cursor = (await t.gql(`{ events(filter: {tool: "r"}, first: 10) { pageInfo { endCursor } } }`)).data.events.pageInfo.endCursor;
    const client = wsClient(t.url, t.token);
    const sub = wsSubscribe(client, eventsQuery, { filter: { tool: ['r'] }, after: cursor }, 'ledgerEvents');
    await following(1);
    const second = await append(events(15, ['r', 'other']));
    const expected = [...first.appended.slice(10), ...second.appended.filter((_, i) => i % 2 === 0)].map((a) => a.position);
    await waitFor(() => sub.events.length >= expected.length, 'replay + live');
    await new Promise((r) => setTimeout(r, 100));
    expect(sub.events.map((e) => BigInt(e.position))).toEqual(expected);
    sub.stop();
    await client.dispose();
  });

  it('resolves relations and computed fields of live rows (payload, action, cursor)', async () => {
    const client = wsClient(t.url, t.token);
    const query = `subscription { ledgerEvents(filter: {tool: "rel"}) { id cursor payload { sha256 text } action { id } } }`;
    const sub = wsSubscribe(client, query, {}, 'ledgerEvents');
    await following(1);
    const result = await append(events(3, ['rel']));
    await waitFor(() => sub.events.length === 3, 'deliveries').catch((e) => {
      throw new Error(`${e.message} ${JSON.stringify(sub)}`);
    });
    const rows = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { tool: 'rel' }, orderBy: { position: 'asc' } });
    const { encodeCursor } = await import('../../src/ledger/cursor.ts');
    expect(sub.events).toEqual(
      rows.map((r) => ({
        id: r.id,
        cursor: encodeCursor(r.position),
        payload: { sha256: r.payloadSha256, text: `{"event":${JSON.stringify(r.id)}}` },
        action: { id: r.actionId },
      })),
    );
    expect(result.inserted).toBe(3);
    sub.stop();
    await client.dispose();
  });

  it('serves the same subscription over SSE', async () => {
    const head = (await append(events(1, ['s']))).appended[0]!.position;
    const { encodeCursor } = await import('../../src/ledger/cursor.ts');
    const sub = sseSubscribe(t.url, eventsQuery, { filter: { tool: ['s'] }, after: encodeCursor(head - 1n) }, 'ledgerEvents', t.token);
    await following(1);
    await append(events(4, ['s']));
    await waitFor(() => sub.events.length === 5, 'SSE deliveries');
    expect(sub.events.map((e) => e.toolName)).toEqual(['s', 's', 's', 's', 's']);
    expect(t.app.services.live.stats().subscribers).toBe(1);
    sub.stop();
    await sub.done;
    await waitFor(() => t.app.services.live.stats().subscribers === 0, 'SSE subscription released');
  });

  it('refuses a bad cursor and a bad filter with BAD_INPUT', async () => {
    const client = wsClient(t.url, t.token);
    const bad = wsSubscribe(client, eventsQuery, { after: 'nope' }, 'ledgerEvents');
    const badFilter = wsSubscribe(client, eventsQuery, { filter: { tool: [] } }, 'ledgerEvents');
    await Promise.all([bad.done, badFilter.done]);
    expect(JSON.stringify(bad.errors)).toContain('BAD_INPUT');
    expect(JSON.stringify(badFilter.errors)).toContain('BAD_INPUT');
    await client.dispose();
  });
});

describe.each(databaseKinds)('a slow subscriber on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { LIVE_POLL_MS: '60000', LIVE_BUFFER_MAX: '20' });
  });
  afterAll(() => t.stop());

  it('is closed with SUBSCRIBER_TOO_SLOW and its cursor, and resumes from it with nothing lost', async () => {
    const { default: WebSocket } = await import('ws');
    // A raw graphql-ws client that stops reading its socket, so the server's sends back up.
    const socket = new WebSocket(t.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const messages: any[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    await new Promise((r) => socket.once('open', r));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { token: t.token } }));
    await waitFor(() => messages.some((m) => m.type === 'connection_ack'), 'ack');
    const query = `subscription { ledgerEvents { id position cursor metadata } }`;
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
    await waitFor(() => t.app.services.live.stats().following === 1, 'live');
    (socket as any)._socket.pause();
    const big = 'x'.repeat(20_000);
    const appended: bigint[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await t.app.services.ledger.append(batch('slow', events(25, ['slow'], { metadata: { big } })));
      appended.push(...r.appended.map((a) => a.position));
    }
    await waitFor(() => t.app.services.live.stats().following === 0, 'the slow subscriber dropped');
    (socket as any)._socket.resume();
    await waitFor(() => messages.some((m) => m.id === '1' && m.type === 'complete'), 'complete');
    const delivered = messages.filter((m) => m.type === 'next' && m.payload.data).map((m) => BigInt(m.payload.data.ledgerEvents.position));
    const error = messages.find((m) => m.type === 'next' && m.payload.errors)!.payload.errors[0];
    expect(error.extensions.code).toBe('SUBSCRIBER_TOO_SLOW');
    expect(delivered.length).toBeLessThan(appended.length);
    const { decodeCursor } = await import('../../src/ledger/cursor.ts');
    expect(decodeCursor(error.extensions.cursor)).toBe(delivered.at(-1) ?? appended[0]! - 1n);
    socket.close();

    const client = wsClient(t.url, t.token);
    const resumed = wsSubscribe(client, eventsQuery, { after: error.extensions.cursor }, 'ledgerEvents');
    const rest = appended.length - delivered.length;
    await waitFor(() => resumed.events.length >= rest, 'the rest');
    expect([...delivered, ...resumed.events.map((e) => BigInt(e.position))]).toEqual(appended);
    resumed.stop();
    await client.dispose();
  });
});
