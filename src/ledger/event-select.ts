// Ledger events read as a GraphQL selection asks, in one SQL statement: only the columns the
// selection names (blob.data only under payload text or bytes), the payload blob and the batch joined
// in the same statement, sent as a named statement so PostgreSQL parses and plans it once per
// connection. Hand-written (issue 17, measured by `npm run bench -- reads`): Prisma sends every
// statement unnamed and one per relation. A selection this planner does not know (a nested list
// such as payload.events) gets null, and the caller reads through Prisma as before.
import { createHash } from 'node:crypto';
import type { SqlParam, SqlQueryable, SqlRow } from '../db/sql.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import { filterDimensions, type LedgerFilter } from './filter.ts';

/** What queryFromInfo (or a prismaField's `query`) plans for a LedgerEvent. */
export type EventQuery = { select?: Record<string, unknown>; include?: Record<string, unknown> };

/** A selection's query and its planned statement (null: read through Prisma); `id` is equal for equal queries. */
export type PlannedEvents = { query: EventQuery; plan: EventPlan | null; id: string };

type Field = { name: string; column: string; type: string; list: boolean; enum: boolean };
type Model = { table: string; fields: Map<string, Field> };

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const models: Record<'LedgerEvent' | 'Blob' | 'LedgerBatch' | 'DirectoryRow', Model> = (() => {
  const dm = getDatamodel().datamodel.models as unknown as Record<string, { fields: { name: string; kind: string; type: string; isList: boolean }[] }>;
  const model = (name: string, table: string): Model => ({
    table,
    fields: new Map(
      dm[name]!.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum').map((f) => [
        f.name,
        { name: f.name, column: snake(f.name), type: f.type, list: f.isList, enum: f.kind === 'enum' },
      ]),
    ),
  });
  return {
    LedgerEvent: model('LedgerEvent', 'ledger_event'),
    Blob: model('Blob', 'blob'),
    LedgerBatch: model('LedgerBatch', 'ledger_batch'),
    DirectoryRow: model('DirectoryRow', 'directory_row'),
  };
})();

/**
 * Every scalar column of a Directory row over alias `r` (aliased d0…), and the reader that gives it
 * Prisma's shape. With `onlyWhen`, a condition true on one row of each, the columns other than the
 * key (type, name) are sent on that row alone: a row joined to its page of events is sent once, not
 * once per event.
 */
export function directoryRowColumns(onlyWhen?: string): RowColumns {
  let kept = rowColumns.get(onlyWhen);
  if (!kept) {
    kept = buildRowColumns(onlyWhen);
    rowColumns.set(onlyWhen, kept);
  }
  return kept;
}

/** The select list, the row's key (type and name) and its reader. */
type RowColumns = { columns: string; key(row: SqlRow): string; read(row: SqlRow): Record<string, unknown> };

/** Built once per `onlyWhen` (a read names one or two): the column list and reader do not change. */
const rowColumns = new Map<string | undefined, RowColumns>();

function buildRowColumns(onlyWhen: string | undefined): RowColumns {
  const fields = [...models.DirectoryRow.fields.values()];
  const aliases = fields.map((_, i) => `d${i}`);
  const typeAlias = aliases[fields.findIndex((f) => f.name === 'type')]!;
  const nameAlias = aliases[fields.findIndex((f) => f.name === 'name')]!;
  const key = new Set(['type', 'name']);
  return {
    columns: fields
      .map((f, i) => (onlyWhen && !key.has(f.name) ? `CASE WHEN ${onlyWhen} THEN r.${f.column} END AS d${i}` : `r.${f.column} AS d${i}`))
      .join(', '),
    key: (row) => `${row[typeAlias]}\u0000${row[nameAlias]}`,
    read: (row) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < fields.length; i++) out[fields[i]!.name] = row[aliases[i]!];
      return out;
    },
  };
}

/**
 * Set on each row a plan reads (and on each relation object in it): it holds every column its
 * selection asks for, so GraphQL resolves its fields without plugin-prisma's per-row loader check
 * (src/graphql/planned-rows.ts).
 */
export const plannedRow = Symbol('planned row');

/** The to-one relations of an event that are joined into the same statement. */
const relations = {
  payload: { model: models.Blob, alias: 'p', join: 'LEFT JOIN blob p ON p.sha256 = e.payload_sha256', key: 'sha256' },
  batch: { model: models.LedgerBatch, alias: 'b', join: 'LEFT JOIN ledger_batch b ON b.id = e.batch_id', key: 'id' },
} as const;

type Column = { alias: string; field: string; convert?: (v: unknown) => unknown; json: JsonColumn | null };
/** A column as an element of a JSON array built in SQL: its expression and what gives the row reader's value back. */
type JsonColumn = { sql: string; convert?: (v: unknown) => unknown };
type Nested = { name: string; keyAlias: string; columns: Column[] };

