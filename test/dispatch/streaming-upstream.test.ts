// A streamed upstream answer streams through a dispatched call: a real SSE (and chunked NDJSON)
// upstream served here, dispatched through the REST door and the SSE door, watched through the
// GraphQL streamCapture subscription over graphql-ws. The ledger's branch reads on after the client
// disconnects, up to STREAM_CUTOFF_MS (short here), and stores what arrived as PARTIAL.
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until, writeSseEvents } from '../capture/helpers.ts';
import { streamQuery, waitFor, wsClient, wsSubscribe } from '../live/helpers.ts';
import { startDispatchApp, type DispatchApp } from './helpers.ts';
import { startMcpUpstream, type McpUpstream } from './mcp-upstream.ts';

const SECRET = 'canary-stream-s3cr3t-4e5f6a';

type Upstream = { url: string; server: Server; release(): void };

/**
 * `/sse?count&every`: events one every `every` ms, the secret in event 2; `/held`: one event, then
 * waits for release(); `/ndjson`: chunked lines; `/split`: the secret's first 9 bytes, then after
 * release() the rest of it.
 */
function upstream(): Promise<Upstream> {
  const waiting: (() => void)[] = [];
  const held = () => new Promise<void>((resolve) => waiting.push(resolve));
  const release = () => {
    for (const go of waiting.splice(0)) go();
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/held') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      void held().then(() => res.end('data: last\n\n'));
      return;
    }
    if (url.pathname === '/ndjson') {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"line":1}\n');
      void held().then(() => res.end('{"line":2}\n'));
      return;
    }
    if (url.pathname === '/split') {
      // The secret cut in two writes that arrive as two chunks: no chunk holds it whole.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const cut = 9;
      res.write(`data: {"key":"${SECRET.slice(0, cut)}`);
      void held().then(() => res.end(`${SECRET.slice(cut)}"}\n\ndata: done\n\n`));
      return;
    }
    writeSseEvents(req, res, Number(url.searchParams.get('count') ?? 5), Number(url.searchParams.get('every') ?? 10), (i) =>
      i === 2 ? `,"key":"${SECRET}"` : '',
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, release })),
  );
}

const bytesOf = (chunks: any[]) => Buffer.concat(chunks.map((c) => Buffer.from(c.base64, 'base64')));
const redacted = (text: string) => text.split(SECRET).join('[UPSTREAM_KEY]');

/** Reads an event-stream body into its events. */
function sseEvents(text: string) {
  return text
    .trim()
    .split('\n\n')
    .map(
      (block) =>
        Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])) as Record<string, string>,
    );
}

