// Words: normalising names and queries, framing and stop words, Soundex, and
// the optimal-string-alignment (restricted Damerau–Levenshtein) distance.

/** Case-insensitive; `_`, `-` and whitespace are one separator. Used for the 1000 and 900 layers. */
export function normalizeName(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ')
    .trim();
}

const wordPattern = /[\p{L}\p{N}]+/gu;

/** Lower-cased letter-and-digit runs. `camelCase` splits only after two lower-case letters, so `iMessage` stays one word. */
export function nameWords(name: string): string[] {
  return (
    name
      .normalize('NFKC')
      .replace(/(\p{Ll}{2})(\p{Lu})/gu, '$1 $2')
      .toLowerCase()
      .match(wordPattern) ?? []
  );
}

export function textWords(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(wordPattern) ?? [];
}

/** Question framing, stripped from the start of a query (repeatedly), longest first. */
export const framingPhrases: readonly string[] = [
  'how do i',
  'how can i',
  'how would i',
  'how should i',
  'how to',
  'how do you',
  'how can you',
  'where is my',
  'where is the',
  'where are my',
  'where are the',
  'where is',
  'where are',
  'where can i find',
  'where do i find',
  'what is the',
  'what is my',
  'what is',
  'whats the',
  'whats',
  'what are the',
  'what are',
  'which is the',
  'which',
  'who is',
  'can you',
  'could you',
  'would you',
  'will you',
  'can i',
  'could i',
  'show me the',
  'show me',
  'give me the',
  'give me',
  'tell me about',
  'tell me',
  'help me',
  'let me',
  'get me',
  'i want to',
  'i wanna',
  'i need to',
  'i need',
  'i would like to',
  'id like to',
  'i d like to',
  'i am looking for',
  'im looking for',
  'looking for',
  'search for',
  'look up',
  'find me',
  'is there a',
  'is there an',
  'is there',
  'do you have a',
  'do you have',
  'do we have',
  'please',
];

/** Words never used as search terms. */
export const stopWords: ReadonlySet<string> = new Set([
  'a',
  'an',
  'the',
  'my',
  'our',
  'your',
  'me',
  'i',
  'we',
  'you',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'is',
  'are',
  'was',
  'be',
  'am',
  'do',
  'does',
  'did',
  'can',
  'could',
  'would',
  'should',
  'will',
  'shall',
  'how',
  'what',
  'whats',
  'where',
  'which',
  'who',
  'whom',
  'why',
  'when',
  'to',
  'of',
  'for',
  'in',
  'into',
  'on',
  'at',
  'by',
  'from',
  'with',
  'about',
  'as',
  'and',
  'or',
  'please',
  'some',
  'any',
  'there',
  'thing',
  'something',
  'one',
  'way',
  'want',
  'need',
  'like',
]);

const framingWords = framingPhrases.map((phrase) => phrase.split(' ')).sort((a, b) => b.length - a.length);

/** The query's words with framing and stop words removed, in order. */
export function stripFraming(words: readonly string[]): string[] {
  let start = 0;
  for (let changed = true; changed; ) {
    changed = false;
    for (const phrase of framingWords) {
      if (phrase.length <= words.length - start && phrase.every((w, i) => words[start + i] === w)) {
        start += phrase.length;
        changed = true;
        break;
      }
    }
  }
  return words.slice(start).filter((w) => !stopWords.has(w));
}

/** Query words: apostrophes dropped ("what's" → "whats") before splitting. */
export function queryWords(query: string): string[] {
  return textWords(query.replace(/['’]/g, ''));
}

const soundexCodes: Record<string, string> = {
  b: '1',
  f: '1',
  p: '1',
  v: '1',
  c: '2',
  g: '2',
  j: '2',
  k: '2',
  q: '2',
  s: '2',
  x: '2',
  z: '2',
  d: '3',
  t: '3',
  l: '4',
  m: '5',
  n: '5',
  r: '6',
};

/** American Soundex (letter + three digits; h and w do not separate equal codes). Empty for words without a leading a–z letter. */
export function soundex(word: string): string {
  const first = word[0];
  if (!first || first < 'a' || first > 'z') return '';
  let out = first.toUpperCase();
  let last = soundexCodes[first] ?? '';
  for (let i = 1; i < word.length && out.length < 4; i++) {
    const ch = word[i]!;
    const code = soundexCodes[ch];
    if (code) {
      if (code !== last) out += code;
      last = code;
    } else if (ch !== 'h' && ch !== 'w') {
      last = '';
    }
  }
  return out.padEnd(4, '0');
}

/**
 * The edit budget for a query word: none up to 3 letters, 1 edit for 4–7, 2 for 8 or more.
 * An edit is an insertion, deletion, substitution or transposition of two adjacent letters.
 */
export function editBudget(length: number): number {
  return length < 4 ? 0 : length < 8 ? 1 : 2;
}

const rowA: number[] = [];
const rowB: number[] = [];
const rowC: number[] = [];

/**
 * Optimal string alignment distance (restricted Damerau–Levenshtein: no substring is edited twice),
 * or `max + 1` as soon as it must exceed `max`.
 */
export function osaDistance(a: string, b: string, max: number): number {
  if (a === b) return 0;
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  let prev2 = rowA;
  let prev = rowB;
  let cur = rowC;
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let best = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const bj = b.charCodeAt(j - 1);
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ai === bj ? 0 : 1));
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj) d = Math.min(d, prev2[j - 2]! + 1);
      cur[j] = d;
      if (d < best) best = d;
    }
    if (best > max) return max + 1;
    const t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  return Math.min(prev[m]!, max + 1);
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Every string made by deleting up to `depth` characters (the word itself included), without repeats. */
export function deletions(word: string, depth: number, out: Set<string> = new Set()): Set<string> {
  out.add(word);
  if (depth === 0 || word.length <= 1) return out;
  for (let i = 0; i < word.length; i++) {
    const shorter = word.slice(0, i) + word.slice(i + 1);
    if (!out.has(shorter) || depth > 1) deletions(shorter, depth - 1, out);
  }
  return out;
}
