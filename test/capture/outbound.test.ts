import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { request as undiciRequest, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runInInvocation, withoutOutboundCapture } from '../../src/context/request.ts';
import { installOutboundCapture, normaliseHeaders, type OutboundCapture } from '../../src/capture/outbound.ts';
import { LedgerWriter } from '../../src/capture/writer.ts';
import type { EventInput } from '../../src/ledger/input.ts';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import { databaseKinds } from '../helpers/database.ts';
import { createTestLedger } from '../helpers/ledger.ts';
import { rawSql } from '../helpers/sql.ts';
import { readBody, startServer, until, type TestServer } from './helpers.ts';

const PAYLOAD_MAX = 1_048_576;

let upstream: TestServer;
let excludedServer: TestServer;
let capture: OutboundCapture;
let recorded: EventInput[] = [];
let sink: (event: EventInput) => Promise<void> | void = (event) => void recorded.push(event);

const payloadBytes = (event: EventInput) => {
  const p = event.payload;
  if (p.text !== undefined) return Buffer.from(p.text, 'utf8');
  if (p.base64 !== undefined) return Buffer.from(p.base64, 'base64');
  return null;
};
const invoke = <T>(actionId: string, fn: () => Promise<T>) => runInInvocation({ door: 'DISPATCH', actionId, session: 'sess', task: 'task-1' }, fn);
const exchangeOf = (actionId: string) => recorded.filter((e) => e.actionId === actionId);

beforeAll(async () => {
  upstream = await startServer(async (request, response) => {
    const url = new URL(request.url!, 'http://x');
    const body = await readBody(request);
    if (url.pathname === '/echo') {
      response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/octet-stream', 'x-echo': 'yes', 'set-cookie': ['a=1', 'b=2'] });
      response.end(body);
    } else if (url.pathname === '/stream') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 5; i++) {
        response.write(`data: part ${i}\n\n`);
        await sleep(5);
      }
      response.end();
    } else if (url.pathname === '/deploy') {
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ size: body.length, sha256: createHash('sha256').update(body).digest('hex') }));
    } else if (url.pathname === '/large') {
      response.end(Buffer.alloc(PAYLOAD_MAX + 10, 0x61));
    } else {
      response.writeHead(404).end('nope');
    }
  });
  excludedServer = await startServer((_request, response) => response.end('object store'));
  capture = installOutboundCapture({ record: (event) => sink(event), payloadMaxBytes: PAYLOAD_MAX, excludeOrigins: [excludedServer.origin] });
});

afterAll(async () => {
  await capture.uninstall();
  await upstream.stop();
  await excludedServer.stop();
});

beforeEach(() => {
  recorded = [];
  sink = (event) => void recorded.push(event);
});

