// Registered secrets never reach a stored byte or a response: replaced by
// [NAME] in URLs, headers, JSON bodies and metadata, with the names kept.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeInline } from '../../src/ledger/payload.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { event } from '../helpers/ledger.ts';
import { rawSql } from '../helpers/sql.ts';

const API_KEY = 'sk-live-4f9Qz7Wb2Kx8';
const DB_PASSWORD = 'pa$$ w/rd:"quoted"&more';
/** Every form the redactor knows a secret by: raw, URL-encoded, JSON-escaped, base64. */
const forms = (value: string) => [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1), Buffer.from(value).toString('base64')];
const needles = [...forms(API_KEY), ...forms(DB_PASSWORD)];
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function leaks(haystack: Buffer | string): string[] {
  const bytes = Buffer.isBuffer(haystack) ? haystack : Buffer.from(haystack);
  return needles.filter((n) => bytes.includes(Buffer.from(n)));
}

describe.each(databaseKinds)('secret redaction on %s', (kind) => {
  let t: TestApp;
  const responses: string[] = [];
  const large = Buffer.from(`{"token":"${API_KEY}","pad":"${'z'.repeat(300_000)}"}`);
  const jsonBody = JSON.stringify({ user: 'ada', password: DB_PASSWORD, nested: { auth: `Bearer ${API_KEY}` } });
  beforeAll(async () => {
    t = await startTestApp(kind, { DIRLEDGER_SECRET_API_KEY: API_KEY, DIRLEDGER_SECRET_DB_PASSWORD: DB_PASSWORD });
    const response = await fetch(`${t.origin}/ledger/batches`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        collector: 'redact',
        position: 1,
        events: [
          event('secret-url', {
            method: 'GET',
            url: `https://api.example.com/v1/things?key=${API_KEY}&pw=${encodeURIComponent(DB_PASSWORD)}&x=1`,
            payload: { state: 'NONE' },
          }),
          event('secret-header', {
            headers: { authorization: `Bearer ${API_KEY}`, 'x-forwarded': ['safe', `pw=${DB_PASSWORD}`], [`x-${API_KEY}`]: 'key in a name' },
            payload: { state: 'NONE' },
          }),
          event('secret-body', { payload: { state: 'COMPLETE', text: jsonBody } }),
          event('secret-base64', { payload: { state: 'COMPLETE', base64: Buffer.from(`raw ${DB_PASSWORD} bytes \u0000`).toString('base64') } }),
          event('secret-large', { payload: { state: 'COMPLETE', base64: large.toString('base64') } }),
          event('secret-metadata', { metadata: { note: `rotated ${API_KEY}`, list: [1, { deep: DB_PASSWORD }] }, payload: { state: 'NONE' } }),
          event('secret-artifact', { payload: { state: 'ARTIFACT', artifactUri: `s3://deploys/${API_KEY}/site.js` } }),
          event('secret-none', { url: 'https://api.example.com/public', payload: { state: 'COMPLETE', text: 'nothing secret here' } }),
        ],
      }),
    });
    const text = await response.text();
    responses.push(text);
    expect(response.status, text).toBe(200);
  });
  afterAll(async () => t?.stop());

  const read = async (id: string) => {
    const result = await t.gql(`query($id: ID!) { event(id: $id) { url headers metadata redactedSecrets payloadSha256 payload { text base64 storage } } }`, {
      id,
    });
    responses.push(JSON.stringify(result));
    expect(result.errors).toBeUndefined();
    return result.data.event;
  };

  it('replaces a secret in a URL query, raw and URL-encoded', async () => {
    const e = await read('secret-url');
    expect(e.url).toBe('https://api.example.com/v1/things?key=[API_KEY]&pw=[DB_PASSWORD]&x=1');
    expect(e.redactedSecrets).toEqual(['API_KEY', 'DB_PASSWORD']);
  });

  it('replaces a secret in header values and names', async () => {
    const e = await read('secret-header');
    expect(e.headers).toEqual({ authorization: 'Bearer [API_KEY]', 'x-forwarded': ['safe', 'pw=[DB_PASSWORD]'], 'x-[API_KEY]': 'key in a name' });
    expect(e.redactedSecrets).toEqual(['API_KEY', 'DB_PASSWORD']);
  });

  it('replaces a secret in a JSON body (JSON-escaped) before hashing', async () => {
    const e = await read('secret-body');
    const expected = JSON.stringify({ user: 'ada', password: '[DB_PASSWORD]', nested: { auth: 'Bearer [API_KEY]' } });
    expect(e.payload.text).toBe(expected);
    expect(e.payloadSha256).toBe(sha(Buffer.from(expected)));
    expect(e.redactedSecrets).toEqual(['API_KEY', 'DB_PASSWORD']);
  });

  it('replaces a secret in raw bytes and in a large (object-stored) body', async () => {
    const raw = await read('secret-base64');
    expect(Buffer.from(raw.payload.base64, 'base64').toString()).toBe('raw [DB_PASSWORD] bytes \u0000');
    expect(raw.redactedSecrets).toEqual(['DB_PASSWORD']);
    const big = await read('secret-large');
    expect(big.payload.storage).toBe('OBJECT');
    expect(Buffer.from(big.payload.base64, 'base64').subarray(0, 30).toString()).toBe('{"token":"[API_KEY]","pad":"zz');
    expect(big.redactedSecrets).toEqual(['API_KEY']);
  });

  it("replaces a secret in an artifact's URI", async () => {
    const result = await t.gql(`query { event(id: "secret-artifact") { redactedSecrets payloadState artifactUri } }`);
    responses.push(JSON.stringify(result));
    expect(result.data.event).toEqual({ redactedSecrets: ['API_KEY'], payloadState: 'ARTIFACT', artifactUri: 's3://deploys/[API_KEY]/site.js' });
  });

  it('replaces a secret in metadata, and names nothing when nothing was found', async () => {
    const e = await read('secret-metadata');
    expect(e.metadata).toEqual({ note: 'rotated [API_KEY]', list: [1, { deep: '[DB_PASSWORD]' }] });
    expect(e.redactedSecrets).toEqual(['API_KEY', 'DB_PASSWORD']);
    expect((await read('secret-none')).redactedSecrets).toEqual([]);
  });

  it('leaves the value in no stored byte: every event column, every blob (decompressed), every object file, the bookkeeping', async () => {
    const sql = await rawSql(t.db);
    try {
      for (const table of ['ledger_event', 'ledger_batch', 'collector']) {
        const rows = await sql.query<{ r: string }>(`SELECT row_to_json(x)::text AS r FROM ${table} x`);
        expect(rows.length).toBeGreaterThan(0);
        for (const row of rows) expect(leaks(row.r), `${table}: ${row.r.slice(0, 200)}`).toEqual([]);
      }
      const blobs = await sql.query<{ sha256: string; codec: string; data: Uint8Array | null; object_key: string | null }>(
        `SELECT sha256, codec, data, object_key FROM blob`,
      );
      expect(blobs.length).toBe(4);
      for (const blob of blobs) {
        if (blob.data) {
          expect(leaks(Buffer.from(blob.data)), blob.sha256).toEqual([]);
          expect(leaks(await decodeInline(blob.codec, blob.data)), blob.sha256).toEqual([]);
        }
      }
      const root = path.join(t.dataDir, 'blobs');
      const files = (await readdir(root, { recursive: true, withFileTypes: true })).filter((d) => d.isFile());
      expect(files.length).toBe(1);
      for (const file of files) expect(leaks(await readFile(path.join(file.parentPath, file.name))), file.name).toEqual([]);
      for (const blob of blobs) {
        const response = await fetch(`${t.origin}/ledger/blob/${blob.sha256}`, { headers: t.auth });
        const bytes = Buffer.from(await response.arrayBuffer());
        expect(response.status).toBe(200);
        expect(leaks(bytes), blob.sha256).toEqual([]);
      }
    } finally {
      await sql.close();
    }
  });

  it('returns the value in no response', () => {
    expect(responses.length).toBeGreaterThan(5);
    for (const response of responses) expect(leaks(response)).toEqual([]);
  });
});
