// Whatever arrives as a credential, parse() either returns a token or throws MalformedToken, and
// Authority.authenticate() answers a bad one with the same plain 401: never a crash, never a hang.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Authority } from '../../src/auth/authority.ts';
import { parseCaveat } from '../../src/auth/caveats.ts';
import { MalformedToken, mint, parse, serialize, TOKEN_MAX_CAVEATS, TOKEN_MAX_CHARS } from '../../src/auth/macaroon.ts';
import type { SqlExecutor } from '../../src/db/sql.ts';

/** Authenticating never touches the database; a query here would be a defect. */
const noDatabase: SqlExecutor = {
  query: () => Promise.reject(new Error('authenticate must not query the database')),
  transaction: () => Promise.reject(new Error('authenticate must not query the database')),
};
const rootKey = randomBytes(32);
const authority = new Authority({ rootKey, audience: 'dirledger', sql: noDatabase, record: () => {}, ratePerSecond: 0, rateBurst: 1 });
const valid = [
  authority.mintToken(),
  authority.mintToken(['tools = ECHO', 'doors = REST']),
  authority.mintToken(Array.from({ length: 20 }, (_, i) => `tools = T_${i}`)),
];
const identifier = parse(valid[0]!).identifier;

const missing = authority.authenticate(undefined, 'REST');
const PLAIN = !missing.ok ? missing.refusal.message : '';

/** parse() returns or throws MalformedToken; nothing else escapes it. */
function parsesOrMalformed(text: string): boolean {
  try {
    parse(text);
    return true;
  } catch (error) {
    if (error instanceof MalformedToken) return false;
    throw error;
  }
}

/** A bad token gets exactly the plain answer every other bad token gets. */
function expectPlainRefusal(text: string): void {
  const checked = authority.authenticate(text, 'REST');
  expect(checked.ok).toBe(false);
  if (checked.ok) return;
  expect(checked.refusal).toMatchObject({ limit: 'credential', status: 401, message: PLAIN, door: 'REST' });
  expect(checked.refusal.caveat).toBeUndefined();
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** An edit a careless or hostile client could make to a token's bytes. */
const mutation = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('repeat' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 40 }) }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(bytes: Buffer, m: Mutation): Buffer {
  const at = bytes.length === 0 ? 0 : m.at % bytes.length;
  switch (m.op) {
    case 'flip': {
      const copy = Buffer.from(bytes);
      if (copy.length) copy[at]! ^= m.mask;
      return copy;
    }
    case 'insert':
      return Buffer.concat([bytes.subarray(0, at), m.bytes, bytes.subarray(at)]);
    case 'delete':
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.count)]);
    case 'truncate':
      return bytes.subarray(0, at);
    case 'repeat': {
      const piece = bytes.subarray(at, at + 5);
      return Buffer.concat([bytes.subarray(0, at), ...Array.from({ length: m.count }, () => piece), bytes.subarray(at)]);
    }
  }
}

describe('parser fuzz', () => {
  it('random strings: parse throws MalformedToken and authenticate answers the plain 401', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 }), fc.base64String({ maxLength: 400 })), (text) => {
        expect(parsesOrMalformed(text)).toBe(false);
        expectPlainRefusal(text);
      }),
      { numRuns: 3_000 },
    );
  });

  it('random bytes, base64url-encoded, with and without a plausible header', () => {
    const header = Buffer.from([2, 1, 9, ...Buffer.from('dirledger')]);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.boolean(), (bytes, withHeader) => {
        const text = b64(withHeader ? Buffer.concat([header, bytes]) : bytes);
        parsesOrMalformed(text);
        expectPlainRefusal(text);
      }),
      { numRuns: 3_000 },
    );
  });

  it('mutated valid tokens are refused (or, rarely, parse to a token whose signature fails)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...valid), fc.array(mutation, { minLength: 1, maxLength: 4 }), (token, mutations) => {
        const original = Buffer.from(token, 'base64url');
        const bytes = mutations.reduce(mutate, original);
        fc.pre(!bytes.equals(original));
        const text = b64(bytes);
        parsesOrMalformed(text);
        expectPlainRefusal(text);
      }),
      { numRuns: 4_000 },
    );
  });

  it('mutated token text (characters, padding, whitespace) is refused plainly', () => {
    fc.assert(
      fc.property(fc.constantFrom(...valid), fc.nat(), fc.string({ minLength: 1, maxLength: 4 }), (token, at, insert) => {
        const i = at % (token.length + 1);
        const text = token.slice(0, i) + insert + token.slice(i);
        const sameBytes = /^[A-Za-z0-9_-]+={0,2}$/.test(text) && Buffer.from(text.replace(/=+$/, ''), 'base64url').equals(Buffer.from(token, 'base64url'));
        parsesOrMalformed(text);
        // A lone trailing character or padding can spell the very same bytes: the same token.
        if (sameBytes) expect(authority.authenticate(text, 'REST').ok).toBe(true);
        else expectPlainRefusal(text);
      }),
      { numRuns: 3_000 },
    );
  });

  it('correctly signed tokens with caveats this server cannot read get the same plain answer', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 60 }), { minLength: 1, maxLength: 5 }), (caveats) => {
        fc.pre(
          caveats.some((c) => {
            try {
              parseCaveat(c);
              return false;
            } catch {
              return true;
            }
          }),
        );
        const text = serialize(mint(rootKey, 'dirledger', identifier, caveats));
        expect(parse(text).caveats).toEqual(caveats);
        expectPlainRefusal(text);
      }),
      { numRuns: 1_000 },
    );
  });

  it('a token with another location or identifier format is refused plainly', () => {
    for (const [location, id] of [
      ['elsewhere', identifier],
      ['', identifier],
      ['dirledger', 'not-ours'],
      ['dirledger', `${identifier}0`],
      ['dirledger', identifier.toUpperCase()],
    ] as const) {
      expectPlainRefusal(serialize(mint(rootKey, location, id, [])));
    }
  });
});