/** The select list, joins and row reader for one selection; null when it names something unknown. */
export type EventPlan = {
  columns: string;
  joins: string;
  read(row: SqlRow): Record<string, unknown>;
  /** Whether the row holds an event (false for the null side of an outer join); needs `position` planned. */
  present(row: SqlRow): boolean;
  /**
   * The same columns as one JSON array per event (`element`, over the same aliases and joins), and the
   * reader that gives each back exactly as `read` gives its row: for a caller that aggregates several
   * events into one row. Null when a column has no exact JSON form here (bytea, an int8 array).
   */
  json: { element: string; read(items: readonly unknown[]): Record<string, unknown> } | null;
};

const toDecimal = (v: unknown) => (v === null || v === undefined ? null : new Prisma.Decimal(v as string));
const toBigInt = (v: unknown) => (v === null || v === undefined ? null : BigInt(v as string));
/** Milliseconds since the epoch, or the text 'Infinity' / '-Infinity' (which pg reads as those numbers), as the row reader's Date. */
const toDate = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'number' ? new Date(v) : Number(v));

/**
 * A column inside json_build_array, so that the parsed JSON gives the value the row reader gives:
 * text, enums, uuid, int4 and json as they are (JSON.parse of PostgreSQL's JSON text is what pg does
 * for json); int8 and numeric as text (a JSON number would lose digits); a timestamp as its whole
 * milliseconds (timestamptz(3) holds no finer), exact in a float8. Anything else has no form here.
 */
function jsonColumn(field: Field, column: string): JsonColumn | null {
  if (field.list) return field.type === 'String' ? { sql: column } : null;
  if (field.enum) return { sql: column };
  switch (field.type) {
    case 'String':
    case 'Int':
    case 'Boolean':
    case 'Json':
      return { sql: column };
    case 'BigInt':
      return { sql: `${column}::text`, convert: toBigInt };
    case 'Decimal':
      return { sql: `${column}::text`, convert: toDecimal };
    case 'DateTime':
      return { sql: `round(date_part('epoch', ${column}) * 1000)`, convert: toDate };
    default:
      return null; // Bytes (bytea), Float: not planned as JSON
  }
}

/** The fields a selection asks of a model: `true` for a scalar, the nested query for a relation. */
function wanted(model: Model, query: EventQuery | true): Map<string, unknown> | null {
  if (query === true) return new Map([...model.fields.keys()].map((k) => [k, true]));
  const { select, include, ...rest } = query;
  if (Object.keys(rest).length) return null;
  const out = new Map<string, unknown>();
  if (select) for (const [k, v] of Object.entries(select)) if (v) out.set(k, v);
  if (!select) for (const k of model.fields.keys()) out.set(k, true);
  if (include) for (const [k, v] of Object.entries(include)) if (v) out.set(k, v);
  return out;
}

function scalarColumns(model: Model, alias: string, fields: Iterable<string>, columns: string[]): Column[] | null {
  const out: Column[] = [];
  for (const name of fields) {
    const field = model.fields.get(name);
    if (!field) return null;
    const as = `c${columns.length}`;
    columns.push(`${alias}.${field.column} AS ${as}`);
    out.push({ alias: as, field: name, ...(field.type === 'Decimal' && { convert: toDecimal }), json: jsonColumn(field, `${alias}.${field.column}`) });
  }
  return out;
}

/**
 * Plans the columns of `query` (plus `always`, fields the caller needs itself) over `ledger_event e`.
 * Only to-one relations (payload, batch) with plain scalar selections are planned.
 */
export function planEventSelect(query: EventQuery, always: readonly string[] = []): EventPlan | null {
  const fields = wanted(models.LedgerEvent, query);
  if (!fields) return null;
  for (const f of always) fields.set(f, true);
  const columns: string[] = [];
  const scalars = scalarColumns(
    models.LedgerEvent,
    'e',
    [...fields].filter(([k]) => !(k in relations)).map(([k]) => k),
    columns,
  );
  if (!scalars) return null;
  const nested: Nested[] = [];
  const joins: string[] = [];
  for (const [name, value] of fields) {
    if (!(name in relations)) continue;
    const relation = relations[name as keyof typeof relations];
    const inner = wanted(relation.model, value as EventQuery | true);
    if (!inner || [...inner.values()].some((v) => v !== true)) return null;
    inner.set(relation.key, true);
    const cols = scalarColumns(relation.model, relation.alias, inner.keys(), columns);
    if (!cols) return null;
    nested.push({ name, keyAlias: cols.find((c) => c.field === relation.key)!.alias, columns: cols });
    joins.push(relation.join);
  }
  const position = scalars.find((c) => c.field === 'position');
  return {
    columns: columns.join(', '),
    joins: joins.join(' '),
    present: (row) => (position ? row[position.alias] != null : true),
    json: jsonPlan(scalars, nested),
    read(row) {
      const out: Record<string | symbol, unknown> = { [plannedRow]: true };
      for (const c of scalars) out[c.field] = c.convert ? c.convert(row[c.alias]) : row[c.alias];
      for (const n of nested) {
        if (row[n.keyAlias] == null) {
          out[n.name] = null;
          continue;
        }
        const value: Record<string | symbol, unknown> = { [plannedRow]: true };
        for (const c of n.columns) value[c.field] = c.convert ? c.convert(row[c.alias]) : row[c.alias];
        out[n.name] = value;
      }
      return out;
    },
  };
}

