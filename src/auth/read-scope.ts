// What a holder may read of the ledger, for every read path: everything, one task's events, or
// nothing. Reading nothing is a refusal (a REFUSAL event naming the read caveat); an event outside a
// task scope simply does not exist for the holder.
import type { Door } from '../context/door.ts';
import type { Grant } from './verdict.ts';
import type { ReadScope } from './caveats.ts';
import type { Refusal } from './verdict.ts';

/** What the ledger may show a holder: everything, one task's events, or nothing. */
export type ReadLimit = { kind: 'all' } | { kind: 'task'; task: string } | { kind: 'none' };

const readOrder: Record<ReadScope, number> = { none: 0, task: 1, all: 2 };
/** The narrower of two read scopes (several `read` caveats all apply). */
export const narrowerRead = (a: ReadScope, b: ReadScope): ReadScope => (readOrder[a] <= readOrder[b] ? a : b);

/** What the holder may read of the ledger. */
export function readLimit(grant: Grant): ReadLimit {
  if (grant.read === 'all') return { kind: 'all' };
  if (grant.read === 'task' && grant.task !== undefined) return { kind: 'task', task: grant.task };
  return { kind: 'none' };
}

/** The read limit of a caller; no grant (AUTHORITY=off) reads everything. */
export function readLimitOf(grant: Grant | undefined): ReadLimit {
  return grant ? readLimit(grant) : { kind: 'all' };
}

/** The refusal of a read by a token that may read nothing of the ledger. */
export function readRefusal(grant: Grant, door: Door, what: string): Refusal {
  // The caveat that narrowed reads to nothing: `read = none`, else `read = task` on a token without a task.
  const none = grant.caveats.findIndex((c) => c.kind === 'read' && c.scope === 'none');
  const i = none >= 0 ? none : grant.caveats.findIndex((c) => c.kind === 'read');
  const reason =
    none >= 0 || i < 0 ? `the token may read nothing of the ledger (${what})` : `the token may read only its own task's events but names no task (${what})`;
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
