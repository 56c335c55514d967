// The JSON depth pre-scan (src/limits.ts) at its boundary, as text and as bytes: a text too short to
// nest past the limit is passed without a scan, and everything longer is scanned as before.
import { describe, expect, it } from 'vitest';
import { JSON_MAX_DEPTH, jsonTextTooDeep } from '../../src/limits.ts';

const nested = (depth: number, pad = 0) => `${'['.repeat(depth)}${' '.repeat(pad)}${']'.repeat(depth)}`;

describe('jsonTextTooDeep', () => {
  it('holds JSON_MAX_DEPTH levels and refuses one more, in text and in bytes', () => {
    for (const as of [(s: string) => s, (s: string) => Buffer.from(s, 'utf8')]) {
      expect(jsonTextTooDeep(as(nested(JSON_MAX_DEPTH)))).toBe(false);
      expect(jsonTextTooDeep(as(nested(JSON_MAX_DEPTH + 1)))).toBe(true);
      expect(jsonTextTooDeep(as(nested(3)), 2)).toBe(true);
      expect(jsonTextTooDeep(as('[[]]'), 2)).toBe(false);
      expect(jsonTextTooDeep(as(`{"a":"${'['.repeat(JSON_MAX_DEPTH + 5)}"}`))).toBe(false);
    }
  });

  it('passes a text no longer than the limit without scanning it', () => {
    // As long as the limit: even all opening brackets nest only that deep.
    expect(jsonTextTooDeep('['.repeat(JSON_MAX_DEPTH))).toBe(false);
    expect(jsonTextTooDeep('['.repeat(JSON_MAX_DEPTH + 1))).toBe(true);
    expect(jsonTextTooDeep('{"query":"{ event(id: \\"x\\") { id } }"}')).toBe(false);
  });

  it('counts the same over UTF-8 bytes: astral characters, a lone surrogate and an escaped quote change nothing', () => {
    const text = (depth: number) => `{"a":"😀\ud800\\"[[[","b":${nested(depth - 1)}}`;
    for (const as of [(s: string) => s, (s: string) => Buffer.from(s, 'utf8')]) {
      expect(jsonTextTooDeep(as(text(JSON_MAX_DEPTH)))).toBe(false);
      expect(jsonTextTooDeep(as(text(JSON_MAX_DEPTH + 1)))).toBe(true);
    }
  });
});
