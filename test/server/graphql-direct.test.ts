// A plain JSON query is answered through envelop without yoga's HTTP layer (src/doors/graphql-direct.ts):
// the same status, media type and body as yoga's own answer, and everything else left to yoga.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerDirect, regularMediaType } from '../../src/doors/graphql-direct.ts';
import { createGraphqlYoga } from '../../src/doors/graphql-http.ts';
import { createLogger } from '../../src/logger.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

async function post(t: TestApp, body: unknown, accept: string) {
  const r = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', accept, ...t.auth }, body: JSON.stringify(body) });
  return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
}

describe('GraphQL queries answered directly', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { GRAPHQL_MAX_DEPTH: '12' });
  });
  afterAll(async () => t?.stop());

  const cases: [string, unknown][] = [
    // Of a tool no event names: every read is recorded in the background, so a page of all events could change between the two answers.
    ['a read', { query: '{ events(first: 2, filter: { tool: ["no-such-tool"] }) { edges { cursor } pageInfo { hasNextPage } } }' }],
    ['a missing event', { query: 'query ($id: ID!) { event(id: $id) { id } }', variables: { id: 'nope' } }],
    ['a variable of the wrong type', { query: 'query ($n: Int) { events(first: $n) { edges { cursor } } }', variables: { n: 'x' } }],
    ['NUL in a name', { query: 'query ($t: String!) { events(filter: { tool: [$t] }) { edges { cursor } } }', variables: { t: 'a\u0000b' } }],
    ['over the page cap', { query: '{ events(first: 501) { edges { cursor } } }' }],
    ['too deep', { query: `{ event(id: "x") { ${'action { events { '.repeat(6)}id${' } }'.repeat(6)} } }` }],
    ['a syntax error', { query: '{ events(' }],
    ['an unknown field', { query: '{ nope }' }],
    ['an unknown operation name', { query: 'query A { __typename }', operationName: 'B' }],
  ];
  for (const accept of ['application/json', 'application/graphql-response+json']) {
    for (const [name, body] of cases) {
      it(`${name} (${accept}): the answer yoga gives`, async () => {
        const direct = await post(t, body, accept);
        // A charset parameter is declined by the direct path, so yoga answers the same request itself.
        const viaYoga = await post(t, body, `${accept}; charset=utf-8`);
        expect(direct).toEqual(viaYoga);
      });
    }
  }

  it('answers a plain query and leaves everything else to yoga', async () => {
    const yoga = createGraphqlYoga(t.config, t.app.services, createLogger('silent'));
    const ask = (params: unknown, headers: Record<string, string> = {}) =>
      answerDirect(
        yoga,
        new Request(t.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...headers } }),
        params,
        100,
      );
    const answered = await ask({ query: '{ __typename }' });
    expect(answered?.status).toBe(200);
    expect(await answered?.json()).toEqual({ data: { __typename: 'Query' } });
    expect(await ask({ query: 'mutation { __typename }' })).toBeUndefined();
    expect(await ask({ query: 'subscription { ledgerEvents { id } }' })).toBeUndefined();
    expect(await ask([{ query: '{ __typename }' }])).toBeUndefined();
    expect(await ask({ query: '{ __typename }', extra: 1 })).toBeUndefined();
    expect(await ask({ query: '{ __typename }', variables: [] })).toBeUndefined();
    expect(await ask({ query: '{ __typename }' }, { accept: 'text/event-stream' })).toBeUndefined();
    expect(await ask({ query: '{ __typename }' }, { 'content-type': 'application/graphql+json' })).toBeUndefined();
    expect(await ask({ query: '{ (' })).toBeUndefined();
  });

  it('answers a document it validated before the same way, and leaves one that failed validation to yoga every time', async () => {
    const yoga = createGraphqlYoga(t.config, t.app.services, createLogger('silent'));
    const ask = (params: unknown) =>
      answerDirect(yoga, new Request(t.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' } }), params, 100);
    const read = { query: 'query ($n: Int) { events(first: $n) { edges { cursor } } }' };
    const answers = [];
    for (const n of [1, 2, 501, 1]) {
      const answered = await ask({ ...read, variables: { n } });
      answers.push({ status: answered?.status, body: await answered?.json() });
    }
    expect(answers[3]).toEqual(answers[0]);
    expect(answers[2]!.body).toMatchObject({ errors: [{ message: expect.stringContaining('Invalid first') }] });
    const tooDeep = { query: `{ event(id: "x") { ${'action { events { '.repeat(6)}id${' } }'.repeat(6)} } }` };
    expect(await ask(tooDeep)).toBeUndefined();
    expect(await ask(tooDeep)).toBeUndefined();
    expect(await ask({ query: '{ nope }' })).toBeUndefined();
    expect(await ask({ query: '{ nope }' })).toBeUndefined();
  });

  it('takes the media type the client lists first, only when it is one of the two JSON ones', () => {
    const of = (accept?: string) => regularMediaType(new Request('http://x/', accept ? { headers: { accept } } : {}));
    expect(of('application/json')).toBe('application/json');
    expect(of('application/graphql-response+json, application/json')).toBe('application/graphql-response+json');
    expect(of(' Application/JSON ')).toBe('application/json');
    expect(of('text/event-stream, application/json')).toBeUndefined();
    expect(of('application/json; charset=utf-8')).toBeUndefined();
    expect(of('*/*')).toBeUndefined();
    expect(of()).toBeUndefined();
  });
});
