// What Authority decides for a presented token: a Grant (what its holder may do) or a Refusal
// (what the caller is told), and the REFUSAL event the ledger keeps of a refusal.
import type { Door } from '../context/door.ts';
import type { EventInput } from '../ledger/input.ts';
import type { Macaroon } from './macaroon.ts';
import type { Caveat, CaveatKind, Power, ReadScope } from './caveats.ts';

/** What a verified token lets its holder do; built once per request. */
export type Grant = Readonly<{
  tokenId: string;
  /** Who the ledger records as the caller. */
  caller: string;
  /** This token's id, then its issuers' ids, nearest first. */
  lineage: readonly string[];
  /** True for a token with no caveats at all. */
  admin: boolean;
  caveats: readonly Caveat[];
  /** Caveat texts, as signed. */
  texts: readonly string[];
  /** The presented token (absent for a signed webhook's grant). */
  token?: Macaroon;
  /** One database counter per `uses` caveat: sha256 of the chain signature after it. */
  counters: readonly { key: string; max: number; caveat: string }[];
  /** One database counter per `tokens <= N` and `cost <= X` caveat, keyed like `counters` (src/auth/spend.ts). */
  budgets: readonly Budget[];
  task?: string;
  agent?: string;
  read: ReadScope;
  powers: ReadonlySet<Power>;
}>;

type AuthGrant = Grant;

export type Budget = Readonly<{ key: string; unit: 'tokens' | 'cost'; max: string; caveat: string }>;

declare module '../context/request.ts' {
  /** The request context carries this Grant (src/context/request.ts). */
  interface GrantCarrier {
    grant: AuthGrant;
  }
}

export type Checked = { ok: true; grant: Grant } | { ok: false; refusal: Refusal };

/** `origin`: a browser page of another site opening a WebSocket (doors/cors.ts). */
export type RefusalLimit = CaveatKind | 'credential' | 'power' | 'rate' | 'revoked' | 'origin';

export type Refusal = Readonly<{
  limit: RefusalLimit;
  /** The caveat that refused, as signed. */
  caveat?: string;
  door: Door;
  tool?: string;
  /** The whole reason, for the ledger. */
  reason: string;
  /** What the caller is told: plain for a bad credential, the limit for a caveat. */
  message: string;
  status: 400 | 401 | 403 | 429;
  retryAfterSeconds?: number;
  tokenId?: string;
}>;

/** The REFUSAL event for a refusal, linked to its action. */
export function refusalEvent(
  refusal: Refusal,
  fields: { actionId: string; session?: string; turn?: string; task?: string; agent?: string; method?: string; url?: string },
): EventInput {
  const { actionId, method, url, ...rest } = fields;
  return {
    id: `${actionId}:refusal`,
    actionId,
    ...rest,
    kind: 'REFUSAL',
    direction: 'IN',
    status: 'REFUSED',
    ...(refusal.tool && { tool: refusal.tool.slice(0, 512) }),
    ...(method && { method }),
    ...(url && { url: url.slice(0, 16_384) }),
    occurredAt: new Date(),
    payload: { state: 'NONE' },
    metadata: {
      capture: 'authority',
      limit: refusal.limit,
      door: refusal.door,
      reason: refusal.reason,
      ...(refusal.caveat && { caveat: refusal.caveat }),
      ...(refusal.tool && { tool: refusal.tool }),
      ...(refusal.tokenId && { tokenId: refusal.tokenId }),
    },
  };
}
