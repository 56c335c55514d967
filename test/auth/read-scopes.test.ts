// Read scopes on every read path, through the real transports: GraphQL over HTTP with a scoped
// token's Authorization header, graphql-ws (connection_init) and SSE subscriptions, the blob route,
// and task(id). read = all reads everything; read = task only the token's task (merged into the SQL,
// so counts and cursors stay exact; anything else reads as absent); read = none is refused and the
// refusal recorded as a REFUSAL event.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspect } from '../../src/auth/tokens.ts';
import type { EventInput } from '../../src/ledger/input.ts';
import { writeSseEvents } from '../capture/helpers.ts';
import { databaseKinds } from '../helpers/database.ts';
import { startDispatchApp, type DispatchApp } from '../dispatch/helpers.ts';
import { eventsQuery, sseSubscribe, streamQuery, waitFor, wsSubscribe, type Received } from '../live/helpers.ts';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const SHARED = 'bytes both tasks sent';
const ONLY_T1 = 'bytes only T-1 sent';
const ONLY_T2 = 'bytes only T-2 sent';

/** An SSE upstream: `count` events, one every 10 ms. */
function sseUpstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    writeSseEvents(req, res, Number(new URL(req.url!, 'http://x').searchParams.get('count') ?? 4), 10);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

/** A graphql-ws client sending the token as `Authorization: Bearer …` in connection_init. */
const bearerClient = (graphqlUrl: string, token: string): Client =>
  createClient({
    url: graphqlUrl.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    connectionParams: { authorization: `Bearer ${token}` },
  });

