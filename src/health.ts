// What /healthz answers: the database in use, this process's memory, the data's size on disk, and
// whether the Directory is whole (a missing folder or a broken section file makes it degraded).
import { stat } from 'node:fs/promises';
import { folderBytes } from './db/disk.ts';
import { FolderObjectStore } from './ledger/object-store.ts';
import type { Services } from './services.ts';

/** `degraded`: the server answers, but the Directory is missing sections its folder should give. */
export type DirectoryHealth = { status: 'ok' | 'degraded'; folder: string; problems: string[] };

export type Health = {
  /** False when anything below is degraded; /healthz still answers 200 (the server is serving). */
  ok: boolean;
  directory: DirectoryHealth;
  database: 'postgres' | 'pglite';
  /** What is captured but not yet committed to the Ledger (src/ledger/spool.ts). */
  spool: ReturnType<Services['spoolState']>;
  memory: { rssBytes: number; heapUsedBytes: number; heapTotalBytes: number; externalBytes: number };
  /** blobFolderBytes is null when blobs go to S3. */
  disk: { databaseBytes: number; blobFolderBytes: number | null };
};

type Disk = Health['disk'];

const shownErrors = (errors: unknown): string =>
  Array.isArray(errors) && errors.length
    ? `: ${errors
        .slice(0, 3)
        .map((e) => (e as { text?: string; message?: string }).text ?? (e as { message?: string }).message)
        .join('; ')}${errors.length > 3 ? ` (and ${errors.length - 3} more)` : ''}`
    : '';

/** What is wrong with the Directory: its folder missing or without sections, sections that failed to build. */
export async function directoryHealth(services: Pick<Services, 'db' | 'directory'>): Promise<DirectoryHealth> {
  const folder = services.directory.options.dir;
  const problems: string[] = [];
  const isFolder = await stat(folder).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isFolder) problems.push(`the Directory folder ${folder} (DIRECTORY_DIR) does not exist or is not a folder: the Directory is empty`);
  const sections = await services.db.prisma.directorySection.findMany({
    select: { type: true, file: true, status: true, errors: true },
    orderBy: { type: 'asc' },
  });
  if (isFolder && sections.length === 0) problems.push(`the Directory folder ${folder} (DIRECTORY_DIR) holds no section files (<type>.csv or <type>.json)`);
  for (const s of sections) {
    if (s.status === 'FAILED') problems.push(`section ${s.type} (${s.file}) failed to build and has no rows${shownErrors(s.errors)}`);
    else if (s.status === 'STALE') problems.push(`section ${s.type} (${s.file}) failed to build; its previous version is live${shownErrors(s.errors)}`);
  }
  return { status: problems.length ? 'degraded' : 'ok', folder, problems };
}

/** Reports health; sizes on disk are walked at most once per `diskCacheMs` (a large folder takes a while). */
export function healthReporter(services: Pick<Services, 'db' | 'ledger' | 'spoolState' | 'directory'>, diskCacheMs = 10_000): () => Promise<Health> {
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
    const directory = await directoryHealth(services);
    return {
      ok: directory.status === 'ok',
      directory,
      database: services.db.kind,
      spool: services.spoolState(),
      memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, heapTotalBytes: memory.heapTotal, externalBytes: memory.external },
      disk: await disk.value,
    };
  };
}
