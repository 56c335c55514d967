// Calls into a retired build are refused by construction: this finds a retired host or URL prefix
// wherever it hides in a contract (URL, header, JSON-RPC body, shell command, base64- or
// URL-encoded, relay target). Pure, so the build and the dispatcher share it.

/** A retired host (every scheme, port and subdomain) or a URL prefix (that host's path prefix). */
export type RetiredTarget = { entry: string; host: string; path: string };

/** Parses RETIRED_HOSTS: comma-separated hosts (`old.example.com`) or URL prefixes (`https://old.example.com/api`). */
export function parseRetiredTargets(setting: string | undefined): RetiredTarget[] {
  if (!setting) return [];
  return setting
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `http://${entry}`;
      const url = new URL(withScheme);
      const path = url.pathname === '/' && !/\/$/.test(entry.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')) ? '' : url.pathname;
      return { entry, host: url.hostname.toLowerCase().replace(/^\[|\]$/g, ''), path: path === '/' ? '' : path };
    });
}

export type RetiredHit = { target: string; where: string; via: string[] };

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function matcher(t: RetiredTarget): RegExp {
  // The host, as a whole label sequence (subdomains allowed), then an optional port, then the path prefix.
  return new RegExp(`(?:^|[^a-z0-9-])(?:[a-z0-9-]+\\.)*${escapeRegex(t.host)}(?![a-z0-9-]|\\.[a-z0-9])(?::\\d+)?${t.path ? escapeRegex(t.path) : ''}`, 'i');
}

const maxDepth = 4;

function printable(text: string): boolean {
  if (text.length < 4) return false;
  let ok = 0;
  for (const ch of text) if (/[\x20-\x7e\t\r\n]/.test(ch)) ok++;
  return ok / text.length > 0.95;
}

/** The readings of a string an attacker could hide an address in: URL-decoded, base64 (and base64url) tokens, escaped JSON. */
function decodings(text: string): { text: string; via: string }[] {
  const out: { text: string; via: string }[] = [];
  if (/%[0-9a-f]{2}/i.test(text)) {
    try {
      out.push({ text: decodeURIComponent(text.replace(/\+/g, ' ')), via: 'URL-decoded' });
    } catch {
      out.push({ text: text.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), via: 'URL-decoded' });
    }
  }
  for (const m of text.matchAll(/[A-Za-z0-9+/_-]{12,}={0,2}/g)) {
    const token = m[0];
    for (const alphabet of ['base64', 'base64url'] as const) {
      const decoded = Buffer.from(token, alphabet).toString('utf8');
      if (printable(decoded)) {
        out.push({ text: decoded, via: 'base64-decoded' });
        break;
      }
    }
  }
  if (/\\u00|\\x[0-9a-f]{2}|\\\//i.test(text)) {
    out.push({
      text: text
        .replace(/\\u([0-9a-f]{4})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
        .replace(/\\x([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
        .replace(/\\\//g, '/'),
      via: 'unescaped',
    });
  }
  return out;
}

function scanText(text: string, targets: { t: RetiredTarget; re: RegExp }[], where: string, via: string[], depth: number): RetiredHit | null {
  for (const { t, re } of targets) if (re.test(text)) return { target: t.entry, where, via };
  if (depth >= maxDepth) return null;
  for (const d of decodings(text)) {
    if (d.text === text) continue;
    const hit = scanText(d.text, targets, where, [...via, d.via], depth + 1);
    if (hit) return hit;
  }
  const trimmed = text.trim();
  if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && trimmed.length > 1) {
    try {
      return scanValue(JSON.parse(trimmed), targets, where, [...via, 'JSON inside a string'], depth + 1);
    } catch {
      /* not JSON: already scanned as text */
    }
  }
  return null;
}

function scanValue(value: unknown, targets: { t: RetiredTarget; re: RegExp }[], where: string, via: string[], depth: number): RetiredHit | null {
  if (typeof value === 'string') return scanText(value, targets, where, via, depth);
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const hit = scanValue(v, targets, `${where}[${i}]`, via, depth);
      if (hit) return hit;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = where ? `${where}.${k}` : k;
      const hit = scanText(k, targets, at, via, depth) ?? scanValue(v, targets, at, via, depth);
      if (hit) return hit;
    }
  }
  return null;
}

/** The first place a value reaches a retired target, or null. `where` is the JSON path; `via` the decodings that revealed it. */
export function findRetired(value: unknown, targets: RetiredTarget[]): RetiredHit | null {
  if (targets.length === 0) return null;
  return scanValue(
    value,
    targets.map((t) => ({ t, re: matcher(t) })),
    '',
    [],
    0,
  );
}

export function describeRetiredHit(hit: RetiredHit): string {
  return `reaches the retired build ${hit.target} at ${hit.where || '(the contract)'}${hit.via.length ? ` (${hit.via.join(', then ')})` : ''}`;
}
