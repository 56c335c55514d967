// GraphQL: task(id), everything one task did: its calls (each an Action with its events, their
// payloads, the tool, the door's status and the outcome), its events, and its refusals. A call made
// with a task-bound token is filed under the token's task, so this is what the token did.
import type { LedgerEvent } from '../generated/prisma/client.ts';
import { loadBatched } from '../graphql/loader.ts';
import { nodeIdField, registerNode } from '../graphql/node.ts';
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { runRead, SqlParams } from './event-select.ts';
import { parseFilter, withinTask } from './filter.ts';
import { ledgerScope, ledgerScopeNow } from './read-scope.ts';
import { filteredEventPage, pageSize, type Page } from './reads.ts';
import { withoutNulls } from '../graphql/without-nulls.ts';
import { LedgerEventConnectionRef, LedgerFilterRef, LedgerOrderEnum } from './read-schema.ts';
import { ActionRef, plannedEvents, type ActionShape } from './schema.ts';
import { summarizeCall, type CallEventRow, type CallOutcome, type CallSummary } from './task-calls.ts';

/** A call's outcome, in the ledger's words (a DispatchResult's too). */
export const DispatchOutcomeEnum = builder.enumType('DispatchOutcome', {
  description: 'OK: the call answered successfully; ERROR: it was sent and failed; REFUSED: nothing was sent; DRY_RUN: rendered, not sent.',
  values: {
    OK: { description: 'The call answered successfully.' },
    ERROR: { description: 'The call was sent and failed.' },
    REFUSED: { description: 'Refused before anything was sent.' },
    DRY_RUN: { description: 'Rendered, not sent (a dry run).' },
  } as const satisfies Record<CallOutcome, unknown>,
});

type TaskShape = { id: string };

const TaskRef = builder.objectRef<TaskShape>('Task');

const ActionConnectionRef = builder.connectionObject(
  {
    type: ActionRef,
    name: 'ActionConnection',
    description: "A task's calls in the order they started; cursors are ledger cursors of each call's first event.",
  },
  { name: 'ActionEdge', description: 'One call of a task, with its cursor.' },
);

/** The columns of an event a call's summary reads (CallEventRow), over `ledger_event e`. */
const summaryColumns = `e.kind, e.direction::text AS direction, e.tool, e.status, e.method,
  e.metadata->>'capture' AS capture, e.metadata->>'step' AS step, e.metadata->>'code' AS code,
  e.metadata->'mcpResult'->>'isError' AS mcp_error, e.occurred_at`;

type SummaryRow = CallEventRow & { action_id: string };

const scopeKey = (scope: ReturnType<typeof ledgerScopeNow>) => (scope.kind === 'task' ? `task:${scope.task}` : scope.kind);

/** The scope as a condition on `e`, its task a parameter. */
function scopeCondition(scope: ReturnType<typeof ledgerScopeNow>, params: SqlParams): string {
  if (scope.kind === 'task') return ` AND e.task = ${params.add(scope.task)}`;
  return scope.kind === 'none' ? ' AND FALSE' : '';
}

/** Summaries from rows ordered by action, then position. */
function summarize(rows: SummaryRow[]): Map<string, CallSummary> {
  const byAction = new Map<string, CallEventRow[]>();
  for (const row of rows) {
    let list = byAction.get(row.action_id);
    if (!list) {
      list = [];
      byAction.set(row.action_id, list);
    }
    list.push(row);
  }
  return new Map([...byAction].map(([action, events]) => [action, summarizeCall(events)]));
}

/** Summaries already read with a page of calls, per operation and scope. */
const primed = new WeakMap<Context, Map<string, CallSummary>>();

/** Summaries of these actions (the events the caller may read), in one statement for a whole page. */
async function loadSummary(ctx: Context, id: string): Promise<CallSummary | undefined> {
  const scope = ledgerScopeNow(ctx);
  const known = primed.get(ctx)?.get(`${scopeKey(scope)}:${id}`);
  if (known) return known;
  return loadBatched(ctx, `action-summary:${scopeKey(scope)}`, id, async (ids) => {
    const params = new SqlParams();
    const text = `SELECT e.action_id, ${summaryColumns} FROM ledger_event e WHERE e.action_id = ANY(${params.add(ids, '::text[]')})${scopeCondition(scope, params)} ORDER BY e.action_id, e.position`;
    return summarize(await runRead<SummaryRow>(ctx.services.db.sql, text, params));
  });
}

/**
 * A page of a task's calls (actions by their first event) with every summary the page needs, in one
 * statement; the summaries are kept for the Action fields that follow.
 */
