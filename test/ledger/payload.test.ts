// Payload bytes through the real doors: the UTF-8 label, the inline/object
// boundary and the 8 MiB limit, read back byte for byte over GraphQL and HTTP.
import { createHash, randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectKey } from '../../src/ledger/object-store.ts';
import { smallPayloadCodec } from '../../src/ledger/payload.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { event } from '../helpers/ledger.ts';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const BlobQuery = `query Blob($sha256: String!) { blob(sha256: $sha256) { sha256 size encoding storage codec text base64 } }`;

async function post(t: TestApp, body: unknown) {
  const response = await fetch(`${t.origin}/ledger/batches`, {
    method: 'POST',
    headers: { ...t.auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function readBack(t: TestApp, hash: string) {
  const gql = await t.gql(BlobQuery, { sha256: hash });
  expect(gql.errors).toBeUndefined();
  const response = await fetch(`${t.origin}/ledger/blob/${hash}`, { headers: t.auth });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/octet-stream');
  return { blob: gql.data.blob, raw: Buffer.from(await response.arrayBuffer()) };
}

const samples: [string, Buffer, 'UTF8' | 'BINARY'][] = [
  ['plain ASCII', Buffer.from('GET /v1/tools HTTP/1.1'), 'UTF8'],
  ['multibyte text', Buffer.from('héllo — 日本語 ✓ 😀 ǅ'), 'UTF8'],
  ['a byte-order mark', Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"bom":true}')]), 'UTF8'],
  ['NUL bytes', Buffer.from('a\u0000b\u0000\u0000c'), 'UTF8'],
  ['the empty body', Buffer.alloc(0), 'UTF8'],
  ['an invalid lead byte', Buffer.from([0x61, 0xff, 0x62]), 'BINARY'],
  ['a lone continuation byte', Buffer.from([0x61, 0x80, 0x62]), 'BINARY'],
  ['a truncated sequence', Buffer.from([0x61, 0xe2, 0x82]), 'BINARY'],
  ['an overlong "/" (C0 AF)', Buffer.from([0x2f, 0xc0, 0xaf]), 'BINARY'],
  ['an overlong three-byte NUL (E0 80 80)', Buffer.from([0xe0, 0x80, 0x80]), 'BINARY'],
  ['an encoded surrogate half (ED A0 80)', Buffer.from([0x61, 0xed, 0xa0, 0x80]), 'BINARY'],
  ['an encoded surrogate pair (ED A0 BD ED B8 80)', Buffer.from([0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]), 'BINARY'],
  ['a code point past U+10FFFF (F4 90 80 80)', Buffer.from([0xf4, 0x90, 0x80, 0x80]), 'BINARY'],
  ['Latin-1 text', Buffer.from('café', 'latin1'), 'BINARY'],
  ['a UTF-16 byte-order mark', Buffer.from([0xff, 0xfe, 0x68, 0x00]), 'BINARY'],
];

describe.each(databaseKinds)('payload bytes on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t?.stop());

  it.each(samples)('labels %s and gives back the identical bytes', async (what, bytes, label) => {
    const id = `utf8-${what}`;
    const appended = await post(t, { collector: 'labels', events: [event(id, { payload: { state: 'COMPLETE', base64: bytes.toString('base64') } })] });
    expect(appended.status).toBe(200);
    const read = await t.gql(`query($id: ID!) { event(id: $id) { payloadSha256 payloadSize payloadEncoding } }`, { id });
    expect(read.data.event).toEqual({ payloadSha256: sha(bytes), payloadSize: String(bytes.length), payloadEncoding: label });
    const { blob, raw } = await readBack(t, sha(bytes));
    expect(blob.encoding).toBe(label);
    expect(Buffer.from(blob.base64, 'base64').equals(bytes)).toBe(true);
    expect(raw.equals(bytes)).toBe(true);
    if (label === 'UTF8') expect(Buffer.from(blob.text, 'utf8').equals(bytes)).toBe(true);
    else expect(blob.text).toBeNull();
  });

  it('stores text sent as a JSON string as its exact UTF-8 bytes (BOM and NUL included)', async () => {
    const text = '\uFEFF{"nul":"a\u0000b","snow":"☃"}';
    const appended = await post(t, { collector: 'labels', events: [event('text-json', { payload: { state: 'COMPLETE', text } })] });
    expect(appended.status).toBe(200);
    const bytes = Buffer.from(text, 'utf8');
    const { blob, raw } = await readBack(t, sha(bytes));
    expect([blob.encoding, blob.text]).toEqual(['UTF8', text]);
    expect(raw.equals(bytes)).toBe(true);
  });

  it.each([
    [
      'a 2 KiB JSON payload',
      Buffer.from(JSON.stringify({ rows: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `row ${i}`, ok: i % 3 > 0 })) })),
      smallPayloadCodec,
    ],
    ['a 100 KiB text payload', Buffer.from('the ledger keeps every byte; '.repeat(3_600)), 'deflate-raw'],
    ['2 KiB of random bytes', randomBytes(2_048), 'identity'],
  ])('compresses %s inline (%s) only when it saves space, and reads it back exactly', async (what, bytes, codec) => {
    const appended = await post(t, {
      collector: 'codecs',
      events: [event(`codec-${what}`, { payload: { state: 'COMPLETE', base64: bytes.toString('base64') } })],
    });
    expect(appended.body).toMatchObject({ inserted: 1 });
    const { blob, raw } = await readBack(t, sha(bytes));
    expect(blob).toMatchObject({ storage: 'INLINE', codec });
    expect(raw.equals(bytes)).toBe(true);
    const [row] = await t.db.sql.query<{ stored_size: string }>('SELECT stored_size FROM blob WHERE sha256 = $1', [sha(bytes)]);
    if (codec === 'identity') expect(Number(row!.stored_size)).toBe(bytes.length);
    else expect(Number(row!.stored_size)).toBeLessThan(bytes.length / 2);
  });

  it.each([
    [262_144, 'INLINE'],
    [262_145, 'OBJECT'],
  ])('stores %i bytes %s', async (size, storage) => {
    const bytes = randomBytes(size);
    const appended = await post(t, {
      collector: 'boundary',
      events: [event(`boundary-${size}`, { payload: { state: 'COMPLETE', base64: bytes.toString('base64') } })],
    });
    expect(appended.body).toMatchObject({ inserted: 1 });
    const { blob, raw } = await readBack(t, sha(bytes));
    expect(blob).toMatchObject({ size: String(size), storage, encoding: 'BINARY' });
    expect(Buffer.from(blob.base64, 'base64').equals(bytes)).toBe(true);
    expect(raw.equals(bytes)).toBe(true);
    const file = path.join(t.dataDir, 'blobs', objectKey(sha(bytes)));
    if (storage === 'OBJECT') expect((await stat(file)).size).toBe(size);
    else await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('stores exactly 8 MiB and records 8 MiB + 1 byte as MISSING with its size', async () => {
    const limit = 8 * 1024 * 1024;
    const exact = Buffer.alloc(limit, 0x61);
    exact.write('exactly-8-MiB');
    const over = Buffer.alloc(limit + 1, 0x61);
    over.write('one-byte-over');
    const appended = await post(t, {
      collector: 'limit',
      events: [
        event('limit-exact', { payload: { state: 'COMPLETE', text: exact.toString('latin1') } }),
        event('limit-over', { payload: { state: 'COMPLETE', base64: over.toString('base64') } }),
      ],
    });
    expect(appended).toMatchObject({ status: 200, body: { inserted: 2 } });
    const read = await t.gql(
      `{ exact: event(id: "limit-exact") { payloadState payloadSize payloadSha256 payload { storage size } }
         over: event(id: "limit-over") { payloadState payloadSize payloadSha256 payload { sha256 } } }`,
    );
    expect(read.data).toEqual({
      exact: { payloadState: 'COMPLETE', payloadSize: String(limit), payloadSha256: sha(exact), payload: { storage: 'OBJECT', size: String(limit) } },
      over: { payloadState: 'MISSING', payloadSize: String(limit + 1), payloadSha256: null, payload: null },
    });
    expect((await readBack(t, sha(exact))).raw.equals(exact)).toBe(true);
    expect((await t.gql(BlobQuery, { sha256: sha(over) })).data.blob).toBeNull();
    expect((await fetch(`${t.origin}/ledger/blob/${sha(over)}`, { headers: t.auth })).status).toBe(404);
    await expect(stat(path.join(t.dataDir, 'blobs', objectKey(sha(over))))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
