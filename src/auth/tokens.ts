// Token texts: minting one under its identifier, and what anyone can read of one without the key.
import { createHash, randomBytes } from 'node:crypto';
import { describeCaveat, parseCaveat } from './caveats.ts';
import { mint, parse, serialize } from './macaroon.ts';

export const TOKEN_LOCATION = 'dirledger';
/** `dl1:<key id>:<token id>`, then the id of each issuer, nearest first: revoking any of them revokes the token. */
export const IDENTIFIER = /^dl1:([0-9a-f]{8}):([0-9a-f]{32})((?::[0-9a-f]{32}){0,16})$/;
/** Issuers an identifier may name; a token this deep issues no more tokens. */
export const LINEAGE_MAX_ISSUERS = 16;
export const lineageOf = (id: RegExpExecArray) => [id[2]!, ...(id[3] ? id[3].slice(1).split(':') : [])];

/** The short id of a root key that every token it signs names, so a token of another key is told apart. */
export const keyIdOf = (rootKey: Buffer) => createHash('sha256').update('dirledger key id').update(rootKey).digest('hex').slice(0, 8);

export function mintWithId(rootKey: Buffer, keyId: string, caveats: readonly string[], issuers: readonly string[] = []): { token: string; tokenId: string } {
  for (const caveat of caveats) parseCaveat(caveat);
  const tokenId = randomBytes(16).toString('hex');
  const identifier = [`dl1:${keyId}`, tokenId, ...issuers].join(':');
  return { token: serialize(mint(rootKey, TOKEN_LOCATION, identifier, caveats)), tokenId };
}

/** A token signed with the root key, without an Authority (nothing but the key is needed to mint): the CLI, benchmarks, tests. */
export function mintWithRootKey(rootKey: Buffer, caveats: readonly string[] = []): string {
  return mintWithId(rootKey, keyIdOf(rootKey), caveats).token;
}

/** Each limit in words, in signing order; a token without caveats says so. */
export function describeLimits(texts: readonly string[]): string[] {
  if (texts.length === 0) return ['No limits: an admin token.'];
  return texts.map((text) => {
    try {
      return describeCaveat(parseCaveat(text));
    } catch (error) {
      return `A caveat this server cannot check (${(error as Error).message}): the token is refused.`;
    }
  });
}

/** What anyone can read of a token without the key: its id and limits. Throws MalformedToken. */
export function inspect(tokenText: string): { tokenId: string | null; issuedBy: string[]; caveats: string[]; limits: string[] } {
  const token = parse(tokenText);
  const id = IDENTIFIER.exec(token.identifier);
  const lineage = id ? lineageOf(id) : [];
  return { tokenId: lineage[0] ?? null, issuedBy: lineage.slice(1), caveats: token.caveats, limits: describeLimits(token.caveats) };
}
