// The token format: our macaroons round-trip, verify in the reference implementation (the
// `macaroon` package) and the other way round, and any change to a signed byte is refused.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Authority } from '../../src/auth/authority.ts';
import type { Checked } from '../../src/auth/verdict.ts';
import { attenuate, mint, parse, serialize, signatureChain, type Macaroon } from '../../src/auth/macaroon.ts';
import type { SqlExecutor } from '../../src/db/sql.ts';

type RefMacaroon = {
  location: string;
  identifier: Uint8Array;
  signature: Uint8Array;
  caveats: { identifier: Uint8Array; location?: string }[];
  addFirstPartyCaveat(caveat: string): void;
  exportBinary(): Uint8Array;
  verify(rootKey: Uint8Array, check: (condition: string) => string | null): void;
};
type RefModule = {
  newMacaroon(params: { identifier: string; location?: string; rootKey: Uint8Array; version?: number }): RefMacaroon;
  importMacaroon(data: string | Uint8Array): RefMacaroon;
  bytesToBase64(bytes: Uint8Array): string;
};
const reference = createRequire(import.meta.url)('macaroon') as RefModule;

/** Authenticating a token never touches the database; a query here would be a defect. */
const noDatabase: SqlExecutor = {
  query: () => Promise.reject(new Error('authenticate must not query the database')),
  transaction: () => Promise.reject(new Error('authenticate must not query the database')),
};

const rootKey = randomBytes(32);
const otherKey = randomBytes(32);
const authorityOf = (key: Buffer) => new Authority({ rootKey: key, audience: 'dirledger', sql: noDatabase, record: () => {}, ratePerSecond: 0, rateBurst: 1 });
const authority = authorityOf(rootKey);

const caveatsOf = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? `tools = TOOL_${i},SHARED_*` : `doors = REST,DISPATCH,MCP`));
const bytesOf = (token: string) => Buffer.from(token, 'base64url');
const textOf = (bytes: Buffer) => bytes.toString('base64url');
const acceptAll = () => null;

function refused(checked: Checked): boolean {
  return !checked.ok && checked.refusal.status === 401 && checked.refusal.limit === 'credential';
}

