// streamCapture: a real SSE upstream on a local port, read through the real tee, whose chunk
// callbacks publish into services.streams; subscribers over graphql-ws see the chunks as they
// arrive, a late one gets the chunks so far first, and a client disconnect ends with PARTIAL.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teeResponse } from '../../src/capture/tee.ts';
import { writeSseEvents } from '../capture/helpers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { streamQuery, waitFor, wsClient, wsSubscribe } from './helpers.ts';

/** An SSE upstream: `count` events, one every `everyMs`; `secret` is written into event 2. */
function sseUpstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const secret = url.searchParams.get('secret');
    writeSseEvents(req, res, Number(url.searchParams.get('count') ?? 5), Number(url.searchParams.get('every') ?? 20), (i) =>
      i === 2 && secret ? `,"key":"${secret}"` : '',
    );
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server })));
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const bytesOf = (chunks: any[]) => Buffer.concat(chunks.map((c) => Buffer.from(c.base64, 'base64')));

describe('streamCapture', () => {
  let t: TestApp;
  let upstream: Awaited<ReturnType<typeof sseUpstream>>;
  const secret = 'sk-live-0123456789';
  beforeAll(async () => {
    t = await startTestApp('pglite', { DIRLEDGER_SECRET_UPSTREAM_KEY: secret });
    upstream = await sseUpstream();
  });
  afterAll(async () => {
    upstream?.server.close();
    await t?.stop();
  });

  const tee = (actionId: string, response: Response, cutoffMs = 25_000) =>
    teeResponse(response, { cutoffMs, payloadMaxBytes: 8_388_608, publish: (chunk) => t.app.services.streams.publish(actionId, chunk) });

  it('delivers the chunks as they arrive, then a final COMPLETE chunk with the stored hash; a late subscriber gets them all', async () => {
    const client = wsClient(t.url, t.token);
    const early = wsSubscribe(client, streamQuery, { actionId: 'act-complete' }, 'streamCapture');
    await waitFor(() => t.app.services.streams.size === 1, 'the subscriber waiting');
    const { response, recorded } = tee('act-complete', await fetch(`${upstream.url}?count=6&every=15&secret=${secret}`));
    const clientText = await response.text();
    const result = await recorded;
    await early.done;
    expect(result.state).toBe('COMPLETE');
    expect(early.events.length).toBeGreaterThan(1);
    expect(early.events.map((c) => c.sequence)).toEqual(early.events.map((_, i) => i));
    const final = early.events.at(-1);
    expect(final).toMatchObject({ final: true, state: 'COMPLETE', totalSize: Buffer.byteLength(clientText), cut: null });
    // What leaves is redacted; the final hash is the stored blob's, as Ledger.append would store it.
    const redacted = Buffer.from(clientText.split(secret).join('[UPSTREAM_KEY]'));
    expect(bytesOf(early.events)).toEqual(redacted);
    expect(final.sha256).toBe(sha(redacted));
    const stored = await t.app.services.ledger.append({
      collector: 'streams-test',
      events: [{ id: 'stream-complete', kind: 'RESPONSE', direction: 'IN', actionId: 'act-complete', occurredAt: new Date(), payload: result.payload }],
    });
    const row = await t.app.services.db.prisma.ledgerEvent.findUnique({ where: { id: 'stream-complete' } });
    expect(stored.inserted).toBe(1);
    expect(row!.payloadSha256).toBe(final.sha256);
    for (const c of early.events) if (!c.final) expect(c.offset + c.size).toBeLessThanOrEqual(final.totalSize);

    const late = wsSubscribe(client, streamQuery, { actionId: 'act-complete' }, 'streamCapture');
    await late.done;
    expect(late.events).toEqual(early.events);
    await client.dispose();
  });

  it('a client that disconnects mid-stream ends with a final PARTIAL chunk; a late subscriber gets the chunks so far first', async () => {
    const client = wsClient(t.url, t.token);
    const { response, recorded } = tee('act-partial', await fetch(`${upstream.url}?count=1000&every=10`), 300);
    const reader = response.body!.getReader();
    await reader.read();
    await reader.read();
    const late = wsSubscribe(client, streamQuery, { actionId: 'act-partial' }, 'streamCapture');
    await waitFor(() => late.events.length >= 2, 'the chunks so far');
    expect(late.events[0].sequence).toBe(0);
    await reader.cancel();
    const result = await recorded;
    await late.done;
    expect(result).toMatchObject({ state: 'PARTIAL', cut: 'CUTOFF', clientDisconnected: true });
    const final = late.events.at(-1);
    expect(final).toMatchObject({ final: true, state: 'PARTIAL', cut: 'CUTOFF', sha256: result.sha256, totalSize: result.size });
    expect(late.events.map((c) => c.sequence)).toEqual(late.events.map((_, i) => i));
    expect(sha(bytesOf(late.events))).toBe(result.sha256);
    await client.dispose();
  });

  it('a stream nobody watched: a late subscriber reads what an early one read (split secret, invalid UTF-8, NUL), ending with the stored hash', async () => {
    const base64 = Buffer.from(secret).toString('base64');
    const parts = [
      Buffer.from(`data: {"key":"${secret.slice(0, 5)}`),
      Buffer.concat([Buffer.from(`${secret.slice(5)}"}\n\n`), Buffer.from([0x00, 0xff, 0xc3])]),
      Buffer.from(`data: ${base64.slice(0, 3)}`),
      Buffer.from(`${base64.slice(3)}\u0000\n\n`),
    ];
    const body = () =>
      new Response(
        new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(new Uint8Array(part));
            controller.close();
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    const client = wsClient(t.url, t.token);
    const before = t.app.services.streams.size;
    const early = wsSubscribe(client, streamQuery, { actionId: 'act-watched' }, 'streamCapture');
    await waitFor(() => t.app.services.streams.size === before + 1, 'the subscriber waiting');
    const watched = tee('act-watched', body());
    await watched.response.arrayBuffer();
    await early.done;
    const unwatched = tee('act-unwatched', body());
    const clientBytes = Buffer.from(await unwatched.response.arrayBuffer());
    const result = await unwatched.recorded;
    expect(clientBytes).toEqual(Buffer.concat(parts));
    await t.app.services.ledger.append({
      collector: 'streams-test',
      events: [{ id: 'stream-unwatched', kind: 'RESPONSE', direction: 'IN', actionId: 'act-unwatched', occurredAt: new Date(), payload: result.payload }],
    });
    const row = await t.app.services.db.prisma.ledgerEvent.findUnique({ where: { id: 'stream-unwatched' } });
    const late = wsSubscribe(client, streamQuery, { actionId: 'act-unwatched' }, 'streamCapture');
    await late.done;
    expect(late.errors).toEqual([]);
    expect(late.events.map(({ actionId: _, ...c }) => c)).toEqual(early.events.map(({ actionId: _, ...c }) => c));
    const final = late.events.at(-1);
    expect(final).toMatchObject({ final: true, state: 'COMPLETE', totalSize: clientBytes.length, sha256: row!.payloadSha256 });
    const read = bytesOf(late.events);
    expect(read.includes(secret)).toBe(false);
    expect(read.includes(base64)).toBe(false);
    expect(read).toEqual(Buffer.from(clientBytes.toString('latin1').replaceAll(secret, '[UPSTREAM_KEY]').replaceAll(base64, '[UPSTREAM_KEY]'), 'latin1'));
    await client.dispose();
  });

  it('forgets a stream nobody published to once its only subscriber leaves', async () => {
    const client = wsClient(t.url, t.token);
    const before = t.app.services.streams.size;
    const sub = wsSubscribe(client, streamQuery, { actionId: 'act-never' }, 'streamCapture');
    await waitFor(() => t.app.services.streams.size === before + 1, 'waiting entry');
    sub.stop();
    await waitFor(() => t.app.services.streams.size === before, 'entry forgotten');
    await client.dispose();
  });
});