describe('outbound capture through the global dispatcher', () => {
  it("Node's built-in fetch goes through it: exactly two events per exchange, identical bytes, headers, status", async () => {
    const body = JSON.stringify({ hello: 'wörld' });
    const answer = await invoke('act-text', async () => {
      const response = await fetch(`${upstream.origin}/echo?q=1`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-test': 'one' }, body });
      return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
    });
    await until(() => exchangeOf('act-text').length === 2, 'two events');
    const [out, back] = exchangeOf('act-text');
    expect(out).toMatchObject({
      kind: 'REQUEST',
      direction: 'OUT',
      method: 'POST',
      url: `${upstream.origin}/echo?q=1`,
      session: 'sess',
      task: 'task-1',
      headers: { 'content-type': 'application/json', 'x-test': 'one' },
      payload: { state: 'COMPLETE', text: body },
      metadata: { capture: 'outbound', door: 'DISPATCH' },
    });
    expect(back).toMatchObject({
      kind: 'RESPONSE',
      direction: 'IN',
      status: '200',
      method: 'POST',
      url: `${upstream.origin}/echo?q=1`,
      headers: { 'x-echo': 'yes', 'set-cookie': ['a=1', 'b=2'] },
      payload: { state: 'COMPLETE' },
    });
    expect(answer.status).toBe(200);
    expect(payloadBytes(back!)).toEqual(answer.bytes);
    expect((out!.metadata as { exchange: string }).exchange).toBe((back!.metadata as { exchange: string }).exchange);
    expect(out!.id).not.toBe(back!.id);
    expect(recorded).toHaveLength(2);
    expect(capture.stats().errors).toBe(0);
  });

  it('records binary bodies byte for byte, request streamed or not', async () => {
    const bytes = randomBytes(70_000);
    bytes[0] = 0xff;
    const answer = await invoke('act-binary', async () => {
      const response = await fetch(`${upstream.origin}/echo`, { method: 'PUT', body: bytes });
      return Buffer.from(await response.arrayBuffer());
    });
    const streamedBody = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 1000));
        controller.enqueue(bytes.subarray(1000));
        controller.close();
      },
    });
    await invoke('act-binary-stream', async () => {
      const response = await fetch(`${upstream.origin}/echo`, { method: 'POST', body: streamedBody, duplex: 'half' } as RequestInit);
      await response.arrayBuffer();
    });
    await until(() => exchangeOf('act-binary').length === 2 && exchangeOf('act-binary-stream').length === 2, 'both exchanges');
    expect(answer).toEqual(bytes);
    for (const id of ['act-binary', 'act-binary-stream']) {
      const [out, back] = exchangeOf(id);
      expect(out!.payload.base64).toBeDefined();
      expect(payloadBytes(out!)).toEqual(bytes);
      expect(payloadBytes(back!)).toEqual(bytes);
    }
  });

  it('captures a streamed response whole, and a GET without a body as NONE', async () => {
    const text = await invoke('act-stream', async () => {
      const response = await fetch(`${upstream.origin}/stream`);
      let all = '';
      const decoder = new TextDecoder();
      const reader = response.body!.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) all += decoder.decode(r.value, { stream: true });
      return all;
    });
    await until(() => exchangeOf('act-stream').length === 2, 'two events');
    const [out, back] = exchangeOf('act-stream');
    expect(out!.payload).toEqual({ state: 'NONE' });
    expect(text).toBe([0, 1, 2, 3, 4].map((i) => `data: part ${i}\n\n`).join(''));
    expect(back!.payload).toEqual({ state: 'COMPLETE', text });
  });

  it("undici's own fetch and request are captured too", async () => {
    await invoke('act-undici', async () => {
      await (await undiciFetch(`${upstream.origin}/echo`, { method: 'POST', body: 'via undici fetch' })).text();
      const { body } = await undiciRequest(`${upstream.origin}/echo`, { method: 'POST', body: 'via undici request', headers: { 'x-raw': 'r' } });
      await body.text();
    });
    await until(() => exchangeOf('act-undici').length === 4, 'four events');
    const bodies = exchangeOf('act-undici').map((e) => e.payload.text);
    expect(bodies).toEqual(expect.arrayContaining(['via undici fetch', 'via undici request']));
    expect(exchangeOf('act-undici').find((e) => e.headers?.['x-raw'])).toBeTruthy();
  });

  it('records a file sent as the body (a deploy) by reference: ARTIFACT with its file URL, size and hash, its bytes not copied', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-deploy-'));
    try {
      const file = path.join(dir, 'site.js');
      const bytes = randomBytes(300_000);
      await writeFile(file, bytes);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const received = await invoke('act-deploy', async () => {
        const { body } = await undiciRequest(`${upstream.origin}/deploy`, { method: 'PUT', body: createReadStream(file) });
        return body.json();
      });
      expect(received).toEqual({ size: bytes.length, sha256 }); // the upstream got every byte
      await until(() => exchangeOf('act-deploy').length === 2, 'two events');
      const [out, back] = exchangeOf('act-deploy');
      expect(out!.payload).toEqual({ state: 'ARTIFACT', artifactUri: pathToFileURL(file).href, size: bytes.length, artifactSha256: sha256 });
      // The answer is not a deployed file: its bytes are kept as always.
      expect(back).toMatchObject({ status: '201', payload: { state: 'COMPLETE', text: JSON.stringify(received) } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('records nothing outside an invocation, with capture off, or for an excluded origin', async () => {
    await (await fetch(`${upstream.origin}/echo`, { method: 'POST', body: 'outside' })).text();
    await invoke('act-off', () => withoutOutboundCapture(async () => (await fetch(`${upstream.origin}/echo`, { method: 'POST', body: 'runner' })).text()));
    await runInInvocation({ door: 'DISPATCH', actionId: 'act-off-2', captureOutbound: false }, async () => (await fetch(`${upstream.origin}/echo`)).text());
    await invoke('act-excluded', async () => (await fetch(`${excludedServer.origin}/bucket/key`)).text());
    // A captured exchange after them, so anything they had recorded would have arrived first.
    await invoke('act-marker', async () => (await fetch(`${upstream.origin}/echo`)).text());
    await until(() => exchangeOf('act-marker').length === 2, 'the marker exchange');
    expect(recorded.map((e) => e.actionId)).toEqual(['act-marker', 'act-marker']);
  });

  it('keeps concurrent exchanges of different invocations apart', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `act-par-${i}`);
    await Promise.all(ids.map((id) => invoke(id, async () => (await fetch(`${upstream.origin}/echo`, { method: 'POST', body: id })).text())));
    await until(() => recorded.length === 24, '24 events');
    for (const id of ids) {
      const events = exchangeOf(id);
      expect(events.map((e) => [e.kind, e.payload.text])).toEqual([
        ['REQUEST', id],
        ['RESPONSE', id],
      ]);
    }
  });

  it('records each exchange in the async context it started in, also on a keep-alive connection another request opened', async () => {
    // undici calls back in the context of the request that opened the pooled socket; the app an
    // event belongs to is read from the recorder's context, so it must be the exchange's own.
    const app = new AsyncLocalStorage<string>();
    const seen: string[] = [];
    sink = (event) => void seen.push(`${event.actionId} ${event.kind} in ${app.getStore()}`);
    for (const name of ['first', 'second', 'third']) {
      await app.run(name, () => invoke(`act-${name}`, async () => (await fetch(`${upstream.origin}/echo`, { method: 'POST', body: name })).text()));
    }
    await until(() => seen.length === 6, 'six events');
    expect(seen).toEqual(['first', 'second', 'third'].flatMap((name) => [`act-${name} REQUEST in ${name}`, `act-${name} RESPONSE in ${name}`]));
  });

  it('records a refused connection as a request and an ERROR response, and the caller still gets its error', async () => {
    const closed = await startServer(() => {});
    const origin = closed.origin;
    await closed.stop();
    await expect(invoke('act-refused', () => fetch(`${origin}/x`, { method: 'POST', body: 'lost' }))).rejects.toThrow();
    await until(() => exchangeOf('act-refused').length === 2, 'two events');
    const [out, back] = exchangeOf('act-refused');
    // The request is recorded whole before it is sent; the ERROR response says it never got an answer.
    expect(out).toMatchObject({ kind: 'REQUEST', payload: { state: 'COMPLETE', text: 'lost' } });
    expect(back).toMatchObject({ kind: 'RESPONSE', status: 'ERROR', payload: { state: 'NONE' } });
    expect((back!.metadata as { error: string }).error).toMatch(/ECONNREFUSED|connect/i);
  });

  it('records a body past the payload limit as MISSING with its size', async () => {
    const size = await invoke('act-large', async () => (await (await fetch(`${upstream.origin}/large`)).arrayBuffer()).byteLength);
    await until(() => exchangeOf('act-large').length === 2, 'two events');
    expect(exchangeOf('act-large')[1]!.payload).toEqual({ state: 'MISSING', size });
  });

  it('slows the caller, not the recording, when the recorder waits for room', async () => {
    let release!: () => void;
    const room = new Promise<void>((resolve) => (release = resolve));
    sink = (event) => {
      recorded.push(event);
      return event.kind === 'RESPONSE' ? room : undefined;
    };
    let done = false;
    const call = invoke('act-slowed', async () => {
      const text = await (await fetch(`${upstream.origin}/echo`, { method: 'POST', body: 'wait' })).text();
      done = true;
      return text;
    });
    await until(() => exchangeOf('act-slowed').length === 2, 'both events recorded');
    await sleep(20);
    expect(done).toBe(false);
    release();
    expect(await call).toBe('wait');
  });

  it('sends every request only once its REQUEST/OUT is recorded, the same bytes, and nothing when the spool refuses it', async () => {
    const arrivals: string[] = [];
    const target = await startServer(async (request, response) => {
      arrivals.push(`${request.url} ${(await readBody(request)).toString()}`);
      response.end('ok');
    });
    try {
      // fetch hands undici every body as a stream (here a string, a ReadableStream); undici's request a buffer.
      const streamed = () =>
        new ReadableStream<Uint8Array>({
          start: (c) => {
            c.enqueue(Buffer.from('two '));
            c.enqueue(Buffer.from('parts'));
            c.close();
          },
        });
      const senders: [string, () => Promise<string>][] = [
        ['fetch-text', async () => (await fetch(`${target.origin}/fetch-text`, { method: 'POST', body: 'one' })).text()],
        [
          'fetch-stream',
          async () => (await fetch(`${target.origin}/fetch-stream`, { method: 'POST', body: streamed(), duplex: 'half' } as RequestInit)).text(),
        ],
        ['request', async () => (await undiciRequest(`${target.origin}/request`, { method: 'POST', body: Buffer.from('three') })).body.text()],
      ];
      for (const [name, send] of senders) {
        let release!: () => void;
        const durable = new Promise<void>((resolve) => (release = resolve));
        sink = (event) => {
          recorded.push(event);
          return event.kind === 'REQUEST' ? durable : undefined;
        };
        const call = invoke(`act-before-${name}`, send);
        await until(() => exchangeOf(`act-before-${name}`).length === 1, 'the request event');
        await sleep(50);
        expect(arrivals, name).toEqual([]);
        release();
        expect(await call).toBe('ok');
        const [out] = exchangeOf(`act-before-${name}`);
        expect(arrivals.splice(0)).toEqual([`/${name} ${out!.payload.text}`]);
        expect(out!.payload.state).toBe('COMPLETE');
      }

      sink = (event) => {
        recorded.push(event);
        return Promise.reject(new DomainError(ErrorCode.SPOOL_UNAVAILABLE, 'ENOSPC', { retryAfterSeconds: 1 }));
      };
      const refused = await invoke('act-refused', () => fetch(`${target.origin}/second`, { method: 'POST', body: 'never' })).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(TypeError);
      expect(((refused as TypeError).cause as DomainError).code).toBe(ErrorCode.SPOOL_UNAVAILABLE);
      const viaRequest = await invoke('act-refused-2', () => undiciRequest(`${target.origin}/third`, { method: 'PUT', body: Buffer.from('three') })).catch(
        (e: unknown) => e,
      );
      expect((viaRequest as DomainError).code).toBe(ErrorCode.SPOOL_UNAVAILABLE);
      await sleep(50);
      expect(arrivals).toEqual([]);
      expect(exchangeOf('act-refused').map((e) => e.kind)).toEqual(['REQUEST']);
    } finally {
      await target.stop();
    }
  });

  it('refuses a body over the limit unsent, and one whose source fails, each recorded with why', async () => {
    const arrivals: string[] = [];
    const target = await startServer(async (request, response) => {
      arrivals.push(request.url!);
      await readBody(request);
      response.end('ok');
    });
    try {
      const big = Buffer.alloc(PAYLOAD_MAX + 1, 0x62);
      const asStream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < 4; i++) c.enqueue(big.subarray(0, PAYLOAD_MAX / 2));
          c.close();
        },
      });
      const viaFetch = await invoke('act-big-stream', () =>
        fetch(`${target.origin}/big`, { method: 'POST', body: asStream, duplex: 'half' } as RequestInit),
      ).catch((e: unknown) => e);
      expect(((viaFetch as TypeError).cause as DomainError).code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
      const viaRequest = await invoke('act-big-bytes', () => undiciRequest(`${target.origin}/big`, { method: 'PUT', body: big })).catch((e: unknown) => e);
      expect(viaRequest).toBeInstanceOf(DomainError);
      expect((viaRequest as DomainError).message).toBe(`An outbound request body is larger than ${PAYLOAD_MAX} bytes (PAYLOAD_MAX_BYTES); it was not sent.`);

      const failing = Readable.from(
        (async function* () {
          yield Buffer.from('half a body');
          throw new Error('the source broke');
        })(),
      );
      await expect(invoke('act-broken', () => undiciRequest(`${target.origin}/broken`, { method: 'POST', body: failing }))).rejects.toThrow('the source broke');
      await until(() => ['act-big-stream', 'act-big-bytes', 'act-broken'].every((id) => exchangeOf(id).length === 2), 'two events each');
      await sleep(50);
      expect(arrivals).toEqual([]);

      const [bigOut, bigBack] = exchangeOf('act-big-stream');
      expect(bigOut).toMatchObject({
        kind: 'REQUEST',
        payload: { state: 'MISSING' },
        metadata: { notSent: expect.stringMatching(/^PAYLOAD_TOO_LARGE: An outbound request body is larger than/) },
      });
      expect(bigBack).toMatchObject({ kind: 'RESPONSE', status: 'ERROR', payload: { state: 'NONE' } });
      expect(exchangeOf('act-big-bytes')[0]).toMatchObject({
        payload: { state: 'MISSING', size: PAYLOAD_MAX + 1 },
        metadata: { notSent: expect.stringContaining('PAYLOAD_TOO_LARGE') },
      });
      const [brokenOut, brokenBack] = exchangeOf('act-broken');
      expect(brokenOut).toMatchObject({
        payload: { state: 'PARTIAL', text: 'half a body' },
        metadata: { notSent: expect.stringContaining('the source broke') },
      });
      expect(brokenBack).toMatchObject({ status: 'ERROR' });
      expect(capture.stats().errors).toBe(0);
    } finally {
      await target.stop();
    }
  });

  it('breaks off a file sent as the body if it changed after it was recorded, before its last bytes leave', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-deploy-'));
    try {
      const file = path.join(dir, 'site.js');
      const bytes = randomBytes(300_000);
      await writeFile(file, bytes);
      let release!: () => void;
      const durable = new Promise<void>((resolve) => (release = resolve));
      sink = (event) => {
        recorded.push(event);
        return event.kind === 'REQUEST' ? durable : undefined;
      };
      const call = invoke('act-changed', async () =>
        (await undiciRequest(`${upstream.origin}/deploy`, { method: 'PUT', body: createReadStream(file) })).body.json(),
      ).catch((e: unknown) => e);
      await until(() => exchangeOf('act-changed').length === 1, 'the request event');
      const [out] = exchangeOf('act-changed');
      expect(out!.payload).toEqual({
        state: 'ARTIFACT',
        artifactUri: pathToFileURL(file).href,
        size: bytes.length,
        artifactSha256: createHash('sha256').update(bytes).digest('hex'),
      });
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
      await writeFile(file, bytes);
      release();
      expect(await call).toBeInstanceOf(Error);
      await until(() => exchangeOf('act-changed').length === 2, 'the response event');
      expect(exchangeOf('act-changed')[1]).toMatchObject({ status: 'ERROR', metadata: { error: expect.stringContaining('changed while it was being sent') } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('normalises every header shape undici passes', () => {
    expect(normaliseHeaders({ A: '1', b: ['2', '3'] })).toEqual({ a: '1', b: ['2', '3'] });
    expect(normaliseHeaders(['A', '1', 'a', '2', 'c', Buffer.from('x')])).toEqual({ a: ['1', '2'], c: 'x' });
    expect(normaliseHeaders([['k', 'v']])).toEqual({ k: 'v' });
    expect(normaliseHeaders(new Map([['m', 'n']]))).toEqual({ m: 'n' });
    expect(normaliseHeaders(null)).toEqual({});
  });
});

describe.each(databaseKinds)('outbound capture into the ledger on %s', (kind) => {
  const SECRET = 'sk-canary-7f3a9c1e55d0';

  it('stores a deployed file as a reference: no blob, the URI and hash on the event', async () => {
    const t = await createTestLedger(kind);
    const writer = new LedgerWriter(t.ledger, { batchMaxDelayMs: 5 });
    sink = (event) => writer.enqueue(event);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-deploy-'));
    try {
      const file = path.join(dir, 'bundle.bin');
      const bytes = randomBytes(50_000);
      await writeFile(file, bytes);
      await invoke('act-deploy-stored', async () => {
        await (await undiciRequest(`${upstream.origin}/deploy`, { method: 'PUT', body: createReadStream(file) })).body.text();
      });
      await until(() => writer.stats().written === 2, 'the two events written');
      const sql = await rawSql(t.db);
      try {
        const [row] = await sql.query<{
          payload_state: string;
          payload_sha256: string | null;
          payload_size: string;
          artifact_uri: string;
          artifact_sha256: string;
        }>(
          `SELECT payload_state::text, payload_sha256, payload_size::text, artifact_uri, artifact_sha256 FROM ledger_event WHERE action_id = 'act-deploy-stored' AND kind = 'REQUEST'`,
        );
        expect(row).toEqual({
          payload_state: 'ARTIFACT',
          payload_sha256: null,
          payload_size: String(bytes.length),
          artifact_uri: pathToFileURL(file).href,
          artifact_sha256: createHash('sha256').update(bytes).digest('hex'),
        });
        const blobs = await sql.query<{ n: string }>(`SELECT count(*)::text AS n FROM blob WHERE size = $1`, [bytes.length]);
        expect(blobs[0]!.n).toBe('0');
      } finally {
        await sql.close();
      }
    } finally {
      await writer.stop(1_000);
      await t.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stores both events with secret values in the header, URL and body replaced by their name', async () => {
    const t = await createTestLedger(kind, { secrets: { UPSTREAM_KEY: SECRET } });
    const writer = new LedgerWriter(t.ledger, { batchMaxDelayMs: 5 });
    sink = (event) => writer.enqueue(event);
    try {
      const body = JSON.stringify({ key: SECRET, note: 'echoed back' });
      await invoke('act-secret', async () => {
        await (await fetch(`${upstream.origin}/echo?api_key=${SECRET}`, { method: 'POST', headers: { authorization: `Bearer ${SECRET}` }, body })).text();
      });
      await until(() => writer.stats().queued === 0 && writer.stats().written === 2, 'the two events written');
      await writer.flush();
      const sql = await rawSql(t.db);
      try {
        const rows = await sql.query<{ kind: string; url: string; headers: unknown; redacted_secrets: string[]; payload_sha256: string }>(
          `SELECT kind, url, headers, redacted_secrets, payload_sha256 FROM ledger_event WHERE action_id = 'act-secret' ORDER BY position`,
        );
        expect(rows.map((r) => r.kind)).toEqual(['REQUEST', 'RESPONSE']);
        for (const row of rows) {
          expect(row.url).toBe(`${upstream.origin}/echo?api_key=[UPSTREAM_KEY]`);
          expect(row.redacted_secrets).toEqual(['UPSTREAM_KEY']);
          expect(JSON.stringify(row.headers)).not.toContain(SECRET);
          const stored = (await t.ledger.readBlob(row.payload_sha256))!.toString('utf8');
          expect(stored).toBe(JSON.stringify({ key: '[UPSTREAM_KEY]', note: 'echoed back' }));
        }
        expect(rows[0]!.headers).toMatchObject({ authorization: 'Bearer [UPSTREAM_KEY]' });
        const anywhere = await sql.query(`SELECT id FROM ledger_event WHERE row_to_json(ledger_event)::text LIKE $1`, [`%${SECRET}%`]);
        expect(anywhere).toEqual([]);
      } finally {
        await sql.close();
      }
    } finally {
      await writer.stop(1_000);
      await t.stop();
    }
  });
});
