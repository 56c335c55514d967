// What /healthz answers: the database in use, this process's memory and the data's size on disk.
import { folderBytes } from './db/disk.ts';
import { FolderObjectStore } from './ledger/object-store.ts';
import type { Services } from './services.ts';

export type Health = {
  ok: true;
  database: 'postgres' | 'pglite';
  /** What is captured but not yet committed to the Ledger (src/ledger/spool.ts). */
  spool: ReturnType<Services['spoolState']>;
  memory: { rssBytes: number; heapUsedBytes: number; heapTotalBytes: number; externalBytes: number };
  /** blobFolderBytes is null when blobs go to S3. */
  disk: { databaseBytes: number; blobFolderBytes: number | null };
};

type Disk = Health['disk'];

/** Reports health; sizes on disk are walked at most once per `diskCacheMs` (a large folder takes a while). */
export function healthReporter(services: Pick<Services, 'db' | 'ledger' | 'spoolState'>, diskCacheMs = 10_000): () => Promise<Health> {
  let disk: { at: number; value: Promise<Disk> } | undefined;
  const measureDisk = async (): Promise<Disk> => {
    const objects = services.ledger.objects;
    const folder = objects instanceof FolderObjectStore ? objects.folder : undefined;
    const [databaseBytes, blobFolderBytes] = await Promise.all([services.db.sizeBytes(), folder ? folderBytes(folder) : null]);
    return { databaseBytes, blobFolderBytes };
  };
  return async () => {
    const now = Date.now();
    if (!disk || now - disk.at > diskCacheMs) {
      disk = { at: now, value: measureDisk() };
      disk.value.catch(() => (disk = undefined));
    }
    const memory = process.memoryUsage();
    return {
      ok: true,
      database: services.db.kind,
      spool: services.spoolState(),
      memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, heapTotalBytes: memory.heapTotal, externalBytes: memory.external },
      disk: await disk.value,
    };
  };
}
