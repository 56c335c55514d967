// One process per data folder. The embedded database takes `<folder>.lock` (created with O_EXCL)
// before it touches the folder; the file names the holder (pid, command, start time) and, once it
// listens, the URL it serves, so the CLI can use that server instead of opening a second copy.
// A lock left by a process that is gone (SIGKILL, power loss) is taken over: its pid is no longer
// running, or runs a different process (another start time in /proc/<pid>/stat).
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type LockHolder = {
  pid: number;
  command: string;
  /** When the holder took the lock (ISO 8601). */
  startedAt: string;
  hostname: string;
  /** The kernel's start time of the holder process (/proc/<pid>/stat field 22): tells a reused pid apart. */
  processStart?: string;
  /** The origin the holder serves (http://host:port), once it listens. */
  url?: string;
};

export class FolderLockedError extends Error {
  readonly code = 'DATA_FOLDER_LOCKED';
  readonly folder: string;
  readonly holder: LockHolder;
  constructor(folder: string, holder: LockHolder) {
    super(
      `The data folder ${folder} is in use by another dirledger process: pid ${holder.pid} (${holder.command}) on ${holder.hostname}, since ${holder.startedAt}. ` +
        (holder.url
          ? `It serves ${holder.url}: use that server (dirledger call/find/tail/mcp find it, or pass --url ${holder.url}), or stop it first.`
          : 'Stop it first, or give this process another DATA_DIR (or a DATABASE_URL).') +
        ` Nothing was written. (Lock file: ${lockPathOf(folder)}.)`,
    );
    this.folder = folder;
    this.holder = holder;
  }
}

export const lockPathOf = (folder: string) => `${path.resolve(folder)}.lock`;

function processStartOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote `holder` still runs; a holder on another host is taken as running. */
function isRunning(holder: LockHolder): boolean {
  if (holder.hostname !== os.hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = processStartOf(holder.pid);
  return !(holder.processStart && start && start !== holder.processStart);
}

function readHolder(file: string): LockHolder | null | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const h = JSON.parse(text) as LockHolder;
    return typeof h.pid === 'number' ? h : 'unreadable';
  } catch {
    return 'unreadable'; // being written this instant, or torn by a crash while writing
  }
}

/** The running process holding `folder`, or null when none does (no lock, or a stale one). */
export function folderHolder(folder: string): LockHolder | null {
  const holder = readHolder(lockPathOf(folder));
  return holder && holder !== 'unreadable' && isRunning(holder) ? holder : null;
}

function writeFileDurably(file: string, text: string, flags: string): void {
  const fd = openSync(file, flags, 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export type FolderLock = {
  readonly file: string;
  /** Records the URL this process serves, for the CLI to find. */
  setUrl(url: string): void;
  release(): void;
};

/**
 * Takes the folder's lock or throws FolderLockedError naming the holder, before anything is written
 * in the folder (only its parent is created when missing).
 */
export function acquireFolderLock(folder: string): FolderLock {
  const file = lockPathOf(folder);
  mkdirSync(path.dirname(file), { recursive: true });
  const me: LockHolder = {
    pid: process.pid,
    command: process.argv
      .map((a) => path.basename(a))
      .join(' ')
      .slice(0, 300),
    startedAt: new Date().toISOString(),
    hostname: os.hostname(),
    ...(processStartOf(process.pid) && { processStart: processStartOf(process.pid) }),
  };
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileDurably(file, JSON.stringify(me), 'wx');
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(file);
    if (holder === null) continue; // released meanwhile
    if (holder === 'unreadable') {
      // A holder writes its few bytes at once; unreadable twice in a row is a torn file from a crash.
      if (attempt < 2) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
        continue;
      }
    } else if (isRunning(holder) || attempt >= 3) throw new FolderLockedError(folder, holder);
    // Stale: moved aside first, so two processes taking it over cannot both remove a fresh lock.
    const aside = `${file}.stale-${process.pid}`;
    try {
      renameSync(file, aside);
      unlinkSync(aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  let released = false;
  const onExit = () => release();
  process.once('exit', onExit);
  function release() {
    if (released) return;
    released = true;
    process.off('exit', onExit);
    const holder = readHolder(file);
    if (holder && holder !== 'unreadable' && holder.pid === process.pid) unlinkSync(file);
  }
  return {
    file,
    setUrl(url) {
      if (released) return;
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileDurably(tmp, JSON.stringify({ ...me, url }), 'w');
      renameSync(tmp, file);
    },
    release,
  };
}
