// Holds the live resolver index and swaps in a new one when the Directory's
// sections change, without ever making a query wait for a build.
import { buildResolverIndexAsync, buildResolverIndex, type ResolverIndex } from './build.ts';
import type { AliasProblem, AliasTable } from './aliases.ts';
import { resolve } from './resolve.ts';
import type { Resolution, ResolveOptions, ResolverRow } from './types.ts';

/** What one build reads: the rows (already mapped to `ResolverRow`) and the alias table. */
export type ResolverSource<R extends ResolverRow> = { rows: readonly R[]; aliases?: AliasTable };

export type ResolverVersion<R extends ResolverRow> = {
  index: ResolverIndex<R>;
  /** The Directory's version: its sections' version tags, combined by the caller (e.g. `tool:ab12…,credential:cd34…`). */
  version: string;
  builtAt: Date;
};

/**
 * The contract the Directory relies on:
 * - `resolve()` always answers from `current`, synchronously; before the first build it answers from an empty index.
 * - `refresh(version, load)` does nothing when `version` is already live or already being built.
 *   Otherwise it calls `load()`, builds in slices (the event loop keeps serving queries from the previous
 *   version), then swaps `current` in one assignment. Versions asked for during a build are coalesced:
 *   only the latest is built next.
 * - A failed load or build leaves the previous version live, is kept in `lastError`, and rejects the promise.
 */
export class ResolverService<R extends ResolverRow = ResolverRow> {
  #current: ResolverVersion<R>;
  #building: { version: string; done: Promise<ResolverVersion<R>> } | undefined;
  #next: { version: string; load: () => ResolverSource<R> | Promise<ResolverSource<R>>; waiters: PromiseWithResolversLike<R>[] } | undefined;
  /** How many builds have completed (tests use it to prove what was rebuilt). */
  builds = 0;
  lastError: unknown;

  constructor(initial?: { version: string } & ResolverSource<R>) {
    this.#current = {
      index: buildResolverIndex(initial?.rows ?? [], initial?.aliases ?? []),
      version: initial?.version ?? '',
      builtAt: new Date(),
    };
  }

  get current(): ResolverVersion<R> {
    return this.#current;
  }

  get aliasProblems(): readonly AliasProblem[] {
    return this.#current.index.aliasProblems;
  }

  resolve(query: string, options?: ResolveOptions): Resolution<R> {
    return resolve(this.#current.index, query, options);
  }

  refresh(version: string, load: () => ResolverSource<R> | Promise<ResolverSource<R>>): Promise<ResolverVersion<R>> {
    if (this.#building?.version === version) return this.#building.done;
    if (!this.#building && this.#current.version === version) return Promise.resolve(this.#current);
    if (this.#building) {
      const waiter = withResolvers<R>();
      const waiters = this.#next?.version === version ? this.#next.waiters : [...(this.#next?.waiters ?? [])];
      waiters.push(waiter);
      this.#next = { version, load, waiters };
      return waiter.promise;
    }
    return this.#start(version, load);
  }

  #start(version: string, load: () => ResolverSource<R> | Promise<ResolverSource<R>>): Promise<ResolverVersion<R>> {
    // Starts after a microtask, so `#building` is set before anything (even a synchronous throw) can settle.
    const done = Promise.resolve().then(async () => {
      try {
        const source = await load();
        const index = await buildResolverIndexAsync(source.rows, source.aliases ?? []);
        this.#current = { index, version, builtAt: new Date() };
        this.builds++;
        this.lastError = undefined;
        return this.#current;
      } catch (error) {
        this.lastError = error;
        throw error;
      } finally {
        this.#building = undefined;
        this.#drain();
      }
    });
    this.#building = { version, done };
    return done;
  }

  #drain() {
    const next = this.#next;
    if (!next) return;
    this.#next = undefined;
    const settle = (p: Promise<ResolverVersion<R>>) =>
      p.then(
        (v) => {
          for (const w of next.waiters) w.resolve(v);
        },
        (e) => {
          for (const w of next.waiters) w.reject(e);
        },
      );
    if (next.version === this.#current.version) settle(Promise.resolve(this.#current));
    else settle(this.#start(next.version, next.load));
  }
}

type PromiseWithResolversLike<R extends ResolverRow> = {
  promise: Promise<ResolverVersion<R>>;
  resolve(value: ResolverVersion<R>): void;
  reject(error: unknown): void;
};

function withResolvers<R extends ResolverRow>(): PromiseWithResolversLike<R> {
  let resolve!: (value: ResolverVersion<R>) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<ResolverVersion<R>>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
