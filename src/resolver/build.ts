// Builds the in-memory index the resolver ranks from: every structure a query
// needs is precomputed here, so a query only looks things up.
import { aliasKeyWords, AliasProblemCode, compilePattern, type AliasProblem, type AliasTable } from './aliases.ts';
import { deletions, fnv1a, nameWords, normalizeName, soundex, textWords } from './text.ts';
import type { ResolverRow } from './types.ts';

/** Each text value (description, text columns) is searched up to this many characters. */
export const TEXT_CHARS_PER_VALUE = 2000;

export type AliasEntry = {
  words: string[];
  /** Row ids the alias means, ascending. */
  ids: Int32Array;
  /** Per id: how specific the pattern that reached it is, 0–10 (see `aliasSpecificity`). */
  specificity: Uint8Array;
  /** Per id: which of `patterns` reached it. */
  patternOf: Uint16Array;
  /** Positions in `ids` by specificity (index 0–10), each ascending. */
  bySpecificity: Int32Array[];
  patterns: string[];
};

/** The index. Row ids are positions in `rows`, which are sorted in tie-break order (see `compareRows`). */
export type ResolverIndex<R extends ResolverRow = ResolverRow> = {
  readonly rows: readonly R[];
  readonly normNames: readonly string[];
  readonly typeOf: Int32Array;
  readonly typeNames: readonly string[];
  readonly typeIds: ReadonlyMap<string, number>;
  /** Normalised name → ids. */
  readonly exact: ReadonlyMap<string, number[]>;
  /** Ids sorted by normalised name, and the names in that order, for prefix ranges. */
  readonly byName: Int32Array;
  readonly sortedNames: readonly string[];
  /** Sorted name words joined by a space → ids (the 850 layer). */
  readonly exactWords: ReadonlyMap<string, number[]>;
  readonly tokenIds: ReadonlyMap<string, number>;
  readonly tokens: readonly string[];
  /** Per token: ids whose name has the word. */
  readonly namePost: readonly (Int32Array | undefined)[];
  /** Per token: ids with the word anywhere (name, description, text). */
  readonly rowPost: readonly (Int32Array | undefined)[];
  /** Name words per row, flattened: `nameTok[nameTokStart[id] .. nameTokStart[id+1])`. */
  readonly nameTokStart: Int32Array;
  readonly nameTok: Int32Array;
  /** Deletion neighbourhoods of the alphabetic vocabulary: FNV-1a hashes, ascending, and the token each came from. */
  readonly deleteHashes: Uint32Array;
  readonly deleteTokens: Int32Array;
  /** Soundex code → ids whose name has a word with that code, and those words. */
  readonly soundexRows: ReadonlyMap<string, { ids: Int32Array; tokens: number[] }>;
  readonly aliases: ReadonlyMap<string, AliasEntry>;
  readonly aliasMaxWords: number;
  readonly aliasProblems: readonly AliasProblem[];
  /** Scratch for one query (the resolver is synchronous). */
  readonly stamp: Uint32Array;
  generation: number;
  readonly stats: { rows: number; tokens: number; fuzzyEntries: number; aliases: number; buildMs: number };
};

/** Alias specificity from how many rows a pattern names: 10 for one row, one less each time the count doubles, never below 0. */
export function aliasSpecificity(rowsNamed: number): number {
  return Math.max(0, 10 - Math.ceil(Math.log2(Math.max(1, rowsNamed))));
}

const YIELD_EVERY = 4096;
const alphabetic = /^\p{L}{3,}$/u;

