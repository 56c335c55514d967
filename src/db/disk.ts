// What a folder holds on disk.
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** Bytes allocated on disk to every file under `folder` (0 when it does not exist); symlinks are not followed. */
export async function folderBytes(folder: string): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let total = 0;
  for (const entry of entries) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) total += await folderBytes(full);
    else if (entry.isFile())
      total += await stat(full).then(
        (s) => s.blocks * 512,
        () => 0,
      );
  }
  return total;
}