/** The plan's columns as one json_build_array, in column order, and its reader (as `read` over a row). */
function jsonPlan(scalars: Column[], nested: Nested[]): EventPlan['json'] {
  const all = [...scalars, ...nested.flatMap((n) => n.columns)];
  // json_build_array takes at most 100 arguments (FUNC_MAX_ARGS); every column planned today is under half that.
  if (all.length > 100 || all.some((c) => !c.json)) return null;
  const at = new Map(all.map((c, i) => [c.alias, i]));
  const reader = (columns: Column[]) => columns.map((c) => ({ field: c.field, index: at.get(c.alias)!, convert: c.json!.convert }));
  const own = reader(scalars);
  const relations = nested.map((n) => ({ name: n.name, key: at.get(n.keyAlias)!, columns: reader(n.columns) }));
  return {
    element: `json_build_array(${all.map((c) => c.json!.sql).join(', ')})`,
    read(items) {
      const out: Record<string | symbol, unknown> = { [plannedRow]: true };
      for (const c of own) out[c.field] = c.convert ? c.convert(items[c.index]) : items[c.index];
      for (const n of relations) {
        if (items[n.key] == null) {
          out[n.name] = null;
          continue;
        }
        const value: Record<string | symbol, unknown> = { [plannedRow]: true };
        for (const c of n.columns) value[c.field] = c.convert ? c.convert(items[c.index]) : items[c.index];
        out[n.name] = value;
      }
      return out;
    },
  };
}

/** Bind parameters collected while a statement's text is built. */
export class SqlParams {
  readonly values: SqlParam[] = [];

  add(value: SqlParam, cast = ''): string {
    this.values.push(value);
    return `$${this.values.length}${cast}`;
  }
}

/** A row count written into a statement's text (a LIMIT the planner should know); refuses anything but a whole number. */
export function limitText(rows: number): string {
  if (!Number.isSafeInteger(rows) || rows < 0) throw new RangeError(`Expected a row count, got ${rows}`);
  return String(rows);
}

/**
 * `column` held to one value in a form that keeps the column in the statement's order: with `=`,
 * PostgreSQL drops the column from `ORDER BY column, position` (it is constant) and may then walk the
 * position index filtering rows. At 10M events, the latest 51 of a tool busy long ago but quiet since
 * took 1.9 s that way (4,000,463 rows filtered) and 0.07 ms down its (tool, position) index.
 */
export function heldTo(column: string, value: string): string {
  return `${column} >= ${value} AND ${column} <= ${value}`;
}

/**
 * The filter as conditions over `ledger_event e`, every value a parameter. One value compares with
 * `=`, several with `= ANY`; an empty list matches nothing; the `held` dimension's one value is
 * `heldTo` it, for a statement ordered by that dimension then position. The statement text depends
 * only on which fields are set and whether each holds one value, so it stays one named statement per shape.
 */
export function filterConditions(filter: LedgerFilter, params: SqlParams, held?: (typeof filterDimensions)[number]): string[] {
  const out: string[] = [];
  const list = (column: string, values: readonly string[] | undefined, inOrder = false) => {
    if (!values) return;
    if (values.length === 0) out.push('FALSE');
    else if (values.length === 1) out.push(inOrder ? heldTo(column, params.add(values[0]!)) : `${column} = ${params.add(values[0]!)}`);
    else out.push(`${column} = ANY(${params.add(values, '::text[]')})`);
  };
  for (const d of filterDimensions) list(`e.${d}`, filter[d], d === held);
  list('e.direction::text', filter.direction);
  if (filter.occurredFrom) out.push(`e.occurred_at >= ${params.add(filter.occurredFrom, '::timestamptz')}`);
  if (filter.occurredTo) out.push(`e.occurred_at < ${params.add(filter.occurredTo, '::timestamptz')}`);
  return out;
}

const names = new Map<string, string>();
/** Distinct statements named per process; past this, statements go unnamed (a bound on what each connection keeps prepared). */
export const NAMED_STATEMENTS_MAX = 256;

