// The stream registry redacts lazily: while nobody listens a chunk is only copied, and the first
// subscriber redacts what was kept. Whatever the moment a subscriber arrives (before the first chunk,
// after any chunk, after the end, or never), it must get the bytes one StreamRedactor run over every
// chunk as it arrived gives (what every subscriber got when each chunk was redacted on arrival), and
// the final chunk's hash must be the stored blob's. Real redactor, real publisher (the tee's).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StreamPublisher } from '../../src/capture/tee.ts';
import { StreamRegistry, type LiveChunk } from '../../src/live/streams.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import type { StreamState } from '../../src/context/stream.ts';

const API_KEY = 'sk-live-4f9Qz7Wb2Kx8';
const DB_PASSWORD = 'pa$$ w/rd:"quoted"&more';
const forms = (value: string) => [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1), Buffer.from(value).toString('base64')];
const redactor = new SecretRedactor({ API_KEY, DB_PASSWORD });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

type Options = { retainMaxBytes?: number; retainMs?: number };
const registryOf = (options: Options = {}) => new StreamRegistry(redactor, { retainMs: 60_000, retainMaxBytes: 8_388_608, bufferMax: 1_000_000, ...options });

/** Any spelling of a secret the redactor knows, found in what left. */
function leaks(bytes: Buffer): string[] {
  const text = bytes.toString('latin1');
  return [...forms(API_KEY), ...forms(DB_PASSWORD)].filter((f) => text.includes(f));
}

/** The chunks as a subscriber sees them when each is redacted on arrival by the stream's one StreamRedactor. */
function onArrival(chunks: Buffer[]): Buffer[] {
  const stream = redactor.stream();
  return [...chunks.map((c) => stream.push(c)), stream.end()];
}

/** Everything a subscriber of `actionId` reads, to the final chunk. */
async function drain(subscription: ReturnType<StreamRegistry['subscribe']>): Promise<LiveChunk[]> {
  const out: LiveChunk[] = [];
  for await (const item of subscription) {
    if ('end' in item) throw item.end;
    out.push(item);
  }
  return out;
}

/**
 * Publishes `chunks` then the end through the tee's publisher; `at(k)` runs before chunk k is
 * published (k = chunks.length: after the end). Returns the raw SHA-256 the publisher sent.
 */
function publishAll(
  registry: StreamRegistry,
  actionId: string,
  chunks: Buffer[],
  at: (k: number) => void = () => {},
  state: StreamState = 'COMPLETE',
  task?: string,
) {
  const publisher = new StreamPublisher((chunk) => registry.publish(actionId, chunk, task));
  chunks.forEach((chunk, k) => {
    at(k);
    // The sender's memory is reused once the chunk has passed: what was kept must be a copy.
    const sent = Buffer.from(chunk);
    publisher.chunk(sent);
    sent.fill(0x21);
  });
  const rawSha256 = publisher.end(state);
  at(chunks.length);
  return rawSha256;
}

/** What one subscriber reads when it arrives before chunk `k` (k = chunks.length: after the end), on its own registry. */
async function arrivingAt(k: number, chunks: Buffer[], options: Options = {}, state: StreamState = 'COMPLETE') {
  const registry = registryOf(options);
  let sub: ReturnType<StreamRegistry['subscribe']> | undefined;
  const rawSha256 = publishAll(
    registry,
    'act',
    chunks,
    (at) => {
      if (at === k) sub = registry.subscribe('act');
    },
    state,
  );
  return { read: await drain(sub!), rawSha256 };
}

/** Subscribers arriving before the first chunk, after each chunk, and only after the end (nobody watched it live). */
async function everyArrival(chunks: Buffer[], options: Options = {}) {
  const read = new Map<number, LiveChunk[]>();
  let rawSha256 = '';
  for (let k = 0; k <= chunks.length; k++) {
    const arrived = await arrivingAt(k, chunks, options);
    read.set(k, arrived.read);
    rawSha256 = arrived.rawSha256;
  }
  return { read, rawSha256 };
}

/** Every way to cut `bytes` in two. */
const splits = (bytes: Buffer) => Array.from({ length: bytes.length + 1 }, (_, at) => [bytes.subarray(0, at), bytes.subarray(at)]);

