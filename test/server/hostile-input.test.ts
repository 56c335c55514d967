// Issue 16 part 6: bad input at every door is a clear 4xx naming what was wrong, never a 5xx or a
// hang; each case below was a 500, a masked error or silence before the limits in src/limits.ts.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { deepJson, graphql, graphqlWs, mcpCall, send, wsDoor } from '../helpers/hostile.ts';

const DEEP = 3_000;
const event = (extra: string) => `{"id":"e-${Math.random()}","kind":"NOTE","direction":"IN","actionId":"a","occurredAt":"2026-11-30T00:00:00Z"${extra}}`;

describe.each(databaseKinds)('hostile input on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t?.stop());

  it('JSON nested 3,000 deep in args: 400 naming the depth at /api/dispatch, REST, SSE and webhooks', async () => {
    const body = `{"tool":"ECHO","args":{"text":"x","deep":${deepJson(DEEP)}}}`;
    for (const [path, headers, text] of [
      ['/api/dispatch', {}, body],
      ['/api/dispatch', { accept: 'text/event-stream' }, body],
      ['/api/tools/ECHO', {}, `{"text":"x","deep":${deepJson(DEEP)}}`],
      ['/hooks/ECHO', {}, `{"text":"x","deep":${deepJson(DEEP)}}`],
    ] as const) {
      const answer = await send(t, path, { body: text, headers });
      expect(answer.status, `${path} ${answer.text.slice(0, 200)}`).toBe(400);
      expect(answer.json.error).toMatchObject({ code: 'BAD_INPUT' });
      expect(answer.json.error.message).toMatch(/nested deeper than 512/);
    }
  });

  it('JSON nested 3,000 deep in metadata: 400 at /ledger/batches, nothing appended', async () => {
    const collector = `deep-${kind}`;
    const answer = await send(t, '/ledger/batches', { body: `{"collector":"${collector}","events":[${event(`,"metadata":{"deep":${deepJson(DEEP)}}`)}]}` });
    expect(answer.status, answer.text.slice(0, 200)).toBe(400);
    expect(answer.json.error.message).toMatch(/nested deeper than 512/);
    expect(await t.app.services.db.prisma.ledgerBatch.count({ where: { collector } })).toBe(0);
  });

  it('JSON nested 3,000 deep in GraphQL variables: BAD_USER_INPUT, not a masked INTERNAL_SERVER_ERROR', async () => {
    const answer = await graphql(
      t,
      `{"query":"mutation($a: JSON) { dispatch(tool: \\"ECHO\\", args: $a) { outcome } }","variables":{"a":{"text":"x","deep":${deepJson(DEEP)}}}}`,
    );
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    expect(answer.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(answer.json.errors[0].message).toMatch(/nested deeper than 512/);
  });

  it('JSON nested 3,000 deep through MCP tools/call: a JSON-RPC error naming the depth, HTTP 400', async () => {
    const answer = await mcpCall(t, `{"name":"ECHO","arguments":{"text":"x","deep":${deepJson(DEEP)}}}`);
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    expect(answer.json.error.code).toBe(-32600);
    expect(answer.json.error.message).toMatch(/nested deeper than 512/);
  });

  it('JSON nested 3,000 deep on the WebSocket door: an error reply, and the socket still answers', async () => {
    const door = await wsDoor(t);
    try {
      const reply = await door.ask(`{"type":"call","id":"deep","tool":"ECHO","args":{"deep":${deepJson(DEEP)}}}`, undefined, 5_000);
      expect(reply).toMatchObject({ type: 'error', error: { code: 'BAD_INPUT' } });
      expect(reply.error.message).toMatch(/nested deeper than 512/);
      expect(await door.ask('{"type":"ping","id":"p"}', 'p')).toEqual({ type: 'pong', id: 'p' });
    } finally {
      door.close();
    }
  });

  it('JSON nested 512 deep (the limit) is accepted at dispatch and ingest', async () => {
    const args = `{"text":"x","deep":${deepJson(510)}}`;
    const dispatched = await send(t, '/api/dispatch', { body: `{"tool":"ECHO","args":${args}}` });
    expect(dispatched.status, dispatched.text.slice(0, 200)).toBe(200);
    const ingested = await send(t, '/ledger/batches', { body: `{"collector":"limit-${kind}","events":[${event(`,"metadata":{"deep":${deepJson(508)}}`)}]}` });
    expect(ingested.status, ingested.text.slice(0, 200)).toBe(200);
  });

  it('NUL in a tool name: 400 naming the tool field at every door that takes one, never a database error', async () => {
    const bad = 'EC\u0000HO';
    const dispatch = await send(t, '/api/dispatch', { body: JSON.stringify({ tool: bad, args: {} }) });
    expect(dispatch.status, dispatch.text).toBe(400);
    expect(dispatch.json.error).toMatchObject({ code: 'BAD_INPUT' });
    expect(dispatch.json.error.message).toMatch(/tool/);
    const rest = await send(t, '/api/tools/EC%00HO', { body: '{}' });
    expect(rest.status, rest.text).toBe(400);
    const url = await send(t, '/api/tools/EC%00HO?text=x');
    expect(url.status, url.text).toBe(400);
    const gql = await graphql(
      t,
      JSON.stringify({ query: 'mutation($t: String!) { dispatch(tool: $t) { outcome error { code message } } }', variables: { t: bad } }),
    );
    expect(gql.json.data?.dispatch ?? gql.json.errors?.[0], gql.text).toMatchObject(
      gql.json.data ? { outcome: 'REFUSED', error: { code: 'BAD_INPUT' } } : { extensions: { code: 'BAD_USER_INPUT' } },
    );
    const mcp = await mcpCall(t, JSON.stringify({ name: bad, arguments: {} }));
    expect(mcp.status, mcp.text).toBeLessThan(500);
    expect(JSON.stringify(mcp.json)).toMatch(/BAD_INPUT|-32602/);
    const door = await wsDoor(t);
    try {
      const reply = await door.ask(JSON.stringify({ type: 'call', id: 'n', tool: bad }), 'n');
      expect(JSON.stringify(reply)).toMatch(/BAD_INPUT/);
    } finally {
      door.close();
    }
  });

  it('a tool name too long for its column: 400 naming tool, and the request is still on the record', async () => {
    const long = 'T'.repeat(600);
    for (const [path, body] of [
      ['/api/dispatch', JSON.stringify({ tool: long, args: {} })],
      [`/api/tools/${long}`, '{}'],
      ['/api/tools/%FF', '{}'],
    ] as const) {
      const action = `long-${kind}-${path.length}-${body.length}`;
      const answer = await send(t, path, { body, headers: { 'x-dirledger-action': action } });
      expect(answer.status, answer.text).toBe(400);
      expect(answer.json.error.message).toMatch(/Invalid tool/);
      await t.app.services.writer.flush();
      const kinds = (await t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId: action } })).map((e) => e.kind).sort();
      expect(kinds.filter((k) => k !== 'REFUSAL')).toEqual(['REQUEST', 'RESPONSE']);
    }
  });

  it('NUL and lone surrogates in events and ledgerCounts filters: BAD_USER_INPUT naming the filter field', async () => {
    for (const value of ['a\u0000b', 'a\ud800b']) {
      for (const query of [
        'query($f: LedgerFilter) { events(filter: $f, first: 1) { edges { cursor } } }',
        'query($f: LedgerFilter) { ledgerCounts(by: TOOL, filter: $f) { events } }',
      ]) {
        const answer = await graphql(t, JSON.stringify({ query, variables: { f: { tool: [value] } } }));
        expect(answer.status, answer.text).toBeLessThan(500);
        expect(answer.json.errors?.[0]?.extensions?.code, answer.text).toMatch(/^BAD_(USER_)?INPUT$/);
        expect(answer.json.errors[0].message).toMatch(/tool/);
      }
    }
  });

  it('a batch position past the largest bigint: 400 naming position', async () => {
    const answer = await send(t, '/ledger/batches', { body: `{"collector":"c-${kind}","position":"9999999999999999999","events":[${event('')}]}` });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.json.error.message).toMatch(/position/);
    const gql = await graphql(
      t,
      JSON.stringify({
        query:
          'mutation($p: BigInt) { appendBatch(input: {collector: "g", position: $p, events: [{id: "x", kind: "NOTE", direction: IN, actionId: "a", occurredAt: "2026-11-30T00:00:00Z"}]}) { position } }',
        variables: { p: '9999999999999999999' },
      }),
    );
    expect(gql.json.errors?.[0]?.extensions?.code, gql.text).toMatch(/^BAD_(USER_)?INPUT$/);
  });

  it('a cursor past the largest bigint: BAD_INPUT, not a database error', async () => {
    const cursor = Buffer.from('ledger:9999999999999999999').toString('base64url');
    const answer = await graphql(t, JSON.stringify({ query: `{ events(after: "${cursor}", first: 1) { edges { cursor } } }` }));
    expect(answer.json.errors?.[0]?.extensions?.code, answer.text).toBe('BAD_INPUT');
  });

  it('a GraphQL variable of the wrong type is BAD_USER_INPUT naming the variable', async () => {
    const answer = await graphql(t, JSON.stringify({ query: 'query($f: Int) { events(first: $f) { edges { cursor } } }', variables: { f: 'abc' } }));
    expect(answer.status).toBeLessThan(500);
    expect(answer.json.errors[0].extensions.code, answer.text).toBe('BAD_USER_INPUT');
    expect(answer.json.errors[0].message).toMatch(/\$f/);
  });

  it('a syntax error in a graphql-ws subscribe is an error message for that id; the socket and other subscriptions live on', async () => {
    const client = await graphqlWs(t);
    try {
      const liveKind = `LIVE_${kind.toUpperCase()}`;
      client.ws.send(
        JSON.stringify({ id: 'live', type: 'subscribe', payload: { query: `subscription { ledgerEvents(filter: {kind: ["${liveKind}"]}) { id kind } }` } }),
      );
      const broken = await client.subscribe('bad', JSON.stringify({ id: 'bad', type: 'subscribe', payload: { query: 'subscription { ledgerEvents(' } }));
      expect(broken.type).toBe('error');
      expect(broken.payload[0].message).toMatch(/Syntax Error/);
      expect(broken.payload[0].extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
      const wrongVariable = await client.subscribe(
        'var',
        JSON.stringify({
          id: 'var',
          type: 'subscribe',
          payload: { query: 'query($f: Int) { events(first: $f) { edges { cursor } } }', variables: { f: 'abc' } },
        }),
      );
      expect(JSON.stringify(wrongVariable)).toMatch(/BAD_USER_INPUT/);
      const deep = await client.subscribe(
        'deep',
        `{"id":"deep","type":"subscribe","payload":{"query":"mutation($a: JSON) { dispatch(tool: \\"ECHO\\", args: $a) { outcome } }","variables":{"a":{"deep":${deepJson(DEEP)}}}}}`,
      );
      expect(JSON.stringify(deep)).toMatch(/BAD_USER_INPUT/);
      expect(client.ws.readyState).toBe(client.ws.OPEN);
      // The first subscription is still alive: an event appended now reaches it.
      const delivered = client.next('live');
      const appended = await send(t, '/ledger/batches', { body: `{"collector":"live-${kind}","events":[${event('').replace('"NOTE"', `"${liveKind}"`)}]}` });
      expect(appended.status).toBe(200);
      expect(await delivered).toMatchObject({ type: 'next', payload: { data: { ledgerEvents: { kind: liveKind } } } });
    } finally {
      client.close();
    }
  });
  it('a body cut short by a client that half-closes: 400 at once at every HTTP door, and nothing recorded', async () => {
    const doors = ['/api/dispatch', '/api/tools/ECHO', '/hooks/ECHO', '/graphql', '/mcp', '/v1/chat/completions', '/ledger/batches'];
    const framings = [
      ['declared', 'Content-Length: 100\r\n\r\n{"tool":"ECHO"'],
      ['chunked', 'Transfer-Encoding: chunked\r\n\r\nd\r\n{"tool":"ECHO"\r\n'],
    ] as const;
    const { port } = new URL(t.origin);
    const auth = Object.entries(t.auth)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    for (const path of doors) {
      for (const [framing, rest] of framings) {
        const actionId = `half-closed-${kind}-${framing}-${path.replaceAll('/', '_')}`;
        const started = performance.now();
        const answer = await new Promise<string>((resolve, reject) => {
          const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
          let got = '';
          const timer = setTimeout(() => {
            socket.destroy();
            reject(new Error(`${path} (${framing}): no answer within 5 s; got ${JSON.stringify(got)}`));
          }, 5_000);
          socket.on('data', (chunk) => (got += chunk));
          socket.on('end', () => {
            clearTimeout(timer);
            socket.destroy();
            resolve(got);
          });
          socket.on('error', reject);
          socket.on('connect', () => {
            socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-dirledger-action: ${actionId}\r\n${auth}${rest}`);
            socket.end();
          });
        });
        expect(answer, `${path} (${framing})`).toMatch(/^HTTP\/1\.1 400 /);
        expect(performance.now() - started, `${path} (${framing})`).toBeLessThan(5_000);
        await t.app.services.writer.flush();
        expect(await t.app.services.db.prisma.ledgerEvent.count({ where: { actionId } }), `${path} (${framing})`).toBe(0);
      }
    }
  });
});