/** Builds synchronously. */
export function buildResolverIndex<R extends ResolverRow>(rows: readonly R[], aliases: AliasTable = []): ResolverIndex<R> {
  const steps = buildSteps(rows, aliases);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Builds in slices, giving the event loop back between them, so queries on the previous index keep being answered. */
export async function buildResolverIndexAsync<R extends ResolverRow>(rows: readonly R[], aliases: AliasTable = []): Promise<ResolverIndex<R>> {
  const steps = buildSteps(rows, aliases);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function* buildSteps<R extends ResolverRow>(input: readonly R[], aliasTable: AliasTable): Generator<void, ResolverIndex<R>> {
  const started = performance.now();
  const n = input.length;

  // Tie-break order: shorter normalised name, then name, then type (code-unit order), then input order.
  const inputNames = input.map((row) => normalizeName(row.name));
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => {
    const na = inputNames[a]!;
    const nb = inputNames[b]!;
    if (na.length !== nb.length) return na.length - nb.length;
    if (na !== nb) return na < nb ? -1 : 1;
    const ta = input[a]!.type;
    const tb = input[b]!.type;
    if (ta !== tb) return ta < tb ? -1 : 1;
    return a - b;
  });
  yield;
  const rows = order.map((i) => input[i]!);
  const normNames = order.map((i) => inputNames[i]!);

  const typeIds = new Map<string, number>();
  const typeNames: string[] = [];
  const typeOf = new Int32Array(n);
  const exact = new Map<string, number[]>();
  const exactWords = new Map<string, number[]>();
  const tokenIds = new Map<string, number>();
  const tokens: string[] = [];
  const nameLists: number[][] = [];
  const rowLists: number[][] = [];
  const lastRow: number[] = [];
  const nameTokStart = new Int32Array(n + 1);
  const nameTokList: number[] = [];

  const tokenOf = (word: string): number => {
    let id = tokenIds.get(word);
    if (id === undefined) {
      id = tokens.length;
      tokenIds.set(word, id);
      tokens.push(word);
      rowLists.push([]);
      nameLists.push([]);
      lastRow.push(-1);
    }
    return id;
  };

  for (let id = 0; id < n; id++) {
    const row = rows[id]!;
    let typeId = typeIds.get(row.type);
    if (typeId === undefined) {
      typeId = typeNames.length;
      typeIds.set(row.type, typeId);
      typeNames.push(row.type);
    }
    typeOf[id] = typeId;
    push(exact, normNames[id]!, id);

    const words = nameWords(row.name);
    push(exactWords, [...words].sort().join(' '), id);
    nameTokStart[id] = nameTokList.length;
    for (const word of words) {
      const t = tokenOf(word);
      if (lastRow[t] === id) continue;
      lastRow[t] = id;
      nameTokList.push(t);
      nameLists[t]!.push(id);
      rowLists[t]!.push(id);
    }
    const texts = row.text ? [row.description ?? '', ...row.text] : [row.description ?? ''];
    for (const value of texts) {
      if (!value) continue;
      for (const word of textWords(value.length > TEXT_CHARS_PER_VALUE ? value.slice(0, TEXT_CHARS_PER_VALUE) : value)) {
        const t = tokenOf(word);
        if (lastRow[t] === id) continue;
        lastRow[t] = id;
        rowLists[t]!.push(id);
      }
    }
    if (id % YIELD_EVERY === YIELD_EVERY - 1) yield;
  }
  nameTokStart[n] = nameTokList.length;

  const byName = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => {
    const na = normNames[a]!;
    const nb = normNames[b]!;
    return na < nb ? -1 : na > nb ? 1 : a - b;
  });
  const sortedNames = Array.from(byName, (id) => normNames[id]!);
  yield;

  // Aliases: every pattern is checked against these rows; one that names no row is reported and not loaded.
  const aliasProblems: AliasProblem[] = [];
  const aliases = new Map<string, AliasEntry>();
  const merged = new Map<string, { words: string[]; patterns: string[]; label: string }>();
  for (const alias of aliasTable) {
    const words = aliasKeyWords(alias.words);
    if (!words.length) {
      aliasProblems.push({
        alias: alias.words,
        code: AliasProblemCode.NO_SEARCHABLE_WORDS,
        message: `Alias "${alias.words}" has only question or stop words, so no query can reach it; not loaded.`,
      });
      continue;
    }
    const key = words.join(' ');
    const seen = merged.get(key);
    if (seen) {
      aliasProblems.push({
        alias: alias.words,
        code: AliasProblemCode.DUPLICATE,
        message: `Alias "${alias.words}" reads the same as "${seen.label}"; their patterns were merged.`,
      });
      seen.patterns.push(...alias.patterns.filter((p) => !seen.patterns.includes(p)));
    } else {
      merged.set(key, { words, patterns: [...new Set(alias.patterns)], label: alias.words });
    }
  }
  for (const [key, { words, patterns, label }] of merged) {
    const best = new Map<number, { specificity: number; pattern: number }>();
    const kept: string[] = [];
    for (const pattern of patterns) {
      const ids = patternRows(pattern, exact, sortedNames, byName, normNames);
      if (!ids.length) {
        aliasProblems.push({
          alias: label,
          pattern,
          code: AliasProblemCode.NAMES_NO_ROW,
          message: `Alias "${label}": pattern ${pattern} names no row in the Directory; not loaded.`,
        });
        continue;
      }
      const index = kept.push(pattern) - 1;
      const specificity = aliasSpecificity(ids.length);
      for (const id of ids) {
        const had = best.get(id);
        if (!had || had.specificity < specificity) best.set(id, { specificity, pattern: index });
      }
    }
    if (!kept.length) {
      aliasProblems.push({ alias: label, code: AliasProblemCode.NAMES_NO_ROW, message: `Alias "${label}" names no row in the Directory; not loaded.` });
      continue;
    }
    const ids = Int32Array.from(best.keys()).sort();
    const specificity = Uint8Array.from(ids, (id) => best.get(id)!.specificity);
    const groups: number[][] = Array.from({ length: 11 }, () => []);
    specificity.forEach((spec, at) => {
      groups[spec]!.push(at);
    });
    aliases.set(key, {
      words,
      ids,
      specificity,
      bySpecificity: groups.map((g) => Int32Array.from(g)),
      patternOf: Uint16Array.from(ids, (id) => best.get(id)!.pattern),
      patterns: kept,
    });
    for (const word of words) tokenOf(word);
  }
  yield;

  const namePost = nameLists.map((list) => (list.length ? Int32Array.from(list) : undefined));
  const rowPost = rowLists.map((list) => (list.length ? Int32Array.from(list) : undefined));
  yield;

  // Deletion neighbourhoods (depth 1, or 2 for words of 6+ letters) of every alphabetic word, as sorted hashes.
  const packed: number[] = [];
  for (let t = 0; t < tokens.length; t++) {
    const word = tokens[t]!;
    if (!alphabetic.test(word)) continue;
    for (const variant of deletions(word, word.length >= 6 ? 2 : 1)) packed.push(fnv1a(variant) * 0x200000 + t);
    if (t % YIELD_EVERY === YIELD_EVERY - 1) yield;
  }
  if (tokens.length >= 0x200000) throw new Error('resolver: more than 2,097,151 distinct words');
  const sortedPacked = Float64Array.from(packed).sort();
  const deleteHashes = new Uint32Array(sortedPacked.length);
  const deleteTokens = new Int32Array(sortedPacked.length);
  for (let i = 0; i < sortedPacked.length; i++) {
    const v = sortedPacked[i]!;
    const t = v % 0x200000;
    deleteTokens[i] = t;
    deleteHashes[i] = (v - t) / 0x200000;
  }
  yield;

  // Soundex over the words of names.
  const byCode = new Map<string, number[]>();
  for (let t = 0; t < tokens.length; t++) {
    if (!namePost[t] || !alphabetic.test(tokens[t]!)) continue;
    const code = soundex(tokens[t]!);
    if (code) push(byCode, code, t);
  }
  const soundexRows = new Map<string, { ids: Int32Array; tokens: number[] }>();
  for (const [code, list] of byCode) {
    soundexRows.set(code, { ids: unionSorted(list.map((t) => namePost[t]!)), tokens: list });
  }

  return {
    rows,
    normNames,
    typeOf,
    typeNames,
    typeIds,
    exact,
    byName,
    sortedNames,
    exactWords,
    tokenIds,
    tokens,
    namePost,
    rowPost,
    nameTokStart,
    nameTok: Int32Array.from(nameTokList),
    deleteHashes,
    deleteTokens,
    soundexRows,
    aliases,
    aliasMaxWords: Math.max(0, ...[...aliases.values()].map((a) => a.words.length)),
    aliasProblems,
    stamp: new Uint32Array(n),
    generation: 0,
    stats: { rows: n, tokens: tokens.length, fuzzyEntries: deleteHashes.length, aliases: aliases.size, buildMs: performance.now() - started },
  };
}

