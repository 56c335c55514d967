// Sorted id lists (postings) and a row's name words: intersect, search, union, membership.
import type { ResolverIndex } from './build.ts';
import type { Collector } from './collector.ts';
import type { ResolverRow } from './types.ts';

export function inOrder(index: ResolverIndex<ResolverRow>, id: number, words: string): boolean {
  let joined = '';
  for (let i = index.nameTokStart[id]!, end = index.nameTokStart[id + 1]!; i < end; i++) joined += (joined ? ' ' : '') + index.tokens[index.nameTok[i]!];
  return joined === words;
}

/** The `need` smallest eligible ids among `ids[lo..hi)`, ascending. */
export function smallestEligible(ids: Int32Array, lo: number, hi: number, c: Collector, need: number): number[] {
  const best: number[] = [];
  if (need <= 0) return best;
  for (let i = lo; i < hi; i++) {
    const id = ids[i]!;
    if (best.length === need && id > best[need - 1]!) continue;
    if (!c.eligible(id)) continue;
    let at = best.length;
    while (at > 0 && best[at - 1]! > id) at--;
    best.splice(at, 0, id);
    if (best.length > need) best.pop();
  }
  return best;
}

/** Calls `visit` with each id in every list, ascending, until it returns true. */
export function intersect(lists: Int32Array[], visit: (id: number) => boolean): void {
  const sorted = [...lists].sort((a, b) => a.length - b.length);
  const base = sorted[0]!;
  const cursors = new Int32Array(sorted.length);
  outer: for (let i = 0; i < base.length; i++) {
    const id = base[i]!;
    for (let k = 1; k < sorted.length; k++) {
      const list = sorted[k]!;
      const at = lowerBound(list, id, cursors[k]!);
      cursors[k] = at;
      if (at >= list.length) return;
      if (list[at] !== id) continue outer;
    }
    if (visit(id)) return;
  }
}

export function lowerBound(list: Int32Array, value: number, from: number): number {
  // Gallop, then binary search.
  let step = 1;
  let hi = from;
  while (hi < list.length && list[hi]! < value) {
    from = hi + 1;
    hi += step;
    step <<= 1;
  }
  hi = Math.min(hi, list.length);
  while (from < hi) {
    const mid = (from + hi) >>> 1;
    if (list[mid]! < value) from = mid + 1;
    else hi = mid;
  }
  return from;
}

export function has(list: Int32Array | undefined, id: number): boolean {
  if (!list) return false;
  const at = lowerBound(list, id, 0);
  return at < list.length && list[at] === id;
}

export function nameHas(index: ResolverIndex<ResolverRow>, id: number, token: number): boolean {
  for (let i = index.nameTokStart[id]!, end = index.nameTokStart[id + 1]!; i < end; i++) if (index.nameTok[i] === token) return true;
  return false;
}

export function unionOf(lists: Int32Array[]): Int32Array {
  if (lists.length === 1) return lists[0]!;
  const seen = new Set<number>();
  for (const list of lists) for (const id of list) seen.add(id);
  return Int32Array.from(seen).sort();
}
