// The Ledger's reads by filter: events pages, counted views, plain-words questions, a blob's events.
import type { GraphQLResolveInfo } from 'graphql';
import { builder } from '../graphql/builder.ts';
import { describedValues } from '../graphql/enum-values.ts';
import { selectedFields } from '../graphql/selection.ts';
import { withoutNulls } from '../graphql/without-nulls.ts';
import type { LedgerEvent } from '../generated/prisma/client.ts';
import { badInput } from '../errors.ts';
import { readQuestion, LedgerMeasure, type AskReading } from './ask.ts';
import { decodeCursor } from './cursor.ts';
import { parseFilter, type LedgerFilter } from './filter.ts';
import { ledgerScope, ledgerScopeNow, scopedFilter, scopeWhere, type LedgerScope } from './read-scope.ts';
import { filteredEventPage, ledgerCounts, LedgerGrouping, LedgerOrder, PAGE_DEFAULT, PAGE_MAX, pageSize, toPage, type LedgerCount } from './reads.ts';
import { BlobRef, DirectionEnum, LedgerEventRef, plannedEvents } from './schema.ts';

/** Whether a LedgerCount field asks for a sum (tokens or cost), not only the count. */
const selectsSums = (info: GraphQLResolveInfo) => ['inputTokens', 'outputTokens', 'costUsd'].some((f) => selectedFields(info, f).length > 0);

export const LedgerOrderEnum = builder.enumType('LedgerOrder', {
  description: 'Position order: ASC oldest commit first (the default), DESC newest first.',
  values: describedValues(LedgerOrder, { ASC: 'Oldest commit first (the default).', DESC: 'Newest commit first.' }),
});
export const LedgerGroupingEnum = builder.enumType('LedgerGrouping', {
  description: 'HOUR and DAY group by when the event occurred (UTC); the rest by that column.',
  values: describedValues(LedgerGrouping, {
    HOUR: 'The hour the event occurred in (UTC); the key is its start as an ISO timestamp.',
    DAY: 'The day the event occurred on (UTC); the key is its start as an ISO timestamp.',
    SESSION: 'The session, as the caller named it.',
    TURN: 'The turn, by its name alone (the same turn name in two sessions is one group).',
    KIND: 'What happened: REQUEST, TOOL_CALL, MODEL_RESULT, REFUSAL…',
    AGENT: 'The agent that acted.',
    MODEL: 'The model named (model traffic).',
    TOOL: 'The tool the event concerns.',
    TASK: 'The task it was done for.',
    STATUS: "The answer's status: HTTP status, exit code, or a door's own.",
  }),
});
export const LedgerMeasureEnum = builder.enumType('LedgerMeasure', {
  description: 'What a question asked to be measured: the number of events, their cost, or their tokens.',
  values: describedValues(LedgerMeasure, {
    EVENTS: 'The number of events.',
    COST: 'Their cost in USD, an exact decimal.',
    TOKENS: 'Their input and output tokens.',
  }),
});
export const LedgerAnswerKindEnum = builder.enumType('LedgerAnswerKind', {
  description: 'Which part of a LedgerAnswer answers the question.',
  values: {
    COUNTS: { description: 'The question grouped: see counts.' },
    TOTAL: { description: 'The question measured without grouping: see total.' },
    EVENTS: { description: 'The question asked for events: see events.' },
  } as const,
});

export const LedgerFilterRef = builder.inputType('LedgerFilter', {
  description:
    'Every field is optional and the fields are combined with AND. A list matches any of its values (one value may be sent without brackets); values match exactly. occurredFrom is inclusive, occurredTo exclusive.',
  fields: (t) => ({
    kind: t.stringList({ description: 'Events of these kinds (e.g. TOOL_CALL, REFUSAL).' }),
    direction: t.field({ description: 'Events of these directions.', type: [DirectionEnum] }),
    tool: t.stringList({ description: 'Events naming these tools.' }),
    session: t.stringList({ description: 'Events of these sessions.' }),
    turn: t.stringList({ description: 'Events of these turns.' }),
    task: t.stringList({ description: 'Events of these tasks.' }),
    agent: t.stringList({ description: 'Events of these agents.' }),
    model: t.stringList({ description: 'Events naming these models.' }),
    status: t.stringList({ description: 'Events with these statuses (as text: "200", "0", "OK").' }),
    occurredFrom: t.field({ type: 'DateTime', description: 'Events that occurred at or after this instant.' }),
    occurredTo: t.field({ type: 'DateTime', description: 'Events that occurred before this instant.' }),
  }),
});

