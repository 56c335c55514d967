// The layers below NAME_WORDS that need more than one lookup: aliases, words anywhere in the row,
// the start of a name, and the counted fuzzy layers (EDIT_DISTANCE, SOUNDS_LIKE).
import type { AliasEntry, ResolverIndex } from './build.ts';
import type { Collector, Found } from './collector.ts';
import { has, intersect, lowerBound, nameHas } from './postings.ts';
import { prefixRange } from './build.ts';
import type { Query } from './query.ts';
import { ALIAS_SCORE_MAX, layerScore, ResolverLayer, type ResolverRow } from './types.ts';

// Module-local copies: imported bindings can compile to getters, which cost in the hot loops.
const S = { ...layerScore };
const L = { ...ResolverLayer };
const ALIAS_MAX = ALIAS_SCORE_MAX;

/** Points inside the alias band per other query word that is also a word of the row's name, up to `ALIAS_WORD_POINTS_MAX`. */
export const ALIAS_WORD_POINTS = 6;
export const ALIAS_WORD_POINTS_MAX = 12;

/**
 * The alias band: 750 + specificity (0–10: 10 when the pattern names one row, one less each time the
 * count doubles) + 6 per other query word found in the row's name (at most 12), capped at 772.
 */
export function aliasScore(specificity: number, otherWordsInName: number): number {
  return Math.min(ALIAS_MAX, S.ALIAS + specificity + Math.min(ALIAS_WORD_POINTS_MAX, ALIAS_WORD_POINTS * otherWordsInName));
}

export function aliasLayer(index: ResolverIndex<ResolverRow>, q: Query, c: Collector): void {
  const hits: { entry: AliasEntry; key: string; others: number[] }[] = [];
  for (let i = 0; i < q.readAs.length; i++) {
    for (let len = Math.min(index.aliasMaxWords, q.readAs.length - i); len >= 1; len--) {
      const key = q.readAs.slice(i, i + len).join(' ');
      const entry = index.aliases.get(key);
      if (!entry) continue;
      hits.push({ entry, key, others: q.tokens.filter((t, k) => t >= 0 && (k < i || k >= i + len)) });
      break;
    }
  }
  if (!hits.length) return;
  // One bucket per score in the band, each in ascending id and capped at what is still needed.
  const need = c.remaining;
  const buckets: Found[][] = Array.from({ length: ALIAS_MAX - S.ALIAS + 1 }, () => []);
  if (hits.length === 1) {
    aliasBuckets(index, hits[0]!, c, need, buckets);
  } else {
    const best = new Map<number, number>();
    for (const { entry, key, others } of hits) {
      for (let at = 0; at < entry.ids.length; at++) {
        const id = entry.ids[at]!;
        if (!c.eligible(id)) continue;
        let inName = 0;
        for (const t of others) if (nameHas(index, id, t)) inName++;
        const score = aliasScore(entry.specificity[at]!, inName);
        if ((best.get(id) ?? 0) >= score) continue;
        best.set(id, score);
        buckets[score - S.ALIAS]!.push({ id, score, layer: L.ALIAS, alias: { entry, at, key } });
      }
    }
    for (const bucket of buckets) {
      const kept = bucket.filter((f) => best.get(f.id) === f.score).sort((x, y) => x.id - y.id);
      bucket.length = 0;
      bucket.push(...kept);
    }
  }
  for (let b = buckets.length - 1; b >= 0 && !c.full; b--) for (const found of buckets[b]!) if (!c.full) c.add(found);
}

/** One alias: rows with other query words in their name from the postings, the rest from the specificity groups, best first. */
export function aliasBuckets(
  index: ResolverIndex<ResolverRow>,
  hit: { entry: AliasEntry; key: string; others: number[] },
  c: Collector,
  need: number,
  buckets: Found[][],
): void {
  const { entry, key, others } = hit;
  const inName = new Map<number, number>();
  for (const t of others) {
    const post = index.namePost[t];
    if (!post) continue;
    for (let i = 0, at = 0; i < post.length && at < entry.ids.length; i++) {
      at = lowerBound(entry.ids, post[i]!, at);
      if (entry.ids[at] === post[i]) inName.set(at, (inName.get(at) ?? 0) + 1);
    }
  }
  for (const at of [...inName.keys()].sort((a, b) => a - b)) {
    const id = entry.ids[at]!;
    if (!c.eligible(id)) continue;
    const score = aliasScore(entry.specificity[at]!, inName.get(at)!);
    const bucket = buckets[score - S.ALIAS]!;
    if (bucket.length < need) bucket.push({ id, score, layer: L.ALIAS, alias: { entry, at, key } });
  }
  for (let spec = 10; spec >= 0; spec--) {
    let held = 0;
    for (let b = spec; b < buckets.length; b++) held += buckets[b]!.length;
    if (held >= need) return;
    const bucket = buckets[spec]!;
    for (const at of entry.bySpecificity[spec]!) {
      if (bucket.length >= need) break;
      const id = entry.ids[at]!;
      if (inName.has(at) || !c.eligible(id)) continue;
      bucket.push({ id, score: S.ALIAS + spec, layer: L.ALIAS, alias: { entry, at, key } });
    }
  }
}

