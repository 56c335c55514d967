// The caller's read scope on GraphQL's ledger fields. Task scope is merged into each read's own
// condition in SQL (never applied after paging, so counts and cursors stay exact); something
// outside it reads as absent. A token that may read nothing is refused, once per operation on record.
import { randomUUID } from 'node:crypto';
import type { Door } from '../context/door.ts';
import type { Caller, Grant } from '../context/request.ts';
import type { Logger } from '../logger.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { withinTask, type LedgerFilter } from './filter.ts';

export type LedgerScope = { kind: 'all' } | { kind: 'task'; task: string };

/** What a read asks of the authority (src/auth/authority.ts answers it): the caller's limit, and the refusal of a read. */
export type ReadAuthority = {
  readLimitOf(grant: Grant | undefined): LedgerScope | { kind: 'none' };
  refuseRead(grant: Grant, door: Door, what: string): { message: string; record(fields: { actionId: string; task?: string; agent?: string }): Promise<void> };
};

/** What a read needs of the operation it runs in (the GraphQL context is one); one object per operation. */
export type ReadContext = { services: { authority: ReadAuthority; logger: Logger }; caller: Caller };

/** One recorded refusal per operation, however many fields it refuses. */
const refusals = new WeakMap<object, Promise<void>>();

/** The caller's scope, or FORBIDDEN (`extensions.limit: "read"`) with a REFUSAL event when it may read nothing. */
export async function ledgerScope(ctx: ReadContext, what: string): Promise<LedgerScope> {
  const limit = ctx.services.authority.readLimitOf(ctx.caller.grant);
  if (limit.kind !== 'none') return limit;
  const grant = ctx.caller.grant!;
  const refusal = ctx.services.authority.refuseRead(grant, ctx.caller.door, what);
  let recorded = refusals.get(ctx);
  if (!recorded) {
    recorded = refusal
      .record({ actionId: randomUUID(), ...(grant.task && { task: grant.task }), ...(grant.agent && { agent: grant.agent }) })
      .catch((error) => ctx.services.logger.error({ err: error }, 'recording a refusal failed'));
    refusals.set(ctx, recorded);
  }
  await recorded;
  throw new DomainError(ErrorCode.FORBIDDEN, refusal.message, { limit: 'read' });
}

/** The scope without refusing: a caller that may read nothing sees nothing (for nested fields, reached only through a scoped root). */
export function ledgerScopeNow(ctx: ReadContext): LedgerScope | { kind: 'none' } {
  return ctx.services.authority.readLimitOf(ctx.caller.grant);
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
