// Grants on the record: every token issued (issueToken), narrowed or minted by the CLI against a
// server is a GRANT event naming the token's id, caveats and issuer. Never the token itself: the
// caveats are public (anyone holding a token reads them) and the id is what refusals name.
import { randomUUID } from 'node:crypto';
import type { EventInput } from '../ledger/input.ts';
import { describeLimits, inspect } from './tokens.ts';
import type { Authority } from './authority.ts';
import type { Grant } from './verdict.ts';
import type { Door } from '../context/door.ts';
import { MalformedToken } from './macaroon.ts';

/** How a token came to be: issued by the server, narrowed offline by a holder, or minted from the root key. */
export const GrantVias = ['ISSUE', 'NARROW', 'ADMIN'] as const;
export type GrantVia = (typeof GrantVias)[number];

export type GrantRecord = {
  tokenId: string;
  caveats: readonly string[];
  via: GrantVia;
  door: Door;
  /** The issuer's grant (absent with AUTHORITY=off and no token). */
  issuer?: Grant;
};

/** The GRANT event; `fields` link it to the action that granted (its invocation), when there is one. */
export function grantEvent(
  record: GrantRecord,
  fields: { actionId?: string; session?: string; turn?: string; task?: string; agent?: string } = {},
): EventInput {
  const actionId = fields.actionId ?? randomUUID();
  const { issuer } = record;
  return {
    ...fields,
    id: `${actionId}:grant:${randomUUID()}`,
    actionId,
    kind: 'GRANT',
    direction: 'OUT',
    status: 'GRANTED',
    occurredAt: new Date(),
    payload: { state: 'NONE' },
    metadata: {
      capture: 'authority',
      via: record.via,
      door: record.door,
      tokenId: record.tokenId,
      caveats: [...record.caveats],
      limits: describeLimits(record.caveats),
      issuer: issuer ? issuer.caller : 'anonymous (AUTHORITY=off)',
      ...(issuer && { issuerTokenId: issuer.tokenId, issuerCaveats: [...issuer.texts] }),
    },
  };
}

export class GrantRefused extends Error {
  override name = 'GrantRefused';
}

/**
 * Checks a token a holder made offline before its grant is recorded: signed with this server's key,
 * and for NARROW the caller's own token with caveats added (the same id, the caller's caveats first);
 * for ADMIN a token without caveats, presented by itself. Throws GrantRefused saying what was expected.
 */
export function checkOfflineGrant(authority: Authority, token: string, via: Exclude<GrantVia, 'ISSUE'>, door: Door, caller: Grant | undefined): GrantRecord {
  let read: ReturnType<typeof inspect>;
  try {
    read = inspect(token);
  } catch (error) {
    if (error instanceof MalformedToken) throw new GrantRefused(`Expected a dirledger token: ${error.message}.`);
    throw error;
  }
  const checked = authority.authenticate(token, door);
  if (!checked.ok && checked.refusal.limit === 'credential')
    throw new GrantRefused('Expected a token signed with this server’s root key; this one does not verify here.');
  const tokenId = read.tokenId!;
  if (via === 'ADMIN') {
    if (read.caveats.length > 0) throw new GrantRefused(`Expected an admin token (no caveats) for ADMIN; this one has ${read.caveats.length}.`);
    if (caller && caller.tokenId !== tokenId)
      throw new GrantRefused('Expected the new admin token to present itself (as the bearer) when recording its grant.');
  } else if (caller) {
    const extends_ = caller.tokenId === tokenId && caller.texts.length <= read.caveats.length && caller.texts.every((c, i) => read.caveats[i] === c);
    if (!extends_) throw new GrantRefused('Expected a narrowing of the bearer token (its id, its caveats first, then more); this token is not one.');
  }
  return { tokenId, caveats: read.caveats, via, door, ...(caller && { issuer: caller }) };
}
