// Tools by name, and when the query asks for Tool.events once, each tool's first events with them:
// the rows and a LATERAL page of events per tool (payload and batch joined) in one named statement,
// where reading the rows and then their events took two (issue 17). Any other shape (Tool.events
// asked twice under aliases, a selection event-select.ts does not plan, a caller who may read no
// events) reads the rows alone, and Tool.events reads its page itself.
import type { SqlQueryable } from '../db/sql.ts';
import type { DirectoryRow } from '../generated/prisma/client.ts';
import { directoryRowColumns, filterConditions, heldTo, limitText, runRead, SqlParams, type EventPlan } from '../ledger/event-select.ts';
import type { LedgerFilter } from '../ledger/filter.ts';
import type { Directory } from './directory.ts';

/** The events read ahead with a tool row, under this key on the row. */
export const eventsReadAhead = Symbol('events read ahead');
export type ToolRow = DirectoryRow & { [eventsReadAhead]?: Record<string, unknown>[] };

/** Tool.events read ahead: its page size, cursor, filter (scope merged) and planned columns. */
export type Ahead = { take: number; after: bigint | null; filter: LedgerFilter; plan: EventPlan };

/**
 * The rows named, with each one's page of events when `ahead` is given, as one statement. Shaped so
 * that the generic plan's estimates are the custom plan's: one parameter per name (`= ANY` of an array
 * parameter is estimated as 10 names) and the page size written in (a LIMIT parameter as 10% of the
 * rows). PostgreSQL then settles a named statement on its generic plan after five runs instead of
 * planning every run (0.25 ms of its CPU per read, issue 17).
 *
 * One row per tool, its page as one JSON array of events (each a json_build_array of the planned
 * columns, `plan.json`), when every planned column has an exact JSON form: a row per event repeated
 * the row's columns (as nulls past the first) on every event, which for 7 tools of 10 events was
 * 16 KB from PostgreSQL and ~0.1 ms of pg's row parsing per read. Otherwise (payload bytes asked)
 * a row per event, the row's own columns on its first event only (`row_n`).
 */
export function toolsStatement(names: string[], ahead?: Ahead): { text: string; params: SqlParams } {
  const params = new SqlParams();
  const json = ahead?.plan.json;
  let text = `SELECT ${directoryRowColumns(ahead && !json ? 'coalesce(e.row_n, 1) = 1' : undefined).columns}`;
  if (ahead) {
    const where = [heldTo('e.tool', 'r.name'), ...filterConditions(ahead.filter, params)];
    if (ahead.after !== null) where.push(`e.position > ${params.add(ahead.after, '::bigint')}`);
    const page = `(SELECT * FROM ledger_event e WHERE ${where.join(' AND ')} ORDER BY e.tool, e.position ASC LIMIT ${limitText(ahead.take + 1)})`;
    if (json) {
      text +=
        `, e.events AS ${eventsColumn} FROM directory_row r LEFT JOIN LATERAL (SELECT json_agg(${json.element} ORDER BY e.position) AS events ` +
        `FROM ${page} e ${ahead.plan.joins}) e ON true`;
    }
    // row_n numbers a tool's page, so the row's own columns go out with its first event only.
    else
      text +=
        `, ${ahead.plan.columns} FROM directory_row r LEFT JOIN LATERAL (SELECT page.*, row_number() OVER (ORDER BY page.position) AS row_n ` +
        `FROM ${page} page) e ON true ${ahead.plan.joins}`;
  } else text += ' FROM directory_row r';
  const named = names.length ? `r.name IN (${names.map((n) => params.add(n)).join(', ')})` : 'FALSE';
  text += ` WHERE ${named} ORDER BY r.type ASC${ahead && !json ? ', e.position ASC' : ''}`;
  return { text, params };
}

/** The column of a tool's page of events, in the one-row-per-tool shape: a JSON array, null for none. */
const eventsColumn = 'events_json';

/**
 * The tool row of each name (the `tool` type first, else a row with a way), in the order asked; unknown
 * names are left out. One statement, with the events when they can be read ahead.
 */
export async function readTools(sql: SqlQueryable, directory: Pick<Directory, 'rowMeant'>, names: string[], ahead?: Ahead): Promise<ToolRow[]> {
  const row = directoryRowColumns();
  const { text, params } = toolsStatement(names, ahead);
  const json = ahead?.plan.json;
  const byKey = new Map<string, ToolRow>();
  for (const found of await runRead(sql, text, params)) {
    if (json) {
      const tool = row.read(found) as ToolRow;
      tool[eventsReadAhead] = ((found[eventsColumn] as unknown[][] | null) ?? []).map((items) => json.read(items));
      byKey.set(row.key(found), tool);
      continue;
    }
    const key = row.key(found);
    let tool = byKey.get(key);
    if (!tool) {
      const r = row.read(found) as ToolRow;
      tool = ahead ? { ...r, [eventsReadAhead]: [] } : r;
      byKey.set(key, tool);
    }
    if (ahead?.plan.present(found)) tool[eventsReadAhead]!.push(ahead.plan.read(found));
  }
  const rows = [...byKey.values()];
  return names.flatMap((n) => directory.rowMeant(rows, n, 'tool') ?? []);
}
