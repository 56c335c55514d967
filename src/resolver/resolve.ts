// resolve(): words in, ranked rows out, each with the layer that matched and why.
// Layers run best first; a row keeps the first (best) layer that reaches it, and
// the search stops as soon as `limit` rows are held.
import { badInput } from '../errors.ts';
import { prefixRange, type AliasEntry, type ResolverIndex } from './build.ts';
import { deletions, editBudget, fnv1a, normalizeName, osaDistance, queryWords, soundex, stripFraming } from './text.ts';
import {
  ALIAS_SCORE_MAX,
  DEFAULT_LIMIT,
  layerScore,
  LISTING_POINTER,
  MAX_LIMIT,
  MAX_QUERY_LENGTH,
  noMatchMessage,
  ResolverLayer,
  type Correction,
  type Resolution,
  type ResolveOptions,
  type ResolverMatch,
  type ResolverRow,
} from './types.ts';

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

type Found = {
  id: number;
  score: number;
  layer: ResolverLayer;
  /** Indexes into `Query.unknown` (EDIT_DISTANCE, SOUNDS_LIKE), or the alias that matched. */
  words?: number[];
  alias?: { entry: AliasEntry; at: number; key: string };
};

type Unknown = { word: string; fuzzyNameTokens: number[]; corrected: boolean };

type Query = {
  raw: string;
  /** The first searchable word as typed (the 600 layer matches it as the start of a name). */
  first: string | undefined;
  readAs: string[];
  tokens: number[];
  corrections: Correction[];
  unknown: Unknown[];
};

type Options = { minScore: number; limit: number; types: ReadonlySet<number> | null };

export function parseOptions(index: ResolverIndex<ResolverRow>, options: ResolveOptions): Options {
  const minScore = options.minScore ?? 0;
  const limit = options.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(minScore) || minScore < 0 || minScore > 1000)
    throw badInput(`minScore: expected an integer from 0 to 1000, got ${JSON.stringify(minScore)}.`);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw badInput(`limit: expected an integer from 1 to ${MAX_LIMIT}, got ${JSON.stringify(limit)}.`);
  let types: Set<number> | null = null;
  if (options.types?.length) {
    types = new Set();
    for (const type of options.types) {
      const id = index.typeIds.get(type);
      if (id !== undefined) types.add(id);
    }
  }
  return { minScore, limit, types };
}

/** Resolves words to ranked rows of `index`. Throws BAD_INPUT for an empty or over-long query and out-of-range options. */
export function resolve<R extends ResolverRow>(index: ResolverIndex<R>, query: string, options: ResolveOptions = {}): Resolution<R> {
  const text = typeof query === 'string' ? query.trim() : '';
  if (!text) throw badInput('query: expected some words, got nothing.');
  if (text.length > MAX_QUERY_LENGTH) throw badInput(`query: expected at most ${MAX_QUERY_LENGTH} characters, got ${text.length}.`);
  const opts = parseOptions(index, options);
  const q = readQuery(index, text);
  const found = search(index, q, opts);
  const matches = found.hits.map((hit) => toMatch(index, q, hit));
  return { query: text, readAs: q.readAs, corrections: q.corrections, matches, message: message(index, text, q, matches, found.below, opts) };
}

