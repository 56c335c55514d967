// GraphQL: task(id), everything one task did: its calls (each an Action with its events, their
// payloads, the tool, the door's status and the outcome), its events, and its refusals. A call made
// with a task-bound token is filed under the token's task, so this is what the token did.
import { Prisma } from '../generated/prisma/client.ts';
import type { LedgerEvent } from '../generated/prisma/client.ts';
import { queryFromInfo } from '@pothos/plugin-prisma';
import { loadBatched } from '../directory/loader.ts';
import { DispatchOutcomeEnum } from '../dispatch/schema.ts';
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { parseFilter, withinTask } from './filter.ts';
import { ledgerScope, ledgerScopeNow } from './read-scope.ts';
import { filteredEventPage, pageSize, type Page } from './reads.ts';
import { ActionRef, LedgerEventConnectionRef, LedgerFilterRef, LedgerOrderEnum, withoutNulls, type ActionShape } from './schema.ts';
import { summarizeCall, type CallEventRow, type CallSummary } from './task-calls.ts';

type TaskShape = { id: string };

const TaskRef = builder.objectRef<TaskShape>('Task');

const ActionConnectionRef = builder.connectionObject(
  { type: ActionRef, name: 'ActionConnection', description: "A task's calls in the order they started; cursors are ledger cursors of each call's first event." },
  { name: 'ActionEdge' },
);

/** Summaries of these actions (the events the caller may read), in one statement for a whole page. */
async function loadSummary(ctx: Context, id: string): Promise<CallSummary | undefined> {
  const scope = ledgerScopeNow(ctx);
  return loadBatched(ctx, `action-summary:${scope.kind === 'task' ? scope.task : scope.kind}`, id, async (ids) => {
    const rows = await ctx.services.db.prisma.$queryRaw<(CallEventRow & { action_id: string })[]>`
      SELECT action_id, kind, direction::text AS direction, tool, status, method,
             metadata->>'capture' AS capture, metadata->>'step' AS step, metadata->>'code' AS code,
             metadata->'mcpResult'->>'isError' AS mcp_error, occurred_at
      FROM ledger_event
      WHERE action_id = ANY(${ids}::text[])
        ${scope.kind === 'task' ? Prisma.sql`AND task = ${scope.task}` : scope.kind === 'none' ? Prisma.sql`AND FALSE` : Prisma.empty}
      ORDER BY action_id, position`;
    const byAction = new Map<string, CallEventRow[]>();
    for (const row of rows) {
      let list = byAction.get(row.action_id);
      if (!list) byAction.set(row.action_id, (list = []));
      list.push(row);
    }
    return new Map([...byAction].map(([action, events]) => [action, summarizeCall(events)]));
  });
}

builder.objectFields(ActionRef, (t) => ({
  toolName: t.string({ nullable: true, description: 'The tool the call named.', resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.tool ?? null }),
  outcome: t.field({
    type: DispatchOutcomeEnum,
    nullable: true,
    description:
      'As its events show it: REFUSED when anything refused it, DRY_RUN when only rendered, ERROR when a tool result failed, OK when each succeeded; null when no tool ran.',
    resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.outcome ?? null,
  }),
  status: t.string({
    nullable: true,
    description: "The status the door answered with (an HTTP status), else the last status recorded.",
    resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.status ?? null,
  }),
  startedAt: t.field({ type: 'DateTime', nullable: true, description: 'When its first event occurred.', resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.startedAt ?? null }),
  endedAt: t.field({ type: 'DateTime', nullable: true, description: 'When its last event occurred.', resolve: async (a, _args, ctx) => (await loadSummary(ctx, a.id))?.endedAt ?? null }),
}));

const firstArg = { description: 'How many (default 50, at most 500).' };

builder.objectType(TaskRef, {
  description: 'Everything one task did: its calls, its events and its refusals.',
  fields: (t) => ({
    id: t.exposeID('id'),
    calls: t.field({
      type: ActionConnectionRef,
      description: 'Its calls (actions), in the order they started.',
      args: { first: t.arg.int(firstArg), after: t.arg.string({ description: 'A cursor from an earlier page.' }) },
      resolve: async (task, args, ctx): Promise<Page<ActionShape>> => {
        const take = pageSize(args.first);
        const after = args.after ? decodeCursor(args.after) : null;
        const rows = await ctx.services.db.prisma.$queryRaw<{ action_id: string; first: bigint }[]>`
          SELECT action_id, min(position) AS first FROM ledger_event
          WHERE task = ${task.id}
          GROUP BY action_id
          ${after === null ? Prisma.empty : Prisma.sql`HAVING min(position) > ${after}`}
          ORDER BY first ASC LIMIT ${take + 1}`;
        const edges = rows.slice(0, take).map((r) => ({ cursor: encodeCursor(BigInt(r.first)), node: { id: r.action_id } }));
        return {
          edges,
          pageInfo: { hasNextPage: rows.length > take, hasPreviousPage: after !== null, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
        };
      },
    }),
    events: t.field({
      type: LedgerEventConnectionRef,
      description: "Its events, in position order; the filter narrows them further.",
      args: { filter: t.arg({ type: LedgerFilterRef }), first: t.arg.int(firstArg), after: t.arg.string(), order: t.arg({ type: LedgerOrderEnum }) },
      resolve: (task, args, ctx, info) =>
        filteredEventPage<LedgerEvent>(
          ctx.services.db.prisma,
          withinTask(parseFilter(withoutNulls(args.filter ?? {})), task.id),
          args,
          queryFromInfo({ context: ctx, info, path: ['edges', 'node'] }),
        ),
    }),
    refusals: t.field({
      type: LedgerEventConnectionRef,
      description: 'Its REFUSAL events, in position order: each names the limit that refused (metadata.limit, .caveat, .door).',
      args: { first: t.arg.int(firstArg), after: t.arg.string() },
      resolve: (task, args, ctx, info) =>
        filteredEventPage<LedgerEvent>(ctx.services.db.prisma, { task: [task.id], kind: ['REFUSAL'] }, args, queryFromInfo({ context: ctx, info, path: ['edges', 'node'] })),
    }),
  }),
});

builder.queryField('task', (t) =>
  t.field({
    type: TaskRef,
    nullable: true,
    description: "One task: null when the ledger holds no event of it. A task-scoped token reads only its own task (another reads as null).",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const id = String(args.id);
      const scope = await ledgerScope(ctx, 'task');
      if (scope.kind === 'task' && scope.task !== id) return null;
      const rows = await ctx.services.db.prisma.$queryRaw<unknown[]>`SELECT 1 FROM ledger_event WHERE task = ${id} LIMIT 1`;
      return rows.length ? { id } : null;
    },
  }),
);
