// Issue 16 part 6, property-based: every door of a real server is driven with generated hostile
// input (NUL, lone surrogates, invalid UTF-8, deep JSON, huge strings, overflowing numbers, wrong
// types). Each answer must come within a bound and never be a 5xx (nor a JSON-RPC internal error,
// nor a masked INTERNAL_SERVER_ERROR); the server stays alive; a refused request stores nothing but
// its request/answer records (nothing ran), and a refused batch appends nothing.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { deepJson, graphqlWs, send, wsDoor, type Answer } from '../helpers/hostile.ts';

/** Runs per property: the whole file stays well under a minute on two busy cores. */
const RUNS = 12;
/** No answer may take longer (a hang fails here instead of at the test timeout). */
const BOUND_MS = 10_000;

// ---- hostile values ----

const nasty = fc.constantFrom(
  '\u0000',
  '\ud800',
  '\udfff',
  '\udc00\ud800',
  '\uffff',
  '\ufeff',
  '\u202e',
  '"',
  '\\',
  '{',
  '[',
  '%00',
  '%ff',
  '\r\n',
  '$',
  '*',
  "'; DROP TABLE ledger_event; --",
);
/** Short text with hostile characters mixed in. */
const hostileText = fc
  .array(fc.oneof(nasty, fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 })), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.join(''));
const huge = fc.constantFrom('x'.repeat(70_000), '\u0000'.repeat(5_000), 'é'.repeat(40_000));
const overflow = fc.constantFrom('9999999999999999999', '-1', '18446744073709551616', '1e400', 'NaN', '0x10', '00000000000000000001');
const overflowNumber = fc.constantFrom(2 ** 63, -1, 1.5, Number.MAX_VALUE, -0, 2 ** 31, 2 ** 53 + 2);
/** A value of some JSON type (for "wrong type" fields): scalars, small structures, deep nesting. */
const anyJsonText = fc.oneof(
  hostileText.map((s) => JSON.stringify(s)),
  overflowNumber.map((n) => JSON.stringify(n)),
  fc.constantFrom('null', 'true', '[]', '{}', '[[["x"]]]', '{"__proto__":{"a":1}}', '"\\ud800"', '"\\u0000"'),
  fc.integer({ min: 513, max: 12_000 }).map(deepJson),
  huge.map((s) => JSON.stringify(s)),
);
/** Raw bytes that are not valid UTF-8, or not JSON. */
const badBytes = fc.oneof(
  fc
    .constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x7b, 0x22, 0xff, 0x22, 0x7d], [0xef, 0xbb, 0xbf, 0xff])
    .map((b) => Buffer.from(b)),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b)),
);
/** A JSON text for one canonical call, one field hostile. */
const hostileCall = fc.oneof(
  hostileText.map((tool) => JSON.stringify({ tool, args: {} })),
  anyJsonText.map((v) => `{"tool":${v},"args":{}}`),
  anyJsonText.map((v) => `{"tool":"ECHO","args":${v}}`),
  anyJsonText.map((v) => `{"tool":"ECHO","args":{"text":${v}}}`),
  anyJsonText.map((v) => `{"tool":"ECHO","args":{"text":"x"},"dryRun":${v}}`),
  anyJsonText.map((v) => `{"tool":"ECHO","args":{"text":"x"},"form":${v}}`),
  hostileText.map((k) => `{"tool":"ECHO","args":{"text":"x"},${JSON.stringify(k)}:1}`),
);

// ---- assertions ----

