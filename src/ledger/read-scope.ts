// The caller's read scope on GraphQL's ledger fields. Task scope is merged into each read's own
// condition in SQL (never applied after paging, so counts and cursors stay exact); something
// outside it reads as absent. A token that may read nothing is refused, once per operation on record.
import { randomUUID } from 'node:crypto';
import type { Authority } from '../auth/authority.ts';
import { readLimitOf, readRefusal } from '../auth/read-scope.ts';
import type { Caller } from '../context/request.ts';
import type { Logger } from '../logger.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { withinTask, type LedgerFilter } from './filter.ts';

export type LedgerScope = { kind: 'all' } | { kind: 'task'; task: string };

/** What a read needs of the operation it runs in (the GraphQL context is one); one object per operation. */
export type ReadContext = { services: { authority: Authority; logger: Logger }; caller: Caller };

/** One recorded refusal per operation, however many fields it refuses. */
const refusals = new WeakMap<object, Promise<void>>();

/** The caller's scope, or FORBIDDEN (`extensions.limit: "read"`) with a REFUSAL event when it may read nothing. */
export async function ledgerScope(ctx: ReadContext, what: string): Promise<LedgerScope> {
  const limit = readLimitOf(ctx.services.authority, ctx.caller.grant);
  if (limit.kind !== 'none') return limit;
  const grant = ctx.caller.grant!;
  const refusal = readRefusal(grant, ctx.caller.door, what);
  let recorded = refusals.get(ctx);
  if (!recorded) {
    recorded = ctx.services.authority
      .record(refusal, { actionId: randomUUID(), ...(grant.task && { task: grant.task }), ...(grant.agent && { agent: grant.agent }) })
      .catch((error) => ctx.services.logger.error({ err: error }, 'recording a refusal failed'));
    refusals.set(ctx, recorded);
  }
  await recorded;
  throw new DomainError(ErrorCode.FORBIDDEN, refusal.message, { limit: 'read' });
}

/** The scope without refusing: a caller that may read nothing sees nothing (for nested fields, reached only through a scoped root). */
export function ledgerScopeNow(ctx: ReadContext): LedgerScope | { kind: 'none' } {
  return readLimitOf(ctx.services.authority, ctx.caller.grant);
}

/** The filter, narrowed to the scope's task. */
export function scopedFilter(filter: LedgerFilter, scope: LedgerScope): LedgerFilter {
  return scope.kind === 'task' ? withinTask(filter, scope.task) : filter;
}

/** The scope as a filter, to AND with a read's own: a task's, or one that matches nothing. */
export function scopeFilter(scope: LedgerScope | { kind: 'none' }): LedgerFilter {
  if (scope.kind === 'all') return {};
  return { task: scope.kind === 'task' ? [scope.task] : [] };
}

/** The scope as a condition on ledger_event, to AND with a read's own. */
export function scopeWhere(scope: LedgerScope | { kind: 'none' }): Prisma.LedgerEventWhereInput {
  if (scope.kind === 'all') return {};
  return scope.kind === 'task' ? { task: scope.task } : { task: { in: [] } };
}
