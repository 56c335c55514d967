// Writes test/resolver/labelled-queries.json: queries derived from the seed-scale fixture
// (rows 24,890, seed 1) with the rows each one means, labelled from how the query was made,
// never from what the resolver answers. Hand-written demo-directory queries are kept as they are.
//
//   node test/resolver/make-labelled-queries.ts
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDirectory } from '../../src/directory/fixtures.ts';
import { parseAliasTable } from '../../src/resolver/aliases.ts';
import { buildResolverIndex } from '../../src/resolver/build.ts';
import { resolverRowsFromSections } from '../../src/resolver/from-sections.ts';
import { editBudget, nameWords, osaDistance, soundex, stopWords, textWords } from '../../src/resolver/text.ts';
import type { LabelledQuery, LabelledSet, QueryClass } from './labelled.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, 'labelled-queries.json');
const PER_CLASS = 36;

function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(l: readonly T[]) => l[Math.floor(next() * l.length)]! };
}

const r = prng(4);
const rows = resolverRowsFromSections(generateDirectory({ rows: 24890, seed: 1 }));
const aliases = parseAliasTable(JSON.parse(readFileSync(path.join(here, 'fixture-aliases.json'), 'utf8')));
const index = buildResolverIndex(rows, aliases);
const vocabulary = new Set(index.tokens);
const nameVocabulary = new Set(index.tokens.filter((_, t) => index.namePost[t]));
const words = rows.map((row) => nameWords(row.name));
const rowText = rows.map((row) => new Set([...nameWords(row.name), ...textWords([row.description ?? '', ...(row.text ?? [])].join(' '))]));
const toolIds = rows.map((row, i) => (row.type === 'tool' ? i : -1)).filter((i) => i >= 0);
const multiWord = rows.map((_, i) => i).filter((i) => words[i]!.length >= 2 && words[i]!.every((w) => !stopWords.has(w)));

const queries: LabelledQuery[] = [];
const seen = new Set<string>();
function add(cls: QueryClass, q: string, expect: string[]) {
  const key = q.toLowerCase();
  if (seen.has(key) || (cls !== 'nothing' && !expect.length)) return false;
  seen.add(key);
  queries.push({ q, class: cls, source: 'fixture', expect: [...new Set(expect)].sort() });
  return true;
}
const sameWords = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join(' ') === [...b].sort().join(' ');
const namesWithWords = (ws: string[]) => rows.filter((_, i) => sameWords(words[i]!, ws)).map((row) => row.name);
const namesContaining = (ws: string[], among: number[] = rows.map((_, i) => i)) =>
  among.filter((i) => ws.every((w) => words[i]!.includes(w))).map((i) => rows[i]!.name);
function fill(cls: QueryClass, make: () => [string, string[]] | undefined, count = PER_CLASS) {
  for (let made = 0, tries = 0; made < count && tries < count * 200; tries++) {
    const got = make();
    if (got && add(cls, got[0], got[1])) made++;
  }
}

// Exact names, any type.
fill('exact', () => {
  const row = rows[r.int(rows.length)]!;
  return [row.name, rows.filter((x) => x.name.toLowerCase() === row.name.toLowerCase()).map((x) => x.name)];
});

// Prefixes: cut inside the last word, just long enough that one name starts with it.
fill('prefix', () => {
  const i = r.pick(multiWord);
  const name = rows[i]!.name;
  const lower = name.toLowerCase().replace(/[_-]/g, ' ');
  for (let cut = Math.max(4, lower.lastIndexOf(' ') + 2); cut < lower.length; cut++) {
    const prefix = lower.slice(0, cut);
    const hits = index.sortedNames.filter((n) => n.startsWith(prefix));
    if (hits.length === 1) return [name.slice(0, cut), [name]];
  }
  return undefined;
});

// Other word orders.
fill('word-order', () => {
  const i = r.pick(multiWord.filter((k) => words[k]!.length >= 2 && new Set(words[k]).size === words[k]!.length));
  const ws = words[i]!;
  const shuffled = [...ws].reverse();
  if (shuffled.join(' ') === ws.join(' ')) return undefined;
  return [shuffled.join(' '), namesWithWords(ws)];
});

