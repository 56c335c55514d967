// The seed's read routes over HTTP against the same reads over /graphql: the same answer after JSON
// normalisation, never recorded, a task-scoped token narrowed alike, and hostile input refused with a 4xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerReadDocuments, type LedgerReadField } from '../../src/doors/ledger-read-routes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { batch, event } from '../helpers/ledger.ts';

let t: TestApp;
const day = '2026-11-30';
beforeAll(async () => {
  t = await startTestApp('pglite');
  await t.app.services.ledger.append(
    batch('read-routes', [
      event('rr1', { actionId: 'rr-act', tool: 'ECHO', session: 's1', model: 'm1', inputTokens: 10, outputTokens: 5, costUsd: '0.25' }),
      event('rr2', { actionId: 'rr-act', kind: 'TOOL_RESULT', direction: 'OUT', tool: 'ECHO', session: 's1', model: 'm2', costUsd: '0.5' }),
      event('rr3', { actionId: 'rr-other', tool: 'CLOCK', session: 's2', task: 'task-a', occurredAt: `${day}T13:30:00.000Z`, inputTokens: 7 }),
    ]),
  );
});
afterAll(async () => t?.stop());

/** Key order and number spelling aside: the JSON value itself. */
const normalised = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

async function viaGraphql(field: LedgerReadField, variables: Record<string, unknown>, token = t.token) {
  const response = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: ledgerReadDocuments[field], variables }),
  });
  const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data![field];
}

async function viaHttp(path: string, token = t.token): Promise<{ status: number; body: any }> {
  const response = await fetch(`${t.origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: await response.json() };
}

describe('HTTP read routes answer what GraphQL answers', () => {
  it.each([
    ['/api/ledger/row/rr1', 'event', { id: 'rr1' }],
    ['/api/ledger/action/rr-act', 'action', { id: 'rr-act' }],
    ['/api/ledger/counts?by=tool', 'ledgerCounts', { by: 'TOOL' }],
    ['/api/ledger/counts?by=HOUR&session=s1,s2', 'ledgerCounts', { by: 'HOUR', filter: { session: ['s1', 's2'] } }],
    [
      `/api/ledger/counts?by=MODEL&tool=ECHO&tool=CLOCK&occurredFrom=${day}T00:00:00Z`,
      'ledgerCounts',
      { by: 'MODEL', filter: { tool: ['ECHO', 'CLOCK'], occurredFrom: `${day}T00:00:00Z` } },
    ],
    ['/api/ledger/snapshot?tool=ECHO,CLOCK', 'ledgerSnapshot', { filter: { tool: ['ECHO', 'CLOCK'] } }],
    ['/api/ledger/ask?q=cost%20by%20tool', 'ask', { question: 'cost by tool' }],
    ['/api/ledger/ask?q=how%20many%20events%20of%20ECHO', 'ask', { question: 'how many events of ECHO' }],
  ] as const)('GET %s = %s', async (path, field, variables) => {
    const http = await viaHttp(path);
    expect(http.status).toBe(200);
    const graphql = await viaGraphql(field, variables);
    const strip = (v: any) => (field === 'ledgerSnapshot' ? { ...v, asOf: undefined } : v);
    expect(normalised(strip(http.body))).toEqual(normalised(strip(graphql)));
  });

  it('one event whole and every event of an action; the window snapshot counts distinct tools, models and sessions', async () => {
    const row = (await viaHttp('/api/ledger/row/rr1')).body;
    expect(row).toMatchObject({ id: 'rr1', actionId: 'rr-act', toolName: 'ECHO', costUsd: '0.25', payload: { text: '{"event":"rr1"}' } });
    expect((await viaHttp('/api/ledger/action/rr-act')).body.events.map((e: { id: string }) => e.id)).toEqual(['rr1', 'rr2']);
    const snapshot = (await viaHttp('/api/ledger/snapshot?tool=ECHO,CLOCK')).body;
    expect(snapshot).toMatchObject({
      events: 3,
      distinctTools: 2,
      distinctModels: 2,
      distinctSessions: 2,
      inputTokens: '17',
      outputTokens: '5',
      costUsd: '0.75',
    });
    const recent = (await viaHttp(`/api/ledger/snapshot?window=30m&tool=ECHO,CLOCK&occurredTo=${day}T13:00:00Z`)).body;
    expect(recent).toMatchObject({ window: '30m', events: 0, distinctTools: 0, costUsd: '0' });
    expect(Date.parse(recent.filter.occurredFrom)).toBeGreaterThan(Date.now() - 30 * 60_000 - 60_000);
  });

  it('a task-scoped token reads its task alone, over HTTP as over GraphQL', async () => {
    const scoped = t.mint('read = task', 'task = task-a');
    const http = await viaHttp('/api/ledger/counts?by=TOOL', scoped);
    expect(http.body).toEqual(normalised(await viaGraphql('ledgerCounts', { by: 'TOOL' }, scoped)));
    expect(http.body.map((c: { key: string }) => c.key)).toEqual(['CLOCK']);
    expect((await viaHttp('/api/ledger/row/rr1', scoped)).status).toBe(404);
  });

  it('never recorded; unknown ids are 404; no token is 401', async () => {
    await t.app.services.writer.flush();
    const before = await t.app.services.db.prisma.ledgerEvent.count();
    expect((await viaHttp('/api/ledger/row/no-such-event')).status).toBe(404);
    expect((await viaHttp('/api/ledger/action/no-such-action')).body.error.code).toBe('NOT_FOUND');
    expect((await fetch(`${t.origin}/api/ledger/counts?by=TOOL`)).status).toBe(401);
    await t.app.services.writer.flush();
    expect(await t.app.services.db.prisma.ledgerEvent.count()).toBe(before + 1); // the 401's REFUSAL alone
  });

  it('hostile input is a 4xx naming what was wrong', async () => {
    const cases: [string, number, RegExp][] = [
      ['/api/ledger/row/a%00b', 400, /id: expected plain text, got a NUL/],
      ['/api/ledger/row/%ED%A0%80', 400, /malformed escape/],
      ['/api/ledger/row/%E0%A4%A', 400, /malformed escape/],
      [`/api/ledger/row/${'x'.repeat(5000)}`, 404, /No event/],
      ['/api/ledger/counts?by=NOPE', 400, /LedgerGrouping/],
      ['/api/ledger/counts', 400, /Missing by/],
      ['/api/ledger/counts?by=TOOL&tool=a%00', 400, /NUL/],
      ['/api/ledger/counts?by=TOOL&occurredFrom=yesterday', 400, /occurredFrom|DateTime/],
      ['/api/ledger/snapshot?window=forever', 400, /Invalid window/],
      ['/api/ledger/snapshot?window=99999999d', 400, /Invalid window/],
      [`/api/ledger/ask?q=${'w'.repeat(2000)}`, 400, /1 to 1000 characters/],
      ['/api/ledger/ask?q=a%00b', 400, /q: expected plain text, got a NUL/],
      ['/api/ledger/ask', 400, /Missing q/],
      ['/api/ledger/counts/extra?by=TOOL', 400, /Unexpected path segment/],
      [`/api/ledger/snapshot?tool=x&tool=${'y,'.repeat(200)}`, 400, /at most 100 values/],
    ];
    for (const [path, status, message] of cases) {
      const { status: got, body } = await viaHttp(path);
      expect(got, path.slice(0, 60)).toBe(status);
      expect(body.error.message, path.slice(0, 60)).toMatch(message);
    }
  });
});