export const LedgerFilterValueRef = builder.objectRef<LedgerFilter>('LedgerFilterValue').implement({
  description: 'A LedgerFilter as read back; it can be sent again as a LedgerFilter unchanged.',
  fields: (t) => ({
    kind: t.exposeStringList('kind', { description: 'Kinds matched; null when not filtered.', nullable: true }),
    direction: t.expose('direction', { description: 'Directions matched; null when not filtered.', type: [DirectionEnum], nullable: true }),
    tool: t.exposeStringList('tool', { description: 'Tools matched; null when not filtered.', nullable: true }),
    session: t.exposeStringList('session', { description: 'Sessions matched; null when not filtered.', nullable: true }),
    turn: t.exposeStringList('turn', { description: 'Turns matched; null when not filtered.', nullable: true }),
    task: t.exposeStringList('task', {
      description: "Tasks matched; null when not filtered (a task-scoped token's answers are narrowed to its task besides).",
      nullable: true,
    }),
    agent: t.exposeStringList('agent', { description: 'Agents matched; null when not filtered.', nullable: true }),
    model: t.exposeStringList('model', { description: 'Models matched; null when not filtered.', nullable: true }),
    status: t.exposeStringList('status', { description: 'Statuses matched; null when not filtered.', nullable: true }),
    occurredFrom: t.expose('occurredFrom', {
      description: 'Events that occurred at or after this instant; null when not filtered.',
      type: 'DateTime',
      nullable: true,
    }),
    occurredTo: t.expose('occurredTo', { description: 'Events that occurred before this instant; null when not filtered.', type: 'DateTime', nullable: true }),
  }),
});

export const LedgerEventConnectionRef = builder.connectionObject(
  { type: LedgerEventRef, name: 'LedgerEventConnection', description: 'Events in position order; cursors are ledger cursors.' },
  { name: 'LedgerEventEdge', description: 'One event, with its ledger cursor.' },
);

const LedgerCountRef = builder.objectRef<LedgerCount>('LedgerCount').implement({
  description: 'One group of events, summed in SQL from the rows. An event without a token or cost value adds nothing to that sum.',
  fields: (t) => ({
    key: t.exposeString('key', {
      nullable: true,
      description: "The group's value; for HOUR and DAY the start of the hour or day as an ISO timestamp (UTC); null for events without one, and for a total.",
    }),
    events: t.exposeInt('events', { description: 'Events in the group.' }),
    inputTokens: t.expose('inputTokens', { description: 'Sum of input tokens (events with none add nothing).', type: 'BigInt' }),
    outputTokens: t.expose('outputTokens', { description: 'Sum of output tokens (events with none add nothing).', type: 'BigInt' }),
    costUsd: t.expose('costUsd', { type: 'Decimal', description: 'Exact sum in US dollars.' }),
  }),
});

const firstArg = { description: `How many events (default ${PAGE_DEFAULT}, at most ${PAGE_MAX}).` };
const afterArg = { description: 'A cursor from an earlier page or event.' };

export function filterArg(value: unknown): LedgerFilter {
  return parseFilter(withoutNulls(value ?? {}));
}

type AnswerShape = AskReading & { question: string; scope: LedgerScope };

