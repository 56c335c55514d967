// Reading the ledger: pages of events by commit-ordered position, and counts
// summed in SQL from rows. Writers only ever add positions above every committed
// one, so "position after the cursor" never skips or repeats an event.
import type { Database } from '../db/client.ts';
import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';
import { badInput } from '../errors.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { filterConditions, planEventSelect, runRead, selectEvents, SqlParams, type EventQuery, type EventSpec, type PlannedEvents } from './event-select.ts';
import { filterWhere, type LedgerFilter } from './filter.ts';

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 500;

export const LedgerOrder = ['ASC', 'DESC'] as const;
export type LedgerOrder = (typeof LedgerOrder)[number];

export type PageArgs = { first?: number | null; after?: string | null; order?: LedgerOrder | null };

export type Page<T> = {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
};

/** The page size asked for, or BAD_INPUT beyond the cap. */
export function pageSize(first: number | null | undefined): number {
  if (first === null || first === undefined) return PAGE_DEFAULT;
  if (!Number.isInteger(first) || first < 0 || first > PAGE_MAX) {
    throw badInput(`Invalid first: expected a whole number from 0 to ${PAGE_MAX}, got ${first}`);
  }
  return first;
}

/** An edge whose cursor is encoded only when a query asks for it (most pages never do). */
class Edge<T extends { position: bigint }> {
  readonly node: T;
  constructor(node: T) {
    this.node = node;
  }
  get cursor(): string {
    return encodeCursor(this.node.position);
  }
}

/** A page's ends, whose cursors are encoded only when a query asks for them (most pages never do). */
class PageInfo<T extends { position: bigint }> {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  private readonly edges: Edge<T>[];
  constructor(edges: Edge<T>[], hasNextPage: boolean, hasPreviousPage: boolean) {
    this.edges = edges;
    this.hasNextPage = hasNextPage;
    this.hasPreviousPage = hasPreviousPage;
  }
  get startCursor(): string | null {
    return this.edges[0]?.cursor ?? null;
  }
  get endCursor(): string | null {
    return this.edges.at(-1)?.cursor ?? null;
  }
}

/** A page from rows fetched with one more than `take`, so the extra row tells whether more follow. */
export function toPage<T extends { position: bigint }>(rows: T[], take: number, after: string | undefined): Page<T> {
  const edges = rows.slice(0, take).map((node) => new Edge(node));
  return { edges, pageInfo: new PageInfo(edges, rows.length > take, after !== undefined) };
}

/** A query planned here (no cache): its statement, or null for Prisma. */
export function planned(query: EventQuery, always: readonly string[] = ['position']): PlannedEvents {
  return { query, plan: planEventSelect(query, always), id: JSON.stringify(query) };
}

/**
 * One page of events matching the filter, in position order, after the cursor. `selection` is the
 * query planned from the GraphQL document (queryFromInfo) and its statement: the page, its payloads
 * and batches are one statement with only the columns asked for (event-select.ts); a selection it
 * does not plan is read through Prisma, one statement per relation.
 */
export async function filteredEventPage<T extends { position: bigint }>(
  db: Database,
  filter: LedgerFilter,
  args: PageArgs,
  selection: PlannedEvents = planned({}),
): Promise<Page<T>> {
  const take = pageSize(args.first);
  const order = args.order ?? 'ASC';
  const after = args.after === null || args.after === undefined ? undefined : decodeCursor(args.after);
  const rows = await readEvents(db, selection, { filter, order, limit: take + 1, ...(after !== undefined && { after }) });
  return toPage(rows as unknown as T[], take, args.after ?? undefined);
}

/**
 * Events as `spec` says: one planned statement, else through Prisma with the query's columns and
 * `always` (the fields the planned statement was given besides).
 */
export async function readEvents(
  db: Database,
  { query, plan }: PlannedEvents,
  spec: EventSpec,
  always: readonly string[] = ['position'],
): Promise<Record<string, unknown>[]> {
  if (plan) return selectEvents(db.sql, plan, spec);
  const where: Prisma.LedgerEventWhereInput[] = [filterWhere(spec.filter)];
  if (spec.id !== undefined) where.push({ id: spec.id });
  if (spec.actionId !== undefined) where.push({ actionId: spec.actionId });
  if (spec.actionIds !== undefined) where.push({ actionId: { in: spec.actionIds } });
  if (spec.after !== undefined) where.push({ position: spec.order === 'ASC' ? { gt: spec.after } : { lt: spec.after } });
  const select = query.select ? { select: { ...query.select, ...Object.fromEntries(always.map((f) => [f, true])) } } : query;
  return (await db.prisma.ledgerEvent.findMany({
    ...(select as object),
    where: { AND: where },
    orderBy: { position: spec.order === 'ASC' ? 'asc' : 'desc' },
    ...(spec.limit !== undefined && { take: spec.limit }),
  })) as unknown as Record<string, unknown>[];
}

