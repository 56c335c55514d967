// A canary secret spelled every way the redactor must catch, and an oracle that finds it in stored
// text or bytes by decoding, written apart from src/secrets/secret-forms.ts so the two can disagree.

const hex2 = (byte: number) => byte.toString(16).padStart(2, '0');
const u4 = (unit: number) => unit.toString(16).padStart(4, '0');
const flip = (s: string, i: number) => (i % 2 ? s.toUpperCase() : s.toLowerCase());

/** base64 of the value after `k` filler bytes, with filler after it too: the value at byte alignment k. */
const base64At = (value: string, k: number, url: boolean) => {
  const text = Buffer.concat([Buffer.from('xyz'.slice(0, k)), Buffer.from(value), Buffer.from('!?')]).toString(url ? 'base64url' : 'base64');
  return text;
};

/** Every spelling of the value a door or a collector might send. Each is a string safe in a header value. */
export function canarySpellings(value: string): { name: string; text: string }[] {
  const bytes = [...Buffer.from(value)];
  const chars = [...value];
  const units = (c: string) => Array.from({ length: c.length }, (_, i) => c.charCodeAt(i));
  const uEscape = (c: string, i = 0) =>
    units(c)
      .map((u) => `\\u${flip(u4(u), i)}`)
      .join('');
  const percent = (c: string, i = 0) => [...Buffer.from(c)].map((b) => `%${flip(hex2(b), i)}`).join('');
  return [
    { name: 'raw', text: value },
    {
      name: 'json-u-lower',
      text: chars
        .map((c) =>
          units(c)
            .map((u) => `\\u${u4(u)}`)
            .join(''),
        )
        .join(''),
    },
    {
      name: 'json-u-upper',
      text: chars
        .map((c) =>
          units(c)
            .map((u) => `\\u${u4(u).toUpperCase()}`)
            .join(''),
        )
        .join(''),
    },
    { name: 'json-slash', text: value.replace(/\//g, '\\/') },
    { name: 'json-mixed', text: chars.map((c, i) => (i % 3 === 1 ? uEscape(c, i) : c === '/' ? '\\/' : c)).join('') },
    { name: 'percent-upper', text: bytes.map((b) => `%${hex2(b).toUpperCase()}`).join('') },
    { name: 'percent-lower', text: bytes.map((b) => `%${hex2(b)}`).join('') },
    { name: 'percent-standard', text: encodeURIComponent(value) },
    { name: 'percent-first', text: `%${hex2(bytes[0]!).toUpperCase()}${value.slice(1)}` },
    { name: 'percent-mixed', text: chars.map((c, i) => (i % 2 ? percent(c, i) : c)).join('') },
    { name: 'percent-twice', text: encodeURIComponent(bytes.map((b) => `%${hex2(b)}`).join('')) },
    { name: 'json-and-percent', text: chars.map((c, i) => (i % 3 === 0 ? uEscape(c) : i % 3 === 1 ? percent(c) : c)).join('') },
    { name: 'json-in-json', text: JSON.stringify(chars.map((c) => uEscape(c)).join('')).slice(1, -1) },
    { name: 'hex-lower', text: Buffer.from(value).toString('hex') },
    { name: 'hex-upper', text: Buffer.from(value).toString('hex').toUpperCase() },
    { name: 'hex-mixed', text: [...Buffer.from(value).toString('hex')].map((c, i) => flip(c, i)).join('') },
    { name: 'html-decimal', text: chars.map((c) => `&#${c.codePointAt(0)};`).join('') },
    { name: 'html-in-url', text: encodeURIComponent(chars.map((c, i) => (i % 2 ? `&#${c.codePointAt(0)};` : c)).join('')) },
    { name: 'html-hex', text: chars.map((c, i) => `&#${i % 2 ? 'X' : 'x'}${flip(c.codePointAt(0)!.toString(16), i)};`).join('') },
    {
      name: 'html-mixed',
      // Raw, zero-padded decimal without its `;`, hex, a named reference for what has a name (`&sol;`).
      text: chars
        .map((c, i) => {
          const next = chars[i + 1];
          if (c === '/') return '&sol;';
          if (i % 3 === 0) return `&#00${c.codePointAt(0)}${next && /[0-9;]/.test(next) ? ';' : ''}`;
          return i % 3 === 1 ? `&#x${c.codePointAt(0)!.toString(16).toUpperCase()};` : c;
        })
        .join(''),
    },
    ...[0, 1, 2].flatMap((k) => [
      { name: `base64-${k}`, text: base64At(value, k, false) },
      { name: `base64url-${k}`, text: base64At(value, k, true) },
    ]),
  ];
}

/**
 * base64 of a document holding the value at byte offset `offset`, wrapped as MIME does (76 columns) with
 * CRLF or LF: spellings with line breaks, not safe in a header; the offsets put a break inside the value's
 * characters at different places.
 */
export function canaryWrappedSpellings(value: string): { name: string; text: string }[] {
  return [40, 47, 51, 53, 54, 55].flatMap((offset) =>
    (['\r\n', '\n'] as const).map((eol) => {
      const doc = Buffer.concat([Buffer.from('m'.repeat(offset)), Buffer.from(value), Buffer.from(' and the rest of the mail body')]);
      const text = (doc.toString('base64').match(/.{1,76}/g) ?? []).join(eol);
      return { name: `mime-base64-${offset}-${eol === '\n' ? 'lf' : 'crlf'}`, text };
    }),
  );
}

/** Undoes HTML character references: numeric, and the names of ASCII characters. */
function decodeHtml(text: string): string {
  const names: Record<string, string> = { sol: '/', amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", hyphen: '-', colon: ':', num: '#', semi: ';' };
  return text
    .replace(/&#[xX]([0-9a-fA-F]+);?/g, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#([0-9]+);?/g, (_, d: string) => String.fromCodePoint(parseInt(d, 10)))
    .replace(/&([A-Za-z]+);/g, (all, n: string) => names[n.toLowerCase()] ?? all);
}

/** Undoes percent-encoding and JSON/C escapes, as often as they were applied (up to four levels). */
function decodeEscapes(text: string): string {
  let out = text;
  for (let round = 0; round < 4; round++) {
    const next = decodeHtml(out)
      .replace(/\\+u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\+x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\+([/"\\])/g, '$1')
      .replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
        try {
          return decodeURIComponent(run);
        } catch {
          return run.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
        }
      });
    if (next === out) break;
    out = next;
  }
  return out;
}

/** The characters of base64(…value…) that the value alone decides, at each alignment, in both alphabets. */
function base64Cores(value: string): string[] {
  const bytes = Buffer.from(value);
  return [0, 1, 2].flatMap((k) => {
    const text = Buffer.concat([Buffer.alloc(k), bytes, Buffer.alloc(2)]).toString('base64');
    const core = text.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6));
    return [core, core.replace(/\+/g, '-').replace(/\//g, '_')];
  });
}

/** Which spellings of the value the haystack holds: raw or escaped (decoded first), hex (any case), base64 cores. */
export function canaryLeaks(haystack: string | Buffer | Uint8Array, value: string): string[] {
  const latin1 = typeof haystack === 'string' ? haystack : Buffer.from(haystack).toString('latin1');
  const utf8 = typeof haystack === 'string' ? haystack : Buffer.from(haystack).toString('utf8');
  const found: string[] = [];
  for (const [form, text] of [
    ['text', utf8],
    ['bytes', latin1],
  ] as const) {
    if (decodeEscapes(text).includes(value)) found.push(`decoded ${form}`);
    if (form === 'bytes' && decodeEscapes(text).includes(Buffer.from(value).toString('latin1'))) found.push('decoded bytes (utf-8)');
  }
  if (latin1.toLowerCase().includes(Buffer.from(value).toString('hex'))) found.push('hex');
  // Wrapped base64 (MIME): the same cores once the line breaks, as bytes or JSON escapes, are taken out.
  const unwrapped = latin1.replace(/\r?\n|\\r\\n|\\n/g, '');
  for (const core of base64Cores(value)) if (latin1.includes(core) || unwrapped.includes(core)) found.push(`base64 ${core}`);
  return [...new Set(found)];
}