async function callsPage(ctx: Context, task: string, take: number, after: bigint | null): Promise<{ action_id: string; first: bigint }[]> {
  const scope = ledgerScopeNow(ctx);
  const params = new SqlParams();
  const text =
    `WITH calls AS (SELECT action_id, min(position) AS first FROM ledger_event WHERE task = ${params.add(task)} GROUP BY action_id` +
    (after === null ? '' : ` HAVING min(position) > ${params.add(after, '::bigint')}`) +
    ` ORDER BY first ASC LIMIT ${params.add(take + 1, '::int')}) ` +
    `SELECT c.action_id, c.first, ${summaryColumns} FROM calls c JOIN ledger_event e ON e.action_id = c.action_id${scopeCondition(scope, params)} ORDER BY c.first, e.position`;
  const rows = await runRead<SummaryRow & { first: bigint }>(ctx.services.db.sql, text, params);
  let cache = primed.get(ctx);
  if (!cache) {
    cache = new Map();
    primed.set(ctx, cache);
  }
  for (const [action, summary] of summarize(rows)) cache.set(`${scopeKey(scope)}:${action}`, summary);
  const calls: { action_id: string; first: bigint }[] = [];
  for (const row of rows) if (calls.at(-1)?.action_id !== row.action_id) calls.push({ action_id: row.action_id, first: row.first });
  return calls;
}

builder.objectFields(ActionRef, (t) => ({
  toolName: t.string({
    nullable: true,
    description: 'The tool the call named.',
    resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.tool ?? null,
  }),
  outcome: t.field({
    type: DispatchOutcomeEnum,
    nullable: true,
    description:
      'As its events show it: REFUSED when anything refused it, DRY_RUN when only rendered, ERROR when a tool result failed, OK when each succeeded; null when no tool ran.',
    resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.outcome ?? null,
  }),
  status: t.string({
    nullable: true,
    description: 'The status the door answered with (an HTTP status), else the last status recorded.',
    resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.status ?? null,
  }),
  startedAt: t.field({
    type: 'DateTime',
    nullable: true,
    description: 'When its first event occurred.',
    resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.startedAt ?? null,
  }),
  endedAt: t.field({
    type: 'DateTime',
    nullable: true,
    description: 'When its last event occurred.',
    resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.endedAt ?? null,
  }),
}));

const firstArg = { description: 'How many (default 50, at most 500).' };

builder.objectType(TaskRef, {
  description: 'Everything one task did: its calls, its events and its refusals.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The task id its events carry (LedgerEvent.task).' }),
    calls: t.field({
      type: ActionConnectionRef,
      description: 'Its calls (actions), in the order they started.',
      args: { first: t.arg.int(firstArg), after: t.arg.string({ description: 'A cursor from an earlier page.' }) },
      resolve: async (task, args, ctx): Promise<Page<ActionShape>> => {
        const take = pageSize(args.first);
        const after = args.after ? decodeCursor(args.after) : null;
        const rows = await callsPage(ctx, task.id, take, after);
        const edges = rows.slice(0, take).map((r) => ({ cursor: encodeCursor(BigInt(r.first)), node: { id: r.action_id } }));
        return {
          edges,
          pageInfo: {
            hasNextPage: rows.length > take,
            hasPreviousPage: after !== null,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges.at(-1)?.cursor ?? null,
          },
        };
      },
    }),
    events: t.field({
      type: LedgerEventConnectionRef,
      description: 'Its events, in position order; the filter narrows them further.',
      args: {
        filter: t.arg({ description: "Narrows the task's events further.", type: LedgerFilterRef }),
        first: t.arg.int(firstArg),
        after: t.arg.string({ description: 'A cursor from an earlier page (its endCursor): events after it.' }),
        order: t.arg({ description: 'ASC oldest first (the default) or DESC newest first.', type: LedgerOrderEnum }),
      },
      resolve: (task, args, ctx, info) =>
        filteredEventPage<LedgerEvent>(
          ctx.services.db,
          withinTask(parseFilter(withoutNulls(args.filter ?? {})), task.id),
          args,
          plannedEvents(ctx, info, ['edges', 'node']),
        ),
    }),
    refusals: t.field({
      type: LedgerEventConnectionRef,
      description: 'Its REFUSAL events, in position order: each names the limit that refused (metadata.limit, .caveat, .door).',
      args: { first: t.arg.int(firstArg), after: t.arg.string({ description: 'A cursor from an earlier page (its endCursor): refusals after it.' }) },
      resolve: (task, args, ctx, info) =>
        filteredEventPage<LedgerEvent>(ctx.services.db, { task: [task.id], kind: ['REFUSAL'] }, args, plannedEvents(ctx, info, ['edges', 'node'])),
    }),
  }),
});

/** The task if the ledger holds an event of it and the caller may read it (`task(id:)` and `node(id:)`). */
async function readTask(ctx: Context, id: string): Promise<TaskShape | null> {
  const scope = await ledgerScope(ctx, 'task');
  if (scope.kind === 'task' && scope.task !== id) return null;
  const params = new SqlParams();
  const rows = await runRead(ctx.services.db.sql, `SELECT 1 FROM ledger_event WHERE task = ${params.add(id)} LIMIT 1`, params);
  return rows.length ? { id } : null;
}

builder.queryField('task', (t) =>
  t.field({
    type: TaskRef,
    nullable: true,
    description: 'One task: null when the ledger holds no event of it. A task-scoped token reads only its own task (another reads as null).',
    args: { id: t.arg.id({ required: true, description: 'The task id its events carry (LedgerEvent.task).' }) },
    resolve: (_root, args, ctx) => readTask(ctx, String(args.id)),
  }),
);

builder.objectField(TaskRef, 'nodeId', (t) => t.field(nodeIdField<TaskShape>('Task', (task) => task.id)));
registerNode(TaskRef, (id, ctx) => readTask(ctx, id));
