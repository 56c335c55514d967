// Every spelling of a secret value the redactor knows, as data: one pattern per encoding. The regex that
// finds a secret and the automaton that tells whether a stream's ending may begin one are both built
// from these patterns, so they cannot disagree about what a secret looks like.

/** One character position: the characters it accepts. */
type Atom = string;
/** One way to spell one step: a sequence of atoms (empty: the step may be left out). */
type Spelling = Atom[];
/** One step of a pattern: any one of its spellings. */
type Step = Spelling[];
/** One encoding of a whole secret value. */
export type Pattern = Step[];

/** Strings as JavaScript holds them (UTF-16), or bytes read as latin1 (one character a byte). */
export type Domain = 'text' | 'bytes';

const hexAtoms = (byte: number): Atom[] => [...byte.toString(16).padStart(2, '0')].map(bothCases);
const hex4Atoms = (unit: number): Atom[] => [...unit.toString(16).padStart(4, '0')].map(bothCases);
function bothCases(c: string): Atom {
  const lower = c.toLowerCase();
  const upper = c.toUpperCase();
  return lower === upper ? c : lower + upper;
}
const units = (s: string): Atom[] => Array.from({ length: s.length }, (_, i) => s[i]!);

/** Backslash runs of 1 to 4: a JSON escape, and the same escape inside JSON inside JSON (up to three levels). */
const BACKSLASH_RUNS = [1, 2, 3, 4];
/** `%XX`, and `%25XX`, `%2525XX` for a value percent-encoded twice or three times. */
const PERCENT_LEVELS = [0, 1, 2];
const SHORT_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't' };

/** A backslash, or one percent-encoded once or twice (a JSON-escaped value put in a URL). */
const BACKSLASHES: Atom[][] = [['\\'], ['%', '5', 'cC'], ['%', '2', '5', '5', 'cC']];

const percent = (level: number, byte: number): Atom[] => ['%', ...Array.from({ length: level }, () => ['2', '5']).flat(), ...hexAtoms(byte)];

/** HTML's names for ASCII characters (HTML5; the four legacy ones also upper case and without `;`). */
export const HTML_NAMES: Record<string, string[]> = {
  '\t': ['Tab'],
  '\n': ['NewLine'],
  '!': ['excl'],
  '"': ['quot', 'QUOT'],
  '#': ['num'],
  $: ['dollar'],
  '%': ['percnt'],
  '&': ['amp', 'AMP'],
  "'": ['apos'],
  '(': ['lpar'],
  ')': ['rpar'],
  '*': ['ast', 'midast'],
  '+': ['plus'],
  ',': ['comma'],
  '.': ['period'],
  '/': ['sol'],
  ':': ['colon'],
  ';': ['semi'],
  '<': ['lt', 'LT'],
  '=': ['equals'],
  '>': ['gt', 'GT'],
  '?': ['quest'],
  '@': ['commat'],
  '[': ['lsqb', 'lbrack'],
  '\\': ['bsol'],
  ']': ['rsqb', 'rbrack'],
  '^': ['Hat'],
  _: ['lowbar', 'UnderBar'],
  '`': ['grave', 'DiacriticalGrave'],
  '{': ['lcub', 'lbrace'],
  '|': ['verbar', 'vert', 'VerticalLine'],
  '}': ['rcub', 'rbrace'],
};
const LEGACY_HTML_NAMES = new Set(['quot', 'QUOT', 'amp', 'AMP', 'lt', 'LT', 'gt', 'GT']);
/** Leading zeros a numeric character reference may carry (`&#067;`, `&#x0043;`): up to four. */
const HTML_ZEROS = ['', '0', '00', '000', '0000'];

/**
 * An HTML character reference for one character: decimal `&#67;` or hex `&#x43;` / `&#X43;` (digits in
 * any case) of its code point, with up to four leading zeros and the `;` left out (browsers accept
 * both), or its name (`&sol;`); raw or percent-encoded.
 */
