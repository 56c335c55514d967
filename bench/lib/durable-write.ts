// The disk's own price of durability: 4 KiB written O_DSYNC over blocks already zero-filled and
// synced (as the spool writes: data only, no new file size), timed one at a time on this thread.
// The writes are spaced `gapMs` apart, as calls space them: here a write after an idle millisecond
// costs about twice one straight after another (0.27 against 0.15 ms p50), the waking of an idle core.
import { closeSync, constants, fsyncSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';

/** Times `n` durable 4 KiB writes `gapMs` apart, in ms, in a file made in `dir` and removed after. */
export async function durableWriteTimes(dir: string, n: number, gapMs = 1): Promise<number[]> {
  const file = path.join(dir, 'durable-write-probe');
  const block = Buffer.alloc(4096, 0x61);
  const filler = openSync(file, 'w');
  try {
    writeSync(filler, Buffer.alloc(n * block.length));
    fsyncSync(filler);
  } finally {
    closeSync(filler);
  }
  const fd = openSync(file, constants.O_WRONLY | constants.O_DSYNC);
  const times: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      writeSync(fd, block, 0, block.length, i * block.length);
      times.push(performance.now() - t0);
      await sleep(gapMs);
    }
  } finally {
    closeSync(fd);
    unlinkSync(file);
  }
  return times;
}
