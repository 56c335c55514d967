// One LedgerFilter, three readings: a Prisma `where` (events), SQL conditions
// (counts) and an in-memory predicate (subscriptions). Keep them in step.
import { z } from 'zod';
import { Prisma } from '../generated/prisma/client.ts';
import { badInput } from '../errors.ts';
import { plainTextExpected, plainTextProblem } from '../limits.ts';
import { parseInput } from '../validation.ts';
import { Direction } from './input.ts';

/** The string columns a filter (and a grouping) can name, in the order they are read back. */
export const filterDimensions = ['kind', 'tool', 'session', 'turn', 'task', 'agent', 'model', 'status'] as const;
export type FilterDimension = (typeof filterDimensions)[number];

/** Every value list is "any of these"; the fields are combined with AND. Time: from inclusive, to exclusive. */
export type LedgerFilter = { [D in FilterDimension]?: string[] } & {
  direction?: ('IN' | 'OUT')[];
  occurredFrom?: Date;
  occurredTo?: Date;
};

const values = z
  .array(
    z
      .string()
      .min(1, 'a non-empty value')
      .max(512, 'a value of at most 512 characters')
      .refine((v) => !plainTextProblem(v), plainTextExpected),
  )
  .min(1, 'at least one value')
  .max(100, 'at most 100 values');

export const LedgerFilterInput = z
  .object({
    kind: values.optional(),
    direction: z.array(Direction).min(1, 'at least one value').max(2, 'at most 2 values').optional(),
    tool: values.optional(),
    session: values.optional(),
    turn: values.optional(),
    task: values.optional(),
    agent: values.optional(),
    model: values.optional(),
    status: values.optional(),
    occurredFrom: z.date().optional(),
    occurredTo: z.date().optional(),
  })
  .strict();

/** Validates a filter from a door (nulls already dropped); throws BAD_INPUT naming the field. */
export function parseFilter(input: unknown): LedgerFilter {
  const filter = parseInput(LedgerFilterInput, input ?? {}, 'filter');
  if (filter.occurredFrom && filter.occurredTo && filter.occurredFrom > filter.occurredTo) {
    throw badInput(
      `Invalid filter: expected occurredFrom at or before occurredTo, got ${filter.occurredFrom.toISOString()} after ${filter.occurredTo.toISOString()}`,
    );
  }
  return filter;
}

/**
 * The filter narrowed to one task (a task-scoped reader): its own task list, if any, intersected
 * with that task. An empty intersection is `task: []`, which matches nothing in all three readings.
 */
export function withinTask(filter: LedgerFilter, task: string): LedgerFilter {
  return { ...filter, task: filter.task ? filter.task.filter((t) => t === task) : [task] };
}

export function filterWhere(filter: LedgerFilter): Prisma.LedgerEventWhereInput {
  const where: Prisma.LedgerEventWhereInput = {};
  for (const d of filterDimensions) {
    const list = filter[d];
    if (list) where[d] = { in: list };
  }
  if (filter.direction) where.direction = { in: filter.direction };
  if (filter.occurredFrom || filter.occurredTo) {
    where.occurredAt = {
      ...(filter.occurredFrom && { gte: filter.occurredFrom }),
      ...(filter.occurredTo && { lt: filter.occurredTo }),
    };
  }
  return where;
}

/** The column of each dimension in `ledger_event`; constants, never input. */
const columns: Record<FilterDimension | 'direction', Prisma.Sql> = {
  kind: Prisma.raw('kind'),
  tool: Prisma.raw('tool'),
  session: Prisma.raw('session'),
  turn: Prisma.raw('turn'),
  task: Prisma.raw('task'),
  agent: Prisma.raw('agent'),
  model: Prisma.raw('model'),
  status: Prisma.raw('status'),
  direction: Prisma.raw('direction::text'),
};

/** The filter as one SQL condition over `ledger_event` (TRUE when empty); every value is a parameter. */
export function filterSql(filter: LedgerFilter): Prisma.Sql {
  const conditions: Prisma.Sql[] = [];
  for (const d of [...filterDimensions, 'direction'] as const) {
    const list = filter[d];
    if (list) conditions.push(list.length ? Prisma.sql`${columns[d]} IN (${Prisma.join(list)})` : Prisma.sql`FALSE`);
  }
  if (filter.occurredFrom) conditions.push(Prisma.sql`occurred_at >= ${filter.occurredFrom}`);
  if (filter.occurredTo) conditions.push(Prisma.sql`occurred_at < ${filter.occurredTo}`);
  return conditions.length ? Prisma.join(conditions, ' AND ') : Prisma.sql`TRUE`;
}

export type FilterableEvent = { [D in FilterDimension]?: string | null } & { direction: string; occurredAt: Date };

/** The same filter, tested against one event in memory. */
export function matchesFilter(filter: LedgerFilter, event: FilterableEvent): boolean {
  for (const d of filterDimensions) {
    const list = filter[d];
    const value = event[d];
    if (list && (value === null || value === undefined || !list.includes(value))) return false;
  }
  if (filter.direction && !filter.direction.includes(event.direction as 'IN' | 'OUT')) return false;
  if (filter.occurredFrom && event.occurredAt < filter.occurredFrom) return false;
  if (filter.occurredTo && event.occurredAt >= filter.occurredTo) return false;
  return true;
}
