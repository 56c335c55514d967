// A real S3-compatible server (s3rver) on a free port, with its own folder and bucket.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export type TestS3 = {
  endpoint: string;
  bucket: string;
  /** The app's settings for this server (BLOB_STORE=s3 and S3_*). */
  env: Record<string, string>;
  /** Where s3rver keeps the bytes of an object on disk. */
  objectFile(key: string): string;
  stop(): Promise<void>;
};

export async function startS3(bucket = 'dirledger-test'): Promise<TestS3> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'dirledger-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: {
      BLOB_STORE: 's3',
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      // s3rver's fixed credentials.
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
    objectFile: (key) => {
      const parts = key.split('/');
      return path.join(directory, bucket, ...parts.slice(0, -1), `${parts.at(-1)}._S3rver_object`);
    },
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