// Aliases: an everyday word that is no name's word, with the rest of a tool's name.
const aliasOnly = [...index.aliases.entries()].filter(([key]) => key.split(' ').every((w) => !nameVocabulary.has(w)));
fill('alias', () => {
  const [key, entry] = r.pick(aliasOnly);
  const ids = Array.from(entry.ids).filter((id) => index.rows[id]!.type === 'tool');
  if (!ids.length) return undefined;
  const row = index.rows[r.pick(ids)]!;
  const ws = nameWords(row.name)
    .slice(1)
    .filter((w) => !/\d/.test(w));
  if (!ws.length) return undefined;
  const q = r.next() < 0.5 ? `${ws.join(' ')} ${key}` : `${ws[0]} ${key} ${ws.slice(1).join(' ')}`.trim();
  const expect = Array.from(entry.ids)
    .filter((id) => ws.every((w) => nameWords(index.rows[id]!.name).includes(w)))
    .map((id) => index.rows[id]!.name);
  return [q, expect];
});

// Misspellings: one edit (half substitutions, insertions, deletions; half transpositions) in one word of a name.
const letters = 'abcdefghijklmnopqrstuvwxyz';
function misspell(word: string, transpose: boolean): string {
  const i = 1 + r.int(word.length - 2);
  if (transpose) return word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
  const op = r.int(3);
  const ch = r.pick([...letters]);
  if (op === 0) return word.slice(0, i) + ch + word.slice(i + 1);
  if (op === 1) return word.slice(0, i) + ch + word.slice(i);
  return word.slice(0, i) + word.slice(i + 1);
}
for (const [cls, transpose] of [
  ['typo', false],
  ['transposition', true],
] as const) {
  fill(
    cls,
    () => {
      const i = r.pick(r.next() < 0.5 ? toolIds : multiWord);
      const ws = words[i]!;
      const k = ws.findIndex((w) => /^[a-z]{5,}$/.test(w) && (!transpose || w.length >= 6));
      if (k < 0) return undefined;
      const typo = misspell(ws[k]!, transpose);
      if (typo === ws[k] || vocabulary.has(typo) || osaDistance(typo, ws[k]!, 1) !== 1) return undefined;
      const q = ws.map((w, j) => (j === k ? typo : w)).join(' ');
      return [q, namesWithWords(ws).length ? namesWithWords(ws) : [rows[i]!.name]];
    },
    cls === 'typo' ? PER_CLASS / 2 : PER_CLASS / 2,
  );
}

// Sound-alikes: vowels changed so the Soundex code stays but the word is beyond its edit budget.
const vowels = 'aeiou';
fill('sound-alike', () => {
  const i = r.pick(toolIds);
  const ws = words[i]!.filter((w) => /^[a-z]{5,}$/.test(w));
  if (!ws.length) return undefined;
  const word = r.pick(ws);
  const chars = [...word];
  const positions = chars.map((c, k) => (k > 0 && vowels.includes(c) ? k : -1)).filter((k) => k > 0);
  if (positions.length < 2) return undefined;
  for (const k of positions) chars[k] = r.pick([...vowels].filter((v) => v !== chars[k]));
  const alike = chars.join('');
  if (soundex(alike) !== soundex(word) || vocabulary.has(alike) || osaDistance(alike, word, editBudget(alike.length)) <= editBudget(alike.length))
    return undefined;
  // Anything that is alike and not otherwise nearer counts: every name holding the original word.
  return [alike, namesContaining([word])];
});

// Framed questions.
const frames = {
  tool: ['how do I', 'can you', 'I want to', 'show me how to', 'how can I'],
  credential: ['where is my', 'what is the', 'show me the', 'where is the'],
  file: ['where is the file', 'show me', 'open'],
  other: ['what is', 'show me the', 'tell me about', 'where is'],
};
fill('framed', () => {
  const i = r.pick(multiWord);
  const row = rows[i]!;
  const frame = r.pick(frames[row.type as keyof typeof frames] ?? frames.other);
  const ws = words[i]!;
  if (frame === 'open' || ws.some((w) => stopWords.has(w))) return undefined;
  const q = `${frame} ${ws.join(' ')}${r.next() < 0.3 ? '?' : ''}`;
  return [q, namesWithWords(ws)];
});

