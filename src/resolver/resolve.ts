// resolve(): words in, ranked rows out, each with the layer that matched and why.
// Layers run best first; a row keeps the first (best) layer that reaches it, and
// the search stops as soon as `limit` rows are held.
import { badInput } from '../errors.ts';
import { prefixRange, type ResolverIndex } from './build.ts';
import { Collector } from './collector.ts';
import { message, toMatch } from './explain.ts';
import { aliasLayer, countLayer, nameStartLayer, rowWordsLayer } from './layers.ts';
import { inOrder, intersect, smallestEligible, unionOf } from './postings.ts';
import { parseOptions, readQuery, type Options, type Query } from './query.ts';
import { soundex } from './text.ts';
import { ALIAS_SCORE_MAX, layerScore, MAX_QUERY_LENGTH, ResolverLayer, type Resolution, type ResolveOptions, type ResolverRow } from './types.ts';

// Module-local copies: imported bindings can compile to getters, which cost in the hot loops.
const S = { ...layerScore };
const L = { ...ResolverLayer };
const ALIAS_MAX = ALIAS_SCORE_MAX;

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
