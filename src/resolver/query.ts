// A query as the resolver reads it: known words, corrections of unknown ones (deletion
// neighbourhoods and edit distance), and the options checked once.
import { badInput } from '../errors.ts';
import type { ResolverIndex } from './build.ts';
import { deletions, editBudget, fnv1a, normalizeName, osaDistance, queryWords, stripFraming } from './text.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, type Correction, type ResolveOptions, type ResolverRow } from './types.ts';

export type Unknown = { word: string; fuzzyNameTokens: number[]; corrected: boolean };

export type Query = {
  raw: string;
  /** The first searchable word as typed (the 600 layer matches it as the start of a name). */
  first: string | undefined;
  readAs: string[];
  tokens: number[];
  corrections: Correction[];
  unknown: Unknown[];
};

export type Options = { minScore: number; limit: number; types: ReadonlySet<number> | null };

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

export function readQuery(index: ResolverIndex<ResolverRow>, text: string): Query {
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

export type Candidate = { token: number; distance: number };

/** Words of the index within the edit budget of `word` (deletion neighbourhoods, then the true distance). */
export function fuzzyCandidates(index: ResolverIndex<ResolverRow>, word: string): Candidate[] {
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
export function pickCorrection(index: ResolverIndex<ResolverRow>, candidates: Candidate[]): Candidate | undefined {
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

export function compareKeys(a: [number, number, number, string], b: [number, number, number, string]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0;
}
