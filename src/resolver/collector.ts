// The rows a search holds so far: each row placed once, by the best layer that reaches it.
import type { AliasEntry, ResolverIndex } from './build.ts';
import type { Options } from './query.ts';
import type { ResolverLayer, ResolverRow } from './types.ts';

export type Found = {
  id: number;
  score: number;
  layer: ResolverLayer;
  /** Indexes into `Query.unknown` (EDIT_DISTANCE, SOUNDS_LIKE), or the alias that matched. */
  words?: number[];
  alias?: { entry: AliasEntry; at: number; key: string };
};

export class Collector {
  readonly hits: Found[] = [];
  below: Found | undefined;
  private readonly index: ResolverIndex<ResolverRow>;
  private readonly gen: number;
  private readonly opts: Options;
  constructor(index: ResolverIndex<ResolverRow>, gen: number, opts: Options) {
    this.index = index;
    this.gen = gen;
    this.opts = opts;
  }

  get full(): boolean {
    return this.hits.length >= this.opts.limit;
  }

  /** How many more rows the answer can hold (at least 1 while probing below minScore). */
  get remaining(): number {
    return Math.max(1, this.opts.limit - this.hits.length);
  }

  /** Not yet placed by a better layer, and of an allowed type. */
  eligible(id: number): boolean {
    if (this.index.stamp[id] === this.gen) return false;
    return !this.opts.types || this.opts.types.has(this.index.typeOf[id]!);
  }

  add(found: Found): void {
    if (!this.eligible(found.id)) return;
    this.index.stamp[found.id] = this.gen;
    if (found.score >= this.opts.minScore) this.hits.push(found);
    else this.below ??= found;
  }

  /** Whether a layer whose best score is `max` can still change the answer. */
  wants(max: number): boolean {
    if (this.full) return false;
    return max >= this.opts.minScore || (!this.hits.length && !this.below);
  }
}
