// Samples a process's resident memory (VmRSS from /proc/<pid>/status, Linux only).
import { readFileSync } from 'node:fs';

export function readRssBytes(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export type RssSampler = { stop(): { maxBytes: number; lastBytes: number; samples: number } };

/** Samples every `intervalMs` until stop(); the maximum is what a memory target is judged on. */
export function sampleRss(pid: number, intervalMs = 50): RssSampler {
  let maxBytes = 0;
  let lastBytes = 0;
  let samples = 0;
  const take = () => {
    const rss = readRssBytes(pid);
    if (rss === null) return;
    samples++;
    lastBytes = rss;
    if (rss > maxBytes) maxBytes = rss;
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { maxBytes, lastBytes, samples };
    },
  };
}

/**
 * Waits at least `minMs`, then until `pid`'s RSS has stayed within `bandBytes` of its lowest for `quietMs` (at most `maxMs`):
 * on a busy machine the start's one-off work (V8 compiling PGlite's parser with TurboFan, ~600 MB for
 * seconds) can end only after the server listens, and would otherwise be counted as ingest memory.
 */
export async function settleRss(pid: number, { bandBytes = 50e6, quietMs = 5000, minMs = 30_000, maxMs = 300_000, intervalMs = 250 } = {}) {
  const t0 = performance.now();
  let low = Number.POSITIVE_INFINITY;
  let high = 0;
  let lastAbove = t0;
  for (;;) {
    const rss = readRssBytes(pid) ?? 0;
    const now = performance.now();
    low = Math.min(low, rss);
    high = Math.max(high, rss);
    if (rss > low + bandBytes) lastAbove = now;
    // A compile that outlasts minMs at a steady height is not told apart: the printed peak shows it.
    if ((now - t0 >= minMs && now - lastAbove >= quietMs) || now - t0 >= maxMs)
      return { seconds: (now - t0) / 1000, maxBytes: high, settled: now - lastAbove >= quietMs };
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