const LedgerAnswerRef = builder.objectRef<AnswerShape>('LedgerAnswer').implement({
  description: 'A question read into a filter and grouping, beside its result, so the reader sees how it was read.',
  fields: (t) => ({
    question: t.exposeString('question', { description: 'The question as asked (trimmed).' }),
    readAs: t.exposeString('readAs', { description: 'One sentence saying how the question was read.' }),
    filter: t.field({ description: 'The filter the question was read into.', type: LedgerFilterValueRef, resolve: (a) => a.filter }),
    grouping: t.expose('grouping', {
      description: 'The grouping the question asked for; null when it did not group.',
      type: LedgerGroupingEnum,
      nullable: true,
    }),
    measures: t.expose('measures', { description: 'What the question asked to measure (events, cost, tokens).', type: [LedgerMeasureEnum] }),
    notUnderstood: t.exposeStringList('notUnderstood', {
      description: 'Words that were not understood and had no effect on the answer. Nothing is guessed.',
    }),
    answer: t.expose('answer', { description: 'Which part of this answer answers the question: counts, total or events.', type: LedgerAnswerKindEnum }),
    counts: t.field({
      type: [LedgerCountRef],
      nullable: true,
      description: 'Per group, when the question grouped.',
      resolve: (a, _args, ctx, info) => (a.grouping ? ledgerCounts(ctx.services.db, a.grouping, scopedFilter(a.filter, a.scope), selectsSums(info)) : null),
    }),
    total: t.field({
      type: LedgerCountRef,
      description: 'Everything the filter matches, in one group.',
      resolve: async (a, _args, ctx, info) => (await ledgerCounts(ctx.services.db, null, scopedFilter(a.filter, a.scope), selectsSums(info)))[0]!,
    }),
    events: t.field({
      type: LedgerEventConnectionRef,
      args: {
        first: t.arg.int(firstArg),
        after: t.arg.string(afterArg),
        order: t.arg({ description: 'ASC oldest first (the default) or DESC newest first.', type: LedgerOrderEnum }),
      },
      description: 'The events the filter matches.',
      resolve: (a, args, ctx, info) =>
        filteredEventPage<LedgerEvent>(ctx.services.db, scopedFilter(a.filter, a.scope), args, plannedEvents(ctx, info, ['edges', 'node'])),
    }),
  }),
});

builder.prismaObjectField(BlobRef, 'events', (t) =>
  t.field({
    type: LedgerEventConnectionRef,
    description: 'Every event that references these bytes, in position order (those the caller may read).',
    args: { first: t.arg.int(firstArg), after: t.arg.string(afterArg) },
    select: (args, ctx, nestedSelection) => {
      const take = pageSize(args.first);
      const after = args.after ? decodeCursor(args.after) : undefined;
      const scope = scopeWhere(ledgerScopeNow(ctx));
      return {
        events: nestedSelection({ where: after === undefined ? scope : { ...scope, position: { gt: after } }, orderBy: { position: 'asc' }, take: take + 1 }, [
          'edges',
          'node',
        ]),
      };
    },
    resolve: (blob, args) => toPage(blob.events, pageSize(args.first), args.after ?? undefined),
  }),
);

builder.queryFields((t) => ({
  events: t.field({
    type: LedgerEventConnectionRef,
    description:
      "Events matching the filter, paged by commit-ordered position; stays correct while writers append. A task-scoped token's task is merged into the filter.",
    args: {
      filter: t.arg({ description: 'Which events; omitted: all the caller may read.', type: LedgerFilterRef }),
      first: t.arg.int(firstArg),
      after: t.arg.string(afterArg),
      order: t.arg({ description: 'ASC oldest first (the default) or DESC newest first.', type: LedgerOrderEnum }),
    },
    resolve: async (_root, args, ctx, info) =>
      filteredEventPage<LedgerEvent>(
        ctx.services.db,
        scopedFilter(filterArg(args.filter), await ledgerScope(ctx, 'events')),
        args,
        plannedEvents(ctx, info, ['edges', 'node']),
      ),
  }),
  ledgerCounts: t.field({
    type: [LedgerCountRef],
    description:
      "Event count, input and output tokens and cost per group, summed in SQL from the rows; groups in key order, null last. A task-scoped token counts only its task's events.",
    args: {
      by: t.arg({ description: 'The grouping: a column, or HOUR/DAY of occurredAt (UTC).', type: LedgerGroupingEnum, required: true }),
      filter: t.arg({ description: 'Which events to count; omitted: all the caller may read.', type: LedgerFilterRef }),
    },
    resolve: async (_root, args, ctx, info) =>
      ledgerCounts(ctx.services.db, args.by, scopedFilter(filterArg(args.filter), await ledgerScope(ctx, 'ledgerCounts')), selectsSums(info)),
  }),
  ask: t.field({
    type: LedgerAnswerRef,
    nullable: true,
    description:
      "A question in plain words, read deterministically (no model) into a filter and grouping; see docs/ARCHITECTURE.md for the grammar. A task-scoped token's answer covers only its task's events.",
    args: { question: t.arg.string({ description: 'The question in plain words, 1 to 1000 characters (e.g. "cost by model last week").', required: true }) },
    resolve: async (_root, args, ctx) => {
      const question = args.question.trim();
      if (!question || question.length > 1000) {
        throw badInput(`Invalid question: expected 1 to 1000 characters, got ${question.length}`);
      }
      return { question, ...readQuestion(question), scope: await ledgerScope(ctx, 'ask') };
    },
  }),
}));
