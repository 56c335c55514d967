// Relay's global object identification through the real HTTP door: every Node type refetched by
// node(id:) answers what its own root field answers, with the same authority (a task-scoped token gets
// null for another task's event, action, blob and task, as event(id:) etc. give it); a malformed id
// or a type that is not a Node is BAD_USER_INPUT.
import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/ledger/input.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { modelDirectory } from '../model/helpers.ts';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const WAY = { method: 'CODE', language: 'javascript', code: 'export default async (args) => args;' };

describe.each(databaseKinds)('node(id:) on %s', (kind) => {
  let app: TestApp;
  let dir: string;
  let tokens: { t1: string; t2: string; none: string };

  async function gqlAs(token: string, query: string, variables: Record<string, unknown> = {}): Promise<{ data?: any; errors?: any[] }> {
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as any;
  }

  const event = (id: string, task: string, extra: Partial<EventInput> = {}): EventInput => ({
    id,
    kind: 'TOOL_CALL',
    direction: 'OUT',
    actionId: `act-${id}`,
    tool: 'ECHO',
    task,
    occurredAt: new Date('2026-12-01T10:00:00.000Z'),
    payload: { state: 'NONE' },
    ...extra,
  });

  beforeAll(async () => {
    dir = await modelDirectory('http://127.0.0.1:9');
    await writeFile(path.join(dir, 'tool.json'), JSON.stringify([{ name: 'ECHO', description: 'Echoes', way: JSON.stringify(WAY), kind: 'test' }]));
    await writeFile(path.join(dir, 'skill.csv'), 'name,description\nsay-it-back,Repeat what was said\n');
    app = await startTestApp(kind, { DIRECTORY_DIR: dir, DIRECTORY_WATCH_MS: '0' });
    tokens = { t1: app.mint('read = task', 'task = T-1'), t2: app.mint('read = task', 'task = T-2'), none: app.mint('read = none') };
    await app.app.services.ledger.append({
      collector: 'node-test',
      events: [
        event('e1', 'T-1', {
          payload: { state: 'COMPLETE', text: 'only T-1 sent this' },
          contract: { form: 'way: http', sha256: sha('not stored') },
        }),
        event('e2', 'T-2', { payload: { state: 'COMPLETE', text: 'only T-2 sent this' } }),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const refetch = `query ($id: ID!) { node(id: $id) { __typename nodeId
    ... on LedgerEvent { id task payload { text } }
    ... on Action { id events { id } }
    ... on Blob { sha256 text }
    ... on Task { id calls { edges { node { id } } } }
    ... on Tool { name runnable toolEvents: events(first: 5) { edges { node { id } } } }
    ... on Entry { name type }
    ... on Model { name provider }
    ... on RecordedContract { form sha256 json }
  } }`;

  it('every Node type: the nodeId read from the object refetches the same object', async () => {
    const q = `{
      event(id: "e1") { nodeId id task payload { text } action { nodeId id } payload { nodeId sha256 } }
      task(id: "T-1") { nodeId id }
      tool(name: "ECHO") { nodeId name runnable }
      row(name: "say-it-back", type: "skill") { ... on Entry { nodeId name type } }
      model(name: "fake-gpt") { nodeId name provider }
    }`;
    const direct = await app.gql(q);
    expect(direct.errors).toBeUndefined();
    const d = direct.data;
    const cases: [string, string, Record<string, unknown>][] = [
      [d.event.nodeId, 'LedgerEvent', { id: 'e1', task: 'T-1', payload: { text: 'only T-1 sent this' } }],
      [d.event.action.nodeId, 'Action', { id: 'act-e1', events: [{ id: 'e1' }] }],
      [d.event.payload.nodeId, 'Blob', { sha256: sha('only T-1 sent this'), text: 'only T-1 sent this' }],
      [d.task.nodeId, 'Task', { id: 'T-1', calls: { edges: [{ node: { id: 'act-e1' } }] } }],
      [d.tool.nodeId, 'Tool', { name: 'ECHO', runnable: true, toolEvents: { edges: [{ node: { id: 'e1' } }, { node: { id: 'e2' } }] } }],
      [d.row.nodeId, 'Entry', { name: 'say-it-back', type: 'skill' }],
      [d.model.nodeId, 'Model', { name: 'fake-gpt', provider: 'openai' }],
    ];
    for (const [nodeId, typename, fields] of cases) {
      expect(Buffer.from(nodeId, 'base64').toString().startsWith(`${typename}:`)).toBe(true);
      const r = await app.gql(refetch, { id: nodeId });
      expect(r.errors, typename).toBeUndefined();
      expect(r.data.node).toEqual({ __typename: typename, nodeId, ...fields });
    }
  });

  it('an id that names nothing is null; a contract version refetches while its hash is stored', async () => {
    for (const id of [b64('LedgerEvent:no-such'), b64('Action:no-such'), b64('Task:no-such'), b64('Tool:tool:NOPE'), b64('Model:nope')]) {
      expect(await app.gql(refetch, { id })).toEqual({ data: { node: null } });
    }
    // say-it-back is an Entry: as a Tool it is not that object.
    expect(await app.gql(refetch, { id: b64('Tool:skill:say-it-back') })).toEqual({ data: { node: null } });
    const contract = await app.gql(`{ event(id: "e1") { contract { nodeId form sha256 } } }`);
    expect(contract.data.event.contract).toMatchObject({ form: 'way: http', sha256: sha('not stored') });
    // e1 names a hash no contract was stored under: it reads as absent, as RecordedContract.json says.
    expect(await app.gql(refetch, { id: contract.data.event.contract.nodeId })).toEqual({ data: { node: null } });
    // A way's hash is a stored contract version: refetched with its JSON.
    const way = (await app.gql(`{ tool(name: "ECHO") { ways { way sha256 json } } }`)).data.tool.ways[0];
    const id = b64(`RecordedContract:${way.sha256}:${way.way}`);
    expect((await app.gql(refetch, { id })).data.node).toEqual({
      __typename: 'RecordedContract',
      nodeId: id,
      form: way.way,
      sha256: way.sha256,
      json: way.json,
    });
  });

  it("authority: a task-scoped token refetches its task's objects and gets null for another task's, as from the direct fields", async () => {
    const ids = (await app.gql(`{ event(id: "e2") { nodeId action { nodeId } payload { nodeId } } task(id: "T-2") { nodeId } }`)).data;
    const theirs = [ids.event.nodeId, ids.event.action.nodeId, ids.event.payload.nodeId, ids.task.nodeId];
    for (const id of theirs) {
      expect(await gqlAs(tokens.t1, refetch, { id })).toEqual({ data: { node: null } });
      expect((await gqlAs(tokens.t2, refetch, { id })).data.node).not.toBeNull();
    }
    const direct = await gqlAs(
      tokens.t1,
      `{ event(id: "e2") { id } action(id: "act-e2") { id } blob(sha256: "${sha('only T-2 sent this')}") { sha256 } task(id: "T-2") { id } }`,
    );
    expect(direct).toEqual({ data: { event: null, action: null, blob: null, task: null } });
    // Through a Tool refetched by id, its events are still the token's task's only.
    const tool = (await app.gql(`{ tool(name: "ECHO") { nodeId } }`)).data.tool.nodeId;
    expect((await gqlAs(tokens.t1, refetch, { id: tool })).data.node.toolEvents.edges).toEqual([{ node: { id: 'e1' } }]);
    // read = none is refused, as event(id:) is.
    const refused = await gqlAs(tokens.none, refetch, { id: ids.event.nodeId });
    expect(refused.data).toEqual({ node: null });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'read' });
  });

  it('a malformed id, or one naming a type that is not a Node, is BAD_USER_INPUT', async () => {
    for (const id of [
      'not base64!',
      b64('no colon'),
      b64('LedgerEvent:'),
      b64(':e1'),
      b64('Query:x'),
      b64('LedgerFilter:x'),
      'TGVkZ2VyRXZlbnQ6ZTE',
      '\u0000',
    ]) {
      const r = await app.gql(refetch, { id });
      expect(r.data?.node ?? null, id).toBeNull();
      expect(r.errors?.[0]?.extensions?.code, id).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.message, id).toMatch(/^Invalid \$?id: expected /);
    }
  });
});