describe('huge and hostile inputs', () => {
  const header = [2, 1, 9, ...Buffer.from('dirledger'), 2, identifier.length, ...Buffer.from(identifier), 0];
  const tail = [0, 6, 32, ...randomBytes(32)];

  const cases: [string, () => string][] = [
    ['1 MB of base64url characters', () => 'A'.repeat(1_000_000)],
    ['1 MB of random bytes, encoded', () => b64(randomBytes(1_000_000))],
    ['1 MB of a valid token repeated', () => valid[1]!.repeat(Math.ceil(1_000_000 / valid[1]!.length))],
    ['a token one character over the limit', () => 'A'.repeat(TOKEN_MAX_CHARS + 1)],
    ['1 MB of NUL and non-ASCII', () => '\0é\u{1F600}'.repeat(250_000)],
    ['an identifier field repeated to the size limit', () => b64(Buffer.from([2, ...Array.from({ length: 600 }, () => [2, 3, 65, 66, 67]).flat()]))],
    ['the location field repeated', () => b64(Buffer.from([2, ...Array.from({ length: 600 }, () => [1, 1, 65]).flat()]))],
    ['EOS repeated without end', () => b64(Buffer.from([...header, ...Array(5_000).fill(0)]))],
    [
      `${TOKEN_MAX_CAVEATS + 1} one-byte caveats`,
      () => b64(Buffer.from([...header, ...Array.from({ length: TOKEN_MAX_CAVEATS + 1 }, () => [2, 1, 120, 0]).flat(), ...tail])),
    ],
    ['10^6 caveats claimed', () => b64(Buffer.concat([Buffer.from(header), Buffer.alloc(4_000_000, Buffer.from([2, 1, 120, 0])), Buffer.from(tail)]))],
    ['an overlong varint (10 continuation bytes)', () => b64(Buffer.from([2, 2, ...Array(10).fill(0x80), 1]))],
    ['a varint of 2^35 - 1', () => b64(Buffer.from([2, 2, 0xff, 0xff, 0xff, 0xff, 0x7f]))],
    ['a varint claiming 4 GB for the identifier', () => b64(Buffer.from([2, 2, 0xff, 0xff, 0xff, 0xff, 0x0f, 65]))],
    ['a caveat claiming 10^6 bytes', () => b64(Buffer.from([...header, 2, 0xc0, 0x84, 0x3d, 65, 0, 0, ...tail.slice(1)]))],
    ['a signature of 10^6 bytes claimed', () => b64(Buffer.from([...header, 0, 6, 0xc0, 0x84, 0x3d, 1, 2, 3]))],
    ['a 31-byte signature', () => b64(Buffer.from([...header, 0, 6, 31, ...randomBytes(31)]))],
    ['a third-party caveat', () => b64(Buffer.from([...header, 1, 1, 65, 2, 1, 66, 4, 1, 67, 0, 0, ...tail.slice(1)]))],
    ['a verification id on a caveat', () => b64(Buffer.from([...header, 2, 1, 66, 4, 1, 67, 0, 0, ...tail.slice(1)]))],
    ['trailing bytes after the signature', () => b64(Buffer.concat([Buffer.from(valid[0]!, 'base64url'), Buffer.from([0])]))],
    ['version 1 (hex)', () => Buffer.from('0024location dirledger\n').toString('base64url')],
    ['invalid UTF-8 in a caveat', () => b64(Buffer.from([...header, 2, 2, 0xc3, 0x28, 0, 0, ...tail.slice(1)]))],
    ['standard base64 with + and /', () => `${valid[1]!.replace(/-|_/g, (c) => (c === '-' ? '+' : '/'))}+/`],
  ];

  it.each(cases)('%s: MalformedToken and the plain 401', (_what, build) => {
    const text = build();
    expect(() => parse(text)).toThrow(MalformedToken);
    expectPlainRefusal(text);
  });

  it('non-strings and empty values are a missing credential, plainly', () => {
    for (const value of [undefined, null, '']) expectPlainRefusal(value as string);
    expect(() => parse(undefined as unknown as string)).toThrow(MalformedToken);
    expect(() => parse(42 as unknown as string)).toThrow(MalformedToken);
  });

  it('a refusal message never echoes the presented bytes', () => {
    const text = b64(Buffer.from([2, 1, 9, ...Buffer.from('dirledger'), 2, 5, ...Buffer.from('<scr>'), 0, 2, 1]));
    const checked = authority.authenticate(text, 'REST');
    expect(!checked.ok && checked.refusal.message).toBe(PLAIN);
    expect(PLAIN).not.toContain('scr');
  });
});