describe('StreamRegistry: lazy redaction gives every subscriber the bytes redaction on arrival gives', () => {
  it.each(forms(API_KEY).map((form, i) => [['raw', 'URL-encoded', 'JSON-escaped', 'base64'][i]!, form]))(
    'a secret (%s) cut at every byte: early, mid-stream, late and never-watched subscribers read the same chunks, and no secret',
    async (_name, form) => {
      const whole = Buffer.from(`data: {"key":"${form}","n":1}\n\ndata: after\n\n`);
      const stored = redactor.bytes(whole, new Set());
      expect(leaks(stored)).toEqual([]);
      for (const chunks of splits(whole)) {
        const { read, rawSha256 } = await everyArrival(chunks);
        const early = read.get(0)!;
        const expected = onArrival(chunks);
        expect(early.map((c) => c.bytes)).toEqual(expected);
        expect(early.map((c) => c.sequence)).toEqual(expected.map((_, i) => i));
        expect(early.at(-1)).toMatchObject({ final: true, state: 'COMPLETE', size: whole.length, sha256: sha(stored), cut: null });
        expect(sha(stored)).not.toBe(rawSha256);
        expect(leaks(Buffer.concat(early.map((c) => c.bytes)))).toEqual([]);
        for (const [k, chunksRead] of read) expect(chunksRead, `cut at ${chunks[0]!.length}, subscribed at ${k}`).toEqual(early);
      }
    },
  );

  it('two secrets cut in three anywhere, the cuts on every pair of positions', async () => {
    const whole = Buffer.from(`x${API_KEY}|${encodeURIComponent(DB_PASSWORD)}y`);
    for (let i = 0; i <= whole.length; i += 2) {
      for (let j = i; j <= whole.length; j += 4) {
        const chunks = [whole.subarray(0, i), whole.subarray(i, j), whole.subarray(j)];
        const { read } = await everyArrival(chunks);
        const early = read.get(0)!;
        expect(early.map((c) => c.bytes)).toEqual(onArrival(chunks));
        expect(Buffer.concat(early.map((c) => c.bytes)).toString()).toBe('x[API_KEY]|[DB_PASSWORD]y');
        for (const [k, chunksRead] of read) expect(chunksRead, `cuts ${i} ${j}, subscribed at ${k}`).toEqual(early);
      }
    }
  });

  it('hostile bytes (invalid UTF-8, NUL, an encoded surrogate) around split secrets pass exactly, to every subscriber', async () => {
    const parts = [
      Buffer.from([0x00, 0xff, 0xfe]),
      Buffer.from(`a${API_KEY.slice(0, 7)}`),
      Buffer.from(`${API_KEY.slice(7)}\u0000`),
      Buffer.from([0xc3, 0xed, 0xa0, 0x80, 0x00]),
      Buffer.from(forms(DB_PASSWORD)[3]!.slice(0, 5)),
      Buffer.concat([Buffer.from(forms(DB_PASSWORD)[3]!.slice(5)), Buffer.from([0xc0, 0xaf])]),
      Buffer.from([0x80]),
    ];
    const whole = Buffer.concat(parts);
    const { read, rawSha256 } = await everyArrival(parts);
    const early = read.get(0)!;
    const out = Buffer.concat(early.map((c) => c.bytes));
    expect(early.map((c) => c.bytes)).toEqual(onArrival(parts));
    expect(leaks(out)).toEqual([]);
    // Outside the secrets, the bytes out are the bytes in.
    expect(out).toEqual(redactor.bytes(whole, new Set()));
    expect(early.at(-1)!.sha256).toBe(sha(redactor.bytes(whole, new Set())));
    expect(early.at(-1)!.sha256).not.toBe(rawSha256);
    for (const [k, chunksRead] of read) expect(chunksRead, `subscribed at ${k}`).toEqual(early);
  });

  it('a stream past what it keeps unredacted (256 KiB) is redacted as it goes; late subscribers still read what early ones read', async () => {
    const chunkBytes = 8192;
    const chunks = Array.from({ length: 36 }, (_, i) => {
      const filler = Buffer.alloc(chunkBytes, `data: ${i} `);
      // A secret across every edge: its first 6 bytes end this chunk, the rest begins the next.
      Buffer.from(API_KEY.slice(6)).copy(filler, 0);
      Buffer.from(API_KEY.slice(0, 6)).copy(filler, chunkBytes - 6);
      return filler;
    });
    const expected = onArrival(chunks);
    const whole = Buffer.concat(chunks);
    for (const k of [0, 10, 34, 36]) {
      const { read } = await arrivingAt(k, chunks);
      expect(
        read.map((c) => c.bytes),
        `subscribed at ${k}`,
      ).toEqual(expected);
      expect(read.at(-1)!.sha256).toBe(sha(redactor.bytes(whole, new Set())));
      expect(leaks(Buffer.concat(read.map((c) => c.bytes)))).toEqual([]);
    }
  });

  it('past retainMaxBytes: a late subscriber reads the kept prefix, then live chunks, redacted as for an early one; the final hash is the raw one', async () => {
    const retainMaxBytes = 64;
    const whole = Buffer.from(`data: ${API_KEY} one\n\ndata: ${forms(API_KEY)[1]} two\n\ndata: ${API_KEY}\n\nend`);
    const chunks = Array.from({ length: Math.ceil(whole.length / 11) }, (_, i) => whole.subarray(i * 11, i * 11 + 11));
    const kept = chunks.findIndex((_, i) => chunks.slice(0, i + 1).reduce((n, c) => n + c.length, 0) > retainMaxBytes);
    expect(kept).toBeGreaterThan(1);
    const expected = onArrival(chunks);
    const final = expected.at(-1)!;
    for (let k = 0; k <= chunks.length; k++) {
      const { read, rawSha256 } = await arrivingAt(k, chunks, { retainMaxBytes });
      // What it was handed at subscription (the kept prefix), then what arrived after.
      const live = k < chunks.length ? expected.slice(k) : [final];
      expect(
        read.map((c) => c.bytes),
        `subscribed at ${k}`,
      ).toEqual([...expected.slice(0, Math.min(k, kept)), ...live]);
      expect(read.at(-1)).toMatchObject({ final: true, sha256: rawSha256, size: whole.length });
      expect(leaks(Buffer.concat(read.map((c) => c.bytes)))).toEqual([]);
    }
  });

  it('a MISSING stream (past the payload limit) ends with no hash, for early and late subscribers alike', async () => {
    const chunks = [Buffer.from(`a${API_KEY.slice(0, 4)}`), Buffer.from(`${API_KEY.slice(4)}b`)];
    const read = new Map<number, LiveChunk[]>();
    for (let k = 0; k <= chunks.length; k++) read.set(k, (await arrivingAt(k, chunks, {}, 'MISSING')).read);
    expect(read.get(0)!.at(-1)).toMatchObject({ final: true, state: 'MISSING', sha256: null, size: 1 + API_KEY.length + 1 });
    for (const [k, chunksRead] of read) expect(chunksRead, `subscribed at ${k}`).toEqual(read.get(0));
  });

  it("a task-scoped subscriber never reads another task's stream, and does not change what others read", async () => {
    const chunks = [Buffer.from(`data: ${API_KEY.slice(0, 9)}`), Buffer.from(`${API_KEY.slice(9)}\n\n`)];
    const registry = registryOf();
    const other = registry.subscribe('scoped', 'task-b');
    const before = registry.subscribe('scoped', 'task-a');
    publishAll(registry, 'scoped', chunks, () => {}, 'COMPLETE', 'task-a');
    const own = await drain(before);
    expect(own.map((c) => c.bytes)).toEqual(onArrival(chunks));
    expect(await drain(registry.subscribe('scoped'))).toEqual(own);
    expect(await drain(registry.subscribe('scoped', 'task-a'))).toEqual(own);
    // task-b's subscribers wait as for a stream that never starts, before and after its end.
    const late = registry.subscribe('scoped', 'task-b');
    const pending = Symbol('pending');
    for (const sub of [other, late]) {
      expect(await Promise.race([sub.next(), new Promise((r) => setTimeout(() => r(pending), 50))])).toBe(pending);
      await sub.return!();
    }
  });

  it('a finished stream is kept retainMs for late subscribers, then forgotten: a subscriber after that waits', async () => {
    const registry = registryOf({ retainMs: 30 });
    const chunks = [Buffer.from(`data: ${API_KEY}\n\n`)];
    publishAll(registry, 'old', chunks);
    expect((await drain(registry.subscribe('old'))).map((c) => c.bytes)).toEqual(onArrival(chunks));
    while (registry.size > 0) await new Promise((r) => setTimeout(r, 10));
    const after = registry.subscribe('old');
    const pending = Symbol('pending');
    expect(await Promise.race([after.next(), new Promise((r) => setTimeout(() => r(pending), 50))])).toBe(pending);
    await after.return!();
    expect(registry.size).toBe(0);
  });
});
