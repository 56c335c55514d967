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
const tokenReplacement = Buffer.from(`[${TOKEN_SECRET_NAME}]`);
const isTokenByte = (b: number) => (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 45 || b === 95;

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

  /** Registered secret forms, plus the token pattern (always on). */
  get size(): number {
    return this.needles.length + 1;
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
    let out = input.includes(tokenStart) ? input.replace(/AgEJZGlybGVkZ2Vy[A-Za-z0-9_-]*/g, () => (found.add(TOKEN_SECRET_NAME), `[${TOKEN_SECRET_NAME}]`)) : input;
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
  let at = input.indexOf(tokenStartBytes);
  if (at < 0) return input;
  const parts: Buffer[] = [];
  let from = 0;
  while (at >= 0) {
    let end = at + tokenStartBytes.length;
    while (end < input.length && isTokenByte(input[end]!)) end++;
    parts.push(input.subarray(from, at), tokenReplacement);
    from = end;
    at = input.indexOf(tokenStartBytes, from);
  }
  parts.push(input.subarray(from));
  found.add(TOKEN_SECRET_NAME);
  return Buffer.concat(parts);
}