// Paraphrases with no alias: the tool's verb and object, and the service named as its description names it.
const descOnly = (i: number) => [...rowText[i]!].filter((w) => !words[i]!.includes(w) && !stopWords.has(w) && /^[a-z]{4,}$/.test(w));
fill(
  'paraphrase',
  () => {
    const i = r.pick(toolIds);
    const ws = words[i]!.slice(1);
    const nouns = descOnly(i).filter((w) =>
      [
        'mailbox',
        'account',
        'workspace',
        'organisation',
        'line',
        'number',
        'project',
        'team',
        'calendar',
        'drive',
        'store',
        'base',
        'portal',
        'server',
        'bot',
        'spreadsheet',
        'folder',
        'archive',
        'notes',
        'shortcuts',
        'phone',
        'terminal',
        'browser',
        'mac',
      ].includes(w),
    );
    if (!nouns.length || !ws.length) return undefined;
    const noun = r.pick(nouns);
    const q = `${ws.join(' ')} in the ${noun}`;
    const expect = toolIds
      .filter((k) => [...ws, noun].every((w) => rowText[k]!.has(w)) && words[k]!.slice(1).join(' ') === ws.join(' '))
      .map((k) => rows[k]!.name);
    return [q, expect];
  },
  PER_CLASS - 8,
);
// True paraphrases: no word of the name at all. The resolver is lexical; these measure that limit.
for (const [q, expect] of [
  ['remove a shopper from the online shop', namesContaining(['shopify', 'delete', 'customer'])],
  ['message my friend on the mac', namesContaining(['imsg', 'send'])],
  ['pay back a client', namesContaining(['stripe', 'refund'])],
  ['make a new payment request', namesContaining(['stripe', 'create', 'invoice'])],
  ['post in the team channel', namesContaining(['slack', 'send'])],
  ['put a meeting in my diary', namesContaining(['gcal', 'create', 'event'])],
  ['secret for the command line', namesContaining(['terminal', 'key'])],
  ['copy files to the cloud', namesContaining(['dropbox', 'upload'])],
] as const)
  add('paraphrase', q, [...expect]);

// Must return nothing: no word is known, near a known word, or sounds like a word of a name.
const nonsenseFirst = 'qxzjy';
fill(
  'nothing',
  () => {
    const length = 4 + r.int(5);
    let word = r.pick([...nonsenseFirst]);
    while (word.length < length) word += r.pick([...letters]);
    const nearby = index.tokens.some((t) => Math.abs(t.length - word.length) <= 2 && osaDistance(word, t, editBudget(word.length)) <= editBudget(word.length));
    const sounds = index.tokens.some((t, k) => index.namePost[k] && /^\p{L}{3,}$/u.test(t) && soundex(t) === soundex(word));
    if (vocabulary.has(word) || nearby || sounds) return undefined;
    const q = r.next() < 0.4 ? `${r.pick(['how do I', 'where is my', 'what is', 'can you'])} ${word}` : word;
    return [q, []];
  },
  PER_CLASS - 6,
);
for (const q of ['how do I', 'where is my', 'what is the', 'can you show me', '???', 'the a an']) add('nothing', q, []);

const previous: LabelledSet | undefined = (() => {
  try {
    return JSON.parse(readFileSync(out, 'utf8')) as LabelledSet;
  } catch {
    return undefined;
  }
})();
const demo = previous?.queries.filter((q) => q.source === 'demo') ?? [];
const set: LabelledSet = {
  about:
    'Queries over the seed-scale fixture (generateDirectory({ rows: 24890, seed: 1 }) with test/resolver/fixture-aliases.json), labelled by how each was made (test/resolver/make-labelled-queries.ts), and hand-written queries over the demo directory. `expect`: every row name that is a right answer; empty means nothing may match.',
  queries: [...queries, ...demo],
};
writeFileSync(out, `${JSON.stringify(set, null, 1)}\n`);
const counts: Record<string, number> = {};
for (const q of set.queries) counts[q.class] = (counts[q.class] ?? 0) + 1;
process.stdout.write(`${set.queries.length} queries → ${out}\n${JSON.stringify(counts)}\n`);
