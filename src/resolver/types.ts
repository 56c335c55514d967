// The resolver's public shapes: what it indexes and what it answers.

/** What the resolver needs of a Directory row. The directory maps its rows to this (extra fields are kept and returned). */
export type ResolverRow = {
  name: string;
  type: string;
  kind?: string | null;
  description?: string | null;
  /** Other text columns (body, path, value…), searched by the 700 and 600 layers. */
  text?: readonly string[] | null;
};

/** Every layer, best first. A score names its layer; it is never a probability. */
export const ResolverLayer = {
  EXACT_NAME: 'EXACT_NAME',
  NAME_PREFIX: 'NAME_PREFIX',
  EXACT_WORDS: 'EXACT_WORDS',
  NAME_WORDS: 'NAME_WORDS',
  ALIAS: 'ALIAS',
  ROW_WORDS: 'ROW_WORDS',
  NAME_START: 'NAME_START',
  EDIT_DISTANCE: 'EDIT_DISTANCE',
  SOUNDS_LIKE: 'SOUNDS_LIKE',
} as const;
export type ResolverLayer = (typeof ResolverLayer)[keyof typeof ResolverLayer];

export const layerScore = {
  EXACT_NAME: 1000,
  NAME_PREFIX: 900,
  EXACT_WORDS: 850,
  NAME_WORDS: 800,
  /** The band's floor; see `aliasScore`. */
  ALIAS: 750,
  ROW_WORDS: 700,
  NAME_START: 600,
  EDIT_DISTANCE: 300,
  SOUNDS_LIKE: 200,
} as const satisfies Record<ResolverLayer, number>;

export const ALIAS_SCORE_MAX = 772;

export const layerDescription: Record<ResolverLayer, string> = {
  EXACT_NAME: 'its name is the query',
  NAME_PREFIX: 'the query is the start of its name',
  EXACT_WORDS: 'its name is exactly the words of the query',
  NAME_WORDS: 'every word of the query is a word of its name',
  ALIAS: 'a word of the query is an alias that means this row',
  ROW_WORDS: 'every word of the query is somewhere in the row',
  NAME_START: 'its name starts with the first word and the rest is in the row',
  EDIT_DISTANCE: 'a word is one edit or one transposition away from a word of its name',
  SOUNDS_LIKE: 'a word sounds like part of its name',
};

export type ResolverMatch<R extends ResolverRow = ResolverRow> = {
  row: R;
  score: number;
  layer: ResolverLayer;
  reason: string;
  /** The query words (as read) that matched; for EDIT_DISTANCE and SOUNDS_LIKE, the words as typed. */
  matchedWords: string[];
};

export type Correction = { from: string; to: string; distance: number };

export type Resolution<R extends ResolverRow = ResolverRow> = {
  query: string;
  /** The words after framing, stop words and correction. */
  readAs: string[];
  corrections: Correction[];
  matches: ResolverMatch<R>[];
  message: string;
};

export type ResolveOptions = {
  /** Refuse anything scored below this (0–1000). Default 0. */
  minScore?: number | null;
  /** At most this many matches (1–100). Default 10. */
  limit?: number | null;
  /** Only rows of these types; absent or empty means every type. */
  types?: readonly string[] | null;
};

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
export const MAX_QUERY_LENGTH = 500;
export const LISTING_POINTER = 'Every row is listed at GET /api/directory';

/** The exact answer when no layer matches. */
export function noMatchMessage(query: string): string {
  return `Nothing in the Directory is called, or means, "${query}". ${LISTING_POINTER}`;
}
