// Where blobs larger than the inline limit live: one small interface, two stores.
import { randomUUID } from 'node:crypto';
import { access, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';

export type ObjectStoreKind = 'folder' | 's3';

export interface ObjectStore {
  readonly kind: ObjectStoreKind;
  /** Stores bytes under a key; storing the same key again is harmless (content-addressed). */
  put(key: string, bytes: Buffer): Promise<void>;
  /** The bytes under a key, or null when there are none. */
  get(key: string): Promise<Buffer | null>;
  has(key: string): Promise<boolean>;
}

export function objectKey(sha256: string): string {
  return `sha256/${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * A local folder: files named by hash, written atomically through a temp file and rename, and
 * durable before put resolves (the file, its folder and any folder it created are fsynced), so an
 * event committed after put never points at a blob a power cut took.
 */
export class FolderObjectStore implements ObjectStore {
  readonly kind = 'folder' as const;
  readonly folder: string;
  constructor(folder: string) {
    this.folder = folder;
  }

  private file(key: string): string {
    const file = path.resolve(this.folder, key);
    if (!file.startsWith(path.resolve(this.folder) + path.sep)) throw new Error(`object key escapes the store: ${key}`);
    return file;
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const file = this.file(key);
    if (await this.has(key)) return;
    const created = await mkdir(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomUUID()}.tmp`;
    try {
      const handle = await open(temp, 'wx');
      try {
        await handle.writeFile(bytes);
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await syncFolder(path.dirname(file));
    // mkdir returns the first folder it made: every folder from there up to the file's is new.
    if (created) for (let folder = path.dirname(file); folder !== path.dirname(created); folder = path.dirname(folder)) await syncFolder(path.dirname(folder));
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.file(key));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async has(key: string): Promise<boolean> {
    return access(this.file(key)).then(
      () => true,
      () => false,
    );
  }
}

export type S3Settings = {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
};

/** S3-compatible storage through the AWS SDK (path-style, so local servers work). */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  private readonly bucket: string;
  // The SDK (~7 MB resident in the server) is loaded on first use, so only an S3-configured process pays for it.
  private sdk?: Promise<{ s3: typeof import('@aws-sdk/client-s3'); client: S3Client }>;

  private readonly settings: S3Settings;
  constructor(settings: S3Settings) {
    this.settings = settings;
    this.bucket = settings.bucket;
  }

  private connect() {
    this.sdk ??= import('@aws-sdk/client-s3').then((s3) => {
      const { endpoint, region, accessKeyId, secretAccessKey } = this.settings;
      const client = new s3.S3Client({
        endpoint,
        region,
        forcePathStyle: true,
        credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
      });
      return { s3, client };
    });
    return this.sdk;
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    if (await this.has(key)) return;
    const { s3, client } = await this.connect();
    await client.send(new s3.PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes }));
  }

  async get(key: string): Promise<Buffer | null> {
    const { s3, client } = await this.connect();
    try {
      const out = await client.send(new s3.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Buffer.from(await out.Body!.transformToByteArray());
    } catch (error) {
      if (error instanceof s3.NoSuchKey || error instanceof s3.NotFound) return null;
      throw error;
    }
  }

  async has(key: string): Promise<boolean> {
    const { s3, client } = await this.connect();
    try {
      await client.send(new s3.HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (error instanceof s3.NotFound || error instanceof s3.NoSuchKey) return false;
      throw error;
    }
  }

  close(): void {
    void this.sdk?.then(({ client }) => client.destroy());
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