function wellAnswered(answer: Answer, where: string): void {
  expect(answer.status, `${where}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  expect(answer.ms, where).toBeLessThan(BOUND_MS);
  expect(answer.text, where).not.toMatch(/INTERNAL_SERVER_ERROR|"code":-32603/);
  if (answer.status >= 400 && answer.json?.error) expect(answer.json.error.message ?? answer.json.error, where).toBeTruthy();
}

const params = (kvs: [string, string][]) => kvs.map(([k, v]) => `${encodeURIComponent(k.isWellFormed() ? k : 'k')}=${v}`).join('&');

describe.each(databaseKinds)('every door against generated hostile input on %s', (kind) => {
  let t: TestApp;
  /** Action ids of refused dispatch-door requests: nothing may have run under them. */
  const refusedActions: string[] = [];
  const refusedWhere = new Map<string, string>();
  /** Event ids of refused batches: none may be stored. */
  const refusedEvents: string[] = [];
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t?.stop());

  const dispatchDoor = async (path: string, body: string | Buffer, headers: Record<string, string> = {}) => {
    const action = `fuzz-${randomUUID()}`;
    const answer = await send(t, path, { body, headers: { 'x-dirledger-action': action, ...headers } }, BOUND_MS);
    // 431: Node's HTTP parser refused the request line before any door saw it (nothing to record).
    if (answer.status >= 400 && answer.status !== 431) {
      refusedActions.push(action);
      refusedWhere.set(action, `${answer.status} ${path.slice(0, 80)} ${String(body).slice(0, 80)}`);
    }
    return answer;
  };

  it('HTTP dispatch, SSE and webhooks: hostile calls and bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileCall, badBytes), fc.constantFrom('/api/dispatch', 'sse', '/hooks/ECHO', '/api/tools/ECHO'), async (body, door) => {
        const sse = door === 'sse';
        const answer = await dispatchDoor(sse ? '/api/dispatch' : door, body, sse ? { accept: 'text/event-stream' } : {});
        wellAnswered(answer, `${door} ${String(body).slice(0, 80)}`);
        if (sse && answer.status === 200) expect(answer.text).toMatch(/event: result/);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('REST and URL doors: hostile tool names, parameter names and values (percent-encoded, invalid UTF-8, deep JSON)', async () => {
    const encoded = fc.oneof(
      hostileText.map((s) => (s.isWellFormed() ? encodeURIComponent(s) : '%ED%A0%80')),
      fc.constantFrom('%00', '%FF', '%C0%80', '%E0%80', '%', '%zz', encodeURIComponent(deepJson(4_000)), encodeURIComponent('9999999999999999999')),
    );
    await fc.assert(
      fc.asyncProperty(encoded, fc.array(fc.tuple(hostileText, encoded), { maxLength: 3 }), fc.boolean(), async (name, query, post) => {
        const path = `/api/tools/${name}?${params(query)}`;
        const answer = post ? await dispatchDoor(path, '{}') : await dispatchDoor(path, undefined as never);
        wellAnswered(answer, `${post ? 'POST' : 'GET'} ${path.slice(0, 120)}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('invocation headers: hostile x-dirledger-* values are refused or recorded, never a 5xx', async () => {
    const headerValue = fc.oneof(
      fc.string({ maxLength: 20 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
      fc.constantFrom('x'.repeat(600), 'é', ' ', ''),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('session', 'turn', 'task', 'agent', 'caller'), headerValue, async (field, value) => {
        const answer = await send(t, '/api/dispatch', { body: '{"tool":"ECHO","args":{"text":"h"}}', headers: { [`x-dirledger-${field}`]: value } }, BOUND_MS);
        wellAnswered(answer, `x-dirledger-${field}: ${JSON.stringify(value.slice(0, 40))}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('ledger ingest: one hostile field per batch; a refused batch appends nothing', async () => {
    const field = fc.constantFrom(
      'collector',
      'position',
      'kind',
      'direction',
      'actionId',
      'tool',
      'session',
      'turn',
      'task',
      'agent',
      'model',
      'status',
      'method',
      'url',
      'headers',
      'costUsd',
      'inputTokens',
      'occurredAt',
      'payload',
      'contract',
      'metadata',
    );
    const value = fc.oneof(
      anyJsonText,
      overflow.map((s) => JSON.stringify(s)),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.tuple(field, value), badBytes), async (attack) => {
        const id = `fuzz-${randomUUID()}`;
        let body: string | Buffer;
        if (Buffer.isBuffer(attack)) body = attack;
        else {
          const [name, v] = attack;
          const base: Record<string, string> = {
            id: JSON.stringify(id),
            kind: '"NOTE"',
            direction: '"IN"',
            actionId: '"a"',
            occurredAt: '"2026-11-30T00:00:00Z"',
          };
          const batch: Record<string, string> = { collector: '"fuzz"' };
          if (name === 'collector' || name === 'position') batch[name] = v;
          else base[name] = v;
          const eventText = `{${Object.entries(base)
            .map(([k, x]) => `"${k}":${x}`)
            .join(',')}}`;
          body = `{${Object.entries(batch)
            .map(([k, x]) => `"${k}":${x}`)
            .join(',')},"events":[${eventText}]}`;
        }
        const answer = await send(t, '/ledger/batches', { body }, BOUND_MS);
        wellAnswered(answer, `ingest ${String(body).slice(0, 120)}`);
        if (answer.status >= 400) refusedEvents.push(id);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('GraphQL over HTTP: hostile variables of every type at names, filters, ids, cursors, positions and JSON args', async () => {
    const operations = [
      'query($v: String) { events(after: $v, first: 2) { edges { cursor } } }',
      'query($v: [String!]) { events(filter: {tool: $v}, first: 2) { edges { cursor } } }',
      'query($v: [String!]) { ledgerCounts(by: TOOL, filter: {session: $v}) { events } }',
      'query($v: LedgerFilter) { ledgerCounts(by: TASK, filter: $v) { events } }',
      'query($v: Int) { events(first: $v) { edges { cursor } } }',
      'query($v: ID!) { event(id: $v) { id } }',
      'query($v: ID!) { action(id: $v) { id } }',
      'query($v: ID!) { task(id: $v) { id } }',
      'query($v: String!) { tool(name: $v) { name } }',
      'query($v: String!) { row(name: $v) { name } }',
      'query($v: String!) { ask(question: $v) { readAs } }',
      'query($v: String!) { resolve(query: $v) { matches { score } } }',
      'query($v: String!) { blob(sha256: $v) { size } }',
      'query($v: String!) { inspectToken(token: $v) { tokenId } }',
      'query($v: String) { directory(type: $v, first: 2) { edges { cursor } } }',
      'mutation($v: String!) { dispatch(tool: $v, args: {}) { outcome } }',
      'mutation($v: JSON) { dispatch(tool: "ECHO", args: $v) { outcome } }',
      'mutation($v: BigInt) { appendBatch(input: {collector: "fuzz-gql", position: $v, events: [{id: "fuzz-gql", kind: "NOTE", direction: IN, actionId: "a", occurredAt: "2026-11-30T00:00:00Z"}]}) { position } }',
      'mutation($v: JSON) { appendBatch(input: {collector: "fuzz-gql", events: [{id: "fuzz-gql-m", kind: "NOTE", direction: IN, actionId: "a", occurredAt: "2026-11-30T00:00:00Z", metadata: $v}]}) { inserted } }',
      'mutation($v: [String!]) { issueToken(input: {tools: $v}) { tokenId } }',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...operations),
        fc.oneof(
          anyJsonText,
          overflow.map((s) => JSON.stringify(s)),
          anyJsonText.map((v) => `[${v}]`),
        ),
        async (query, v) => {
          const answer = await send(t, '/graphql', { body: `{"query":${JSON.stringify(query)},"variables":{"v":${v}}}` }, BOUND_MS);
          wellAnswered(answer, `${query.slice(0, 60)} v=${v.slice(0, 80)}`);
          for (const error of answer.json?.errors ?? []) expect(error.extensions?.code, error.message).toMatch(/^[A-Z][A-Z0-9_]*$/);
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });

  it('GraphQL over HTTP: hostile documents, bodies and literals', async () => {
    const document = fc.oneof(
      hostileText,
      hostileText.map((s) => `{ tool(name: ${JSON.stringify(s)}) { name } }`),
      hostileText.map((s) => `{ events(filter: {agent: [${JSON.stringify(s)}]}, first: 1) { edges { cursor } } }`),
      fc.integer({ min: 100, max: 5_000 }).map((n) => `{ events(filter: {tool: ${'['.repeat(n)}"x"${']'.repeat(n)}}) { edges { cursor } } }`),
      fc.integer({ min: 100, max: 3_000 }).map((n) => `{ ${'tool(name: "a") { events { edges { node { '.repeat(n)} id ${'} } } }'.repeat(n)} }`),
      fc.constantFrom(
        '{ ledgerEvents { id } }',
        'subscription { __typename }',
        '{ __schema { types { name } } }',
        'query($v: Int = "x") { events(first: $v) { edges { cursor } } }',
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          document.map((q) => JSON.stringify({ query: q })),
          badBytes,
          anyJsonText,
        ),
        fc.boolean(),
        async (body, get) => {
          const query = typeof body === 'string' ? (JSON.parse(body) as { query?: unknown } | null)?.query : undefined;
          // A lone surrogate has no UTF-8 form, so it cannot be percent-encoded into a URL: such a query goes in a body.
          const answer =
            get && typeof query === 'string' && query.length < 6_000 && query.isWellFormed()
              ? await send(t, `/graphql?query=${encodeURIComponent(query)}`, {}, BOUND_MS)
              : await send(t, '/graphql', { body }, BOUND_MS);
          wellAnswered(answer, `graphql ${String(body).slice(0, 100)}`);
        },
      ),
      { numRuns: RUNS * 2 },
    );
  });

  it('graphql-ws: every hostile subscribe gets an answer for its id; the socket stays open', async () => {
    const client = await graphqlWs(t);
    try {
      const payload = fc.oneof(
        hostileText.map((q) => JSON.stringify({ query: q })),
        anyJsonText.map((v) => `{"query":"subscription($v: LedgerFilter) { ledgerEvents(filter: $v) { id } }","variables":{"v":${v}}}`),
        anyJsonText.map((v) => `{"query":"mutation($v: JSON) { dispatch(tool: \\"ECHO\\", args: $v) { outcome } }","variables":{"v":${v}}}`),
        anyJsonText.map((v) => `{"query":"subscription($v: ID!) { streamCapture(actionId: $v) { sequence } }","variables":{"v":${v}}}`),
        hostileText.map((s) => JSON.stringify({ query: `{ event(id: ${JSON.stringify(s)}) { id } }` })),
      );
      let n = 0;
      await fc.assert(
        fc.asyncProperty(payload, async (p) => {
          const id = `s${n++}`;
          const started = performance.now();
          // A valid live subscription stays quiet by design: it is given a short wait, everything else the bound.
          const mayStayQuiet = /ledgerEvents|streamCapture/.test(p);
          const reply = await client
            .subscribe(id, `{"id":"${id}","type":"subscribe","payload":${p}}`, mayStayQuiet ? 1_500 : BOUND_MS)
            .catch((error: Error) => ({ type: 'none', error: error.message }));
          // A valid live subscription may stay quiet; anything else is answered at once.
          const live = mayStayQuiet && reply.type === 'none';
          if (live) client.ws.send(JSON.stringify({ id, type: 'complete' }));
          else {
            expect(['next', 'error', 'complete'], `${p.slice(0, 100)} → ${JSON.stringify(reply).slice(0, 200)}`).toContain(reply.type);
            expect(JSON.stringify(reply)).not.toMatch(/INTERNAL_SERVER_ERROR/);
          }
          expect(performance.now() - started).toBeLessThan(BOUND_MS + 1_000);
          expect(client.ws.readyState).toBe(client.ws.OPEN);
        }),
        { numRuns: RUNS },
      );
    } finally {
      client.close();
    }
  });

  it('WebSocket door: every hostile frame gets a reply; the socket stays open', async () => {
    const door = await wsDoor(t);
    try {
      const frame = fc.oneof(
        hostileCall.map((c) => `{"type":"call",${c.slice(1)}`),
        anyJsonText,
        badBytes,
        hostileText,
        anyJsonText.map((v) => `{"type":"call","id":${v},"tool":"ECHO"}`),
      );
      await fc.assert(
        fc.asyncProperty(frame, async (f) => {
          const reply = await door.ask(f, undefined, BOUND_MS);
          expect(['result', 'error', 'pong'], JSON.stringify(reply).slice(0, 200)).toContain(reply.type);
          expect(JSON.stringify(reply)).not.toMatch(/INTERNAL_SERVER_ERROR/);
          expect(door.ws.readyState).toBe(door.ws.OPEN);
        }),
        { numRuns: RUNS * 2 },
      );
    } finally {
      door.close();
    }
  });

  it('MCP: hostile JSON-RPC (tool names, arguments, cursors, methods, bytes) never answers -32603 or a 5xx', async () => {
    const message = fc.oneof(
      hostileText.map((name) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } })),
      anyJsonText.map((v) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ECHO","arguments":${v}}}`),
      anyJsonText.map((v) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${v}}}`),
      anyJsonText.map((v) => `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":${v}}}`),
      anyJsonText.map((v) => `{"jsonrpc":"2.0","id":${v},"method":${v}}`),
      badBytes,
    );
    await fc.assert(
      fc.asyncProperty(message, async (body) => {
        const answer = await dispatchDoor('/mcp', body, { accept: 'application/json, text/event-stream' });
        wellAnswered(answer, `mcp ${String(body).slice(0, 100)}`);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('afterwards: the server is alive, no refused request ran anything, no refused batch was appended', async () => {
    expect((await send(t, '/healthz')).status).toBe(200);
    expect((await send(t, '/api/dispatch', { body: '{"tool":"ECHO","args":{"text":"still here"}}' })).json).toMatchObject({ outcome: 'OK' });
    await t.app.services.writer.flush();
    const prisma = t.app.services.db.prisma;
    const ran = await prisma.ledgerEvent.findMany({
      where: { actionId: { in: refusedActions }, kind: { in: ['TOOL_CALL', 'TOOL_RESULT', 'DRY_RUN'] } },
      select: { actionId: true, kind: true },
    });
    expect(ran).toEqual([]);
    // Each refused door request is on the record: its request and its answer.
    const recorded = await prisma.ledgerEvent.groupBy({
      by: ['actionId'],
      where: { actionId: { in: refusedActions }, kind: { in: ['REQUEST', 'RESPONSE'] } },
      _count: true,
    });
    const unrecorded = refusedActions.filter((a) => !recorded.some((r) => r.actionId === a)).map((a) => refusedWhere.get(a));
    if (unrecorded.length) console.log('UNRECORDED', JSON.stringify(unrecorded));
    expect(unrecorded).toEqual([]);
    expect(await prisma.ledgerEvent.count({ where: { id: { in: refusedEvents } } })).toBe(0);
  });
});