describe('macaroon format', () => {
  it.each([0, 1, 20])('round-trips a token with %i caveats field for field', (n) => {
    const token = mint(rootKey, 'dirledger', `dl1:00000000:${'ab'.repeat(16)}`, caveatsOf(n));
    const back = parse(serialize(token));
    expect(back).toEqual(token);
    expect(serialize(back)).toBe(serialize(token));
    expect(signatureChain(rootKey, back)).toHaveLength(n + 1);
    expect(signatureChain(otherKey, back)).toBeNull();
  });

  it('keeps an empty location empty and UTF-8 caveats intact', () => {
    const token = mint(rootKey, '', 'id-ünïcode', ['task = Ω-1', 'agent = 計画']);
    expect(parse(serialize(token))).toEqual(token);
  });

  it.each([0, 1, 20])('mints tokens with %i caveats that the reference implementation imports and verifies', (n) => {
    const caveats = caveatsOf(n);
    const text = authority.mintToken(caveats);
    const ref = reference.importMacaroon(text);
    expect(ref.location).toBe('dirledger');
    expect(Buffer.from(ref.identifier).toString()).toBe(parse(text).identifier);
    expect(ref.caveats.map((c) => Buffer.from(c.identifier).toString())).toEqual(caveats);
    expect(Buffer.from(ref.signature)).toEqual(parse(text).signature);
    const seen: string[] = [];
    ref.verify(rootKey, (condition) => {
      seen.push(condition);
      return null;
    });
    expect(seen).toEqual(caveats);
    expect(() => ref.verify(otherKey, acceptAll)).toThrow(/signature mismatch/);
    // The reference refuses the token as soon as one caveat does not hold.
    if (n > 0) expect(() => ref.verify(rootKey, (c) => (c === caveats[n - 1] ? 'no' : null))).toThrow(/caveat check failed/);
  });

  it('narrows offline so that the reference implementation still verifies every caveat', () => {
    const narrowed = Authority.narrow(authority.mintToken(['tools = ECHO']), ['doors = REST', 'expires = 2030-01-01T00:00:00.000Z']);
    const seen: string[] = [];
    reference.importMacaroon(narrowed).verify(rootKey, (condition) => {
      seen.push(condition);
      return null;
    });
    expect(seen).toEqual(['tools = ECHO', 'doors = REST', 'expires = 2030-01-01T00:00:00.000Z']);
  });

  it.each([0, 1, 2])('verifies tokens with %i caveats minted by the reference implementation', (n) => {
    const identifier = parse(authority.mintToken()).identifier;
    const ref = reference.newMacaroon({ identifier, location: 'dirledger', rootKey });
    const caveats = caveatsOf(n);
    for (const caveat of caveats) ref.addFirstPartyCaveat(caveat);
    const text = reference.bytesToBase64(ref.exportBinary());
    const token = parse(text);
    expect(token).toEqual({ location: 'dirledger', identifier, caveats, signature: Buffer.from(ref.signature) });
    expect(signatureChain(rootKey, token)).not.toBeNull();
    expect(signatureChain(otherKey, token)).toBeNull();
    // Byte for byte the same serialization as ours.
    expect(serialize(token)).toBe(text);
    expect(serialize(mint(rootKey, 'dirledger', identifier, caveats))).toBe(text);
    const checked = authority.authenticate(text, 'REST');
    expect(checked.ok && checked.grant.texts).toEqual(caveats);
  });

  it('verifies a reference token narrowed by our attenuate, and ours narrowed by the reference', () => {
    const identifier = parse(authority.mintToken()).identifier;
    const ref = reference.newMacaroon({ identifier, location: 'dirledger', rootKey });
    ref.addFirstPartyCaveat('tools = ECHO');
    const ours = attenuate(parse(reference.bytesToBase64(ref.exportBinary())), 'doors = REST');
    expect(signatureChain(rootKey, ours)).toHaveLength(3);

    const theirs = reference.importMacaroon(authority.mintToken());
    theirs.addFirstPartyCaveat('tools = ECHO');
    const back = parse(reference.bytesToBase64(theirs.exportBinary()));
    expect(signatureChain(rootKey, back)).toHaveLength(2);
    expect(authority.authenticate(serialize(back), 'REST').ok).toBe(true);
  });
});

describe('forged tokens are refused', () => {
  const tokens = [0, 1, 20].map((n) => ({ n, text: authority.mintToken(caveatsOf(n)) }));

  it.each(tokens)('flipping any bit pattern of any byte of a token with $n caveats', ({ text }) => {
    expect(authority.authenticate(text, 'REST').ok).toBe(true);
    const bytes = bytesOf(text);
    let tried = 0;
    for (let i = 0; i < bytes.length; i++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const copy = Buffer.from(bytes);
        copy[i]! ^= mask;
        const checked = authority.authenticate(textOf(copy), 'REST');
        expect(refused(checked), `byte ${i} ^ ${mask}`).toBe(true);
        tried++;
      }
    }
    expect(tried).toBe(bytes.length * 3);
  });

  it.each(tokens)('each region (identifier, caveat, signature) of a token with $n caveats, edited in place', ({ text }) => {
    const token = parse(text);
    const edits: Macaroon[] = [
      { ...token, identifier: token.identifier.replace(/.$/, (c) => (c === '0' ? '1' : '0')) },
      { ...token, signature: Buffer.from(token.signature.map((b, i) => (i === 31 ? b ^ 1 : b))) },
      { ...token, location: 'dirledgeR' },
      ...token.caveats.map((c, i) => ({ ...token, caveats: token.caveats.map((x, j) => (j === i ? `${c}X` : x)) })),
    ];
    for (const edit of edits) expect(refused(authority.authenticate(serialize(edit), 'REST'))).toBe(true);
  });

  it.each(tokens)('truncated at every byte and every character, a token with $n caveats', ({ text }) => {
    const bytes = bytesOf(text);
    for (let length = 0; length < bytes.length; length++) {
      expect(refused(authority.authenticate(textOf(bytes.subarray(0, length)), 'REST')), `${length} bytes`).toBe(true);
    }
    for (let length = 0; length < text.length; length++) {
      expect(refused(authority.authenticate(text.slice(0, length), 'REST')), `${length} characters`).toBe(true);
    }
  });

  it('re-signed with another root key: refused here, and this key refuses that server', () => {
    const token = parse(authority.mintToken(['tools = ECHO']));
    const resigned = mint(otherKey, token.location, token.identifier, token.caveats);
    expect(signatureChain(rootKey, resigned)).toBeNull();
    const checked = authority.authenticate(serialize(resigned), 'REST');
    expect(refused(checked)).toBe(true);
    expect(!checked.ok && checked.refusal.reason).toMatch(/signature does not verify/);

    const elsewhere = authorityOf(otherKey).mintToken();
    const foreign = authority.authenticate(elsewhere, 'REST');
    expect(refused(foreign)).toBe(true);
    expect(!foreign.ok && foreign.refusal.reason).toMatch(/another root key/);
    expect(reference.importMacaroon(elsewhere).verify.bind(reference.importMacaroon(elsewhere), rootKey, acceptAll)).toThrow(/signature mismatch/);
  });

  it('a caveat removed, or caveats reordered, breaks the signature', () => {
    const text = authority.mintToken(['tools = ECHO', 'doors = REST', 'uses <= 3']);
    const token = parse(text);
    for (let i = 0; i < token.caveats.length; i++) {
      const removed = { ...token, caveats: token.caveats.filter((_, j) => j !== i) };
      expect(refused(authority.authenticate(serialize(removed), 'REST')), `without caveat ${i}`).toBe(true);
    }
    const orders = [
      [1, 0, 2],
      [0, 2, 1],
      [2, 1, 0],
    ];
    for (const order of orders) {
      const reordered = { ...token, caveats: order.map((j) => token.caveats[j]!) };
      expect(refused(authority.authenticate(serialize(reordered), 'REST')), order.join()).toBe(true);
    }
    // The chain of a shorter token is not the shorter token's signature either.
    const chain = signatureChain(rootKey, token)!;
    expect(refused(authority.authenticate(serialize({ ...token, caveats: token.caveats.slice(0, 2), signature: chain[3]! }), 'REST'))).toBe(true);
  });
});

