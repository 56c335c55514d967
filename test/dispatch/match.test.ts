// LedgerEvent.matchesContract through the real transport: a dispatched call's OUT event against a
// call appended through POST /ledger/batches that claims the same contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareCalls } from '../../src/dispatch/match.ts';
import { graphql } from '../gql/index.ts';
import { readBody, startServer, type TestServer } from '../capture/helpers.ts';
import { databaseKinds } from '../helpers/database.ts';
import { startDispatchApp, type DispatchApp } from './helpers.ts';

const SECRET = 'canary-match-s3cr3t-5a4b3c';

const EventMatch = graphql(`
  query EventMatch($id: ID!) {
    event(id: $id) {
      id
      kind
      headers
      matchesContract {
        matches
        differences {
          part
          expected
          recorded
        }
      }
    }
  }
`);

describe('compareCalls (the pure core)', () => {
  const expected = { method: 'POST', url: 'http://h/x?a=1', headers: { 'Content-Type': 'application/json', 'x-api-key': '[K]' }, body: '{"a":1,"b":2}' };
  it('ignores header-name case, client-added headers, JSON key order and method case', () => {
    const recorded = {
      method: 'post',
      url: 'http://h/x?a=1',
      headers: { 'content-type': 'application/json', 'X-API-KEY': '[K]', 'user-agent': 'curl/8', 'content-length': '13', host: 'h' },
      body: '{ "b": 2, "a": 1 }',
    };
    expect(compareCalls(expected, recorded)).toEqual({ matches: true, differences: [] });
  });
  it('lists a missing contract header and a client header the contract sets', () => {
    const withAccept = { ...expected, headers: { ...expected.headers, accept: 'text/csv' } };
    const recorded = { ...expected, headers: { 'content-type': 'application/json', accept: '*/*' } };
    expect(compareCalls(withAccept, recorded).differences).toEqual([
      { part: 'header:accept', expected: 'text/csv', recorded: '*/*' },
      { part: 'header:x-api-key', expected: '[K]', recorded: null },
    ]);
  });
});

describe.each(databaseKinds)('LedgerEvent.matchesContract (%s)', (kind) => {
  let upstream: TestServer;
  let app: DispatchApp;
  const seen: Record<string, unknown>[] = [];
  let call: any;
  let sent: { q: string; n: number };

  beforeAll(async () => {
    upstream = await startServer(async (request, response) => {
      await readBody(request);
      seen.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
    app = await startDispatchApp(
      kind,
      [
        {
          name: 'UP_MATCH',
          way: {
            method: 'POST',
            url: `${upstream.origin}/items?q={{q}}`,
            headers: { 'X-Api-Key': '[UP_KEY]', 'x-trace': 'fixed' },
            body: { q: '{{q}}', n: '{{n}}' },
          },
          args: { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'] },
        },
      ],
      { DIRLEDGER_SECRET_UP_KEY: SECRET },
    );
    sent = { q: 'a b&c', n: 3 };
    const r = await app.post('/api/tools/UP_MATCH', sent);
    expect(r.body.outcome).toBe('OK');
    const events = await app.events(r.body.actionId);
    call = events.find((e) => e.kind === 'TOOL_CALL');
  });
  afterAll(async () => {
    await app?.stop();
    await upstream?.stop();
  });

  async function append(id: string, fields: Record<string, unknown>) {
    const event = {
      id,
      kind: 'TOOL_CALL',
      direction: 'OUT',
      actionId: `match-${id}`,
      tool: 'UP_MATCH',
      occurredAt: new Date().toISOString(),
      contract: { form: call.contractForm, sha256: call.contractSha256 },
      metadata: { args: sent },
      method: 'POST',
      url: call.url,
      headers: { 'content-type': 'application/json', 'x-api-key': SECRET, 'x-trace': 'fixed' },
      payload: { state: 'COMPLETE', text: JSON.stringify(sent) },
      ...fields,
    };
    const response = await fetch(`${app.origin}/ledger/batches`, {
      method: 'POST',
      headers: { ...app.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ collector: 'elsewhere', events: [event] }),
    });
    expect(response.status).toBe(200);
    const result = await app.op(EventMatch, { id });
    expect(result.errors).toBeUndefined();
    expect(JSON.stringify(result)).not.toContain(SECRET);
    return result.data!.event!;
  }

  it("a dispatched HTTP call's OUT event matches its contract, the secret header a name on both sides", async () => {
    expect(seen[0]!['x-api-key']).toBe(SECRET);
    const result = await app.op(EventMatch, { id: call.id });
    expect(result.errors).toBeUndefined();
    expect(result.data!.event!.matchesContract).toEqual({ matches: true, differences: [] });
    expect(result.data!.event!.headers).toMatchObject({ 'X-Api-Key': '[UP_KEY]' });
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it('events that are not outbound calls with a contract have no match (null)', async () => {
    const events = await app.events(call.actionId);
    for (const e of events.filter((x) => x.kind !== 'TOOL_CALL')) {
      const result = await app.op(EventMatch, { id: e.id });
      expect(result.data!.event!.matchesContract).toBeNull();
    }
    const noContract = await append('match-no-contract', { contract: undefined });
    expect(noContract.matchesContract).toBeNull();
  });

  it('the same call appended by another client (header case, client headers, secret value) matches', async () => {
    const e = await append('match-replay', {
      headers: { 'Content-Type': 'application/json', 'X-API-KEY': SECRET, 'X-Trace': 'fixed', 'user-agent': 'curl/8.5', 'content-length': '20', host: 'x' },
    });
    expect(e.headers).toMatchObject({ 'X-API-KEY': '[UP_KEY]' });
    expect(e.matchesContract).toEqual({ matches: true, differences: [] });
  });

  it('a call claiming the contract with another url, method, header and body does not match, and lists those parts', async () => {
    const e = await append('match-other', {
      method: 'PUT',
      url: `${upstream.origin}/items?q=other`,
      headers: { 'content-type': 'application/json', 'x-api-key': 'not-the-key', 'x-extra': '1' },
      payload: { state: 'COMPLETE', text: JSON.stringify({ q: 'a b&c', n: 4 }) },
    });
    const m = e.matchesContract!;
    expect(m.matches).toBe(false);
    expect(m.differences).toEqual([
      { part: 'method', expected: 'POST', recorded: 'PUT' },
      { part: 'url', expected: `${upstream.origin}/items?q=a%20b%26c`, recorded: `${upstream.origin}/items?q=other` },
      { part: 'header:x-api-key', expected: '[UP_KEY]', recorded: 'not-the-key' },
      { part: 'header:x-extra', expected: null, recorded: '1' },
      { part: 'header:x-trace', expected: 'fixed', recorded: null },
      // contract_version holds canonical JSON (keys sorted), so the runner renders n before q.
      { part: 'body', expected: JSON.stringify({ n: 3, q: 'a b&c' }), recorded: JSON.stringify({ q: 'a b&c', n: 4 }) },
    ]);
  });

  it('a hash that names no stored contract is a difference', async () => {
    const e = await append('match-unknown', { contract: { form: 'way', sha256: 'f'.repeat(64) } });
    expect(e.matchesContract).toEqual({
      matches: false,
      differences: [{ part: 'contract', expected: `a stored contract with sha256 ${'f'.repeat(64)}`, recorded: null }],
    });
  });
});