function push<K>(map: Map<K, number[]>, key: K, value: number) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** [lo, hi) of `sorted` whose entries start with `prefix`. */
export function prefixRange(sorted: readonly string[], prefix: string): [number, number] {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  let end = lo;
  let top = sorted.length;
  // Upper bound: the first entry that does not start with the prefix.
  while (end < top) {
    const mid = (end + top) >>> 1;
    if (sorted[mid]!.startsWith(prefix)) end = mid + 1;
    else top = mid;
  }
  return [lo, end];
}

function patternRows(
  pattern: string,
  exact: ReadonlyMap<string, number[]>,
  sortedNames: readonly string[],
  byName: Int32Array,
  normNames: readonly string[],
): number[] {
  const compiled = compilePattern(pattern);
  if (compiled.exact !== undefined) return exact.get(compiled.exact) ?? [];
  if (compiled.prefix !== undefined) {
    const [lo, hi] = prefixRange(sortedNames, compiled.prefix);
    return Array.from(byName.subarray(lo, hi));
  }
  const out: number[] = [];
  for (let id = 0; id < normNames.length; id++) if (compiled.glob!.test(normNames[id]!)) out.push(id);
  return out;
}

/** Sorted, de-duplicated union of sorted id lists. */
export function unionSorted(lists: readonly Int32Array[]): Int32Array {
  if (lists.length === 1) return lists[0]!;
  let total = 0;
  for (const list of lists) total += list.length;
  const all = new Int32Array(total);
  let at = 0;
  for (const list of lists) {
    all.set(list, at);
    at += list.length;
  }
  all.sort();
  let w = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[w++] = all[i]!;
  return all.subarray(0, w);
}