describe.each(databaseKinds)('read scopes on %s', (kind) => {
  let app: DispatchApp;
  let upstream: Awaited<ReturnType<typeof sseUpstream>>;
  let tokens: { all: string; t1: string; t2: string; none: string };
  const clients: Client[] = [];

  /** POSTs a GraphQL operation with this token. */
  async function gqlAs(token: string, query: string, variables: Record<string, unknown> = {}): Promise<{ data?: any; errors?: any[] }> {
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as any;
  }

  /** REFUSAL events for a read by this token, once the writer has flushed. */
  async function readRefusals(token: string) {
    await app.app.services.writer.flush();
    const tokenId = inspect(token).tokenId!;
    const rows = await app.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' }, orderBy: { position: 'asc' } });
    return rows.filter((r) => (r.metadata as any)?.tokenId === tokenId && (r.metadata as any)?.limit === 'read');
  }

  const event = (id: string, task: string | undefined, extra: Partial<EventInput> = {}): EventInput => ({
    id,
    kind: 'TOOL_CALL',
    direction: 'OUT',
    actionId: `act-${id}`,
    tool: 'ECHO',
    ...(task && { task }),
    occurredAt: new Date('2026-12-01T10:00:00.000Z'),
    payload: { state: 'NONE' },
    ...extra,
  });

  beforeAll(async () => {
    upstream = await sseUpstream();
    app = await startDispatchApp(kind, [
      {
        name: 'ECHO',
        kind: 'builtin',
        way: { method: 'CODE', language: 'javascript', code: 'export default async (args) => args;' },
        args: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
      { name: 'CLOCK', way: { method: 'CLI', command: 'date -u +%Y' } },
      {
        name: 'STREAM_SSE',
        way: { method: 'GET', url: `${upstream.url}/sse?count={{count}}` },
        args: { type: 'object', properties: { count: { type: 'integer' } } },
      },
    ]);
    tokens = {
      all: app.mint('read = all'),
      t1: app.mint('read = task', 'task = T-1'),
      t2: app.mint('read = task', 'task = T-2'),
      none: app.mint('read = none'),
    };
    // T-1: 7 events (one action of 3, four of 1), T-2: 5, no task: 3; payloads shared and not.
    const t1 = [
      event('t1-a', 'T-1', { actionId: 'act-t1', kind: 'REQUEST', direction: 'IN', payload: { state: 'COMPLETE', text: SHARED } }),
      event('t1-b', 'T-1', { actionId: 'act-t1', kind: 'TOOL_CALL', inputTokens: 10, costUsd: '0.25' }),
      event('t1-c', 'T-1', { actionId: 'act-t1', kind: 'TOOL_RESULT', direction: 'IN', status: '0', payload: { state: 'COMPLETE', text: ONLY_T1 } }),
      ...['d', 'e', 'f', 'g'].map((s) => event(`t1-${s}`, 'T-1', { inputTokens: 1, costUsd: '0.1' })),
    ];
    const t2 = [
      event('t2-a', 'T-2', { actionId: 'act-t2', kind: 'REQUEST', direction: 'IN', payload: { state: 'COMPLETE', text: SHARED } }),
      event('t2-b', 'T-2', { actionId: 'act-t2', payload: { state: 'COMPLETE', text: ONLY_T2 }, inputTokens: 100, costUsd: '5' }),
      ...['c', 'd', 'e'].map((s) => event(`t2-${s}`, 'T-2')),
    ];
    const untasked = ['a', 'b', 'c'].map((s) => event(`none-${s}`, undefined, { tool: 'CLOCK' }));
    // Interleaved, so a page of T-1 events is never a run of consecutive positions.
    const all = [t1[0]!, t2[0]!, untasked[0]!, t1[1]!, t2[1]!, t1[2]!, untasked[1]!, t1[3]!, t2[2]!, t1[4]!, t2[3]!, untasked[2]!, t1[5]!, t2[4]!, t1[6]!];
    await app.app.services.ledger.append({ collector: 'read-scopes', events: all });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    upstream?.server.close();
    await app?.stop();
  });

  const eventsPage = `query ($filter: LedgerFilter, $first: Int, $after: String, $order: LedgerOrder) {
    events(filter: $filter, first: $first, after: $after, order: $order) { edges { cursor node { id task } } pageInfo { hasNextPage endCursor } }
  }`;

  async function allPages(token: string, filter: Record<string, unknown> | null, first: number, order = 'ASC') {
    const pages: { ids: string[]; hasNextPage: boolean }[] = [];
    let after: string | null = null;
    for (;;) {
      const r = await gqlAs(token, eventsPage, { filter, first, after, order });
      expect(r.errors).toBeUndefined();
      const page = r.data.events;
      pages.push({ ids: page.edges.map((e: any) => e.node.id), hasNextPage: page.pageInfo.hasNextPage });
      if (!page.pageInfo.hasNextPage) return pages;
      after = page.pageInfo.endCursor;
    }
  }

  it('events: read = all pages everything; read = task pages exactly its task, in SQL (exact page sizes and cursors, both orders)', async () => {
    const everything = (await allPages(tokens.all, null, 500)).flatMap((p) => p.ids).filter((id) => /^(t1|t2|none)-/.test(id));
    expect(everything).toHaveLength(15);
    const t1Asc = await allPages(tokens.t1, null, 3);
    expect(t1Asc.map((p) => p.ids.length)).toEqual([3, 3, 1]);
    expect(t1Asc.map((p) => p.hasNextPage)).toEqual([true, true, false]);
    const adminT1 = (await allPages(tokens.all, { task: ['T-1'] }, 500)).flatMap((p) => p.ids);
    expect(t1Asc.flatMap((p) => p.ids)).toEqual(adminT1);
    expect(adminT1).toEqual(['t1-a', 't1-b', 't1-c', 't1-d', 't1-e', 't1-f', 't1-g']);
    const t1Desc = await allPages(tokens.t1, null, 2, 'DESC');
    expect(t1Desc.map((p) => p.ids.length)).toEqual([2, 2, 2, 1]);
    expect(t1Desc.flatMap((p) => p.ids)).toEqual([...adminT1].reverse());
    // The caller's own filter is intersected with the scope, never widened by it.
    expect((await allPages(tokens.t1, { task: ['T-2'] }, 50)).flatMap((p) => p.ids)).toEqual([]);
    expect((await allPages(tokens.t1, { task: ['T-1', 'T-2'], kind: ['TOOL_CALL'] }, 50)).flatMap((p) => p.ids)).toEqual([
      't1-b',
      't1-d',
      't1-e',
      't1-f',
      't1-g',
    ]);
    expect((await allPages(tokens.t2, null, 50)).flatMap((p) => p.ids)).toEqual(['t2-a', 't2-b', 't2-c', 't2-d', 't2-e']);
  });

  it('ledgerCounts and ask count only the task: the same sums the admin gets filtering by that task', async () => {
    const counts = `query ($filter: LedgerFilter) { ledgerCounts(by: TASK, filter: $filter) { key events inputTokens costUsd } }`;
    const scoped = await gqlAs(tokens.t1, counts);
    expect(scoped.data.ledgerCounts).toEqual([{ key: 'T-1', events: 7, inputTokens: '14', costUsd: '0.65' }]);
    const admin = await gqlAs(tokens.all, counts, { filter: { task: ['T-1'] } });
    expect(scoped.data.ledgerCounts).toEqual(admin.data.ledgerCounts);
    const byKind = `query ($filter: LedgerFilter) { ledgerCounts(by: KIND, filter: $filter) { key events } }`;
    expect((await gqlAs(tokens.t2, byKind)).data.ledgerCounts).toEqual((await gqlAs(tokens.all, byKind, { filter: { task: ['T-2'] } })).data.ledgerCounts);
    expect((await gqlAs(tokens.t1, counts, { filter: { task: ['T-2'] } })).data.ledgerCounts).toEqual([]);

    const ask = `query ($q: String!) { ask(question: $q) { counts { key events } total { events costUsd } events(first: 2) { edges { node { id } } pageInfo { hasNextPage } } } }`;
    const answer = (await gqlAs(tokens.t1, ask, { q: 'tool ECHO by task' })).data.ask;
    expect(answer.counts).toEqual([{ key: 'T-1', events: 7 }]);
    expect(answer.total).toEqual({ events: 7, costUsd: '0.65' });
    expect(answer.events.edges.map((e: any) => e.node.id)).toEqual(['t1-a', 't1-b']);
    expect(answer.events.pageInfo.hasNextPage).toBe(true);
    const other = (await gqlAs(tokens.t1, ask, { q: 'task T-2 by task' })).data.ask;
    expect(other.counts).toEqual([]);
    expect(other.total.events).toBe(0);
    const adminAnswer = (await gqlAs(tokens.all, ask, { q: 'tool ECHO by task' })).data.ask;
    expect(adminAnswer.counts).toEqual([
      { key: 'T-1', events: 7 },
      { key: 'T-2', events: 5 },
    ]);
  });

  it("event, action and blob: outside the task they read as null, like something unknown; Blob.events and Action.events show only the task's", async () => {
    const q = `query ($e: ID!, $a: ID!, $b: String!) {
      event(id: $e) { id payload { text } }
      action(id: $a) { id events { id } }
      blob(sha256: $b) { sha256 text events { edges { node { id task } } } }
    }`;
    const mine = await gqlAs(tokens.t1, q, { e: 't1-c', a: 'act-t1', b: sha(SHARED) });
    expect(mine.errors).toBeUndefined();
    expect(mine.data.event).toEqual({ id: 't1-c', payload: { text: ONLY_T1 } });
    expect(mine.data.action.events.map((e: any) => e.id)).toEqual(['t1-a', 't1-b', 't1-c']);
    expect(mine.data.blob.text).toBe(SHARED);
    expect(mine.data.blob.events.edges.map((e: any) => e.node.id)).toEqual(['t1-a']);
    const adminShared = await gqlAs(tokens.all, q, { e: 't1-c', a: 'act-t1', b: sha(SHARED) });
    expect(adminShared.data.blob.events.edges.map((e: any) => e.node.id)).toEqual(['t1-a', 't2-a']);

    const theirs = await gqlAs(tokens.t1, q, { e: 't2-b', a: 'act-t2', b: sha(ONLY_T2) });
    const unknown = await gqlAs(tokens.t1, q, { e: 'no-such-event', a: 'no-such-action', b: sha('never stored') });
    expect(theirs).toEqual({ data: { event: null, action: null, blob: null } });
    expect(theirs).toEqual(unknown);
    expect((await gqlAs(tokens.all, q, { e: 't2-b', a: 'act-t2', b: sha(ONLY_T2) })).data.blob.text).toBe(ONLY_T2);
  });

  it('Tool.events (the Directory joined to the ledger) follows the scope too', async () => {
    const q = `{ tool(name: "ECHO") { events(first: 50) { edges { node { id } } } } }`;
    const ids = async (token: string) => (await gqlAs(token, q)).data.tool.events.edges.map((e: any) => e.node.id).filter((id: string) => /^t[12]-/.test(id));
    expect(await ids(tokens.t2)).toEqual(['t2-a', 't2-b', 't2-c', 't2-d', 't2-e']);
    expect((await ids(tokens.all)).length).toBe(12);
    const none = await gqlAs(tokens.none, q);
    expect(none.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'read' });
  });

  it('read = none: every ledger read is FORBIDDEN (extensions.limit read), one REFUSAL event per operation; the Directory still reads', async () => {
    const reads = [
      `{ events { edges { node { id } } } }`,
      `{ ledgerCounts(by: TASK) { key } }`,
      `{ ask(question: "how many events") { total { events } } }`,
      `{ event(id: "t1-a") { id } }`,
      `{ action(id: "act-t1") { id } }`,
      `{ blob(sha256: "${sha(SHARED)}") { sha256 } }`,
      `{ task(id: "T-1") { id } }`,
    ];
    const before = (await readRefusals(tokens.none)).length;
    for (const query of reads) {
      const r = await gqlAs(tokens.none, query);
      expect(r.errors, query).toHaveLength(1);
      expect(r.errors![0].extensions, query).toMatchObject({ code: 'FORBIDDEN', limit: 'read' });
      expect(JSON.stringify(r.data ?? {}), query).not.toMatch(/t1-a|act-t1|T-1"/);
    }
    // Two refused fields in one operation: one refusal on record.
    const both = await gqlAs(tokens.none, `{ a: event(id: "t1-a") { id } b: events { edges { node { id } } } }`);
    expect(both.errors).toHaveLength(2);
    const refusals = await readRefusals(tokens.none);
    expect(refusals.length - before).toBe(reads.length + 1);
    expect(refusals.at(-1)).toMatchObject({ kind: 'REFUSAL', status: 'REFUSED', metadata: { limit: 'read', caveat: 'read = none', door: 'GRAPHQL' } });
    expect((await gqlAs(tokens.none, `{ tool(name: "ECHO") { name } }`)).data.tool.name).toBe('ECHO');
  });

  it('the blob route: all serves, task serves only bytes of its task (else the same 404 as unknown), none is 403 and recorded', async () => {
    const get = (token: string, text: string) => fetch(`${app.origin}/ledger/blob/${sha(text)}`, { headers: { authorization: `Bearer ${token}` } });
    const all = await get(tokens.all, ONLY_T2);
    expect(all.status).toBe(200);
    expect(await all.text()).toBe(ONLY_T2);
    expect(all.headers.get('cache-control')).toMatch(/^private/);
    for (const text of [SHARED, ONLY_T1]) {
      const r = await get(tokens.t1, text);
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(text);
    }
    const theirs = await get(tokens.t1, ONLY_T2);
    const unknown = await get(tokens.t1, 'never stored');
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect((await theirs.json()).error.code).toBe((await unknown.json()).error.code);
    const before = (await readRefusals(tokens.none)).length;
    const refused = await get(tokens.none, SHARED);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'FORBIDDEN', limit: 'read', caveat: 'read = none' } });
    const refusals = await readRefusals(tokens.none);
    expect(refusals.length - before).toBe(1);
    expect(refusals.at(-1)!.metadata).toMatchObject({ door: 'BLOB', limit: 'read' });
  });

  it("ledgerEvents with read = task delivers only the task's events, live and replayed, over graphql-ws and SSE; read = none is refused", async () => {
    const head = (await gqlAs(tokens.all, `{ events(order: DESC, first: 1) { edges { cursor } } }`)).data.events.edges[0].cursor;
    const ws = bearerClient(app.url, tokens.t1);
    clients.push(ws);
    const live: Received[] = [wsSubscribe(ws, eventsQuery, {}, 'ledgerEvents'), sseSubscribe(app.url, eventsQuery, {}, 'ledgerEvents', tokens.t1)];
    const filtered = wsSubscribe(ws, eventsQuery, { filter: { task: ['T-2'] } }, 'ledgerEvents');
    const adminWs = bearerClient(app.url, tokens.all);
    clients.push(adminWs);
    const admin = wsSubscribe(adminWs, eventsQuery, {}, 'ledgerEvents');
    await waitFor(() => app.app.services.live.stats().subscribers >= 4, 'the subscriptions to start');
    await app.app.services.ledger.append({
      collector: 'read-scopes-live',
      events: [event('live-t2-a', 'T-2'), event('live-t1-a', 'T-1'), event('live-none', undefined), event('live-t2-b', 'T-2'), event('live-t1-end', 'T-1')],
    });
    for (const r of [...live, admin]) await waitFor(() => r.events.some((e) => e.id === 'live-t1-end'), 'the last T-1 event');
    for (const r of live) {
      expect(r.errors).toEqual([]);
      expect(r.events.map((e) => e.id)).toEqual(['live-t1-a', 'live-t1-end']);
    }
    expect(admin.events.map((e) => e.id)).toEqual(['live-t2-a', 'live-t1-a', 'live-none', 'live-t2-b', 'live-t1-end']);
    expect(filtered.events).toEqual([]);
    // Replay from a cursor pages the database with the scope merged in too.
    const replay = wsSubscribe(ws, eventsQuery, { after: head }, 'ledgerEvents');
    await waitFor(() => replay.events.some((e) => e.id === 'live-t1-end'), 'the replay');
    expect(replay.events.map((e) => e.id)).toEqual(['live-t1-a', 'live-t1-end']);
    for (const r of [...live, filtered, admin, replay]) r.stop();

    const noneWs = bearerClient(app.url, tokens.none);
    clients.push(noneWs);
    for (const refused of [wsSubscribe(noneWs, eventsQuery, {}, 'ledgerEvents'), sseSubscribe(app.url, eventsQuery, {}, 'ledgerEvents', tokens.none)]) {
      await refused.done;
      expect(refused.events).toEqual([]);
      expect(refused.errors[0]?.extensions ?? refused.errors[0]?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'read' });
    }
    expect((await readRefusals(tokens.none)).some((r) => (r.metadata as any).door === 'GRAPHQL_WS')).toBe(true);
    expect((await readRefusals(tokens.none)).some((r) => (r.metadata as any).door === 'GRAPHQL_SSE')).toBe(true);
  });

  it("streamCapture with read = task delivers only its task's streams; another task's stream looks like one that never started", async () => {
    const callToken = app.mint('task = T-S', 'read = task');
    const actionId = `stream-${kind}-${Date.now()}`;
    const mineWs = bearerClient(app.url, callToken);
    const otherWs = bearerClient(app.url, tokens.t1);
    clients.push(mineWs, otherWs);
    const early = wsSubscribe(mineWs, streamQuery, { actionId }, 'streamCapture');
    const otherEarly = wsSubscribe(otherWs, streamQuery, { actionId }, 'streamCapture');
    await waitFor(() => app.app.services.streams.size >= 1, 'the subscribers waiting');
    const response = await fetch(`${app.origin}/api/tools/STREAM_SSE`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${callToken}`, 'x-dirledger-action': actionId },
      body: JSON.stringify({ count: 4 }),
    });
    expect(response.status).toBe(200);
    const body = await response.text();
    await early.done;
    expect(early.errors).toEqual([]);
    expect(early.events.at(-1)).toMatchObject({ final: true, state: 'COMPLETE' });
    expect(Buffer.concat(early.events.filter((c) => !c.final).map((c) => Buffer.from(c.base64, 'base64'))).toString()).toBe(body);
    // Late subscribers: the admin and the same task get every chunk at once; T-1 gets nothing.
    const otherLate = wsSubscribe(otherWs, streamQuery, { actionId }, 'streamCapture');
    const adminWs = bearerClient(app.url, tokens.all);
    clients.push(adminWs);
    const adminLate = wsSubscribe(adminWs, streamQuery, { actionId }, 'streamCapture');
    const mineLate = wsSubscribe(mineWs, streamQuery, { actionId }, 'streamCapture');
    await Promise.all([adminLate.done, mineLate.done]);
    expect(adminLate.events).toEqual(early.events);
    expect(mineLate.events).toEqual(early.events);
    // A round trip on the T-1 connection after its subscriptions were set up: nothing arrived for them.
    await new Promise((r) => setTimeout(r, 100));
    for (const r of [otherEarly, otherLate]) {
      expect(r.events).toEqual([]);
      expect(r.errors).toEqual([]);
      expect(r.completed).toBe(false);
      r.stop();
    }
    const refused = wsSubscribe(bearerClient(app.url, tokens.none), streamQuery, { actionId }, 'streamCapture');
    await refused.done;
    expect(refused.events).toEqual([]);
    expect(refused.errors[0]?.extensions ?? refused.errors[0]?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'read' });
  });

  it('a task-bound token files its calls under its task whatever the request says; task(id) lists the calls, their payloads and the refusals', async () => {
    const token = app.mint('tools = ECHO', 'task = T-9', 'read = task');
    const call = (tool: string, body: unknown) =>
      fetch(`${app.origin}/api/tools/${tool}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-dirledger-task': 'T-OTHER' },
        body: JSON.stringify(body),
      });
    const ok = await call('ECHO', { text: 'hello from T-9' });
    expect(ok.status).toBe(200);
    const okResult = await ok.json();
    expect(okResult.outcome).toBe('OK');
    const refused = await call('CLOCK', {});
    expect(refused.status).toBe(403);
    await app.app.services.writer.flush();

    const byTask = (await gqlAs(tokens.all, `{ ledgerCounts(by: TASK) { key events } }`)).data.ledgerCounts;
    expect(byTask.map((c: any) => c.key)).not.toContain('T-OTHER');
    expect(byTask.find((c: any) => c.key === 'T-9').events).toBeGreaterThanOrEqual(3);

    const q = `query ($id: ID!) { task(id: $id) {
      id
      calls { edges { cursor node { id toolName outcome status startedAt endedAt events { kind direction task payload { text } } } } pageInfo { hasNextPage } }
      events(first: 100) { edges { node { id task } } }
      refusals { edges { node { kind status task toolName metadata } } }
    } }`;
    const task = (await gqlAs(token, q, { id: 'T-9' })).data.task;
    expect(task.id).toBe('T-9');
    const calls = task.calls.edges.map((e: any) => e.node);
    expect(calls.map((c: any) => [c.toolName, c.outcome, c.status])).toEqual([
      ['ECHO', 'OK', '200'],
      ['CLOCK', 'REFUSED', '403'],
    ]);
    expect(calls[0].id).toBe(okResult.actionId);
    for (const c of calls) for (const e of c.events) expect(e.task).toBe('T-9');
    const echoEvents = calls[0].events;
    expect(echoEvents.map((e: any) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
    expect(JSON.parse(echoEvents[0].payload.text)).toEqual({ text: 'hello from T-9' });
    expect(JSON.parse(echoEvents[2].payload.text)).toEqual({ text: 'hello from T-9' });
    expect(JSON.parse(echoEvents[3].payload.text)).toMatchObject({ outcome: 'OK', output: { text: 'hello from T-9' } });
    expect(task.events.edges.length).toBe(calls.reduce((n: number, c: any) => n + c.events.length, 0));
    expect(task.refusals.edges.map((e: any) => e.node)).toEqual([
      expect.objectContaining({
        kind: 'REFUSAL',
        status: 'REFUSED',
        task: 'T-9',
        toolName: 'CLOCK',
        metadata: expect.objectContaining({ limit: 'tools', caveat: 'tools = ECHO' }),
      }),
    ]);
    // The same answer for the admin; another task, to this token, does not exist.
    expect((await gqlAs(tokens.all, q, { id: 'T-9' })).data.task).toEqual(task);
    expect((await gqlAs(token, q, { id: 'T-1' })).data.task).toBeNull();
    expect((await gqlAs(tokens.all, `{ task(id: "T-OTHER") { id } }`)).data.task).toBeNull();
    expect((await gqlAs(tokens.all, `{ task(id: "T-1") { calls(first: 2) { edges { node { id } } pageInfo { hasNextPage } } } }`)).data.task.calls).toEqual({
      edges: [{ node: { id: 'act-t1' } }, { node: { id: 'act-t1-d' } }],
      pageInfo: { hasNextPage: true },
    });
  });
});
