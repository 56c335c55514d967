// Gives memory back once the server goes quiet. V8 keeps what a busy spell (or the start) grew: the
// young generation's semi-spaces, freed pages in its pool, short-lived large objects never scavenged.
// Its own memory reducer should return them but never starts on an idle server: with no garbage
// collection after the start, its allocation-rate sample stays the start's ("high alloc") for good.
// So once no request has begun for `quietMs` and none is in flight, after at least one began since
// the last time (the start counts as one), this runs one memory-reducing full collection (V8's
// last-resort flavor: compact, shrink the young generation, release pooled pages). Once per
// busy-to-quiet turn: never while requests go on, never again while the server stays quiet.
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

export type IdleTrimOptions = {
  /** How long no request may begin before the collection runs. */
  quietMs: number;
  /** Requests begun so far (any count that grows with each). */
  started(): number;
  /** Whether a request is still being answered. */
  inFlight(): boolean;
  /** How often the counts are read. */
  checkMs?: number;
  /** Told of each collection: its duration and the RSS before and after, in bytes. */
  onTrim?: (trim: { ms: number; rssBefore: number; rssAfter: number }) => void;
};

export type IdleTrim = {
  /** Collections run so far. */
  trims(): number;
  stop(): void;
};

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** V8's `gc()` without starting node with --expose-gc (the flag only adds it to contexts made after it is set). */
function exposedGc(): Collect {
  const existing = (globalThis as { gc?: Collect }).gc;
  if (existing) return existing;
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Collect;
}

export function trimWhenIdle(options: IdleTrimOptions): IdleTrim {
  const collect = exposedGc();
  let seen = options.started();
  let quietSince = performance.now();
  let dirty = true;
  let count = 0;
  const timer = setInterval(() => {
    const started = options.started();
    if (started !== seen || options.inFlight()) {
      seen = started;
      dirty = true;
      quietSince = performance.now();
      return;
    }
    if (!dirty || performance.now() - quietSince < options.quietMs) return;
    const rssBefore = process.memoryUsage.rss();
    const t0 = performance.now();
    collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    count++;
    dirty = false;
    options.onTrim?.({ ms: performance.now() - t0, rssBefore, rssAfter: process.memoryUsage.rss() });
  }, options.checkMs ?? 1_000);
  timer.unref();
  return { trims: () => count, stop: () => clearInterval(timer) };
}
