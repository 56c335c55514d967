// The one redaction rule over every spelling of a secret: raw, JSON escapes and percent-encoding of
// any character (mixed within one occurrence, nested), HTML character references, hex in any case, base64
// and base64url at each byte alignment, wrapped as MIME wraps it or not; in strings, in bytes, and in a stream cut anywhere. Checked against an oracle that
// finds the value by decoding (test/helpers/canary.ts), not by the redactor's own patterns.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { Prng } from '../../bench/lib/prng.ts';
import { canaryLeaks, canarySpellings, canaryWrappedSpellings } from '../helpers/canary.ts';

const CANARY = 'CnRy/7f3Q9z-canary';
const WIDE = 'pässwörd✓😀-Zq';
const redactor = new SecretRedactor({ CANARY, WIDE });

describe.each([
  ['ASCII', 'CANARY', CANARY],
  ['non-ASCII', 'WIDE', WIDE],
])('every spelling of a %s secret', (_label, name, value) => {
  const spellings = canarySpellings(value);

  it('the oracle sees the value in every spelling the test sends (so a pass below means something)', () => {
    for (const s of spellings) expect(canaryLeaks(`x ${s.text} y`, value), s.name).not.toEqual([]);
  });

  it.each(spellings.map((s) => [s.name, s.text]))('text: %s', (_spelling, text) => {
    const found = new Set<string>();
    const out = redactor.text(`before ${text} after`, found);
    expect(canaryLeaks(out, value), out).toEqual([]);
    expect(out).toContain(`[${name}]`);
    expect(out.startsWith('before ')).toBe(true);
    expect(out.endsWith(' after')).toBe(true);
    expect([...found]).toEqual([name]);
  });

  it.each(spellings.map((s) => [s.name, s.text]))('bytes: %s, inside a JSON body and after binary bytes', (_spelling, text) => {
    const raw = Buffer.concat([Buffer.from([0xff, 0x00, 0xc3]), Buffer.from(JSON.stringify({ field: text, n: 1 }))]);
    const found = new Set<string>();
    const out = redactor.bytes(raw, found);
    expect(canaryLeaks(out, value), out.toString('latin1')).toEqual([]);
    expect(out.subarray(0, 3)).toEqual(Buffer.from([0xff, 0x00, 0xc3]));
    expect([...found]).toEqual([name]);
  });

  it('base64 of a document that holds the value anywhere in it, at every offset', () => {
    for (let k = 0; k < 6; k++) {
      for (const url of [false, true]) {
        const doc = Buffer.concat([randomBytes(k), Buffer.from(`user:${value}`), randomBytes(5)]).toString(url ? 'base64url' : 'base64');
        const found = new Set<string>();
        const out = redactor.text(`Basic ${doc}`, found);
        expect(canaryLeaks(out, value), `${k} ${url}: ${out}`).toEqual([]);
        expect([...found]).toEqual([name]);
      }
    }
  });

  it.each(spellings.map((s) => [s.name, s.text]))('a stream cut at every byte: %s', (_spelling, text) => {
    const whole = Buffer.from(`data: {"delta":"${text}"}\n\ndata: after\n\n`);
    const expected = redactor.bytes(whole, new Set());
    for (let at = 0; at <= whole.length; at++) {
      const stream = redactor.stream();
      const out = Buffer.concat([stream.push(whole.subarray(0, at)), stream.push(whole.subarray(at)), stream.end()]);
      expect(out.toString('latin1'), `cut at ${at}`).toBe(expected.toString('latin1'));
      expect([...stream.found]).toEqual([name]);
    }
    expect(canaryLeaks(expected, value)).toEqual([]);
  });
});

describe.each([
  ['ASCII', 'CANARY', CANARY],
  ['non-ASCII', 'WIDE', WIDE],
])('base64 of a %s secret wrapped at 76 columns (MIME), with a line break inside the value', (_label, name, value) => {
  const wrapped = canaryWrappedSpellings(value);

  it('the spellings do break inside the value, and the oracle still sees it', () => {
    const core = Buffer.from(value).toString('base64').slice(2, -2);
    expect(wrapped.filter((w) => !w.text.includes(core)).length).toBeGreaterThan(wrapped.length / 2);
    for (const w of wrapped) expect(canaryLeaks(w.text, value), w.name).not.toEqual([]);
  });

  it.each(wrapped.map((w) => [w.name, w.text]))(
    '%s: as text, as bytes, in a JSON string (the breaks escaped) and cut at every byte of a stream',
    (_n, text) => {
      for (const input of [text, JSON.stringify({ body: text }), `MIME-Version: 1.0\r\n\r\n${text}\r\n`]) {
        const found = new Set<string>();
        const out = redactor.text(input, found);
        expect(canaryLeaks(out, value), out).toEqual([]);
        expect([...found]).toEqual([name]);
        const bytes = redactor.bytes(Buffer.from(input), new Set());
        expect(canaryLeaks(bytes, value)).toEqual([]);
      }
      const whole = Buffer.from(JSON.stringify({ body: text }));
      const expected = redactor.bytes(whole, new Set());
      for (let at = 0; at <= whole.length; at += 7) {
        const stream = redactor.stream();
        const out = Buffer.concat([stream.push(whole.subarray(0, at)), stream.push(whole.subarray(at)), stream.end()]);
        expect(out.toString('latin1'), `cut at ${at}`).toBe(expected.toString('latin1'));
      }
    },
  );
});

describe('what is not a secret is left alone', () => {
  it('leaves ordinary text, escapes, URLs, hashes, UUIDs and base64 exactly as they were', () => {
    const prng = new Prng(3);
    const samples = [
      JSON.stringify({ content: 'line one\nline "two"\t\\ end', path: 'a/b/c', emoji: '😀✓' }),
      'https://api.example.com/v1/things?q=a%20b%2Fc&x=%E2%9C%93#frag',
      '\\u0043\\u006e\\u0052\\u0079 is only half of it',
      '436e52792f376633 and 436E52792F37663351397A2D63616E61 cut short',
      randomBytes(32).toString('hex'),
      '3f2a9c1e-1b2c-4d5e-8f90-0123456789ab',
      '<p>Fish &amp; chips &#8212; &lt;b&gt; &#x2713; &sol; &#67;&#110;</p>',
      (
        randomBytes(300)
          .toString('base64')
          .match(/.{1,76}/g) ?? []
      ).join('\r\n'),
      ...Array.from({ length: 20 }, () => randomBytes(200 + Math.floor(prng.next() * 200)).toString('base64')),
    ];
    for (const sample of samples) {
      const found = new Set<string>();
      expect(redactor.text(sample, found)).toBe(sample);
      expect(redactor.bytes(Buffer.from(sample), found).toString()).toBe(sample);
      expect(found.size).toBe(0);
    }
  });
});

describe('JSON columns', () => {
  it('stores a value whose structure spells a secret across a key and its value as {"redacted": "[NAME]"}', () => {
    const across = new SecretRedactor({ PAIR: 'key":"value' });
    const found = new Set<string>();
    expect(across.jsonText({ key: 'value' }, found)).toBe('{"redacted":"[PAIR]"}');
    expect([...found]).toEqual(['PAIR']);
    expect(across.jsonText({ other: 'key":"value' }, new Set())).toBe('{"other":"[PAIR]"}');
    expect(across.jsonText({ key: 'other' }, new Set())).toBe('{"key":"other"}');
  });
});
