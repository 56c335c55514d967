import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { teeResponse, teeStream, type StreamChunk } from '../../src/capture/tee.ts';
import { parseConfig } from '../../src/config.ts';
import { startServer, until, type TestServer } from './helpers.ts';

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const line = (i: number) => `data: {"n":${i},"text":"é ${'x'.repeat(i)}"}\n\n`;

/** A real SSE upstream: each stream is written by the test, event by event, through `send` and `end`. */
class SseUpstream {
  server!: TestServer;
  private streams: ServerResponse[] = [];

  async start() {
    this.server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      response.flushHeaders();
      this.streams.push(response);
    });
  }
  get latest(): ServerResponse {
    return this.streams.at(-1)!;
  }
  send(text: string) {
    this.latest.write(text);
  }
  end() {
    this.latest.end();
  }
  async open(): Promise<Response> {
    const response = await fetch(`${this.server.origin}/events`, { headers: { accept: 'text/event-stream' } });
    await until(() => this.streams.length > 0, 'the upstream stream');
    return response;
  }
}

describe('teeStream over a real SSE upstream', () => {
  let upstream: SseUpstream;
  let chunks: StreamChunk[];
  const options = (over: Partial<Parameters<typeof teeStream>[1]> = {}) => ({
    cutoffMs: 60_000,
    payloadMaxBytes: 8_388_608,
    publish: (chunk: StreamChunk) => chunks.push(chunk),
    ...over,
  });

  beforeEach(async () => {
    upstream = new SseUpstream();
    await upstream.start();
    chunks = [];
  });
  afterEach(async () => {
    await upstream.server.stop();
  });

  it('a fully read stream is COMPLETE with the exact bytes, for the client and the ledger', async () => {
    const response = await upstream.open();
    const { client, recorded } = teeStream(response.body!, options());
    const reader = client.getReader();
    const received: Uint8Array[] = [];
    for (let i = 0; i < 5; i++) {
      upstream.send(line(i));
      const { value } = await reader.read();
      received.push(value!);
    }
    upstream.end();
    expect((await reader.read()).done).toBe(true);
    const sent = Buffer.from([0, 1, 2, 3, 4].map(line).join(''));
    expect(Buffer.concat(received)).toEqual(sent);
    const result = await recorded;
    expect(result).toMatchObject({ state: 'COMPLETE', size: sent.length, sha256: sha(sent), clientDisconnected: false });
    expect(result.bytes).toEqual(sent);
    expect(result.payload).toEqual({ state: 'COMPLETE', text: sent.toString('utf8') });
  });

  it('the client reads the end only once beforeClose is done; when it fails, the client gets its error instead of an end', async () => {
    const order: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const response = await upstream.open();
    const { client, recorded } = teeStream(
      response.body!,
      options({
        beforeClose: async (result) => {
          order.push(`beforeClose ${result.state}`);
          await released;
          order.push('recorded');
        },
      }),
    );
    const reader = client.getReader();
    upstream.send(line(1));
    expect(Buffer.from((await reader.read()).value!).toString()).toBe(line(1));
    upstream.end();
    const end = reader.read().then((r) => order.push(`client done ${r.done}`));
    await recorded;
    await until(() => order.length === 1, 'beforeClose called');
    expect(order).toEqual(['beforeClose COMPLETE']);
    release();
    await end;
    expect(order).toEqual(['beforeClose COMPLETE', 'recorded', 'client done true']);

    const failing = await upstream.open();
    const second = teeStream(
      failing.body!,
      options({
        beforeClose: async () => {
          throw new Error('the spool refused the record');
        },
      }),
    );
    const failingReader = second.client.getReader();
    upstream.send(line(2));
    await failingReader.read();
    upstream.end();
    await expect(failingReader.read()).rejects.toThrow('the spool refused the record');
    expect((await second.recorded).state).toBe('COMPLETE');
  });

  it('publishes every chunk in order with its offset, then the end with state and sha256', async () => {
    const response = await upstream.open();
    const { client, recorded } = teeStream(response.body!, options());
    const reading = new Response(client).arrayBuffer();
    for (let i = 0; i < 4; i++) {
      upstream.send(line(i));
      await until(() => chunks.length > i, `chunk ${i}`);
    }
    upstream.end();
    const body = Buffer.from(await reading);
    const result = await recorded;
    const data = chunks.filter((c): c is Extract<StreamChunk, { type: 'CHUNK' }> => c.type === 'CHUNK');
    expect(chunks.map((c) => c.sequence)).toEqual(chunks.map((_, i) => i));
    let offset = 0;
    for (const chunk of data) {
      expect(chunk.offset).toBe(offset);
      offset += chunk.bytes.length;
    }
    expect(Buffer.concat(data.map((c) => c.bytes))).toEqual(body);
    expect(chunks.at(-1)).toEqual({ type: 'END', sequence: chunks.length - 1, size: body.length, state: 'COMPLETE', sha256: sha(body) });
    expect(result.sha256).toBe(sha(body));
  });

  it('keeps reading after the client disconnects: a stream that then finishes is COMPLETE', async () => {
    const response = await upstream.open();
    const { client, recorded } = teeStream(response.body!, options());
    const reader = client.getReader();
    upstream.send(line(0));
    await reader.read();
    await reader.cancel('client went away');
    for (let i = 1; i < 4; i++) upstream.send(line(i));
    upstream.end();
    const result = await recorded;
    const sent = Buffer.from([0, 1, 2, 3].map(line).join(''));
    expect(result).toMatchObject({ state: 'COMPLETE', clientDisconnected: true, size: sent.length });
    expect(result.bytes).toEqual(sent);
  });

  it('client disconnects mid-stream and the stream outlives the cut-off: PARTIAL with every byte that arrived', async () => {
    const response = await upstream.open();
    const { client, recorded } = teeStream(response.body!, options({ cutoffMs: 2_000 }));
    const reader = client.getReader();
    upstream.send(line(0));
    upstream.send(line(1));
    const first = await reader.read();
    expect(first.done).toBe(false);
    await reader.cancel();
    // Bytes that arrive after the disconnect, before the cut-off, are still recorded.
    upstream.send(line(2));
    await until(() => chunks.some((c) => c.type === 'CHUNK' && Buffer.from(c.bytes).includes('"n":2')), 'the post-disconnect chunk');
    const result = await recorded;
    const arrived = Buffer.from([0, 1, 2].map(line).join(''));
    expect(result).toMatchObject({ state: 'PARTIAL', cut: 'CUTOFF', clientDisconnected: true, size: arrived.length, sha256: sha(arrived) });
    expect(result.bytes).toEqual(arrived);
    expect(result.payload).toEqual({ state: 'PARTIAL', text: arrived.toString('utf8') });
    expect(chunks.at(-1)).toMatchObject({ type: 'END', state: 'PARTIAL', cut: 'CUTOFF', size: arrived.length });
    // The upstream connection was let go after the cut-off.
    await until(() => upstream.latest.destroyed || upstream.latest.closed, 'the upstream to be released');
  });

  it('the cut-off is the STREAM_CUTOFF_MS setting (25 s by default)', async () => {
    expect(parseConfig({}).STREAM_CUTOFF_MS).toBe(25_000);
    const cutoffMs = parseConfig({ STREAM_CUTOFF_MS: '200' }).STREAM_CUTOFF_MS;
    const response = await upstream.open();
    const controller = new AbortController();
    const { client, recorded } = teeStream(response.body!, options({ cutoffMs, clientSignal: controller.signal }));
    const reader = client.getReader();
    upstream.send(line(7));
    await reader.read();
    // The door learns of the disconnect from its socket.
    controller.abort(new Error('socket closed'));
    await expect(reader.read()).rejects.toThrow('socket closed');
    const result = await recorded;
    expect(result).toMatchObject({ state: 'PARTIAL', cut: 'CUTOFF', clientDisconnected: true });
    expect(result.bytes).toEqual(Buffer.from(line(7)));
  });

  it('an upstream that breaks mid-stream is PARTIAL and the client sees the error', async () => {
    const response = await upstream.open();
    const { client, recorded } = teeStream(response.body!, options());
    const reader = client.getReader();
    upstream.send(line(0));
    await reader.read();
    upstream.latest.destroy();
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
    ).rejects.toThrow();
    const result = await recorded;
    expect(result).toMatchObject({ state: 'PARTIAL', cut: 'SOURCE_ERROR', size: Buffer.byteLength(line(0)) });
    expect(result.error).toBeTruthy();
  });

  it('past the payload limit the stream is MISSING with its size, and the client still gets every byte', async () => {
    const response = await upstream.open();
    const { client, recorded } = teeStream(response.body!, options({ payloadMaxBytes: 100 }));
    const reading = new Response(client).arrayBuffer();
    for (let i = 0; i < 10; i++) upstream.send(line(i));
    upstream.end();
    const body = Buffer.from(await reading);
    const result = await recorded;
    expect(body.length).toBeGreaterThan(100);
    expect(result).toMatchObject({ state: 'MISSING', size: body.length, bytes: null, sha256: sha(body), payload: { state: 'MISSING', size: body.length } });
  });

  it('teeResponse keeps status and headers for the client and records binary bytes exactly', async () => {
    const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x0a]);
    const { response, recorded } = teeResponse(
      new Response(bytes, { status: 201, headers: { 'content-type': 'application/octet-stream', 'x-trace': 'abc' } }),
      options(),
    );
    expect(response.status).toBe(201);
    expect(response.headers.get('x-trace')).toBe('abc');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
    expect(await recorded).toMatchObject({ state: 'COMPLETE', payload: { state: 'COMPLETE', base64: bytes.toString('base64') } });
    const empty = teeResponse(new Response(null, { status: 204 }), options());
    expect(await empty.recorded).toMatchObject({ state: 'COMPLETE', size: 0 });
  });
});
