// Why each row matched, in words, and the one-line message of a resolution.
import type { ResolverIndex } from './build.ts';
import type { Found } from './collector.ts';
import { nameHas } from './postings.ts';
import type { Options, Query } from './query.ts';
import { editBudget, osaDistance, soundex } from './text.ts';
import { LISTING_POINTER, noMatchMessage, ResolverLayer, type ResolverMatch, type ResolverRow } from './types.ts';

// Module-local copy: imported bindings can compile to getters.
const L = { ...ResolverLayer };

export function toMatch<R extends ResolverRow>(index: ResolverIndex<R>, q: Query, found: Found): ResolverMatch<R> {
  const row = index.rows[found.id]!;
  const corrected = (words: string[]) => {
    const used = q.corrections.filter((k) => words.includes(k.to));
    return used.length ? ` (${used.map((k) => `"${k.from}" read as "${k.to}"`).join(', ')})` : '';
  };
  /** A layer that matched every word of the query as read. */
  const everyWord = (reason: string): ResolverMatch<R> => ({
    row,
    score: found.score,
    layer: found.layer,
    reason: `${reason}${corrected(q.readAs)}`,
    matchedWords: q.readAs,
  });
  switch (found.layer) {
    case L.EXACT_NAME:
    case L.NAME_PREFIX: {
      const words = q.raw.split(' ');
      const reason = found.layer === L.EXACT_NAME ? 'its name is the query' : `the query is the start of its name`;
      return { row, score: found.score, layer: found.layer, reason, matchedWords: words };
    }
    case L.EXACT_WORDS:
      return everyWord('the row is named exactly the words of the query');
    case L.NAME_WORDS:
      return everyWord('every word of the query is a word of its name');
    case L.ROW_WORDS:
      return everyWord('every word of the query is somewhere in the row');
    case L.NAME_START:
      return everyWord(`its name starts with "${q.first}" and the rest of the query is in the row`);
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

export function describePattern(pattern: string): string {
  if (pattern.startsWith('=')) return `the name ${pattern.slice(1)}`;
  return pattern.includes('*') ? `names like ${pattern}` : `names starting ${pattern}`;
}

export function message(index: ResolverIndex<ResolverRow>, query: string, q: Query, matches: ResolverMatch[], below: Found | undefined, opts: Options): string {
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
