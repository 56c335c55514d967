// What a holder may read of the ledger, for every read path: everything, one task's events, or
// nothing. Reading nothing is a refusal (a REFUSAL event naming the read caveat); an event outside a
// task scope simply does not exist for the holder.
import type { Authority, Grant, ReadLimit } from './authority.ts';

export { readRefusal } from './authority.ts';

/** The read limit of a caller; no grant (AUTHORITY=off) reads everything. */
export function readLimitOf(authority: Authority, grant: Grant | undefined): ReadLimit {
  return grant ? authority.readLimit(grant) : { kind: 'all' };
}