function htmlSpellings(c: string): Spelling[] {
  const raw = htmlReferences(c);
  // A reference put in a URL: its `&`, `#` and `;` percent-encoded (once, twice or three times), as encodeURIComponent does.
  const encoded = PERCENT_LEVELS.flatMap((level) =>
    raw.map((spelling) => spelling.flatMap((atom) => (atom === '&' || atom === '#' || atom === ';' ? percent(level, atom.charCodeAt(0)) : [atom]))),
  );
  return [...raw, ...encoded];
}

function htmlReferences(c: string): Spelling[] {
  const point = c.codePointAt(0)!;
  const out: Spelling[] = [];
  for (const semi of [[';'], []]) {
    for (const zeros of HTML_ZEROS) {
      out.push(['&', '#', ...units(zeros + point.toString(10)), ...semi]);
      out.push(['&', '#', 'xX', ...units(zeros), ...[...point.toString(16)].map(bothCases), ...semi]);
    }
  }
  for (const name of HTML_NAMES[c] ?? []) {
    out.push(['&', ...units(name), ';']);
    if (LEGACY_HTML_NAMES.has(name)) out.push(['&', ...units(name)]);
  }
  return out;
}

/**
 * Each character's step and its regex (regexStep), built once per process and shared, so never changed
 * in place: building them again for every value was most of a redactor's construction (~55 ms for a
 * 64-character key, ~4 ms now), and a process builds many (every logger again when a key joins; the
 * tests start hundreds of apps).
 */
const stepsByChar = new Map<string, Step>();
const stepSources = new WeakMap<Step, string>();

function charSpellings(c: string, domain: Domain): Step {
  const key = `${domain}:${c}`;
  let step = stepsByChar.get(key);
  if (!step) {
    step = spellingsOf(c, domain);
    stepsByChar.set(key, step);
  }
  return step;
}

/**
 * The spellings of one character, any of which may be used for each character independently:
 * raw, percent-encoded (each UTF-8 byte, any hex case, nested up to three times, `+` for a space),
 * a JSON escape (`\uXXXX` any case, `\/`, `\"`, `\n`…) or `\xXX`, nested in JSON up to three levels,
 * or an HTML character reference (htmlSpellings).
 */
