// The secret registry's one job in the ledger: no secret value reaches a stored byte.
// Every registered value found in payload bytes, URLs, headers or metadata is replaced
// by `[SECRET_NAME]` before hashing, and the names replaced are kept with the event.

type Needle = { name: string; bytes: Buffer; text: string; replacement: Buffer };

/**
 * Bearer tokens are credentials too. Every dirledger token starts with these 16 characters (the
 * macaroon v2 header with location "dirledger"); the whole base64url run from there is replaced.
 */
export const TOKEN_SECRET_NAME = 'DIRLEDGER_TOKEN';
const tokenStart = 'AgEJZGlybGVkZ2Vy';
const tokenStartBytes = Buffer.from(tokenStart);
/** The characters of base64(token) that the token's fixed start decides, at each of the 3 byte alignments. */
const encodedTokenTexts = [0, 1, 2].map((k) => {
  const encoded = Buffer.concat([Buffer.alloc(k), tokenStartBytes]).toString('base64');
  return encoded.slice(4 * Math.ceil(k / 3), 4 * Math.floor((k + tokenStartBytes.length) / 3));
});
const encodedTokenStarts = encodedTokenTexts.map((t) => Buffer.from(t));
const encodedTokenRun = new RegExp(`[A-Za-z0-9+/_=-]*(?:${encodedTokenTexts.join('|')})[A-Za-z0-9+/_=-]*`, 'g');

export class SecretRedactor {
  private readonly needles: Needle[];
  /** What begins a secret: each value in each of its forms, and a token's fixed start (plain and encoded). */
  private readonly starts: Buffer[];

  constructor(secrets: Record<string, string>) {
    const needles: Needle[] = [];
    for (const [name, value] of Object.entries(secrets)) {
      const forms = new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1), Buffer.from(value).toString('base64')]);
      for (const form of forms) {
        needles.push({ name, bytes: Buffer.from(form), text: form, replacement: Buffer.from(`[${name}]`) });
      }
    }
    // Longest first, so a secret that contains another is replaced whole.
    this.needles = needles.sort((a, b) => b.bytes.length - a.bytes.length);
    this.starts = [...needles.map((n) => n.bytes), tokenStartBytes, ...encodedTokenStarts];
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
    let at = buf.length - this.partialStart(buf);
    const spans: [start: number, end: number][] = [];
    for (const needle of this.needles) {
      for (let i = buf.indexOf(needle.bytes); i >= 0; i = buf.indexOf(needle.bytes, i + 1)) spans.push([i, i + needle.bytes.length]);
    }
    let openRun: RegExp | undefined;
    if (mayHoldToken(buf)) {
      const text = buf.toString('latin1');
      for (const [run, alphabet] of [[plainTokenRun, plainTokenAlphabet], [encodedTokenRun, encodedTokenAlphabet]] as const) {
        for (const m of text.matchAll(run)) {
          const end = m.index + m[0].length;
          if (end === buf.length) {
            at = Math.min(at, m.index);
            openRun ??= alphabet;
          } else spans.push([m.index, end]);
        }
      }
    }
    // Each step only moves the cut back, so this ends; what is held stays within two values' length.
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

  /** The length of the longest ending of `buf` that is a proper beginning of a secret. */
  private partialStart(buf: Buffer): number {
    let longest = 0;
    for (const start of this.starts) {
      for (let k = Math.min(start.length - 1, buf.length); k > longest; k--) {
        if (buf.compare(start, 0, k, buf.length - k, buf.length) === 0) {
          longest = k;
          break;
        }
      }
    }
    return longest;
  }

  /** Replaces every secret value in the bytes; returns the same buffer when none is found. */
  bytes(input: Buffer, found: Set<string>): Buffer {
    let out = redactTokenBytes(input, found);
    for (const needle of this.needles) {
      let at = out.indexOf(needle.bytes);
      if (at < 0) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (at >= 0) {
        parts.push(out.subarray(from, at), needle.replacement);
        from = at + needle.bytes.length;
        at = out.indexOf(needle.bytes, from);
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
      found.add(needle.name);
    }
    return out;
  }

  text(input: string, found: Set<string>): string {
    let out = redactTokenText(input, found);
    for (const needle of this.needles) {
      if (!out.includes(needle.text)) continue;
      out = out.split(needle.text).join(`[${needle.name}]`);
      found.add(needle.name);
    }
    return out;
  }

  /** Redacts every string (keys included) inside a JSON value; the value itself when nothing was replaced. */
  json<T>(value: T, found: Set<string>): T {
    if (value === null || value === undefined) return value;
    if (typeof value === 'string') return this.text(value, found) as T;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v = this.json(value[i], found);
        if (v !== value[i]) (out ??= value.slice())[i] = v;
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

  constructor(
    private readonly redactor: SecretRedactor,
    /** The names of the secrets replaced so far. */
    readonly found: Set<string>,
    private readonly holdMax = 64 * 1024,
  ) {}

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

/** Whether the bytes hold a token's fixed start, plain or base64-encoded (the cheap test before any regex). */
function mayHoldToken(bytes: Buffer): boolean {
  return bytes.indexOf(tokenStartBytes) >= 0 || encodedTokenStarts.some((n) => bytes.indexOf(n) >= 0);
}

function redactTokenBytes(input: Buffer, found: Set<string>): Buffer {
  if (!mayHoldToken(input)) return input;
  // latin1 maps each byte to one code unit and back, so the bytes around a token are kept exactly.
  const text = input.toString('latin1');
  const out = redactTokenText(text, found);
  return out === text ? input : Buffer.from(out, 'latin1');
}

/** Every dirledger token in the text, plain or base64-encoded, replaced by [DIRLEDGER_TOKEN] (for log lines). */
export function redactTokens(text: string): string {
  return redactTokenText(text, new Set());
}

const plainTokenRun = new RegExp(`${tokenStart}[A-Za-z0-9_-]*`, 'g');
const plainTokenAlphabet = /^[A-Za-z0-9_-]$/;
const encodedTokenAlphabet = /^[A-Za-z0-9+/_=-]$/;

/** Plain tokens, and tokens base64-encoded inside other text (Basic auth, a base64 field): the whole base64 run goes. */
function redactTokenText(text: string, found: Set<string>): string {
  let out = text.includes(tokenStart) ? text.replace(plainTokenRun, () => (found.add(TOKEN_SECRET_NAME), `[${TOKEN_SECRET_NAME}]`)) : text;
  if (encodedTokenTexts.some((n) => out.includes(n))) out = out.replace(encodedTokenRun, () => (found.add(TOKEN_SECRET_NAME), `[${TOKEN_SECRET_NAME}]`));
  return out;
}