describe('streamed upstream answers through dispatch', () => {
  let app: DispatchApp;
  let up: Upstream;
  let mcp: McpUpstream;
  const args = { type: 'object', properties: { count: { type: 'integer' }, every: { type: 'integer' } } };
  beforeAll(async () => {
    up = await upstream();
    mcp = await startMcpUpstream(SECRET);
    app = await startDispatchApp(
      'pglite',
      [
        { name: 'STREAM_SSE', way: { method: 'GET', url: `${up.url}/sse?count={{count}}&every={{every}}` }, args },
        { name: 'STREAM_HELD', way: { method: 'GET', url: `${up.url}/held` } },
        { name: 'STREAM_NDJSON', way: { method: 'GET', url: `${up.url}/ndjson` } },
        { name: 'STREAM_SPLIT', way: { method: 'GET', url: `${up.url}/split` } },
        {
          name: 'MCP_STDIO_SLOW',
          way: {
            method: 'MCP',
            server: `${process.execPath} ${path.join(import.meta.dirname, 'fixtures', 'mcp-stdio-upstream.mjs')}`,
            tool: 'slow',
            arguments: { ms: '{{ms}}' },
          },
          args: { type: 'object', properties: { ms: { type: 'integer' } } },
        },
        {
          name: 'MCP_SLOW',
          way: { method: 'MCP', server: mcp.url, tool: 'slow', arguments: { ms: '{{ms}}' } },
          args: { type: 'object', properties: { ms: { type: 'integer' } } },
        },
      ],
      // AUTHORITY off: this file is about streaming, not credentials.
      { STREAM_CUTOFF_MS: '300', DIRLEDGER_SECRET_UPSTREAM_KEY: SECRET, AUTHORITY: 'off' },
    );
  });
  afterAll(async () => {
    up?.server.close();
    await app?.stop();
    await mcp?.close();
  });

  /** The four events of the exchange, once the answer OUT has been written. */
  async function fourEvents(actionId: string) {
    let events: any[] = [];
    for (let i = 0; i < 100; i++) {
      events = await app.events(actionId);
      if (events.some((e) => e.kind === 'RESPONSE' && e.direction === 'OUT') && events.some((e) => e.kind === 'TOOL_RESULT')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const find = (kind: string, direction: string) => events.find((e) => e.kind === kind && e.direction === direction);
    return { events, request: find('REQUEST', 'IN'), call: find('TOOL_CALL', 'OUT'), result: find('TOOL_RESULT', 'IN'), answer: find('RESPONSE', 'OUT') };
  }

  /** A graphql-ws streamCapture subscriber on `actionId`, waiting before the call starts. */
  async function watchStream(actionId: string) {
    const client = wsClient(app.url, app.token);
    const sub = wsSubscribe(client, streamQuery, { actionId }, 'streamCapture');
    await waitFor(() => app.app.services.streams.size >= 1, 'the subscriber waiting');
    return { client, sub };
  }

  const blobText = async (sha: string) => (await app.app.services.ledger.readBlob(sha))!.toString('utf8');

  /** POSTs `args` to the REST door of `tool` under `actionId`. */
  const callTool = (tool: string, actionId: string, args: unknown, signal?: AbortSignal) =>
    fetch(`${app.origin}/api/tools/${tool}`, {
      method: 'POST',
      headers: { ...app.auth, 'content-type': 'application/json', 'x-dirledger-action': actionId },
      body: JSON.stringify(args),
      ...(signal && { signal }),
    });

  it('REST: the upstream chunks reach the client before the upstream has finished', async () => {
    const response = await fetch(`${app.origin}/api/tools/STREAM_HELD`, {
      method: 'POST',
      headers: { ...app.auth, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toBe('data: first\n\n');
    up.release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    expect(rest).toBe('data: last\n\n');
    const { events, result, answer } = await fourEvents(response.headers.get('x-dirledger-action')!);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
    expect(await blobText(result.payloadSha256)).toBe('data: first\n\ndata: last\n\n');
    expect(answer.payloadSha256).toBe(result.payloadSha256);
  });

  it('REST: a chunked upstream without a length streams too, with its own content type', async () => {
    const response = await fetch(`${app.origin}/api/tools/STREAM_NDJSON`, {
      method: 'POST',
      headers: { ...app.auth, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.headers.get('content-type')).toBe('application/x-ndjson');
    const reader = response.body!.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe('{"line":1}\n');
    up.release();
    while (!(await reader.read()).done);
    const { result, answer } = await fourEvents(response.headers.get('x-dirledger-action')!);
    expect(result).toMatchObject({ payloadState: 'COMPLETE', metadata: { stream: true } });
    expect(answer).toMatchObject({ payloadState: 'COMPLETE', payloadSha256: result.payloadSha256 });
  });

  it('REST + streamCapture: a finished stream is COMPLETE; chunks and the stored events are redacted and hash alike', async () => {
    const actionId = 'rest-stream-complete';
    const { client, sub } = await watchStream(actionId);
    const response = await callTool('STREAM_SSE', actionId, { count: 5, every: 5 });
    const text = await response.text();
    await sub.done;
    await client.dispose();
    expect(text).not.toContain(SECRET);
    expect(text).toContain('[UPSTREAM_KEY]');
    expect(text.match(/^data: /gm)).toHaveLength(5);
    const final = sub.events.at(-1);
    expect(final).toMatchObject({ final: true, state: 'COMPLETE', cut: null });
    expect(bytesOf(sub.events).toString()).toBe(redacted(text));
    const { events, call, result, answer } = await fourEvents(actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
    expect(call).toMatchObject({ method: 'GET', tool: 'STREAM_SSE' });
    expect(result).toMatchObject({ payloadState: 'COMPLETE', status: '200', metadata: { stream: true, clientDisconnected: false } });
    expect(result.payloadSha256).toBe(final.sha256);
    expect(result.redactedSecrets).toContain('UPSTREAM_KEY');
    expect(answer).toMatchObject({ payloadState: 'COMPLETE', metadata: { door: 'REST', stream: true } });
    expect(await blobText(answer.payloadSha256)).toBe(text);
    expect(await blobText(result.payloadSha256)).not.toContain(SECRET);
  });

  it('REST + streamCapture: a secret split across two chunks reaches neither the client nor a subscriber', async () => {
    const actionId = 'rest-stream-split-secret';
    const { client, sub } = await watchStream(actionId);
    const response = await callTool('STREAM_SPLIT', actionId, {});
    const reader = response.body!.getReader();
    // What cannot begin the secret goes on at once; the secret's first bytes wait for the rest.
    expect(Buffer.from((await reader.read()).value!).toString()).toBe('data: {"key":"');
    await waitFor(() => sub.events.length >= 1, 'the first chunk published');
    up.release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    await sub.done;
    await client.dispose();
    expect(rest).toBe('[UPSTREAM_KEY]"}\n\ndata: done\n\n');
    const published = bytesOf(sub.events).toString();
    expect(published).toBe('data: {"key":"[UPSTREAM_KEY]"}\n\ndata: done\n\n');
    for (const part of [SECRET, SECRET.slice(0, 9), SECRET.slice(9)]) {
      expect(published).not.toContain(part);
      expect(rest).not.toContain(part);
    }
    const { result, answer } = await fourEvents(actionId);
    expect(result.redactedSecrets).toEqual(['UPSTREAM_KEY']);
    expect(result.payloadSha256).toBe(sub.events.at(-1).sha256);
    expect(await blobText(answer.payloadSha256)).toBe(`data: {"key":"${rest}`);
  });

  it('REST + streamCapture: the client disconnects mid-stream; the final chunk and the stored event say PARTIAL with the blob hash', async () => {
    const actionId = 'rest-stream-partial';
    const { client, sub } = await watchStream(actionId);
    const abort = new AbortController();
    const response = await callTool('STREAM_SSE', actionId, { count: 100_000, every: 10 }, abort.signal);
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes('"n":1}')) received += Buffer.from((await reader.read()).value!).toString();
    abort.abort();
    await sub.done;
    await client.dispose();
    const final = sub.events.at(-1);
    expect(final).toMatchObject({ final: true, state: 'PARTIAL', cut: 'CUTOFF' });
    expect(final.sha256).toMatch(/^[0-9a-f]{64}$/);
    const { events, result, answer } = await fourEvents(actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`).sort()).toEqual(['REQUEST/IN', 'RESPONSE/OUT', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN']);
    expect(result).toMatchObject({ payloadState: 'PARTIAL', metadata: { stream: true, clientDisconnected: true, cut: 'CUTOFF', code: 'CANCELLED' } });
    expect(result.payloadSha256).toBe(final.sha256);
    // The ledger read on after the client left: it holds more than the client was sent.
    expect(Number(result.payloadSize)).toBe(final.totalSize - SECRET.length + '[UPSTREAM_KEY]'.length);
    expect(Number(result.payloadSize)).toBeGreaterThan(Number(answer.payloadSize));
    // The answer OUT ends when the client's branch is cut: what was on its way to the client, PARTIAL.
    expect(answer).toMatchObject({ payloadState: 'PARTIAL', metadata: { door: 'REST', stream: true } });
    // The door's answer and the call's result agree the client went away (issue 15 part 6): not a broken source.
    expect(answer.metadata).toMatchObject({ clientDisconnected: true });
    expect(answer.metadata.cut).toBeUndefined();
    expect(received.startsWith(await blobText(answer.payloadSha256)) || (await blobText(answer.payloadSha256)).startsWith(received)).toBe(true);
  });

  it('SSE door: accepted, upstream, one chunk event per upstream piece, then the result with the stored hash', async () => {
    const actionId = 'sse-door-stream';
    const { client, sub } = await watchStream(actionId);
    const response = await fetch(`${app.origin}/api/dispatch`, {
      method: 'POST',
      headers: { ...app.auth, 'content-type': 'application/json', accept: 'text/event-stream', 'x-dirledger-action': actionId },
      body: JSON.stringify({ tool: 'STREAM_SSE', args: { count: 4, every: 5 } }),
    });
    const text = await response.text();
    await sub.done;
    await client.dispose();
    const events = sseEvents(text);
    expect(events[0]!.event).toBe('accepted');
    expect(events[1]).toMatchObject({ event: 'upstream' });
    expect(JSON.parse(events[1]!.data!)).toEqual({ status: 200, contentType: 'text/event-stream' });
    expect(events.at(-1)!.event).toBe('result');
    const chunks = events.filter((e) => e.event === 'chunk').map((e) => JSON.parse(e.data!));
    expect(chunks.map((c) => c.sequence)).toEqual(chunks.map((_, i) => i));
    const upstreamText = chunks.map((c) => c.text).join('');
    expect(upstreamText.match(/^data: /gm)).toHaveLength(4);
    expect(upstreamText).not.toContain(SECRET);
    const result = JSON.parse(events.at(-1)!.data!);
    expect(result).toMatchObject({
      tool: 'STREAM_SSE',
      outcome: 'OK',
      status: 200,
      stream: { state: 'COMPLETE', size: Buffer.byteLength(upstreamText.replace('[UPSTREAM_KEY]', SECRET)), clientDisconnected: false },
    });
    // streamCapture carries the upstream's bytes (what the ledger stores as the call's response), not the door's envelope.
    expect(bytesOf(sub.events).toString()).toBe(upstreamText);
    expect(sub.events.at(-1)).toMatchObject({ final: true, state: 'COMPLETE', sha256: result.stream.sha256 });
    const recorded = await fourEvents(actionId);
    expect(recorded.events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
    expect(recorded.result.payloadSha256).toBe(result.stream.sha256);
    expect(recorded.answer).toMatchObject({ payloadState: 'COMPLETE', metadata: { door: 'SSE', stream: true } });
    expect(await blobText(recorded.answer.payloadSha256)).toBe(text);
  });

  it('SSE door: a client that disconnects mid-stream leaves a PARTIAL response IN and a PARTIAL final chunk', async () => {
    const actionId = 'sse-door-partial';
    const { client, sub } = await watchStream(actionId);
    const abort = new AbortController();
    const response = await fetch(`${app.origin}/api/dispatch`, {
      method: 'POST',
      headers: { ...app.auth, 'content-type': 'application/json', accept: 'text/event-stream', 'x-dirledger-action': actionId },
      body: JSON.stringify({ tool: 'STREAM_SSE', args: { count: 100_000, every: 10 } }),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes('event: chunk')) received += Buffer.from((await reader.read()).value!).toString();
    abort.abort();
    await sub.done;
    await client.dispose();
    const final = sub.events.at(-1);
    expect(final).toMatchObject({ final: true, state: 'PARTIAL', cut: 'CUTOFF' });
    const { result, answer } = await fourEvents(actionId);
    expect(result).toMatchObject({ payloadState: 'PARTIAL', payloadSha256: final.sha256, metadata: { clientDisconnected: true, cut: 'CUTOFF' } });
    expect(answer).toMatchObject({ payloadState: 'PARTIAL', metadata: { door: 'SSE' } });
  });

  /** The MCP SDK's tools/call exchange of one action: its response IN, once written. */
  async function toolsCallAnswer(actionId: string) {
    for (let i = 0; i < 100; i++) {
      const events = await app.events(actionId);
      for (const request of events.filter((e) => e.kind === 'REQUEST' && e.direction === 'OUT' && e.method === 'POST')) {
        const response = events.find((e) => e.kind === 'RESPONSE' && e.direction === 'IN' && e.metadata.exchange === request.metadata.exchange);
        if (response && (await blobText(request.payloadSha256)).includes('"tools/call"')) return { events, response };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no tools/call exchange recorded for ${actionId}`);
  }

  it("REST + streamCapture: an MCP tool's event-stream answer is published as it arrives, the secret as its name", async () => {
    const actionId = 'mcp-stream-capture';
    const { client, sub } = await watchStream(actionId);
    const response = await callTool('MCP_SLOW', actionId, { ms: 30 });
    expect(await response.json()).toMatchObject({ outcome: 'OK', output: { slept: 30 } });
    await sub.done;
    await client.dispose();
    const final = sub.events.at(-1);
    expect(final).toMatchObject({ final: true, state: 'COMPLETE', cut: null });
    expect(sub.events.length).toBeGreaterThanOrEqual(2);
    const published = bytesOf(sub.events).toString();
    expect(published).toContain('started, sleeping 30 ms with [UPSTREAM_KEY]');
    expect(published).not.toContain(SECRET);
    // What subscribers saw is what the ledger stored, hash and bytes.
    const { response: stored } = await toolsCallAnswer(actionId);
    expect(stored).toMatchObject({ payloadState: 'COMPLETE', payloadSha256: final.sha256, metadata: { via: 'MCP' } });
    expect(await blobText(stored.payloadSha256)).toBe(published);
    expect(stored.redactedSecrets).toContain('UPSTREAM_KEY');
  });

  it('REST + streamCapture: an MCP call whose caller left is cut at the cut-off, its stream final PARTIAL with the cut', async () => {
    const actionId = 'mcp-stream-cutoff';
    const { client, sub } = await watchStream(actionId);
    const gone = new AbortController();
    const sent = callTool('MCP_SLOW', actionId, { ms: 10_000 }, gone.signal);
    await waitFor(() => sub.events.length >= 1, 'the notification published');
    gone.abort();
    await expect(sent).rejects.toThrow();
    await sub.done;
    await client.dispose();
    expect(sub.events.at(-1)).toMatchObject({ final: true, state: 'PARTIAL', cut: 'CUTOFF' });
    expect(bytesOf(sub.events).toString()).toContain('started, sleeping 10000 ms');
    const { response: stored } = await toolsCallAnswer(actionId);
    expect(stored).toMatchObject({ payloadState: 'PARTIAL', payloadSha256: sub.events.at(-1).sha256 });
    // Nobody waits for the answer of a caller who left: its TOOL_RESULT is written with the next durable write or after the linger.
    const toolResult = async () => (await app.events(actionId)).find((e) => e.kind === 'TOOL_RESULT');
    await until(async () => (await toolResult()) !== undefined, 'the TOOL_RESULT recorded');
    expect(await toolResult()).toMatchObject({ status: 'ERROR', metadata: { code: 'CANCELLED' } });
  });

  it('REST + streamCapture: an MCP server over stdio publishes its stdout as it arrives; cut at the cut-off, the final chunk and the stored stdout say PARTIAL', async () => {
    const actionId = 'mcp-stdio-stream-cutoff';
    const { client, sub } = await watchStream(actionId);
    const gone = new AbortController();
    const sent = callTool('MCP_STDIO_SLOW', actionId, { ms: 10_000 }, gone.signal);
    await waitFor(() => bytesOf(sub.events).toString().includes('started, sleeping 10000 ms'), 'the notification published');
    gone.abort();
    await expect(sent).rejects.toThrow();
    await sub.done;
    await client.dispose();
    const final = sub.events.at(-1);
    expect(final).toMatchObject({ final: true, state: 'PARTIAL', cut: 'CUTOFF' });
    const { events } = await fourEvents(actionId);
    const stdout = events.find((e) => e.kind === 'RESPONSE' && e.direction === 'IN')!;
    expect(stdout).toMatchObject({ method: 'STDIO', payloadState: 'PARTIAL', payloadSha256: final.sha256, metadata: { capture: 'stdio' } });
    expect(await blobText(stdout.payloadSha256)).toBe(bytesOf(sub.events).toString());
    expect(events.find((e) => e.kind === 'TOOL_RESULT')).toMatchObject({ status: 'ERROR', metadata: { code: 'CANCELLED' } });
  });

  it('a door that answers JSON still reads the stream whole into the DispatchResult', async () => {
    const r = await app.post('/api/dispatch', { tool: 'STREAM_SSE', args: { count: 3, every: 5 } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ outcome: 'OK', status: 200 });
    expect(r.body.outputText.match(/^data: /gm)).toHaveLength(3);
    expect(r.body.stream).toBeUndefined();
  });
});
