// The redactor: no secret value reaches a stored byte or a log line, in any encoding.
// One rule for every string and every blob: each registered value, spelled in any of the ways
// secret-forms.ts knows (raw, JSON escapes, percent-encoding, HTML character references, mixed freely;
// hex; base64 and base64url at each byte alignment, wrapped or not), is replaced by `[SECRET_NAME]` before hashing, and the names replaced are
// kept with the event.
import {
  HTML_NAMES,
  LINE_BREAKS,
  allPatterns,
  firstChars,
  maxLength,
  mayContinue,
  minLength,
  regexSource,
  secretForms,
  type Domain,
  type Pattern,
} from './secret-forms.ts';
import { encodedTokenAlphabet, encodedTokenRun, mayHoldToken, partialTokenStart, plainTokenAlphabet, plainTokenRun, redactTokenText } from './tokens.ts';

/** One kind of spelling of every registered value as one regex, a capture group per secret. */
class Kind {
  readonly regex: RegExp | null;

  /** Capture group i + 1 is the secret names[i]. */
  private readonly names: string[];
  constructor(names: string[], patterns: Pattern[][]) {
    this.names = names;
    this.regex = names.length ? new RegExp(patterns.map((ps) => `(${ps.map(regexSource).join('|')})`).join('|'), 'g') : null;
  }

  replace(input: string, found: Set<string>): string {
    if (!this.regex) return input;
    let hit = false;
    const out = input.replace(this.regex, (...match: unknown[]) => {
      hit = true;
      const name = this.names[this.names.findIndex((_, g) => match[g + 1] !== undefined)]!;
      found.add(name);
      return `[${name}]`;
    });
    return hit ? out : input;
  }

  spans(text: string): [start: number, end: number][] {
    return this.regex ? [...text.matchAll(this.regex)].map((m) => [m.index, m.index + m[0].length]) : [];
  }
}