export function rowWordsLayer(index: ResolverIndex<ResolverRow>, q: Query, c: Collector): void {
  const lists = q.tokens.map((t) => index.rowPost[t]);
  if (!lists.every(Boolean)) return;
  const add = (id: number) => c.add({ id, score: S.ROW_WORDS, layer: L.ROW_WORDS });
  if (q.tokens.length === 1) {
    intersect(lists as Int32Array[], (id) => {
      add(id);
      return c.full;
    });
    return;
  }
  // More of the query's words in the name first: one bucket per count, each capped at what is still needed.
  const need = c.remaining;
  const buckets: number[][] = q.tokens.map(() => []);
  intersect(lists as Int32Array[], (id) => {
    if (!c.eligible(id)) return false;
    let inName = 0;
    for (const t of q.tokens) if (nameHas(index, id, t)) inName++;
    const bucket = buckets[Math.min(inName, buckets.length - 1)]!;
    if (bucket.length < need) bucket.push(id);
    return buckets[buckets.length - 1]!.length >= need;
  });
  for (let b = buckets.length - 1; b >= 0 && !c.full; b--) for (const id of buckets[b]!) if (!c.full) add(id);
}

export function nameStartLayer(index: ResolverIndex<ResolverRow>, q: Query, c: Collector): void {
  const first = q.first!;
  const rest = q.tokens.slice(1).map((t) => index.rowPost[t]);
  if (!rest.every(Boolean)) return;
  const lists = rest as Int32Array[];
  const [lo, hi] = prefixRange(index.sortedNames, first);
  if (lo === hi) return;
  const add = (id: number) => c.add({ id, score: S.NAME_START, layer: L.NAME_START });
  const smallest = Math.min(...lists.map((l) => l.length));
  if (hi - lo < smallest) {
    const ids: number[] = [];
    for (let i = lo; i < hi; i++) {
      const id = index.byName[i]!;
      if (c.eligible(id) && lists.every((l) => has(l, id))) ids.push(id);
    }
    ids.sort((a, b) => a - b);
    for (const id of ids) if (!c.full) add(id);
    return;
  }
  intersect(lists, (id) => {
    if (index.normNames[id]!.startsWith(first)) add(id);
    return c.full;
  });
}

/** Rows in any of `lists`, more lists first, then ascending id. */
export function countLayer(lists: Int32Array[], words: number[], c: Collector, score: number, layer: ResolverLayer): void {
  const need = c.remaining;
  if (lists.length === 1) {
    for (const id of lists[0]!) {
      if (c.full) return;
      if (c.eligible(id)) c.add({ id, score, layer, words: [words[0]!] });
    }
    return;
  }
  const at = new Int32Array(lists.length);
  const buckets: Found[][] = lists.map(() => []);
  for (;;) {
    let min = Infinity;
    for (let k = 0; k < lists.length; k++) if (at[k]! < lists[k]!.length && lists[k]![at[k]!]! < min) min = lists[k]![at[k]!]!;
    if (min === Infinity) break;
    const hitWords: number[] = [];
    for (let k = 0; k < lists.length; k++) {
      if (lists[k]![at[k]!] === min) {
        hitWords.push(words[k]!);
        at[k]!++;
      }
    }
    if (!c.eligible(min)) continue;
    const bucket = buckets[hitWords.length - 1]!;
    if (bucket.length < need) bucket.push({ id: min, score, layer, words: hitWords });
    if (buckets[lists.length - 1]!.length >= need) break;
  }
  for (let b = buckets.length - 1; b >= 0; b--) for (const found of buckets[b]!) if (!c.full) c.add(found);
}
