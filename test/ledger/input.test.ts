// What PostgreSQL cannot store is refused at the door with the field named where the field cannot
// hold it (names, ids), stored escaped where it is content (url, headers, metadata), and an error
// message never carries a registered secret back to the caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const secret = 'sk-canary-7f3a9e21';
const event = (extra: Record<string, unknown>) => ({
  id: `in-${Math.random().toString(36).slice(2)}`,
  kind: 'TEST',
  direction: 'IN',
  actionId: 'a',
  occurredAt: '2026-11-30T00:00:00Z',
  ...extra,
});

describe('ledger input the database cannot hold', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { DIRLEDGER_SECRET_CANARY: secret });
  });
  afterAll(async () => t?.stop());

  async function post(events: unknown[]) {
    const response = await fetch(`${t.origin}/ledger/batches`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ collector: 'input', events }),
    });
    return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
  }

  it.each([
    ['a NUL in a text column', { tool: 'A\u0000B' }, 'events[0].tool'],
    ['an unpaired surrogate in payload text', { payload: { state: 'COMPLETE', text: 'x\ud800y' } }, 'events[0].payload.text'],
  ])('refuses %s with 400 naming the field, writing nothing', async (_name, extra, field) => {
    const actionId = `refused-${field}`;
    const { status, body } = await post([event({ actionId }), event({ actionId, ...extra })].reverse());
    expect(status).toBe(400);
    expect(body.error?.code).toBe('BAD_INPUT');
    expect(body.error?.message).toContain(field);
    expect(await t.db.prisma.ledgerEvent.count({ where: { actionId } })).toBe(0);
  });

  it.each([
    ['a NUL in a URL', { url: 'http://x/\u0000' }],
    ['a NUL and a lone surrogate in header values', { headers: { 'x-a': 'a\u0000', 'x-b': ['\udc00', 'ok'] } }],
    ['a NUL, lone surrogates and the escape mark inside metadata, keys included', { metadata: { deep: ['ok', 'bad\u0000', { 'k\ud800': '\ufdd0\\0' }] } }],
  ])('stores %s losslessly: the event reads back exactly (issue 15: content is never refused)', async (_name, extra) => {
    const id = `content-${Math.random().toString(36).slice(2)}`;
    const { status } = await post([event({ id, actionId: 'content', ...extra })]);
    expect(status).toBe(200);
    const r = await t.gql(`query($id: ID!) { event(id: $id) { url headers metadata } }`, { id });
    expect(r.errors).toBeUndefined();
    for (const [key, value] of Object.entries(extra)) expect(r.data.event[key]).toStrictEqual(value);
  });

  it('keeps a NUL byte in payload bytes (base64 or text), which are stored as bytes', async () => {
    const { status } = await post([event({ id: 'nul-bytes', actionId: 'b', payload: { state: 'COMPLETE', text: 'a\u0000b' } })]);
    expect(status).toBe(200);
    const row = await t.db.prisma.ledgerEvent.findUniqueOrThrow({ where: { id: 'nul-bytes' } });
    expect(row.payloadSize).toBe(3n);
  });

  it('never echoes a registered secret in an HTTP or GraphQL error', async () => {
    const http = await post([event({ direction: secret, kind: `${secret}`.repeat(40) })]);
    expect(http.status).toBe(400);
    expect(JSON.stringify(http.body)).not.toContain(secret);
    expect(JSON.stringify(http.body)).toContain('[CANARY]');
    const gql = await t.gql(`mutation($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`, {
      input: { collector: secret, events: [{ ...event({}), kind: secret.repeat(40), direction: 'IN' }] },
    });
    expect(gql.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    expect(JSON.stringify(gql)).not.toContain(secret);
  });
});