/** What any escaped character of these values begins with: `%`, `\u`, `\x`, a backslash run, `+` for a space, `\/`, `&#`, `&sol;`… */
function escapeStarts(values: string[]): string[] {
  const starts = new Set(['%', '\\u', '\\x', '\\\\', '&#']);
  for (const value of values) for (const c of value) for (const name of HTML_NAMES[c] ?? []) starts.add(`&${name}`);
  const short: Record<string, string> = { '"': '\\"', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  for (const value of values) {
    if (value.includes(' ')) starts.add('+');
    for (const [c, escaped] of Object.entries(short)) if (value.includes(c)) starts.add(escaped);
  }
  return [...starts];
}

/**
 * Every registered value in every encoding, for one domain. Each kind of spelling has its own regex
 * behind a test native string search answers: the character-by-character one runs only where an
 * escape of one of their characters can begin or a value appears raw; hex and base64 only where a
 * stretch every such spelling holds appears (hex: its longest run of digits, the same in either case).
 */
class Matcher {
  private readonly values: string[];
  private readonly escapes: string[];
  private readonly anchors: string[];
  private readonly hexAnchors: string[];
  private readonly charwise: Kind;
  private readonly hex: Kind;
  private readonly base64: Kind;
  private readonly patterns: Pattern[];
  /** The base64 patterns: the ones a line break may continue (wrapped base64). */
  private readonly wrappable: Set<Pattern>;
  /** The patterns whose spellings can begin with each character: where a stream's held ending may start. */
  private readonly startingWith = new Map<string, Pattern[]>();
  /** The longest spelling of any value. */
  private readonly longest: number;
  /** The shortest: a shorter text holds no secret (most identifier columns). */
  private readonly shortest: number;

  constructor(secrets: [name: string, value: string][], domain: Domain) {
    // Longest first, so a secret that contains another is replaced whole.
    const ordered = [...secrets].sort((a, b) => b[1].length - a[1].length);
    const names = ordered.map(([name]) => name);
    const forms = ordered.map(([, value]) => secretForms(value, domain));
    // As the text holds them: in bytes, each UTF-8 byte one character.
    this.values = ordered.map(([, value]) => (domain === 'bytes' ? Buffer.from(value).toString('latin1') : value));
    this.escapes = escapeStarts(this.values);
    this.hexAnchors = forms.map((f) => f.hexAnchor);
    this.anchors = forms.flatMap((f) => f.base64Anchors);
    this.charwise = new Kind(
      names,
      forms.map((f) => [f.charwise]),
    );
    this.hex = new Kind(
      names,
      forms.map((f) => [f.hex]),
    );
    this.base64 = new Kind(
      names,
      forms.map((f) => f.base64),
    );
    this.patterns = forms.flatMap(allPatterns);
    this.wrappable = new Set(forms.flatMap((f) => f.base64));
    for (const pattern of this.patterns) {
      for (const c of firstChars(pattern)) this.startingWith.set(c, [...(this.startingWith.get(c) ?? []), pattern]);
    }
    this.longest = Math.max(0, ...this.patterns.map(maxLength));
    this.shortest = Math.min(...this.patterns.map(minLength));
  }

  private mayHoldCharwise(text: string): boolean {
    return this.escapes.some((e) => text.includes(e)) || this.values.some((v) => text.includes(v));
  }

  private mayHoldBase64(text: string): boolean {
    if (this.anchors.some((a) => text.includes(a))) return true;
    // Wrapped base64 (MIME, PEM): the anchor may be cut by a line break; look again without them.
    if (!text.includes('\n') && !text.includes('\\n')) return false;
    const unwrapped = text.replace(LINE_BREAKS, '');
    return unwrapped.length !== text.length && this.anchors.some((a) => unwrapped.includes(a));
  }

  replace(input: string, found: Set<string>): string {
    if (input.length < this.shortest) return input;
    let out = input;
    if (this.mayHoldCharwise(out)) out = this.charwise.replace(out, found);
    if (this.hexAnchors.some((a) => out.includes(a))) out = this.hex.replace(out, found);
    if (this.mayHoldBase64(out)) out = this.base64.replace(out, found);
    return out;
  }

  /** The spans of every complete spelling in the text (each kind searched only past the cheap checks `replace` makes). */
  spans(text: string): [start: number, end: number][] {
    if (text.length < this.shortest) return [];
    const out = this.mayHoldCharwise(text) ? this.charwise.spans(text) : [];
    if (this.hexAnchors.some((a) => text.includes(a))) out.push(...this.hex.spans(text));
    if (this.mayHoldBase64(text)) out.push(...this.base64.spans(text));
    return out;
  }

  /**
   * The length of the longest ending of `text` that a further character could make a spelling of a value.
   * A text that ends a line of anything but base64 (an SSE event, an NDJSON record) is not held for base64
   * that might go on past the break: only a line of base64 alone is wrapped base64 (MIME, PEM).
   */
  partial(text: string): number {
    const lineEnded = endsLineOfText(text);
    for (let p = Math.max(0, text.length - this.longest); p < text.length; p++) {
      const held = this.startingWith.get(text[p]!)?.some((pattern) => !(lineEnded && this.wrappable.has(pattern)) && mayContinue(pattern, text, p));
      if (held) return text.length - p;
    }
    return 0;
  }
}

/** The last line of a wrapped base64 block before its break: base64 or base64url characters alone, 16 or more. */
const wrappedBase64Line = /(?:^|\n)[A-Za-z0-9+/_-]{16,}={0,2}\r?\n$/;

/** Ends with a raw line break after a line that is not wrapped base64 (an empty line included). */
function endsLineOfText(text: string): boolean {
  return text.endsWith('\n') && !wrappedBase64Line.test(text.slice(-100));
}

export class SecretRedactor {
  private readonly text_: Matcher;
  private readonly bytes_: Matcher;

  /** The registry as names to values, or as pairs (one name may then have several values). */
  constructor(secrets: Record<string, string> | [name: string, value: string][]) {
    const entries = (Array.isArray(secrets) ? secrets : Object.entries(secrets)).filter(([, value]) => value.length > 0);
    this.text_ = new Matcher(entries, 'text');
    // Bytes are read as latin1, one character a byte: an ASCII value is spelled the same in both.
    this.bytes_ = entries.every(([, v]) => !/[\x80-\uffff]/.test(v)) ? this.text_ : new Matcher(entries, 'bytes');
  }

  /** A redactor for one stream's chunks in order (see StreamRedactor). */
  stream(found: Set<string> = new Set()): StreamRedactor {
    return new StreamRedactor(this, found);
  }

  /**
   * Where `buf`, what remains of a stream so far, can be cut so that no secret straddles the cut:
   * before an ending that may be the beginning of a secret, and never inside a value or a token run;
   * a token run reaching the end may go on in the next chunk, so it is held whole. Past `holdMax`
   * held bytes the cut is the end, and `swallow` is the alphabet of the run that goes on.
   */
  streamCut(buf: Buffer, holdMax: number): { at: number; swallow?: RegExp } {
    const text = buf.toString('latin1');
    let at = buf.length - Math.max(partialTokenStart(text), this.bytes_.partial(text));
    const spans = this.bytes_.spans(text);
    let openRun: RegExp | undefined;
    if (mayHoldToken(buf)) {
      for (const [run, alphabet] of [
        [plainTokenRun, plainTokenAlphabet],
        [encodedTokenRun, encodedTokenAlphabet],
      ] as const) {
        for (const m of text.matchAll(run)) {
          const end = m.index + m[0].length;
          if (end === buf.length) {
            at = Math.min(at, m.index);
            openRun ??= alphabet;
          } else spans.push([m.index, end]);
        }
      }
    }
    // Each step only moves the cut back, so this ends; what is held stays within two spellings' length.
    for (let moved = true; moved; ) {
      moved = false;
      for (const [start, end] of spans) {
        if (start < at && at < end) {
          at = start;
          moved = true;
        }
      }
    }
    if (openRun && buf.length - at > holdMax) return { at: buf.length, swallow: openRun };
    return { at };
  }

  /** Replaces every secret value in the bytes; returns the same buffer when none is found. */
  bytes(input: Buffer, found: Set<string>): Buffer {
    // latin1 maps each byte to one code unit and back, so the bytes around a secret are kept exactly.
    const text = input.toString('latin1');
    const out = this.bytes_.replace(redactTokenText(text, found), found);
    return out === text ? input : Buffer.from(out, 'latin1');
  }

  text(input: string, found: Set<string>): string {
    return this.text_.replace(redactTokenText(input, found), found);
  }

  /**
   * A JSON value as the text stored for it: every string (keys included) redacted, and then the
   * text as a whole, in case the value spells a secret across its structure; such a value is stored
   * as `{"redacted":"[NAME]"}`.
   */
  jsonText(value: unknown, found: Set<string>): string {
    return this.jsonTextOfRedacted(this.json(value, found), found);
  }

  /**
   * jsonText's last step, for a value `json` already redacted string by string: its text, scanned
   * whole. Safe for any value: a secret left in one of its strings is found by that scan too, and then
   * the whole value is replaced.
   */
  jsonTextOfRedacted(value: unknown, found: Set<string>): string {
    const text = JSON.stringify(value);
    const across = new Set<string>();
    if (this.text(text, across) === text) return text;
    for (const name of across) found.add(name);
    return JSON.stringify({
      redacted: [...across]
        .sort()
        .map((name) => `[${name}]`)
        .join(' '),
    });
  }

  /** Redacts every string (keys included) inside a JSON value; the value itself when nothing was replaced. */
  json<T>(value: T, found: Set<string>): T {
    if (value === null || value === undefined) return value;
    if (typeof value === 'string') return this.text(value, found) as T;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v = this.json(value[i], found);
        if (v !== value[i]) {
          out ??= value.slice();
          out[i] = v;
        }
      }
      return (out ?? value) as T;
    }
    if (typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      // Copied only from the first replacement on: the common case, no secret, allocates no copy.
      let entries: [string, unknown][] | undefined;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const k = this.text(key, found);
        const v = this.json(record[key], found);
        if (!entries && (k !== key || v !== record[key])) entries = keys.slice(0, i).map((before) => [before, record[before]]);
        entries?.push([k, v]);
      }
      return (entries ? Object.fromEntries(entries) : value) as T;
    }
    return value;
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * Redacts a stream chunk by chunk with the guarantee `bytes` gives over the whole: no secret value
 * leaves, even one split across chunks. A chunk that ends with what may be the beginning of a secret
 * keeps those bytes back until the next chunk shows what they are (never more than about twice the
 * longest value; a chunk ending elsewhere, e.g. an SSE event's blank line, goes out whole), and a
 * token run is held until it ends; one held past `holdMax` bytes goes out as [DIRLEDGER_TOKEN] and
 * the rest of it is dropped as it arrives. Outside a secret the bytes out are the bytes in, in order;
 * only the chunk boundaries move.
 */
export class StreamRedactor {
  private held: Buffer = EMPTY;
  private swallowing: RegExp | undefined;

  private readonly redactor: SecretRedactor;
  /** The names of the secrets replaced so far. */
  readonly found: Set<string>;
  private readonly holdMax: number;
  constructor(redactor: SecretRedactor, found: Set<string>, holdMax = 64 * 1024) {
    this.redactor = redactor;
    this.found = found;
    this.holdMax = holdMax;
  }

  /** The next chunk in; what can be sent now out (possibly empty). */
  push(chunk: Uint8Array): Buffer {
    let input = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.swallowing) {
      let skip = 0;
      while (skip < input.length && this.swallowing.test(String.fromCharCode(input[skip]!))) skip++;
      if (skip < input.length) this.swallowing = undefined;
      input = input.subarray(skip);
    }
    if (input.length === 0) return EMPTY;
    const buf = this.held.length ? Buffer.concat([this.held, input]) : input;
    const { at, swallow } = this.redactor.streamCut(buf, this.holdMax);
    // Copied: the sender may reuse the chunk's memory once it has passed.
    this.held = at < buf.length ? Buffer.from(buf.subarray(at)) : EMPTY;
    this.swallowing = swallow;
    return at > 0 ? this.redactor.bytes(buf.subarray(0, at), this.found) : EMPTY;
  }

  /** The stream ended: what was held back, redacted. */
  end(): Buffer {
    const rest = this.held;
    this.held = EMPTY;
    return rest.length ? this.redactor.bytes(rest, this.found) : EMPTY;
  }
}
