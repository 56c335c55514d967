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

  /** Redacts every string (keys included) inside a JSON value. */
  json<T>(value: T, found: Set<string>): T {
    if (value === null || value === undefined) return value;
    if (typeof value === 'string') return this.text(value, found) as T;
    if (Array.isArray(value)) return value.map((v) => this.json(v, found)) as T;
    if (typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [this.text(k, found), this.json(v, found)]),
      ) as T;
    }
    return value;
  }
}

function redactTokenBytes(input: Buffer, found: Set<string>): Buffer {
  if (input.indexOf(tokenStartBytes) < 0 && !encodedTokenStarts.some((n) => input.indexOf(n) >= 0)) return input;
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

/** Plain tokens, and tokens base64-encoded inside other text (Basic auth, a base64 field): the whole base64 run goes. */
function redactTokenText(text: string, found: Set<string>): string {
  let out = text.includes(tokenStart) ? text.replace(plainTokenRun, () => (found.add(TOKEN_SECRET_NAME), `[${TOKEN_SECRET_NAME}]`)) : text;
  if (encodedTokenTexts.some((n) => out.includes(n))) out = out.replace(encodedTokenRun, () => (found.add(TOKEN_SECRET_NAME), `[${TOKEN_SECRET_NAME}]`));
  return out;
}
