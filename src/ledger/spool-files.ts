// The spool's files: segment names, the folder lock, and segments prepared ahead of need.
//
// A segment is created, zero-filled to its size and made durable (blocks written, size and name
// committed) before any record goes into it; records are then written over the zeros in place,
// O_DSYNC. Writing over allocated, written blocks changes no metadata, so each durable write is the
// data alone, with no journal commit of a new file size (measured here: p50 0.116 ms against 0.186
// ms for an append).
import { constants } from 'node:fs';
import { open, readFile, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { DomainError, ErrorCode } from '../errors.ts';
import { zeroChunk } from './spool-frame.ts';

/** The file operations the spool makes; a test replaces them to inject a full disk or a failing sync. */
export type SpoolIo = {
  /** Writes all of `bytes` (records) at `position`. */
  write(file: FileHandle, bytes: Buffer, position: number): Promise<void>;
  sync(file: FileHandle): Promise<void>;
  /** Writes zeros into a segment being prepared; `write` when not given. */
  fill?(file: FileHandle, bytes: Buffer, position: number): Promise<void>;
};

export const defaultIo: SpoolIo = {
  async write(file, bytes, position) {
    let offset = 0;
    while (offset < bytes.length) offset += (await file.write(bytes, offset, bytes.length - offset, position + offset)).bytesWritten;
  },
  // Segments are O_DSYNC: a write returns once its bytes are durable.
  sync: async () => {},
};

export const segmentPattern = /^segment-(\d{12})\.spool$/;
export const segmentName = (n: number) => `segment-${String(n).padStart(12, '0')}.spool`;
export const lockName = 'spool.lock';

export type PreparedSegment = { name: string; file: FileHandle; capacity: number };

/**
 * Creates segment `name` zero-filled to `capacity` bytes and durable, name included, and opens it
 * O_DSYNC for writing over in place (one trip to the thread pool per durable write, where a write
 * and an fdatasync took two). A segment that could not be prepared is removed.
 */
export async function prepareSegment(dir: string, name: string, capacity: number, io: SpoolIo): Promise<PreparedSegment> {
  const file = path.join(dir, name);
  const filler = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
  try {
    for (let at = 0; at < capacity; at += zeroChunk.length) {
      await (io.fill ?? defaultIo.write)(filler, zeroChunk.subarray(0, Math.min(zeroChunk.length, capacity - at)), at);
      // Chunk by chunk: no one flush holds the disk long while appends go on.
      await filler.datasync();
    }
    await filler.sync();
    await filler.close();
    await syncDir(dir);
    return { name, file: await open(file, constants.O_WRONLY | constants.O_DSYNC), capacity };
  } catch (error) {
    await filler.close().catch(() => {});
    await unlink(file).catch(() => {});
    throw error;
  }
}

/** Makes the folder's entries (a new or removed name) durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The folder belongs to one process: a lock file names it; a lock left by a dead process is taken over. */
export async function takeLock(dir: string): Promise<void> {
  const file = path.join(dir, lockName);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n${process.argv.join(' ')}\n`, { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const [pidLine = '', command = ''] = (await readFile(file, 'utf8').catch(() => '')).split('\n');
    const pid = Number(pidLine);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      throw new DomainError(
        ErrorCode.SPOOL_UNAVAILABLE,
        `The spool folder ${dir} is in use by process ${pid} (${command.slice(0, 200)}); one process per spool folder.`,
      );
    }
    await unlink(file).catch(() => {});
  }
  throw new DomainError(ErrorCode.SPOOL_UNAVAILABLE, `Could not take the spool folder ${dir}: another process keeps taking it.`);
}

export async function releaseLock(dir: string): Promise<void> {
  await unlink(path.join(dir, lockName)).catch(() => {});
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