function spellingsOf(c: string, domain: Domain): Step {
  const utf8 = [...Buffer.from(c, 'utf8')];
  const spellings: Spelling[] = [domain === 'text' ? units(c) : utf8.map((b) => String.fromCharCode(b))];
  for (const level of PERCENT_LEVELS) spellings.push(utf8.flatMap((b) => percent(level, b)));
  if (c === ' ') spellings.push(['+']);
  spellings.push(...htmlSpellings(c));
  for (const run of BACKSLASH_RUNS) {
    for (const [b, backslash] of BACKSLASHES.entries()) {
      const esc = (rest: Atom[]) => [...Array.from({ length: run }, () => backslash).flat(), ...rest];
      spellings.push(Array.from({ length: c.length }, (_, i) => esc(['u', ...hex4Atoms(c.charCodeAt(i))])).flat());
      if (c.charCodeAt(0) < 0x80) spellings.push(esc(['x', ...hexAtoms(c.charCodeAt(0))]));
      const short = SHORT_ESCAPES[c];
      if (short) spellings.push(esc([short]));
      // After a percent-encoded backslash, the escape's letter or sign may be percent-encoded too (`%5C%2F`).
      if (short && b > 0) spellings.push(esc(percent(b - 1, short.charCodeAt(0))));
    }
  }
  return spellings;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A base64 character, also as a JSON-escaped `\/` and a percent-encoded `+` or `/` (base64 in a URL). */
function base64Step(c: string): Step {
  if (c === '/') return [['/'], ['\\', '/'], ['%', '2', 'fF']];
  if (c === '+') return [['+'], ['%', '2', 'bB']];
  return [[c]];
}

/**
 * A line break base64 may hold anywhere (MIME wraps it at 76 columns, PEM at 64): CRLF or LF, as bytes
 * or JSON-escaped (`\r\n`, `\n`, as it reads in a JSON document holding the wrapped text).
 */
const LINE_BREAK: Step = [['\n'], ['\r', '\n'], ['\\', 'n'], ['\\', 'r', '\\', 'n'], []];
/** The line breaks LINE_BREAK spells, as one regex: what is taken out of a text before looking for a base64 anchor in it. */
export const LINE_BREAKS = /\r?\n|\\r\\n|\\n/g;

/**
 * The characters of base64(prefix of `k` bytes + value) that the value alone decides: a base64
 * character holds 6 bits, so it is the value's when its bits all lie within the value's bytes. The
 * character each side that mixes the value's bits with its neighbours' is taken too when present.
 */
function base64Patterns(bytes: Buffer): Pattern[] {
  const patterns: Pattern[] = [];
  for (const alphabet of [BASE64, BASE64URL]) {
    for (const k of [0, 1, 2]) {
      const encoded = Buffer.concat([Buffer.alloc(k), bytes, Buffer.alloc(2)]).toString('base64');
      const text = alphabet === BASE64 ? encoded : encoded.replace(/\+/g, '-').replace(/\//g, '_');
      const startBits = 8 * k;
      const endBits = 8 * (k + bytes.length);
      const start = Math.ceil(startBits / 6);
      const end = Math.floor(endBits / 6);
      const edge: Step = [[alphabet], []];
      const pattern: Pattern = [...text.slice(start, end)].map((c) => (alphabet === BASE64 ? base64Step(c) : [[c]]));
      if (startBits % 6 !== 0) pattern.unshift(edge);
      if (endBits % 6 !== 0) pattern.push(edge);
      // A line break may fall between any two characters (wrapped base64, at any offset).
      patterns.push(pattern.flatMap((step, i) => (i === 0 ? [step] : [LINE_BREAK, step])));
    }
  }
  return patterns;
}

/** Every encoding of one value, by kind: each kind is found by its own regex behind its own cheap test. */
export type SecretForms = {
  /** Character by character: raw, JSON escapes, percent-encoding, mixed freely. */
  charwise: Pattern;
  hex: Pattern;
  /** base64 and base64url at the three byte alignments, with line breaks anywhere (MIME). */
  base64: Pattern[];
  /** Plain stretches every base64 or base64url spelling at an alignment holds (its `+`, `/` may be spelled otherwise). */
  base64Anchors: string[];
  /** The longest run of decimal digits in the hex spelling: the same in either case ('' when too short to help). */
  hexAnchor: string;
};

export function secretForms(value: string, domain: Domain): SecretForms {
  const bytes = Buffer.from(value, 'utf8');
  const base64 = base64Patterns(bytes);
  const anchors = [0, 1, 2].map((k) => {
    // The inner characters of the base64 pattern at alignment k ('/' where a step has several spellings),
    // and of them the longest stretch without the characters the two alphabets spell differently.
    const inner = base64[k]!.filter((step) => !step.some((s) => s.length === 0)).map((step) => (step.length === 1 ? step[0]![0]! : '/'));
    return longest(inner.join('').split(/[+/]/));
  });
  return {
    charwise: [...value].map((c) => charSpellings(c, domain)),
    hex: [...bytes].flatMap(hexAtoms).map((atom) => [[atom]]),
    base64,
    base64Anchors: anchors,
    hexAnchor: longest(bytes.toString('hex').split(/[a-f]/)).length >= 4 ? longest(bytes.toString('hex').split(/[a-f]/)) : '',
  };
}

const longest = (texts: string[]) => texts.reduce((a, b) => (b.length > a.length ? b : a), '');

export const allPatterns = (forms: SecretForms): Pattern[] => [forms.charwise, forms.hex, ...forms.base64];

/** Any one character as a regex atom without the `u` flag: everything but letters and digits escaped by code. */
function regexChar(c: string): string {
  if (/[A-Za-z0-9]/.test(c)) return c;
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}
const regexAtom = (atom: Atom): string => (atom.length === 1 ? regexChar(atom) : `[${[...atom].map(regexChar).join('')}]`);
/** The spellings as a regex, common beginnings factored out (a trie), so the engine picks a branch by one character. */
function regexAlternatives(spellings: Spelling[]): string {
  const byFirst = new Map<Atom, Spelling[]>();
  let optional = false;
  for (const spelling of spellings) {
    if (spelling.length === 0) optional = true;
    else {
      const [first, ...rest] = spelling;
      const group = byFirst.get(first!) ?? [];
      group.push(rest);
      byFirst.set(first!, group);
    }
  }
  const branches = [...byFirst].map(([first, rests]) => regexAtom(first) + (rests.length === 1 && rests[0]!.length === 0 ? '' : regexAlternatives(rests)));
  // The empty spelling last, so an optional step takes its character when it can.
  if (optional) branches.push('');
  return branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
}
function regexStep(step: Step): string {
  let source = stepSources.get(step);
  if (source === undefined) {
    source = regexAlternatives(step);
    stepSources.set(step, source);
  }
  return source;
}
export const regexSource = (pattern: Pattern): string => pattern.map(regexStep).join('');

/** The longest text a spelling of the pattern can take. */
export const maxLength = (pattern: Pattern): number => pattern.reduce((sum, step) => sum + Math.max(...step.map((s) => s.length)), 0);

/** The shortest text a spelling of the pattern can take. */
export const minLength = (pattern: Pattern): number => pattern.reduce((sum, step) => sum + Math.min(...step.map((s) => s.length)), 0);

/** The characters a spelling of the pattern can begin with (through any optional first steps). */
export function firstChars(pattern: Pattern): Set<string> {
  const out = new Set<string>();
  for (const step of pattern) {
    let optional = false;
    for (const spelling of step) {
      if (spelling.length === 0) optional = true;
      else for (const c of spelling[0]!) out.add(c);
    }
    if (!optional) break;
  }
  return out;
}

/**
 * Whether `s` from `from` to its end is the beginning of a spelling of the pattern that a further
 * character could continue (a spelling already complete whose pattern cannot go on does not count).
 * An automaton over the pattern's steps: every position (step, spelling, atom) the characters so far
 * could have reached, "done" for a complete spelling.
 */
export function mayContinue(pattern: Pattern, s: string, from: number): boolean {
  const DONE = -1;
  // A step has fewer than 1,024 spellings, a spelling fewer than 64 atoms.
  const key = (step: number, spelling: number, atom: number) => (step * 1024 + spelling) * 64 + atom;
  const add = (set: Set<number>, step: number, spelling: number, atom: number): void => {
    if (step === pattern.length) {
      set.add(DONE);
      return;
    }
    if (atom < pattern[step]![spelling]!.length) {
      set.add(key(step, spelling, atom));
      return;
    }
    if (step + 1 === pattern.length) set.add(DONE);
    else for (let next = 0; next < pattern[step + 1]!.length; next++) add(set, step + 1, next, 0);
  };
  let states = new Set<number>();
  for (let spelling = 0; spelling < pattern[0]!.length; spelling++) add(states, 0, spelling, 0);
  for (let i = from; i < s.length; i++) {
    const c = s[i]!;
    const next = new Set<number>();
    for (const state of states) {
      if (state === DONE) continue;
      const atom = state % 64;
      const spelling = Math.floor(state / 64) % 1024;
      const step = Math.floor(state / 65_536);
      if (pattern[step]![spelling]![atom]!.includes(c)) add(next, step, spelling, atom + 1);
    }
    if (next.size === 0 || (next.size === 1 && next.has(DONE))) return false;
    states = next;
  }
  for (const state of states) if (state !== DONE) return true;
  return false;
}
