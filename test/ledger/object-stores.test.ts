// Large blobs in both object stores (a folder, and S3 through a real local
// S3-compatible server): exact round trips, and corruption refused, never served.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderObjectStore, objectKey, S3ObjectStore, type ObjectStore } from '../../src/ledger/object-store.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { encodeInline, smallPayloadCodec } from '../../src/ledger/payload.ts';
import { event } from '../helpers/ledger.ts';
import { startS3, type TestS3 } from '../helpers/s3.ts';
import { rawSql } from '../helpers/sql.ts';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function s3Client(s3: TestS3) {
  return new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
}

async function flipByte(file: string, at: number) {
  const bytes = await readFile(file);
  bytes[at] = bytes[at]! ^ 0xff;
  await writeFile(file, bytes);
}

describe('the object stores on their own', () => {
  let s3: TestS3;
  let dir: string;
  beforeAll(async () => {
    s3 = await startS3();
    dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-folder-'));
  });
  afterAll(async () => {
    await s3?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(['folder', 's3'] as const)('%s: puts, gets, knows, and shrugs at a second put of the same key', async (kind) => {
    const store: ObjectStore =
      kind === 'folder'
        ? new FolderObjectStore(dir)
        : new S3ObjectStore({ endpoint: s3.endpoint, bucket: s3.bucket, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
    try {
      const bytes = randomBytes(300_000);
      const key = objectKey(sha(bytes));
      expect(await store.has(key)).toBe(false);
      expect(await store.get(key)).toBeNull();
      await store.put(key, bytes);
      await store.put(key, bytes);
      expect(await store.has(key)).toBe(true);
      expect((await store.get(key))!.equals(bytes)).toBe(true);
      const empty = Buffer.alloc(0);
      await store.put(objectKey(sha(empty)), empty);
      expect((await store.get(objectKey(sha(empty))))!.length).toBe(0);
    } finally {
      if (store instanceof S3ObjectStore) store.close();
    }
  });

  it('folder: leaves no temp file behind and refuses a key that escapes its folder', async () => {
    const store = new FolderObjectStore(dir);
    const bytes = Buffer.from('atomic');
    await store.put(objectKey(sha(bytes)), bytes);
    const file = path.join(dir, objectKey(sha(bytes)));
    expect((await readFile(file)).toString()).toBe('atomic');
    const { readdir } = await import('node:fs/promises');
    expect((await readdir(path.dirname(file))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await expect(store.put('../escape', bytes)).rejects.toThrow(/escapes the store/);
  });
});

type Setup = { t: TestApp; s3?: TestS3; objectFile(key: string): string };

describe.each(databaseKinds.flatMap((kind) => (['folder', 's3'] as const).map((store) => [kind, store] as const)))(
  'large blobs through the app on %s with the %s store',
  (kind, store) => {
    let setup: Setup;
    beforeAll(async () => {
      if (store === 's3') {
        const s3 = await startS3();
        const t = await startTestApp(kind, s3.env);
        setup = { t, s3, objectFile: s3.objectFile };
      } else {
        const t = await startTestApp(kind);
        setup = { t, objectFile: (key) => path.join(t.dataDir, 'blobs', key) };
      }
    });
    afterAll(async () => {
      await setup?.t.stop();
      await setup?.s3?.stop();
    });

    const push = async (id: string, bytes: Buffer) => {
      const response = await fetch(`${setup.t.origin}/ledger/batches`, {
        method: 'POST',
        headers: { ...setup.t.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ collector: `store-${store}`, events: [event(id, { payload: { state: 'COMPLETE', base64: bytes.toString('base64') } })] }),
      });
      expect(response.status).toBe(200);
    };
    const readGraphql = (hash: string) => setup.t.gql(`query($h: String!) { blob(sha256: $h) { storage size base64 } }`, { h: hash });
    const readHttp = async (hash: string) => {
      const response = await fetch(`${setup.t.origin}/ledger/blob/${hash}`, { headers: setup.t.auth });
      return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
    };
    const expectCorrupt = async (hash: string, original: Buffer) => {
      const gql = await readGraphql(hash);
      expect(gql.errors?.[0]?.extensions?.code).toBe('BLOB_CORRUPT');
      expect(JSON.stringify(gql)).not.toContain(original.subarray(0, 64).toString('base64'));
      const http = await readHttp(hash);
      expect(http.status).toBe(500);
      expect(JSON.parse(http.bytes.toString()).error.code).toBe('BLOB_CORRUPT');
    };

    it('round-trips a payload over 256 KiB through the store, exactly', async () => {
      const bytes = randomBytes(300_001);
      await push('large-roundtrip', bytes);
      const key = objectKey(sha(bytes));
      expect((await stat(setup.objectFile(key))).size).toBe(bytes.length);
      if (store === 's3') await expect(stat(path.join(setup.t.dataDir, 'blobs', key))).rejects.toMatchObject({ code: 'ENOENT' });
      const gql = await readGraphql(sha(bytes));
      expect(gql.data.blob).toMatchObject({ storage: 'OBJECT', size: String(bytes.length) });
      expect(Buffer.from(gql.data.blob.base64, 'base64').equals(bytes)).toBe(true);
      const http = await readHttp(sha(bytes));
      expect([http.status, http.bytes.equals(bytes)]).toEqual([200, true]);
    });

    it('refuses to serve an object whose bytes changed on disk (BLOB_CORRUPT)', async () => {
      const bytes = randomBytes(270_000);
      await push('large-flipped', bytes);
      await flipByte(setup.objectFile(objectKey(sha(bytes))), 135_000);
      await expectCorrupt(sha(bytes), bytes);
    });

    it('refuses to serve an object that is gone (BLOB_CORRUPT)', async () => {
      const bytes = randomBytes(270_000);
      await push('large-gone', bytes);
      await unlink(setup.objectFile(objectKey(sha(bytes))));
      await expectCorrupt(sha(bytes), bytes);
    });

    if (store === 's3') {
      it('refuses to serve an object replaced in the bucket (BLOB_CORRUPT)', async () => {
        const bytes = randomBytes(280_000);
        await push('large-replaced', bytes);
        const client = s3Client(setup.s3!);
        try {
          await client.send(new PutObjectCommand({ Bucket: setup.s3!.bucket, Key: objectKey(sha(bytes)), Body: randomBytes(bytes.length) }));
        } finally {
          client.destroy();
        }
        await expectCorrupt(sha(bytes), bytes);
      });
    }
  },
);

describe.each(databaseKinds)('inline blobs altered behind the triggers on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t?.stop());

  it.each([
    ['bytes that do not decode', async () => Buffer.from('definitely not compressed data')],
    ['other bytes that decode cleanly with the same codec', async () => (await encodeInline(Buffer.from('x'.repeat(5_000)))).data],
  ])('refuses %s (BLOB_CORRUPT), never serving them', async (what, replacement) => {
    const bytes = Buffer.from(`${what} `.repeat(400));
    const response = await fetch(`${t.origin}/ledger/batches`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ collector: 'inline', events: [event(`inline-${what}`, { payload: { state: 'COMPLETE', text: bytes.toString() } })] }),
    });
    expect(response.status).toBe(200);
    const sql = await rawSql(t.db);
    try {
      // Only a test, in its own database, may step around the append-only trigger.
      await sql.exec(`ALTER TABLE blob DISABLE TRIGGER blob_append_only`);
      const [stored] = await sql.query<{ codec: string }>(`SELECT codec FROM blob WHERE sha256 = $1`, [sha(bytes)]);
      expect(stored?.codec).toBe(smallPayloadCodec);
      await sql.query(`UPDATE blob SET data = $1 WHERE sha256 = $2`, [await replacement(), sha(bytes)]);
      await sql.exec(`ALTER TABLE blob ENABLE TRIGGER blob_append_only`);
    } finally {
      await sql.close();
    }
    const gql = await t.gql(`query($h: String!) { blob(sha256: $h) { base64 } }`, { h: sha(bytes) });
    expect(gql.errors?.[0]?.extensions?.code).toBe('BLOB_CORRUPT');
    const http = await fetch(`${t.origin}/ledger/blob/${sha(bytes)}`, { headers: t.auth });
    expect(http.status).toBe(500);
    expect(((await http.json()) as any).error.code).toBe('BLOB_CORRUPT');
  });
});
