// What a holder may read of the ledger, for every read path: everything, one task's events, or
// nothing. Reading nothing is a refusal (a REFUSAL event naming the read caveat); an event outside a
// task scope simply does not exist for the holder.
import type { Authority, Grant, ReadLimit, Refusal } from './authority.ts';
import type { Door } from '../context/door.ts';

/** The read limit of a caller; no grant (AUTHORITY=off) reads everything. */
export function readLimitOf(authority: Authority, grant: Grant | undefined): ReadLimit {
  return grant ? authority.readLimit(grant) : { kind: 'all' };
}

/** The refusal of a read by a token that may read nothing of the ledger. */
export function readRefusal(grant: Grant, door: Door, what: string): Refusal {
  // The caveat that narrowed reads to nothing: `read = none`, else `read = task` on a token without a task.
  const none = grant.caveats.findIndex((c) => c.kind === 'read' && c.scope === 'none');
  const i = none >= 0 ? none : grant.caveats.findIndex((c) => c.kind === 'read');
  const reason = none >= 0 || i < 0 ? `the token may read nothing of the ledger (${what})` : `the token may read only its own task's events but names no task (${what})`;
  return {
    limit: 'read',
    ...(i >= 0 && { caveat: grant.texts[i] }),
    door,
    reason,
    message: 'This token may not read the ledger.',
    status: 403,
    tokenId: grant.tokenId,
  };
}
