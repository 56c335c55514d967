import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureExchange, useOutboundCapture, type BoundaryServices } from '../../src/capture/boundary.ts';
import { LedgerWriter } from '../../src/capture/writer.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestLedger, type TestLedger } from '../helpers/ledger.ts';
import { rawSql } from '../helpers/sql.ts';
import { readBody, startServer, type TestServer } from './helpers.ts';

type TestApp = { services: BoundaryServices; ledger: TestLedger; release: () => Promise<void> };

let upstream: TestServer;
const apps: TestApp[] = [];

async function app(): Promise<TestApp> {
  const ledger = await createTestLedger('pglite');
  const services: BoundaryServices = {
    writer: new LedgerWriter(ledger.ledger, { batchMaxDelayMs: 5 }),
    logger: createLogger('silent'),
    config: { PAYLOAD_MAX_BYTES: 1_048_576, STREAM_CUTOFF_MS: 1_000 },
  };
  const made = { services, ledger, release: useOutboundCapture(services) };
  apps.push(made);
  return made;
}

beforeAll(async () => {
  upstream = await startServer(async (request, response) => {
    response.end(await readBody(request));
  });
});

afterAll(async () => {
  for (const { services, ledger, release } of apps) {
    await services.writer.stop(1_000);
    await release();
    await ledger.stop();
  }
  await upstream.stop();
});

describe('boundary capture with several apps in one process', () => {
  it("records each door request's outbound calls in its own app, over keep-alive connections the other app opened", async () => {
    const [a, b] = [await app(), await app()];
    const order = [a, b, b, a, b, a];
    // One after another, so each call reuses the pooled connection the previous one (maybe the other app's) opened.
    for (const [i, target] of order.entries()) {
      const answer = await captureExchange(
        target.services,
        {
          door: 'REST',
          request: { method: 'POST', url: 'http://door.test/api/tools/T', headers: {}, body: Buffer.from(`call ${i}`) },
          invocation: { actionId: `act-${i}` },
          tool: 'T',
        },
        async () => new Response(await (await fetch(`${upstream.origin}/echo`, { method: 'POST', body: `call ${i}` })).text()),
      );
      expect(await answer.text()).toBe(`call ${i}`);
    }
    for (const target of [a, b]) {
      await target.services.writer.flush();
      const sql = await rawSql(target.ledger.db);
      const rows = await sql.query<{ action_id: string; kind: string; direction: string; capture: string }>(
        `SELECT action_id, kind, direction, metadata->>'capture' AS capture FROM ledger_event ORDER BY action_id, metadata->>'capture', kind`,
      );
      await sql.close();
      const own = order.flatMap((t, i) => (t === target ? [`act-${i}`] : []));
      expect(rows).toEqual(
        own.flatMap((id) => [
          { action_id: id, kind: 'REQUEST', direction: 'IN', capture: 'boundary' },
          { action_id: id, kind: 'RESPONSE', direction: 'OUT', capture: 'boundary' },
          { action_id: id, kind: 'REQUEST', direction: 'OUT', capture: 'outbound' },
          { action_id: id, kind: 'RESPONSE', direction: 'IN', capture: 'outbound' },
        ]),
      );
    }
  });
});

describe('an answer OUT once recorded', () => {
  it('is not changed by the Response the client gets (its content-length is the adapter’s, not the record’s)', async () => {
    const target = await app();
    const enqueued: { event: { id: string }; at: string }[] = [];
    const enqueue = target.services.writer.enqueue.bind(target.services.writer);
    target.services.writer.enqueue = (...args: Parameters<typeof enqueue>) => {
      for (const event of [args[0]].flat()) enqueued.push({ event, at: JSON.stringify(event) });
      return enqueue(...args);
    };
    const answer = await captureExchange(
      target.services,
      { door: 'REST', request: { method: 'GET', url: 'http://door.test/plain', headers: {}, body: null }, invocation: { actionId: 'act-plain' } },
      async () => new Response('plain body', { status: 201, headers: { 'content-type': 'text/plain', 'x-answer': 'kept' } }),
    );
    expect(await answer.text()).toBe('plain body');
    expect(answer.headers.get('x-answer')).toBe('kept');
    const out = enqueued.find(({ event }) => event.id === 'act-plain:door:answer');
    expect(out).toBeDefined();
    expect(JSON.stringify(out!.event)).toBe(out!.at);
    await target.services.writer.flush();
    const sql = await rawSql(target.ledger.db);
    const rows = await sql.query<{ headers: unknown }>(`SELECT headers FROM ledger_event WHERE id = 'act-plain:door:answer'`);
    await sql.close();
    expect(rows).toEqual([{ headers: JSON.parse(out!.at).headers }]);
  });
});
