// The ingest door's byte budget over real HTTP: batches beyond INGEST_INFLIGHT_MAX_BYTES wait unread
// and are all acknowledged and stored; one that waits past INGEST_WAIT_MAX_MS is refused with 503 and
// Retry-After, and none of its events is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { event } from '../helpers/ledger.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const BUDGET = 4096;
const WAIT_MS = 1500;

async function post(t: TestApp, body: BodyInit, headers: Record<string, string> = {}) {
  const response = await fetch(`${t.origin}/ledger/batches`, {
    method: 'POST',
    headers: { ...t.auth, 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const eventCount = async (sql: RawSql, prefix: string) =>
  (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger_event WHERE id LIKE $1', [`${prefix}%`]))[0]!.n;

describe.each(databaseKinds)('the ingest budget on %s', (kind) => {
  let t: TestApp;
  let sql: RawSql;
  beforeAll(async () => {
    t = await startTestApp(kind, { INGEST_INFLIGHT_MAX_BYTES: String(BUDGET), INGEST_WAIT_MAX_MS: String(WAIT_MS) });
    sql = await rawSql(t.db);
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  /** Posts a chunked batch holding event `id` and keeps its body open (the whole budget, once admitted) until `finish()`. */
  async function holdTheGate(id: string) {
    let finish!: () => void;
    const opened = new Promise<void>((resolve) => (finish = resolve));
    const encoder = new TextEncoder();
    const slow = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode(`{"collector":"budget","events":[${JSON.stringify(event(id))}`));
        await opened;
        controller.enqueue(encoder.encode(']}'));
        controller.close();
      },
    });
    const first = post(t, slow);
    while (t.app.services.ingestGate.load.active === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    return { first, finish };
  }

  it('makes batches past the budget wait, and acknowledges and stores every one', async () => {
    // 24 batches of ~1.5 KB at once: two fit the budget at a time, the rest wait.
    const bodies = Array.from({ length: 24 }, (_, b) =>
      JSON.stringify({
        collector: 'budget',
        events: Array.from({ length: 4 }, (_, i) => event(`wait-${b}-${i}`, { payload: { state: 'COMPLETE', text: 'x'.repeat(300) } })),
      }),
    );
    expect(bodies[0]!.length).toBeGreaterThan(BUDGET / 3);
    const results = await Promise.all(bodies.map((body) => post(t, body)));
    expect(results.map((r) => r.status)).toEqual(bodies.map(() => 200));
    expect(results.reduce((n, r) => n + r.body.inserted, 0)).toBe(96);
    expect(await eventCount(sql, 'wait-')).toBe(96);
  });

  it('refuses a batch that waits past INGEST_WAIT_MAX_MS with 503 and Retry-After, writing none of it', async () => {
    // A body of unknown length (chunked) counts as the whole budget; it is held open until the other is refused.
    const { first, finish } = await holdTheGate('slow-1');
    const gate = t.app.services.ingestGate;
    expect(gate.load.bytes).toBe(BUDGET);
    const refused = await post(t, JSON.stringify({ collector: 'budget', events: [event('late-1')] }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(refused.body.error).toMatchObject({ code: 'SERVER_BUSY', retryAfterSeconds: 2 });
    expect(refused.body.error.message).toMatch(/nothing was read or written/);
    finish();
    expect((await first).status).toBe(200);
    expect(await eventCount(sql, 'late-')).toBe(0);
    expect(await eventCount(sql, 'slow-')).toBe(1);
    // Once the door is free again, the refused batch is taken as sent.
    expect((await post(t, JSON.stringify({ collector: 'budget', events: [event('late-1')] }))).status).toBe(200);
    expect(await eventCount(sql, 'late-')).toBe(1);
  });

  it('holds a GraphQL appendBatch to the same budget: it waits behind a held batch and is refused with SERVER_BUSY, writing none of it', async () => {
    const { first, finish } = await holdTheGate('held-1');
    const gate = t.app.services.ingestGate;
    const append = `mutation ($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`;
    const input = { collector: 'budget-gql', events: [event('gql-late-1', { payload: { state: 'COMPLETE', text: 'y'.repeat(200) } })] };
    const started = Date.now();
    const refused = await t.gql(append, { input });
    expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS - 100);
    expect(refused.data).toBeNull();
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'SERVER_BUSY', retryAfterSeconds: 2 });
    expect(refused.errors?.[0]?.message).toMatch(/nothing was read or written/);
    finish();
    expect((await first).status).toBe(200);
    expect(await eventCount(sql, 'gql-late-')).toBe(0);
    expect(gate.load).toEqual({ active: 0, bytes: 0, waiting: 0 });
    // With room again, the same batch is appended.
    const taken = await t.gql(append, { input });
    expect(taken.errors).toBeUndefined();
    expect(taken.data.appendBatch.inserted).toBe(1);
    expect(await eventCount(sql, 'gql-late-')).toBe(1);
  });
});