export const LedgerGrouping = ['HOUR', 'DAY', 'SESSION', 'TURN', 'KIND', 'AGENT', 'MODEL', 'TOOL', 'TASK', 'STATUS'] as const;
export type LedgerGrouping = (typeof LedgerGrouping)[number];

export type LedgerCount = {
  /** The group's value; an ISO timestamp (UTC) for HOUR and DAY; null for events without one. */
  key: string | null;
  events: number;
  inputTokens: bigint;
  outputTokens: bigint;
  /** Exact decimal, as text without trailing zeros. */
  costUsd: string;
};

const groupKeys: Record<LedgerGrouping, string> = {
  HOUR: `to_char(date_trunc('hour', e.occurred_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24":00:00.000Z"')`,
  DAY: `to_char(date_trunc('day', e.occurred_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T00:00:00.000Z"')`,
  SESSION: 'e.session',
  TURN: 'e.turn',
  KIND: 'e.kind',
  AGENT: 'e.agent',
  MODEL: 'e.model',
  TOOL: 'e.tool',
  TASK: 'e.task',
  STATUS: 'e.status',
};

type CountRow = { key: string | null; events: bigint; input_tokens?: string; output_tokens?: string; cost_usd?: string };

const sumColumns = `, coalesce(sum(e.input_tokens), 0)::text AS input_tokens, coalesce(sum(e.output_tokens), 0)::text AS output_tokens,
  trim_scale(coalesce(sum(e.cost_usd), 0))::text AS cost_usd`;

/**
 * Event count, token and cost sums per group, summed in SQL from the rows that match (one named
 * statement). Events without a token or cost value add nothing to that sum. Without a grouping:
 * one row for everything that matches, with a null key. Groups are ordered by key, null last.
 * `sums: false` counts only (the sums read as 0): a count alone can be answered from an index.
 */
export async function ledgerCounts(db: Database, by: LedgerGrouping | null, filter: LedgerFilter, sums = true): Promise<LedgerCount[]> {
  const tools = toolsCountedAlone(by, filter, sums);
  if (tools) return keptToolCounts(db, by, tools);
  const params = new SqlParams();
  const where = filterConditions(filter, params);
  const text =
    `SELECT ${by ? groupKeys[by] : 'NULL::text'} AS key, count(*) AS events${sums ? sumColumns : ''} FROM ledger_event e` +
    (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
    (by ? ' GROUP BY 1 ORDER BY 1 ASC NULLS LAST' : '');
  const rows = await runRead<CountRow>(db.sql, text, params);
  return rows.map((r) => ({
    key: r.key,
    events: Number(r.events),
    inputTokens: BigInt(r.input_tokens ?? 0),
    outputTokens: BigInt(r.output_tokens ?? 0),
    costUsd: r.cost_usd ?? '0',
  }));
}

/** The tools of a count that asks for nothing but those tools' events (no other condition, no sums), else undefined. */
function toolsCountedAlone(by: LedgerGrouping | null, filter: LedgerFilter, sums: boolean): string[] | undefined {
  if (sums || (by !== null && by !== 'TOOL')) return undefined;
  const set = Object.entries(filter).filter(([, v]) => v !== undefined);
  return set.length === 1 && filter.tool?.length ? filter.tool : undefined;
}

/** Counts kept on append (ledger_tool_count): one primary-key read whatever the ledger's size. */
async function keptToolCounts(db: Database, by: LedgerGrouping | null, tools: string[]): Promise<LedgerCount[]> {
  const params = new SqlParams();
  const which = tools.length === 1 ? `tool = ${params.add(tools[0]!)}` : `tool = ANY(${params.add(tools, '::text[]')})`;
  const text = by
    ? `SELECT tool AS key, events FROM ledger_tool_count WHERE ${which} ORDER BY 1 ASC`
    : `SELECT NULL::text AS key, coalesce(sum(events), 0)::bigint AS events FROM ledger_tool_count WHERE ${which}`;
  const rows = await runRead<{ key: string | null; events: bigint }>(db.sql, text, params);
  return rows.map((r) => ({ key: r.key, events: Number(r.events), inputTokens: 0n, outputTokens: 0n, costUsd: '0' }));
}

/** Whether an event of this task references these bytes (a task-scoped reader may read them then). */
export async function taskReferencesBlob(prisma: PrismaClient, task: string, sha256: string): Promise<boolean> {
  const rows = await prisma.$queryRaw<unknown[]>`SELECT 1 FROM ledger_event WHERE task = ${task} AND payload_sha256 = ${sha256} LIMIT 1`;
  return rows.length > 0;
}
