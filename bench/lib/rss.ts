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
