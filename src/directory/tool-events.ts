// Tool.events for a batch of tools: the first page of each tool's ledger events, with the columns the
// query selects, in one statement (or two through Prisma, for a selection event-select.ts does not plan).
import { Prisma } from '../generated/prisma/client.ts';
import type { Context } from '../graphql/context.ts';
import { filterConditions, heldTo, limitText, runRead, SqlParams, type EventPlan, type EventQuery, type PlannedEvents } from '../ledger/event-select.ts';
import { filterSql, type LedgerFilter } from '../ledger/filter.ts';

/** The first `take + 1` events of each tool, with the columns the selection (planned with position and tool) asks for, in one statement for the whole batch of tools. */
export async function eventsForTools(
  ctx: Context,
  names: string[],
  take: number,
  after: bigint | null,
  filter: LedgerFilter,
  { query, plan }: PlannedEvents,
): Promise<Map<string, unknown[]>> {
  const out = new Map<string, unknown[]>(names.map((n) => [n, []]));
  if (!plan) return eventsForToolsThroughPrisma(ctx, names, take, after, filter, query, out);
  const { text, params } = eventsForToolsStatement(names, take, after, filter, plan);
  for (const row of await runRead(ctx.services.db.sql, text, params)) {
    const event = plan.read(row);
    out.get(event.tool as string)?.push(event);
  }
  return out;
}

/**
 * The statement over `t.name`: one parameter per name and the page size written in, as toolsStatement
 * (tool-reads.ts) is, so a named statement settles on its generic plan. The join to blob (and batch) is
 * made after each tool's LIMIT, so only the rows returned are joined.
 */
export function eventsForToolsStatement(
  names: string[],
  take: number,
  after: bigint | null,
  filter: LedgerFilter,
  plan: EventPlan,
): { text: string; params: SqlParams } {
  const params = new SqlParams();
  const where = [heldTo('e.tool', 't.name'), ...filterConditions(filter, params)];
  if (after !== null) where.push(`e.position > ${params.add(after, '::bigint')}`);
  const text =
    `SELECT ${plan.columns} FROM unnest(ARRAY[${names.map((n) => params.add(n)).join(', ')}]::text[]) AS t(name) ` +
    `CROSS JOIN LATERAL (SELECT * FROM ledger_event e WHERE ${where.join(' AND ')} ORDER BY e.tool, e.position ASC LIMIT ${limitText(take + 1)}) e ` +
    `${plan.joins} ORDER BY e.position ASC`;
  return { text, params };
}

/** The same through Prisma, for a selection event-select.ts does not plan: two statements. */
async function eventsForToolsThroughPrisma(
  ctx: Context,
  names: string[],
  take: number,
  after: bigint | null,
  filter: LedgerFilter,
  query: EventQuery,
  out: Map<string, unknown[]>,
): Promise<Map<string, unknown[]>> {
  const prisma = ctx.services.db.prisma;
  const ids = await prisma.$queryRaw<{ id: string }[]>(Prisma.sql`
    SELECT e.id FROM unnest(${names}::text[]) AS t(name)
    CROSS JOIN LATERAL (
      SELECT id FROM ledger_event
      WHERE tool >= t.name AND tool <= t.name AND ${filterSql(filter)} ${after === null ? Prisma.empty : Prisma.sql`AND position > ${after}`}
      ORDER BY tool, position ASC LIMIT ${take + 1}
    ) e`);
  if (ids.length === 0) return out;
  const select = query.select ? { select: { ...query.select, position: true, tool: true } } : query;
  const events = (await prisma.ledgerEvent.findMany({
    ...(select as object),
    where: { id: { in: ids.map((r) => r.id) } },
    orderBy: { position: 'asc' },
  })) as unknown as { tool: string | null }[];
  for (const e of events) out.get(e.tool!)?.push(e);
  return out;
}