describe('offline narrowing', () => {
  it('verifies and keeps every earlier limit, however wide the later caveat', () => {
    const parent = authority.mintToken(['tools = ECHO,WEATHER_*', 'doors = REST,MCP']);
    const child = Authority.narrow(parent, ['tools = *', 'doors = REST,MCP,DISPATCH']);
    const grandchild = Authority.narrow(child, ['tools = WEATHER_*']);
    for (const text of [child, grandchild]) {
      const checked = authority.authenticate(text, 'REST');
      if (!checked.ok) throw new Error(checked.refusal.reason);
      expect(checked.grant.texts.slice(0, 2)).toEqual(['tools = ECHO,WEATHER_*', 'doors = REST,MCP']);
      expect(authority.allowsTool(checked.grant, 'REST', 'OTHER')?.limit).toBe('tools');
      expect(authority.allowsTool(checked.grant, 'REST', 'WEATHER_NOW')).toBeNull();
      const dispatch = authority.authenticate(text, 'DISPATCH');
      expect(!dispatch.ok && dispatch.refusal.limit).toBe('doors');
    }
    const checked = authority.authenticate(grandchild, 'REST');
    expect(checked.ok && authority.allowsTool(checked.grant, 'REST', 'ECHO')?.caveat).toBe('tools = WEATHER_*');
  });

  it('cannot be widened: a holder cannot remove or rewrite an earlier caveat', () => {
    const child = Authority.narrow(authority.mintToken(['tools = ECHO']), ['doors = REST']);
    const token = parse(child);
    const widened: Macaroon[] = [
      { ...token, caveats: ['tools = *', 'doors = REST'] },
      { ...token, caveats: ['doors = REST'] },
      { ...token, caveats: ['tools = ECHO'] },
      { ...token, caveats: [] },
      // Appending re-signs from the presented signature, so it only ever narrows.
      attenuate({ ...token, caveats: ['tools = *'] }, 'doors = REST'),
    ];
    for (const w of widened) expect(refused(authority.authenticate(serialize(w), 'REST'))).toBe(true);
    const narrowedAgain = authority.authenticate(Authority.narrow(child, ['tools = *']), 'REST');
    expect(narrowedAgain.ok && authority.allowsTool(narrowedAgain.grant, 'REST', 'OTHER')?.limit).toBe('tools');
  });
});