/** A stable prepared-statement name for this text, while fewer than NAMED_STATEMENTS_MAX are named. */
export function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name || names.size >= NAMED_STATEMENTS_MAX) return name;
  name = `dl_read_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
  names.set(text, name);
  return name;
}

/** Runs one read statement under its stable name. */
export function runRead<R extends SqlRow = SqlRow>(sql: SqlQueryable, text: string, params: SqlParams): Promise<R[]> {
  const prepared = statementName(text);
  return sql.query<R>(text, params.values, prepared ? { prepared } : {});
}

export type EventSpec = {
  filter: LedgerFilter;
  id?: string;
  actionId?: string;
  actionIds?: string[];
  /** Only events after (ASC) or before (DESC) this position. */
  after?: bigint;
  order: 'ASC' | 'DESC';
  limit?: number;
};

/** Columns with a (column, position) index, in the order one is chosen to lead ORDER BY. */
const leadingColumns = ['tool', 'task', 'session', 'kind'] as const;

/** The statement that reads events matching `spec` with the columns `plan` selects, and its parameters. */
export function eventStatement(plan: EventPlan, spec: EventSpec): { text: string; params: SqlParams } {
  const params = new SqlParams();
  // An id names at most one event: ordering it would let a plan walk the position index looking for it.
  const byId = spec.id !== undefined;
  // Ordered by a column held to one value first (same rows, same order), so that every plan walks that
  // column's (column, position) index: by position alone it may walk the whole ledger for a value rare at that end.
  const leading = byId ? undefined : leadingColumns.find((d) => spec.filter[d]?.length === 1);
  // Several values of a leading column under a LIMIT: each value's own walk down its index, merged.
  const spread =
    byId || leading || spec.actionId !== undefined || spec.limit === undefined ? undefined : leadingColumns.find((d) => (spec.filter[d]?.length ?? 0) > 1);
  if (spread) return mergedStatement(plan, spec, spread, spec.limit!);
  const where = filterConditions(spec.filter, params, spec.actionId === undefined ? leading : undefined);
  if (spec.id !== undefined) where.unshift(`e.id = ${params.add(spec.id)}`);
  if (spec.actionId !== undefined) where.unshift(`e.action_id = ${params.add(spec.actionId)}`);
  if (spec.actionIds !== undefined) where.unshift(`e.action_id = ANY(${params.add(spec.actionIds, '::text[]')})`);
  if (spec.after !== undefined) where.push(`e.position ${spec.order === 'ASC' ? '>' : '<'} ${params.add(spec.after, '::bigint')}`);
  const held = spec.actionId !== undefined ? 'action_id' : leading;
  const text =
    `SELECT ${plan.columns} FROM ledger_event e ${plan.joins}` +
    (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
    (byId ? '' : ` ORDER BY ${held ? `e.${held} ${spec.order}, ` : ''}e.position ${spec.order}`) +
    (byId || spec.limit === undefined ? '' : ` LIMIT ${params.add(spec.limit, '::int')}`);
  return { text, params };
}

/**
 * `spec` whose `column` holds several values, as one walk per value down its (column, position) index,
 * each stopped at the LIMIT, then merged: `= ANY` under ORDER BY position would walk the position index
 * filtering (the values may all be rare at that end) or read every matching row and sort them.
 */
function mergedStatement(plan: EventPlan, spec: EventSpec, column: (typeof leadingColumns)[number], limit: number): { text: string; params: SqlParams } {
  const params = new SqlParams();
  const values = params.add([...new Set(spec.filter[column])], '::text[]');
  const where = [heldTo(`e.${column}`, 'h.value'), ...filterConditions({ ...spec.filter, [column]: undefined }, params)];
  if (spec.actionIds !== undefined) where.push(`e.action_id = ANY(${params.add(spec.actionIds, '::text[]')})`);
  if (spec.after !== undefined) where.push(`e.position ${spec.order === 'ASC' ? '>' : '<'} ${params.add(spec.after, '::bigint')}`);
  const take = params.add(limit, '::int');
  const text =
    `SELECT ${plan.columns} FROM unnest(${values}) AS h(value) CROSS JOIN LATERAL (SELECT * FROM ledger_event e WHERE ${where.join(' AND ')} ` +
    `ORDER BY e.${column} ${spec.order}, e.position ${spec.order} LIMIT ${take}) e ${plan.joins} ORDER BY e.position ${spec.order} LIMIT ${take}`;
  return { text, params };
}

/** Events matching `spec`, with the columns `plan` selects, in one statement. */
export async function selectEvents(sql: SqlQueryable, plan: EventPlan, spec: EventSpec): Promise<Record<string, unknown>[]> {
  const { text, params } = eventStatement(plan, spec);
  return (await runRead(sql, text, params)).map((row) => plan.read(row));
}
