// Macaroons in the libmacaroons v2 binary format, first-party caveats only, signed with
// HMAC-SHA256 from node:crypto. Wire-compatible with the `macaroon` npm package (the test suite
// verifies tokens both ways); that package is not used at run time because its serializer grows
// its buffer without bound past a few caveats and its sjcl HMAC is slower than node's.
//
//   sig0 = HMAC(HMAC("macaroons-key-generator", rootKey), identifier)
//   sigN = HMAC(sigN-1, caveatN)
// Anyone holding a token can append a caveat (narrowing it); nobody can remove one.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type Macaroon = {
  location: string;
  identifier: string;
  caveats: string[];
  signature: Buffer;
};

/** Thrown for anything that is not a well-formed token; its message is safe to log, never to answer. */
export class MalformedToken extends Error {
  override name = 'MalformedToken';
}

const FIELD_EOS = 0;
const FIELD_LOCATION = 1;
const FIELD_IDENTIFIER = 2;
const FIELD_VID = 4;
const FIELD_SIGNATURE = 6;

/** Upper bounds a parser holds to whatever arrives: a token is link-sized. */
export const TOKEN_MAX_CHARS = 8_192;
export const TOKEN_MAX_CAVEATS = 64;
const FIELD_MAX_BYTES = 1_024;

const keyGenerator = Buffer.from('macaroons-key-generator');

const hmac = (key: Buffer, data: Buffer | string) => createHmac('sha256', key).update(data).digest();

/** The signing key derived from a root key, as libmacaroons does. */
export const derivedKey = (rootKey: Buffer) => hmac(keyGenerator, rootKey);

export function mint(rootKey: Buffer, location: string, identifier: string, caveats: readonly string[] = []): Macaroon {
  let signature = hmac(derivedKey(rootKey), identifier);
  for (const caveat of caveats) signature = hmac(signature, caveat);
  return { location, identifier, caveats: [...caveats], signature };
}

/** Appends a caveat: the holder's offline narrowing. */
export function attenuate(token: Macaroon, caveat: string): Macaroon {
  return { ...token, caveats: [...token.caveats, caveat], signature: hmac(token.signature, caveat) };
}

/**
 * The chain of signatures, one after the identifier and one after each caveat, or null when
 * the final one does not match (forged, tampered or signed by another key). Constant-time compare.
 * `signingKey`: derivedKey(rootKey), when the caller keeps it.
 */
export function signatureChain(rootKey: Buffer, token: Macaroon, signingKey = derivedKey(rootKey)): Buffer[] | null {
  const chain = [hmac(signingKey, token.identifier)];
  for (const caveat of token.caveats) chain.push(hmac(chain[chain.length - 1]!, caveat));
  const last = chain[chain.length - 1]!;
  return token.signature.length === last.length && timingSafeEqual(token.signature, last) ? chain : null;
}

export function serialize(token: Macaroon): string {
  const parts: Buffer[] = [Buffer.from([2])];
  const field = (type: number, data?: Buffer) => {
    parts.push(Buffer.from([type]));
    if (type !== FIELD_EOS) parts.push(uvarint(data!.length), data!);
  };
  if (token.location) field(FIELD_LOCATION, Buffer.from(token.location));
  field(FIELD_IDENTIFIER, Buffer.from(token.identifier));
  field(FIELD_EOS);
  for (const caveat of token.caveats) {
    field(FIELD_IDENTIFIER, Buffer.from(caveat));
    field(FIELD_EOS);
  }
  field(FIELD_EOS);
  field(FIELD_SIGNATURE, token.signature);
  return Buffer.concat(parts).toString('base64url');
}

const base64url = /^[A-Za-z0-9_-]+={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses a serialized token; throws MalformedToken saying what was expected and what arrived. */
export function parse(text: string): Macaroon {
  if (typeof text !== 'string' || text.length === 0) throw new MalformedToken('expected a token, got an empty value');
  if (text.length > TOKEN_MAX_CHARS) throw new MalformedToken(`expected at most ${TOKEN_MAX_CHARS} characters, got ${text.length}`);
  if (!base64url.test(text)) throw new MalformedToken('expected base64url characters');
  const bytes = Buffer.from(text.replace(/=+$/, ''), 'base64url');
  let at = 0;
  const byte = () => {
    if (at >= bytes.length) throw new MalformedToken('expected more bytes, the token is truncated');
    return bytes[at++]!;
  };
  const varint = () => {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = byte();
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
    throw new MalformedToken('expected a field length, got an overlong varint');
  };
  const peek = () => (at < bytes.length ? bytes[at] : undefined);
  const field = (type: number): Buffer => {
    const got = byte();
    if (got !== type) throw new MalformedToken(`expected field ${type}, got field ${got}`);
    if (type === FIELD_EOS) return Buffer.alloc(0);
    const length = varint();
    if (length > FIELD_MAX_BYTES) throw new MalformedToken(`expected a field of at most ${FIELD_MAX_BYTES} bytes, got ${length}`);
    if (at + length > bytes.length) throw new MalformedToken('expected more bytes, the token is truncated');
    const out = bytes.subarray(at, at + length);
    at += length;
    return out;
  };
  const text8 = (b: Buffer, what: string) => {
    try {
      return utf8.decode(b);
    } catch {
      throw new MalformedToken(`expected UTF-8 in the ${what}`);
    }
  };
  const version = byte();
  if (version !== 2) throw new MalformedToken(`expected macaroon format version 2, got ${version}`);
  const location = peek() === FIELD_LOCATION ? text8(field(FIELD_LOCATION), 'location') : '';
  const identifier = text8(field(FIELD_IDENTIFIER), 'identifier');
  field(FIELD_EOS);
  const caveats: string[] = [];
  while (peek() !== FIELD_EOS) {
    if (caveats.length === TOKEN_MAX_CAVEATS) throw new MalformedToken(`expected at most ${TOKEN_MAX_CAVEATS} caveats`);
    if (peek() === FIELD_LOCATION) throw new MalformedToken('expected a first-party caveat, got a third-party caveat');
    caveats.push(text8(field(FIELD_IDENTIFIER), 'caveat'));
    if (peek() === FIELD_VID) throw new MalformedToken('expected a first-party caveat, got a third-party caveat');
    field(FIELD_EOS);
  }
  field(FIELD_EOS);
  const signature = field(FIELD_SIGNATURE);
  if (signature.length !== 32) throw new MalformedToken(`expected a 32-byte signature, got ${signature.length} bytes`);
  if (at !== bytes.length) throw new MalformedToken(`expected the token to end, got ${bytes.length - at} more bytes`);
  return { location, identifier, caveats, signature: Buffer.from(signature) };
}

function uvarint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}
