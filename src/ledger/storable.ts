// Text PostgreSQL cannot hold, stored losslessly: a text or jsonb value cannot contain U+0000, and a
// lone surrogate has no UTF-8 form. Such a string is stored as MARK + its escaped form and read back
// exactly; every other string is stored as it is. The rule (docs/ARCHITECTURE.md, "Hostile text"):
//   - a string is escaped when it holds U+0000 or a lone surrogate, or already starts with MARK
//     (so a string that looks escaped round-trips too);
//   - escaped form: MARK, then the string with `\` as `\\`, U+0000 as `\0` and each lone surrogate
//     as `\u` + 4 lowercase hex digits;
//   - object keys are escaped the same way as values.
// encode* is applied once, in Ledger.append (the only write path); decode* on every read of the
// url, headers and metadata columns (GraphQL LedgerEvent fields, live subscriptions, Ledger reads).

/** U+FDD0, a Unicode noncharacter: valid in UTF-8 and PostgreSQL, never meaningful in interchanged text. */
export const MARK = '\uFDD0';

const needsEscape = (s: string): boolean => s.includes('\u0000') || !s.isWellFormed() || s.startsWith(MARK);

/** The stored form of one string. */
export function encodeText(s: string): string {
  if (!needsEscape(s)) return s;
  let out = MARK;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c) out += '\\\\';
    else if (c === 0) out += '\\0';
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      out += s[i]! + s[i + 1]!;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) out += `\\u${c.toString(16)}`;
    else out += s[i];
  }
  return out;
}

/** The string a stored one was made from. */
export function decodeText(s: string): string {
  if (!s.startsWith(MARK)) return s;
  return s
    .slice(MARK.length)
    .replace(/\\(\\|0|u[0-9a-f]{4})/g, (_m, e: string) => (e === '\\' ? '\\' : e === '0' ? '\u0000' : String.fromCharCode(parseInt(e.slice(1), 16))));
}

function mapJson(value: unknown, text: (s: string) => string): unknown {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = mapJson(value[i], text);
      if (v !== value[i]) {
        out ??= value.slice();
        out[i] = v;
      }
    }
    return out ?? value;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    // Copied only from the first change on: the common case allocates nothing.
    let entries: [string, unknown][] | undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const k = text(key);
      const v = mapJson(record[key], text);
      if (!entries && (k !== key || v !== record[key])) entries = keys.slice(0, i).map((before) => [before, record[before]]);
      entries?.push([k, v]);
    }
    return entries ? Object.fromEntries(entries) : value;
  }
  return value;
}

/** A JSON value with every string (keys included) in its stored form; the value itself when none changes. */
export const encodeJson = <T>(value: T): T => mapJson(value, encodeText) as T;

/** A stored JSON value as it was given; the value itself when nothing was escaped. */
export const decodeJson = <T>(value: T): T => mapJson(value, decodeText) as T;
