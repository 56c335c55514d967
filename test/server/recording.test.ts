// Issue 15 part 5: every door's exchange is recorded except the Ledger's own reads. Both sides:
// Directory and resolver reads (GraphQL, GET /api/directory…, the find door, MCP tools/list and
// find) become REQUEST/IN + RESPONSE/OUT; a pure Ledger read leaves no event at all.
import { isObjectType, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlDocumentRecorded, graphqlFieldTouches, graphqlOperationRecorded, nodeTypeTouches, typenameOfGlobalId } from '../../src/capture/recording.ts';
import { globalId, nodeTypenames } from '../../src/graphql/node.ts';
import { schema } from '../../src/graphql/schema.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { wsClient } from '../live/helpers.ts';

describe('the recording rule', () => {
  it('classifies every root field of the schema (a new field must be placed in the table)', () => {
    const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(isObjectType);
    const fields = roots.flatMap((t) => Object.keys(t.getFields()));
    expect(fields.length).toBeGreaterThan(10);
    expect(fields.filter((f) => !(f in graphqlFieldTouches))).toEqual([]);
  });

  it('records an operation that touches anything but the Ledger; not one that only reads it', () => {
    expect(graphqlOperationRecorded('{ resolve(query: "x") { message } }')).toBe(true);
    expect(graphqlOperationRecorded('query { events(first: 1) { edges { cursor } } }')).toBe(false);
    expect(graphqlOperationRecorded('{ a: event(id: "x") { id } ...F } fragment F on Query { tools { name } }')).toBe(true);
    expect(graphqlOperationRecorded('query L { events { edges { cursor } } } query D { directoryStats { rows } }', 'L')).toBe(false);
    expect(graphqlOperationRecorded('query L { events { edges { cursor } } } query D { directoryStats { rows } }', 'D')).toBe(true);
    expect(graphqlOperationRecorded('{ __typename __schema { types { name } } }')).toBe(false);
    expect(graphqlOperationRecorded('{ not valid')).toBe(true);
  });

  it('classifies every type node(id:) refetches, and reads the type from the global id', () => {
    expect(nodeTypenames().length).toBeGreaterThanOrEqual(8);
    expect(nodeTypenames().filter((t) => !(t in nodeTypeTouches))).toEqual([]);
    expect(Object.keys(nodeTypeTouches).filter((t) => !nodeTypenames().includes(t))).toEqual([]);
    for (const t of nodeTypenames()) expect(typenameOfGlobalId(globalId(t, 'x:y'))).toBe(t);
    expect(typenameOfGlobalId('not base64 at all')).toBeUndefined();
    expect(typenameOfGlobalId(42)).toBeUndefined();
  });

  it('node(id:) is recorded by the type its id names: a Directory object yes, a Ledger object no, an unknown id yes', () => {
    const literal = (id: string) => `{ node(id: ${JSON.stringify(id)}) { nodeId } }`;
    expect(graphqlOperationRecorded(literal(globalId('LedgerEvent', 'e1')))).toBe(false);
    expect(graphqlOperationRecorded(literal(globalId('Blob', 'ab')))).toBe(false);
    expect(graphqlOperationRecorded(literal(globalId('Tool', 'ECHO')))).toBe(true);
    expect(graphqlOperationRecorded(literal(globalId('Model', 'gpt')))).toBe(true);
    expect(graphqlOperationRecorded(literal('garbage'))).toBe(true);
    expect(graphqlOperationRecorded(literal(globalId('Nope', 'x')))).toBe(true);
    // The same text with other variables decides again: the decision is not cached by text alone.
    const byVar = 'query ($id: ID!) { node(id: $id) { nodeId } }';
    expect(graphqlOperationRecorded(byVar, undefined, { id: globalId('Task', 'T-1') })).toBe(false);
    expect(graphqlOperationRecorded(byVar, undefined, { id: globalId('Entry', 'say-it-back') })).toBe(true);
    expect(graphqlOperationRecorded(byVar, undefined, { id: globalId('Action', 'a') })).toBe(false);
    expect(graphqlOperationRecorded(byVar, undefined, {})).toBe(true);
    expect(graphqlOperationRecorded(byVar)).toBe(true);
    // Beside a Directory read, or a second node naming a Directory object: recorded.
    expect(graphqlOperationRecorded(`{ a: node(id: "${globalId('Blob', 'ab')}") { nodeId } tools { name } }`)).toBe(true);
    expect(graphqlOperationRecorded(`{ a: node(id: "${globalId('Blob', 'ab')}") { nodeId } b: node(id: "${globalId('Tool', 'X')}") { nodeId } }`)).toBe(true);
    // graphql-ws hands over the parsed document and its variables.
    expect(graphqlDocumentRecorded(parse(byVar), null, { id: globalId('LedgerEvent', 'e1') })).toBe(false);
    expect(graphqlDocumentRecorded(parse(byVar), null, { id: globalId('Tool', 'ECHO') })).toBe(true);
  });
});