function readQuery(index: ResolverIndex<ResolverRow>, text: string): Query {
  const raw = normalizeName(text.replace(/^["'`\s]+|["'`\s?!.,;:]+$/g, ''));
  const words = [...new Set(stripFraming(queryWords(text)))];
  const readAs: string[] = [];
  const corrections: Correction[] = [];
  const unknown: Unknown[] = [];
  for (const word of words) {
    if (index.tokenIds.has(word)) {
      readAs.push(word);
      continue;
    }
    const candidates = fuzzyCandidates(index, word);
    const best = pickCorrection(index, candidates);
    const fuzzyNameTokens = candidates.filter((c) => index.namePost[c.token]).map((c) => c.token);
    unknown.push({ word, fuzzyNameTokens, corrected: !!best });
    if (best) {
      const to = index.tokens[best.token]!;
      corrections.push({ from: word, to, distance: best.distance });
      if (!readAs.includes(to)) readAs.push(to);
    } else {
      readAs.push(word);
    }
  }
  return { raw, first: words[0], readAs, tokens: readAs.map((w) => index.tokenIds.get(w) ?? -1), corrections, unknown };
}

type Candidate = { token: number; distance: number };

/** Words of the index within the edit budget of `word` (deletion neighbourhoods, then the true distance). */
function fuzzyCandidates(index: ResolverIndex<ResolverRow>, word: string): Candidate[] {
  const budget = /^\p{L}+$/u.test(word) ? editBudget(word.length) : 0;
  if (!budget) return [];
  const out: Candidate[] = [];
  const checked = new Set<number>();
  const hashes = index.deleteHashes;
  for (const variant of deletions(word, budget)) {
    const h = fnv1a(variant);
    let lo = 0;
    let hi = hashes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (hashes[mid]! < h) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < hashes.length && hashes[i] === h; i++) {
      const token = index.deleteTokens[i]!;
      if (checked.has(token)) continue;
      checked.add(token);
      const distance = osaDistance(word, index.tokens[token]!, budget);
      if (distance <= budget) out.push({ token, distance });
    }
  }
  return out;
}

/** The correction: fewest edits, then a word of some name (or an alias), then the most rows, then code-unit order. */
function pickCorrection(index: ResolverIndex<ResolverRow>, candidates: Candidate[]): Candidate | undefined {
  let best: Candidate | undefined;
  let bestKey: [number, number, number, string] | undefined;
  for (const c of candidates) {
    const word = index.tokens[c.token]!;
    const named = index.namePost[c.token] || !index.rowPost[c.token] ? 1 : 0;
    const key: [number, number, number, string] = [c.distance, -named, -(index.rowPost[c.token]?.length ?? 0), word];
    if (!bestKey || compareKeys(key, bestKey) < 0) {
      best = c;
      bestKey = key;
    }
  }
  return best;
}

function compareKeys(a: [number, number, number, string], b: [number, number, number, string]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0;
}

class Collector {
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

function search(index: ResolverIndex<ResolverRow>, q: Query, opts: Options): Collector {
  if (index.generation >= 0xfffffffe) {
    index.stamp.fill(0);
    index.generation = 0;
  }
  const c = new Collector(index, ++index.generation, opts);
  const known = q.tokens.length > 0 && q.tokens.every((t) => t >= 0);

  if (q.raw && c.wants(S.EXACT_NAME)) {
    for (const id of index.exact.get(q.raw) ?? []) c.add({ id, score: S.EXACT_NAME, layer: L.EXACT_NAME });
  }
  if (q.raw && c.wants(S.NAME_PREFIX)) {
    const [lo, hi] = prefixRange(index.sortedNames, q.raw);
    for (const id of smallestEligible(index.byName, lo, hi, c, opts.limit - c.hits.length)) {
      c.add({ id, score: S.NAME_PREFIX, layer: L.NAME_PREFIX });
    }
  }
  if (q.readAs.length && c.wants(S.EXACT_WORDS)) {
    // The query's own word order first.
    const ids = index.exactWords.get([...q.readAs].sort().join(' ')) ?? [];
    const ordered = q.readAs.join(' ');
    for (const pass of [true, false]) {
      for (const id of ids) if (inOrder(index, id, ordered) === pass) c.add({ id, score: S.EXACT_WORDS, layer: L.EXACT_WORDS });
    }
  }
  if (known && c.wants(S.NAME_WORDS)) {
    const lists = q.tokens.map((t) => index.namePost[t]);
    if (lists.every(Boolean)) {
      intersect(lists as Int32Array[], (id) => {
        c.add({ id, score: S.NAME_WORDS, layer: L.NAME_WORDS });
        return c.full;
      });
    }
  }
  if (index.aliases.size && q.readAs.length && c.wants(ALIAS_MAX)) aliasLayer(index, q, c);
  if (known && c.wants(S.ROW_WORDS)) rowWordsLayer(index, q, c);
  if (q.tokens.length > 1 && q.tokens.slice(1).every((t) => t >= 0) && c.wants(S.NAME_START)) nameStartLayer(index, q, c);

  const misspelt = q.unknown.map((u, i) => ({ u, i })).filter(({ u }) => u.fuzzyNameTokens.length);
  if (misspelt.length && c.wants(S.EDIT_DISTANCE)) {
    const lists = misspelt.map(({ u }) => unionOf(u.fuzzyNameTokens.map((t) => index.namePost[t]!)));
    countLayer(
      lists,
      misspelt.map(({ i }) => i),
      c,
      S.EDIT_DISTANCE,
      L.EDIT_DISTANCE,
    );
  }
  const sounding = q.unknown
    .map((u, i) => ({ u, i, entry: !u.corrected && /^\p{L}{3,}$/u.test(u.word) ? index.soundexRows.get(soundex(u.word)) : undefined }))
    .filter((s) => s.entry);
  if (sounding.length && c.wants(S.SOUNDS_LIKE)) {
    countLayer(
      sounding.map((s) => s.entry!.ids),
      sounding.map((s) => s.i),
      c,
      S.SOUNDS_LIKE,
      L.SOUNDS_LIKE,
    );
  }
  return c;
}

function inOrder(index: ResolverIndex<ResolverRow>, id: number, words: string): boolean {
  let joined = '';
  for (let i = index.nameTokStart[id]!, end = index.nameTokStart[id + 1]!; i < end; i++) joined += (joined ? ' ' : '') + index.tokens[index.nameTok[i]!];
  return joined === words;
}

/** The `need` smallest eligible ids among `ids[lo..hi)`, ascending. */
function smallestEligible(ids: Int32Array, lo: number, hi: number, c: Collector, need: number): number[] {
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
function intersect(lists: Int32Array[], visit: (id: number) => boolean): void {
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

function lowerBound(list: Int32Array, value: number, from: number): number {
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

function has(list: Int32Array | undefined, id: number): boolean {
  if (!list) return false;
  const at = lowerBound(list, id, 0);
  return at < list.length && list[at] === id;
}

function nameHas(index: ResolverIndex<ResolverRow>, id: number, token: number): boolean {
  for (let i = index.nameTokStart[id]!, end = index.nameTokStart[id + 1]!; i < end; i++) if (index.nameTok[i] === token) return true;
  return false;
}

function aliasLayer(index: ResolverIndex<ResolverRow>, q: Query, c: Collector): void {
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
function aliasBuckets(
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

function rowWordsLayer(index: ResolverIndex<ResolverRow>, q: Query, c: Collector): void {
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

function nameStartLayer(index: ResolverIndex<ResolverRow>, q: Query, c: Collector): void {
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

function unionOf(lists: Int32Array[]): Int32Array {
  if (lists.length === 1) return lists[0]!;
  const seen = new Set<number>();
  for (const list of lists) for (const id of list) seen.add(id);
  return Int32Array.from(seen).sort();
}

/** Rows in any of `lists`, more lists first, then ascending id. */
function countLayer(lists: Int32Array[], words: number[], c: Collector, score: number, layer: ResolverLayer): void {
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

function toMatch<R extends ResolverRow>(index: ResolverIndex<R>, q: Query, found: Found): ResolverMatch<R> {
  const row = index.rows[found.id]!;
  const corrected = (words: string[]) => {
    const used = q.corrections.filter((k) => words.includes(k.to));
    return used.length ? ` (${used.map((k) => `"${k.from}" read as "${k.to}"`).join(', ')})` : '';
  };
  switch (found.layer) {
    case L.EXACT_NAME:
    case L.NAME_PREFIX: {
      const words = q.raw.split(' ');
      const reason = found.layer === L.EXACT_NAME ? 'its name is the query' : `the query is the start of its name`;
      return { row, score: found.score, layer: found.layer, reason, matchedWords: words };
    }
    case L.EXACT_WORDS:
      return {
        row,
        score: found.score,
        layer: found.layer,
        reason: `the row is named exactly the words of the query${corrected(q.readAs)}`,
        matchedWords: q.readAs,
      };
    case L.NAME_WORDS:
      return {
        row,
        score: found.score,
        layer: found.layer,
        reason: `every word of the query is a word of its name${corrected(q.readAs)}`,
        matchedWords: q.readAs,
      };
    case L.ROW_WORDS:
      return {
        row,
        score: found.score,
        layer: found.layer,
        reason: `every word of the query is somewhere in the row${corrected(q.readAs)}`,
        matchedWords: q.readAs,
      };
    case L.NAME_START:
      return {
        row,
        score: found.score,
        layer: found.layer,
        reason: `its name starts with "${q.first}" and the rest of the query is in the row${corrected(q.readAs)}`,
        matchedWords: q.readAs,
      };
    case L.ALIAS: {
      const { entry, at, key } = found.alias!;
      const pattern = entry.patterns[entry.patternOf[at]!]!;
      const alsoInName = q.readAs.filter((w, k) => !entry.words.includes(w) && q.tokens[k]! >= 0 && nameHas(index, found.id, q.tokens[k]!));
      const words = [...entry.words, ...alsoInName];
      const also = alsoInName.length ? `; ${alsoInName.map((w) => `"${w}"`).join(', ')} also in its name` : '';
      return {
        row,
        score: found.score,
        layer: found.layer,
        reason: `one of the words means this row: "${key}" is an alias for ${describePattern(pattern)}${also}${corrected(words)}`,
        matchedWords: words,
      };
    }
    case L.EDIT_DISTANCE: {
      const parts: string[] = [];
      const words: string[] = [];
      for (const w of found.words ?? []) {
        const u = q.unknown[w]!;
        let near: { word: string; distance: number } | undefined;
        for (const t of u.fuzzyNameTokens) {
          if (!nameHas(index, found.id, t)) continue;
          const distance = osaDistance(u.word, index.tokens[t]!, editBudget(u.word.length));
          if (!near || distance < near.distance) near = { word: index.tokens[t]!, distance };
        }
        if (!near) continue;
        words.push(u.word);
        parts.push(`"${u.word}" is ${near.distance === 1 ? 'one edit' : `${near.distance} edits`} from "${near.word}" in its name`);
      }
      return { row, score: found.score, layer: found.layer, reason: `a word is within its edit budget of the name: ${parts.join('; ')}`, matchedWords: words };
    }
    case L.SOUNDS_LIKE: {
      const parts: string[] = [];
      const words: string[] = [];
      for (const w of found.words ?? []) {
        const u = q.unknown[w]!;
        const code = soundex(u.word);
        let like: string | undefined;
        for (let i = index.nameTokStart[found.id]!, end = index.nameTokStart[found.id + 1]!; i < end && !like; i++) {
          const token = index.tokens[index.nameTok[i]!]!;
          if (/^\p{L}{3,}$/u.test(token) && soundex(token) === code) like = token;
        }
        words.push(u.word);
        parts.push(`"${u.word}" sounds like "${like}" (Soundex ${code})`);
      }
      return {
        row,
        score: found.score,
        layer: found.layer,
        reason: `one word of the query sounds like part of the name: ${parts.join('; ')}`,
        matchedWords: words,
      };
    }
  }
}

function describePattern(pattern: string): string {
  if (pattern.startsWith('=')) return `the name ${pattern.slice(1)}`;
  return pattern.includes('*') ? `names like ${pattern}` : `names starting ${pattern}`;
}

function message(index: ResolverIndex<ResolverRow>, query: string, q: Query, matches: ResolverMatch[], below: Found | undefined, opts: Options): string {
  if (!matches.length) {
    if (below) {
      const row = index.rows[below.id]!;
      return `Nothing in the Directory scored at least ${opts.minScore} for "${query}"; the best was ${row.name} (${row.type}) at ${below.score}. ${LISTING_POINTER}`;
    }
    return noMatchMessage(query);
  }
  const top = matches[0]!;
  const read = q.readAs.length ? `read as "${q.readAs.join(' ')}"` : 'read as typed';
  return `${matches.length} ${matches.length === 1 ? 'row' : 'rows'} for "${query}", ${read}; best ${top.row.name} (${top.row.type}) at ${top.score}: ${top.reason}.`;
}
