// dirledger bearer tokens: their fixed start, plain and base64-encoded at each byte alignment, and the
// runs that hold them; the redactor replaces each run by [DIRLEDGER_TOKEN].

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
export const encodedTokenRun = new RegExp(`[A-Za-z0-9+/_=-]*(?:${encodedTokenTexts.join('|')})[A-Za-z0-9+/_=-]*`, 'g');
const tokenStartTexts = [tokenStart, ...encodedTokenTexts];
/** A text shorter than every fixed start holds none of them (most header names and values). */
const shortestTokenText = Math.min(...tokenStartTexts.map((t) => t.length));

/** Whether the bytes hold a token's fixed start, plain or base64-encoded (the cheap test before any regex). */
export function mayHoldToken(bytes: Buffer): boolean {
  return bytes.indexOf(tokenStartBytes) >= 0 || encodedTokenStarts.some((n) => bytes.indexOf(n) >= 0);
}

/** The length of the longest ending of `text` that is a proper beginning of a token's fixed start (plain or encoded). */
export function partialTokenStart(text: string): number {
  let longest = 0;
  for (const start of tokenStartTexts) {
    for (let k = Math.min(start.length - 1, text.length); k > longest; k--) {
      if (text.endsWith(start.slice(0, k))) {
        longest = k;
        break;
      }
    }
  }
  return longest;
}

/** Every dirledger token in the text, plain or base64-encoded, replaced by [DIRLEDGER_TOKEN] (for log lines). */
export function redactTokens(text: string): string {
  return redactTokenText(text, new Set());
}

export const plainTokenRun = new RegExp(`${tokenStart}[A-Za-z0-9_-]*`, 'g');
export const plainTokenAlphabet = /^[A-Za-z0-9_-]$/;
export const encodedTokenAlphabet = /^[A-Za-z0-9+/_=-]$/;

/** The placeholder of a redacted token; notes the token name in `found`. */
function tokenPlaceholder(found: Set<string>): string {
  found.add(TOKEN_SECRET_NAME);
  return `[${TOKEN_SECRET_NAME}]`;
}

/** Plain tokens, and tokens base64-encoded inside other text (Basic auth, a base64 field): the whole base64 run goes. */
export function redactTokenText(text: string, found: Set<string>): string {
  if (text.length < shortestTokenText) return text;
  let out = text.includes(tokenStart) ? text.replace(plainTokenRun, () => tokenPlaceholder(found)) : text;
  if (encodedTokenTexts.some((n) => out.includes(n))) out = out.replace(encodedTokenRun, () => tokenPlaceholder(found));
  return out;
}