describe.each(databaseKinds)('what each door records on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => {
    await t?.stop();
  });

  const eventsOf = async (actionId: string) => {
    await t.app.services.writer.flush();
    return t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId }, orderBy: { position: 'asc' } });
  };
  const text = async (sha256: string | null) => (sha256 ? (await t.app.services.ledger.readBlob(sha256))!.toString('utf8') : null);
  const gql = (actionId: string, body: unknown) =>
    fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...t.auth, 'x-dirledger-action': actionId },
      body: JSON.stringify(body),
    });

  it.each([
    ['resolve', '{ resolve(query: "echo text back") { message matches { row { name } } } }'],
    ['directory', '{ directory(first: 2) { edges { node { name } } } }'],
    ['tool', '{ tool(name: "ECHO") { name } }'],
    ['tools', '{ tools(names: ["ECHO"]) { name } }'],
    ['a Directory read beside a Ledger read', '{ tool(name: "ECHO") { name } events(first: 1) { edges { cursor } } }'],
  ])('GraphQL %s: the request IN and the answer OUT, exact bytes', async (name, query) => {
    const actionId = `gql-${kind}-${name.replace(/\W+/g, '-')}`;
    const body = { query };
    const r = await gql(actionId, body);
    const answer = await r.text();
    expect(r.status, answer).toBe(200);
    expect(JSON.parse(answer).errors).toBeUndefined();
    const events = await eventsOf(actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'RESPONSE/OUT']);
    expect(events[0]).toMatchObject({ method: 'POST', metadata: { capture: 'boundary', door: 'GRAPHQL' } });
    expect(await text(events[0]!.payloadSha256)).toBe(JSON.stringify(body));
    expect(events[1]).toMatchObject({ status: '200', metadata: { capture: 'boundary', door: 'GRAPHQL' } });
    expect(await text(events[1]!.payloadSha256)).toBe(answer);
  });

  it('GraphQL reads of the Ledger alone (events, action, ledgerCounts, introspection) leave no event', async () => {
    await t.app.services.writer.flush();
    const before = await t.app.services.db.prisma.ledgerEvent.count();
    for (const query of [
      '{ events(first: 2) { edges { node { id kind } } } }',
      '{ action(id: "none") { id } }',
      '{ ledgerCounts(by: TOOL) { key events } }',
      '{ __typename }',
    ]) {
      const actionId = `ledger-read-${kind}-${query.length}`;
      const r = await gql(actionId, { query });
      expect(r.status).toBe(200);
      expect((await r.json()).errors, query).toBeUndefined();
      expect(await eventsOf(actionId)).toEqual([]);
    }
    // A GET read too.
    const get = await fetch(`${t.url}?query=${encodeURIComponent('{ events(first: 1) { edges { cursor } } }')}`, {
      headers: { ...t.auth, accept: 'application/json', 'x-dirledger-action': `ledger-get-${kind}` },
    });
    expect(get.status).toBe(200);
    await t.app.services.writer.flush();
    expect(await t.app.services.db.prisma.ledgerEvent.count()).toBe(before);
  });

  it('graphql-ws: a Directory query is recorded (door GRAPHQL_WS), a Ledger read is not', async () => {
    const client = wsClient(t.url, t.token);
    const run = (query: string) =>
      new Promise<any>((resolve, reject) => {
        let value: any;
        client.subscribe({ query }, { next: (r) => (value = r), error: reject, complete: () => resolve(value) });
      });
    const doorEvents = async () => {
      await t.app.services.writer.flush();
      return t.app.services.db.prisma.ledgerEvent.findMany({ where: { metadata: { path: ['door'], equals: 'GRAPHQL_WS' } }, orderBy: { position: 'asc' } });
    };
    try {
      const before = (await doorEvents()).length;
      const ledgerRead = await run('{ events(first: 1) { edges { cursor } } }');
      expect(ledgerRead.errors).toBeUndefined();
      expect((await doorEvents()).length).toBe(before);
      const query = `{ tool(name: "ECHO") { name } }`;
      const directoryRead = await run(query);
      expect(directoryRead).toEqual({ data: { tool: { name: 'ECHO' } } });
      const events = (await doorEvents()).slice(before);
      expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'RESPONSE/OUT']);
      expect(JSON.parse((await text(events[0]!.payloadSha256))!)).toMatchObject({ query });
      expect(JSON.parse((await text(events[1]!.payloadSha256))!)).toEqual(directoryRead);
    } finally {
      await client.dispose();
    }
  });

  it("GraphQL dispatch over HTTP is one action: the HTTP exchange around the runner's call", async () => {
    const actionId = `gql-dispatch-${kind}`;
    const r = await gql(actionId, { query: 'mutation { dispatch(tool: "ECHO", args: { text: "hi" }) { actionId outcome } }' });
    const body = await r.json();
    expect(body.data.dispatch).toEqual({ actionId, outcome: 'OK' });
    expect((await eventsOf(actionId)).map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
  });

  it.each([
    ['GET /api/directory', '/api/directory?type=tool'],
    ['the find door GET /api/directory/resolve', '/api/directory/resolve?q=echo'],
  ])('%s: the request IN and the answer OUT', async (name, path) => {
    const actionId = `rest-${kind}-${name.replace(/\W+/g, '-')}`;
    const r = await fetch(`${t.origin}${path}`, { headers: { ...t.auth, 'x-dirledger-action': actionId } });
    const answer = await r.text();
    expect(r.status).toBe(200);
    const events = await eventsOf(actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'RESPONSE/OUT']);
    expect(events[0]).toMatchObject({ method: 'GET', url: `${t.origin}${path}`, metadata: { door: 'REST' } });
    expect(await text(events[1]!.payloadSha256)).toBe(answer);
  });

  it.each([
    ['tools/list', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }],
    ['find', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'find', arguments: { query: 'echo' } } }],
  ])('MCP %s: the request IN and the answer OUT', async (name, message) => {
    const actionId = `mcp-${kind}-${name.replace(/\W+/g, '-')}`;
    const r = await fetch(`${t.origin}/mcp`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-dirledger-action': actionId },
      body: JSON.stringify(message),
    });
    expect(r.status).toBe(200);
    expect((await r.json()).error).toBeUndefined();
    const events = await eventsOf(actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(expect.arrayContaining(['REQUEST/IN', 'RESPONSE/OUT']));
    expect(await text(events.find((e) => e.kind === 'REQUEST')!.payloadSha256)).toBe(JSON.stringify(message));
  });

  it('node(id:) over HTTP: a Ledger object refetched leaves no event (POST and GET, id as a variable); a Directory object is recorded', async () => {
    await t.app.services.ledger.append({
      collector: 'recording-node',
      events: [
        { id: `node-ev-${kind}`, kind: 'TOOL_CALL', direction: 'OUT', actionId: `node-act-${kind}`, occurredAt: new Date(), payload: { state: 'NONE' } },
      ],
    });
    const query = 'query ($id: ID!) { node(id: $id) { __typename nodeId } }';
    const ledgerRead = `node-ledger-${kind}`;
    const eventId = globalId('LedgerEvent', `node-ev-${kind}`);
    const r = await gql(ledgerRead, { query, variables: { id: eventId } });
    expect((await r.json()).data.node).toEqual({ __typename: 'LedgerEvent', nodeId: eventId });
    const get = await fetch(`${t.url}?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id: eventId }))}`, {
      headers: { ...t.auth, accept: 'application/json', 'x-dirledger-action': `${ledgerRead}-get` },
    });
    expect((await get.json()).data.node.__typename).toBe('LedgerEvent');
    expect(await eventsOf(ledgerRead)).toEqual([]);
    expect(await eventsOf(`${ledgerRead}-get`)).toEqual([]);
    const directoryRead = `node-tool-${kind}`;
    const toolId = globalId('Tool', 'tool:ECHO');
    const answer = await (await gql(directoryRead, { query, variables: { id: toolId } })).text();
    expect(JSON.parse(answer).data.node).toEqual({ __typename: 'Tool', nodeId: toolId });
    const events = await eventsOf(directoryRead);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'RESPONSE/OUT']);
    expect(await text(events[1]!.payloadSha256)).toBe(answer);
  });

  it('node(id:) with hostile ids and variables: a clear 4xx or a null, never a 5xx, and the rule still decides', async () => {
    const query = 'query ($id: ID!) { node(id: $id) { nodeId } }';
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const get = await fetch(`${t.url}?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(`{"id":${deep}}`)}`, {
      headers: { ...t.auth, accept: 'application/json', 'x-dirledger-action': `node-deep-${kind}` },
    });
    expect(get.status).toBeGreaterThanOrEqual(400);
    expect(get.status).toBeLessThan(500);
    for (const id of ['\u0000', `${globalId('LedgerEvent', 'x')}\u0000`, '\ud800', 'x'.repeat(100_000), globalId('Tool', `tool:${'\u0000'}`)]) {
      const actionId = `node-hostile-${kind}-${id.length}`;
      const r = await gql(actionId, { query, variables: { id } });
      expect(r.status, JSON.stringify(id.slice(0, 20))).toBeLessThan(500);
      const body = await r.json();
      if (body.errors) expect(body.errors[0].extensions.code).toMatch(/^[A-Z_]+$/);
      else expect(body.data.node).toBeNull();
    }
  });

  it("ingest (the storage layer's own traffic) and blob reads are not recorded as exchanges", async () => {
    const actionId = `ingest-${kind}`;
    const r = await fetch(`${t.origin}/ledger/batches`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json', 'x-dirledger-action': actionId },
      body: JSON.stringify({
        collector: 'rec',
        events: [
          {
            id: `ev-${kind}`,
            kind: 'NOTE',
            direction: 'IN',
            actionId: 'elsewhere',
            occurredAt: new Date().toISOString(),
            payload: { state: 'COMPLETE', text: 'note' },
          },
        ],
      }),
    });
    expect(r.status).toBe(200);
    expect(await eventsOf(actionId)).toEqual([]);
    const stored = (await eventsOf('elsewhere'))[0]!;
    const blob = await fetch(`${t.origin}/ledger/blob/${stored.payloadSha256}`, { headers: { ...t.auth, 'x-dirledger-action': `${actionId}-blob` } });
    expect(await blob.text()).toBe('note');
    expect(await eventsOf(`${actionId}-blob`)).toEqual([]);
  });
});
