// The Ledger's GraphQL types and the root fields that return them.
import { builder } from '../graphql/builder.ts';
import { parseInput } from '../validation.ts';
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import { loadBatched } from '../graphql/loader.ts';
import type { Context } from '../graphql/context.ts';
import { selectedFields } from '../graphql/selection.ts';
import type { EventQuery } from './event-select.ts';
import type { LedgerEvent } from '../generated/prisma/client.ts';
import { randomUUID } from 'node:crypto';
import { badInput, DomainError, ErrorCode } from '../errors.ts';
import { readQuestion, LedgerMeasure, type AskReading } from './ask.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { parseFilter, type LedgerFilter } from './filter.ts';
import { BatchInput } from './input.ts';
import { decodeJson, decodeText } from './storable.ts';
import { ledgerScope, ledgerScopeNow, scopedFilter, scopeFilter, scopeWhere, type LedgerScope } from './read-scope.ts';
import {
  filteredEventPage,
  readEvents,
  ledgerCounts,
  LedgerGrouping,
  LedgerOrder,
  PAGE_DEFAULT,
  PAGE_MAX,
  pageSize,
  toPage,
  type LedgerCount,
} from './reads.ts';

export const DirectionEnum = builder.enumType('Direction', {
  description: 'IN: arrived at this system. OUT: sent by it.',
  values: ['IN', 'OUT'] as const,
});
export const PayloadStateEnum = builder.enumType('PayloadState', {
  description: 'COMPLETE and PARTIAL carry stored bytes; NONE, ARTIFACT and MISSING carry none.',
  values: {
    COMPLETE: { description: 'Every byte was stored.' },
    PARTIAL: { description: 'The bytes that arrived before the stream ended or was cut off.' },
    NONE: { description: 'The event has no body.' },
    ARTIFACT: { description: 'A deployed file, recorded by reference.' },
    MISSING: { description: 'A body existed but was not stored (over the size limit, or lost).' },
  } as const,
});
export const PayloadEncodingEnum = builder.enumType('PayloadEncoding', {
  description: 'UTF8 only when strict decoding gives back the identical bytes.',
  values: ['UTF8', 'BINARY'] as const,
});
export const BlobStorageEnum = builder.enumType('BlobStorage', {
  values: {
    INLINE: { description: 'Compressed in PostgreSQL.' },
    OBJECT: { description: 'In the object store (a folder or S3-compatible storage).' },
  } as const,
});

/** The columns that locate a blob's bytes: selected only under text or base64, so other reads never touch blob.data. */
const bytesSelect = { sha256: true, storage: true, codec: true, data: true, objectKey: true } as const;

export const BlobRef = builder.prismaObject('Blob', {
  description: 'Exact bytes, stored once under their SHA-256. Every read verifies the hash.',
  select: { sha256: true },
  fields: (t) => ({
    sha256: t.exposeString('sha256'),
    size: t.expose('size', { type: 'BigInt', description: 'Bytes as recorded.' }),
    encoding: t.expose('encoding', { type: PayloadEncodingEnum }),
    storage: t.expose('storage', { type: BlobStorageEnum }),
    codec: t.exposeString('codec', { description: 'How inline bytes are compressed: zstd, deflate-raw or identity.' }),
    storedSize: t.expose('storedSize', { type: 'BigInt', description: 'Bytes actually stored after compression.' }),
    text: t.string({
      nullable: true,
      description: 'The bytes as text, when the encoding is UTF8.',
      select: { ...bytesSelect, encoding: true },
      resolve: async (blob, _args, ctx) => (blob.encoding === 'UTF8' ? (await ctx.services.ledger.blobBytes(blob)).toString('utf8') : null),
    }),
    base64: t.string({
      description: 'The exact bytes, base64-encoded.',
      select: bytesSelect,
      resolve: async (blob, _args, ctx) => (await ctx.services.ledger.blobBytes(blob)).toString('base64'),
    }),
    url: t.string({
      description: 'Where the raw bytes are served.',
      select: { sha256: true },
      resolve: (blob) => `/ledger/blob/${blob.sha256}`,
    }),
  }),
});

export const LedgerBatchRef = builder.prismaObject('LedgerBatch', {
  description: 'Bookkeeping for one appended batch. Not an event.',
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    collector: t.exposeString('collector'),
    position: t.expose('position', { type: 'BigInt', nullable: true }),
    received: t.exposeInt('received'),
    inserted: t.exposeInt('inserted'),
    duplicates: t.exposeInt('duplicates'),
    bytes: t.expose('bytes', { type: 'BigInt' }),
    receivedAt: t.expose('receivedAt', { type: 'DateTime' }),
  }),
});

/** An action; `events` when its root field already read them with the selection asked for. */
export type ActionShape = { id: string; events?: Record<string, unknown>[] };
export const ActionRef = builder.objectRef<ActionShape>('Action');

export const LedgerEventRef = builder.prismaObject('LedgerEvent', {
  description: 'One thing that happened. Append-only.',
  select: { position: true },
  fields: (t) => ({
    id: t.exposeID('id', { description: "The source's own stable event id." }),
    position: t.expose('position', { type: 'BigInt', description: 'Commit-ordered position.' }),
    cursor: t.string({
      description: 'Resume after this event (events(after:), ledgerEvents(after:)).',
      select: { position: true },
      resolve: (e) => encodeCursor(e.position),
    }),
    kind: t.exposeString('kind'),
    direction: t.expose('direction', { type: DirectionEnum }),
    actionId: t.exposeID('actionId'),
    toolName: t.exposeString('tool', { nullable: true, description: 'The name of the tool this event concerns (LedgerEvent.tool opens its Directory row).' }),
    session: t.exposeString('session', { nullable: true }),
    turn: t.exposeString('turn', { nullable: true }),
    task: t.exposeString('task', { nullable: true }),
    agent: t.exposeString('agent', { nullable: true }),
    model: t.exposeString('model', { nullable: true }),
    status: t.exposeString('status', { nullable: true }),
    method: t.exposeString('method', { nullable: true }),
    url: t.string({ nullable: true, select: { url: true }, resolve: (e) => (e.url === null ? null : decodeText(e.url)) }),
    headers: t.field({ type: 'JSON', nullable: true, select: { headers: true }, resolve: (e) => decodeJson(e.headers) }),
    costUsd: t.expose('costUsd', { type: 'Decimal', nullable: true }),
    inputTokens: t.exposeInt('inputTokens', { nullable: true }),
    outputTokens: t.exposeInt('outputTokens', { nullable: true }),
    occurredAt: t.expose('occurredAt', { type: 'DateTime' }),
    recordedAt: t.expose('recordedAt', { type: 'DateTime' }),
    payloadState: t.expose('payloadState', { type: PayloadStateEnum }),
    payloadSha256: t.exposeString('payloadSha256', { nullable: true }),
    payloadSize: t.expose('payloadSize', { type: 'BigInt', nullable: true }),
    payloadEncoding: t.expose('payloadEncoding', { type: PayloadEncodingEnum, nullable: true }),
    artifactUri: t.exposeString('artifactUri', { nullable: true }),
    artifactSha256: t.exposeString('artifactSha256', { nullable: true }),
    redactedSecrets: t.exposeStringList('redactedSecrets', { description: 'Names of secrets whose values were replaced.' }),
    metadata: t.field({ type: 'JSON', nullable: true, select: { metadata: true }, resolve: (e) => decodeJson(e.metadata) }),
    payload: t.relation('payload', { nullable: true }),
    batch: t.relation('batch'),
    action: t.field({
      type: ActionRef,
      select: { actionId: true },
      resolve: (e) => ({ id: e.actionId }),
    }),
  }),
});

builder.objectType(ActionRef, {
  description: 'Every event of one request, linked by the action id.',
  fields: (t) => ({
    id: t.exposeID('id'),
    events: t.field({
      type: [LedgerEventRef],
      description: 'In position order (those the caller may read).',
      resolve: async (action, _args, ctx, info) => {
        if (action.events) return action.events as never;
        const query: EventQuery = queryFromInfo({ context: ctx, info });
        const scope = ledgerScopeNow(ctx);
        const key = `action-events:${scope.kind === 'task' ? `task:${scope.task}` : scope.kind}:${JSON.stringify(query)}`;
        const rows = await loadBatched(ctx, key, action.id, (ids) => eventsOfActions(ctx, ids, scope, query));
        return (rows ?? []) as never;
      },
    }),
  }),
});

const scopeNote = " A task-scoped token reads only its task's; anything else reads as null.";

/** Every readable event of these actions, grouped by action in position order: one statement for a page of actions. */
async function eventsOfActions(
  ctx: Context,
  ids: string[],
  scope: LedgerScope | { kind: 'none' },
  query: EventQuery,
): Promise<Map<string, Record<string, unknown>[]>> {
  const rows = await readEvents(ctx.services.db, query, { filter: scopeFilter(scope), actionIds: ids, order: 'ASC' }, ['position', 'actionId']);
  const out = new Map<string, Record<string, unknown>[]>();
  for (const row of rows) {
    const id = row.actionId as string;
    let list = out.get(id);
    if (!list) {
      list = [];
      out.set(id, list);
    }
    list.push(row);
  }
  return out;
}

/** Whether a LedgerCount field asks for a sum (tokens or cost), not only the count. */
const selectsSums = (info: GraphQLResolveInfo) => ['inputTokens', 'outputTokens', 'costUsd'].some((f) => selectedFields(info, f).length > 0);

builder.queryFields((t) => ({
  event: t.prismaField({
    type: LedgerEventRef,
    nullable: true,
    description: `One event by id.${scopeNote}`,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const scope = await ledgerScope(ctx, 'event');
      const rows = await readEvents(ctx.services.db, query, { filter: scopeFilter(scope), id: String(args.id), order: 'ASC', limit: 1 });
      return (rows[0] ?? null) as LedgerEvent | null;
    },
  }),
  action: t.field({
    type: ActionRef,
    nullable: true,
    description: `Every event of one request.${scopeNote}`,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx, info) => {
      const scope = await ledgerScope(ctx, 'action');
      if (selectedFields(info, 'events').length) {
        // The events are read here with their selection: one statement answers both "is there such an action" and its events.
        const query: EventQuery = queryFromInfo({ context: ctx, info, path: ['events'] });
        const events = await readEvents(ctx.services.db, query, { filter: scopeFilter(scope), actionId: String(args.id), order: 'ASC' });
        return events.length ? { id: String(args.id), events } : null;
      }
      const one = await ctx.services.db.prisma.ledgerEvent.findFirst({
        where: { actionId: String(args.id), ...scopeWhere(scope) },
        select: { actionId: true },
      });
      return one ? { id: one.actionId } : null;
    },
  }),
  blob: t.prismaField({
    type: BlobRef,
    nullable: true,
    description: `Stored bytes by SHA-256.${scopeNote.replace("'s;", "'s (bytes an event of the task references);")}`,
    args: { sha256: t.arg.string({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const scope = await ledgerScope(ctx, 'blob');
      const sha256 = args.sha256.toLowerCase();
      if (scope.kind === 'all') return ctx.services.db.prisma.blob.findUnique({ ...query, where: { sha256 } });
      // Bytes an event of the task references; any other reads as unknown.
      return ctx.services.db.prisma.blob.findFirst({ ...query, where: { sha256, events: { some: { task: scope.task } } } });
    },
  }),
}));

// ---- reading ----

export const LedgerOrderEnum = builder.enumType('LedgerOrder', {
  description: 'Position order: ASC oldest commit first (the default), DESC newest first.',
  values: LedgerOrder,
});
export const LedgerGroupingEnum = builder.enumType('LedgerGrouping', {
  description: 'HOUR and DAY group by when the event occurred (UTC); the rest by that column.',
  values: LedgerGrouping,
});
export const LedgerMeasureEnum = builder.enumType('LedgerMeasure', {
  description: 'What a question asked to be measured: the number of events, their cost, or their tokens.',
  values: LedgerMeasure,
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
    kind: t.stringList(),
    direction: t.field({ type: [DirectionEnum] }),
    tool: t.stringList(),
    session: t.stringList(),
    turn: t.stringList(),
    task: t.stringList(),
    agent: t.stringList(),
    model: t.stringList(),
    status: t.stringList(),
    occurredFrom: t.field({ type: 'DateTime', description: 'Events that occurred at or after this instant.' }),
    occurredTo: t.field({ type: 'DateTime', description: 'Events that occurred before this instant.' }),
  }),
});

export const LedgerFilterValueRef = builder.objectRef<LedgerFilter>('LedgerFilterValue').implement({
  description: 'A LedgerFilter as read back; it can be sent again as a LedgerFilter unchanged.',
  fields: (t) => ({
    kind: t.exposeStringList('kind', { nullable: true }),
    direction: t.expose('direction', { type: [DirectionEnum], nullable: true }),
    tool: t.exposeStringList('tool', { nullable: true }),
    session: t.exposeStringList('session', { nullable: true }),
    turn: t.exposeStringList('turn', { nullable: true }),
    task: t.exposeStringList('task', { nullable: true }),
    agent: t.exposeStringList('agent', { nullable: true }),
    model: t.exposeStringList('model', { nullable: true }),
    status: t.exposeStringList('status', { nullable: true }),
    occurredFrom: t.expose('occurredFrom', { type: 'DateTime', nullable: true }),
    occurredTo: t.expose('occurredTo', { type: 'DateTime', nullable: true }),
  }),
});

export const LedgerEventConnectionRef = builder.connectionObject(
  { type: LedgerEventRef, name: 'LedgerEventConnection', description: 'Events in position order; cursors are ledger cursors.' },
  { name: 'LedgerEventEdge' },
);

const LedgerCountRef = builder.objectRef<LedgerCount>('LedgerCount').implement({
  description: 'One group of events, summed in SQL from the rows. An event without a token or cost value adds nothing to that sum.',
  fields: (t) => ({
    key: t.exposeString('key', {
      nullable: true,
      description: "The group's value; for HOUR and DAY the start of the hour or day as an ISO timestamp (UTC); null for events without one, and for a total.",
    }),
    events: t.exposeInt('events'),
    inputTokens: t.expose('inputTokens', { type: 'BigInt' }),
    outputTokens: t.expose('outputTokens', { type: 'BigInt' }),
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
    question: t.exposeString('question'),
    readAs: t.exposeString('readAs', { description: 'One sentence saying how the question was read.' }),
    filter: t.field({ type: LedgerFilterValueRef, resolve: (a) => a.filter }),
    grouping: t.expose('grouping', { type: LedgerGroupingEnum, nullable: true }),
    measures: t.expose('measures', { type: [LedgerMeasureEnum] }),
    notUnderstood: t.exposeStringList('notUnderstood', {
      description: 'Words that were not understood and had no effect on the answer. Nothing is guessed.',
    }),
    answer: t.expose('answer', { type: LedgerAnswerKindEnum }),
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
      args: { first: t.arg.int(firstArg), after: t.arg.string(afterArg), order: t.arg({ type: LedgerOrderEnum }) },
      description: 'The events the filter matches.',
      resolve: (a, args, ctx, info) =>
        filteredEventPage<LedgerEvent>(ctx.services.db, scopedFilter(a.filter, a.scope), args, queryFromInfo({ context: ctx, info, path: ['edges', 'node'] })),
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
    args: { filter: t.arg({ type: LedgerFilterRef }), first: t.arg.int(firstArg), after: t.arg.string(afterArg), order: t.arg({ type: LedgerOrderEnum }) },
    resolve: async (_root, args, ctx, info) =>
      filteredEventPage<LedgerEvent>(
        ctx.services.db,
        scopedFilter(filterArg(args.filter), await ledgerScope(ctx, 'events')),
        args,
        queryFromInfo({ context: ctx, info, path: ['edges', 'node'] }),
      ),
  }),
  ledgerCounts: t.field({
    type: [LedgerCountRef],
    description:
      "Event count, input and output tokens and cost per group, summed in SQL from the rows; groups in key order, null last. A task-scoped token counts only its task's events.",
    args: { by: t.arg({ type: LedgerGroupingEnum, required: true }), filter: t.arg({ type: LedgerFilterRef }) },
    resolve: async (_root, args, ctx, info) =>
      ledgerCounts(ctx.services.db, args.by, scopedFilter(filterArg(args.filter), await ledgerScope(ctx, 'ledgerCounts')), selectsSums(info)),
  }),
  ask: t.field({
    type: LedgerAnswerRef,
    nullable: true,
    description:
      "A question in plain words, read deterministically (no model) into a filter and grouping; see docs/ARCHITECTURE.md for the grammar. A task-scoped token's answer covers only its task's events.",
    args: { question: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const question = args.question.trim();
      if (!question || question.length > 1000) {
        throw badInput(`Invalid question: expected 1 to 1000 characters, got ${question.length}`);
      }
      return { question, ...readQuestion(question), scope: await ledgerScope(ctx, 'ask') };
    },
  }),
}));

// ---- appending ----

const PayloadInputRef = builder.inputType('PayloadInput', {
  description: 'The bytes of an event, as UTF-8 text or base64, with their declared state.',
  fields: (t) => ({
    state: t.field({ type: PayloadStateEnum, required: true }),
    text: t.string({ description: 'The bytes as UTF-8 text.' }),
    base64: t.string({ description: 'The exact bytes, base64-encoded.' }),
    size: t.int({ description: 'For MISSING: the size of the body that was not stored.' }),
    artifactUri: t.string({ description: 'For ARTIFACT: where the file lives.' }),
    artifactSha256: t.string({ description: "For ARTIFACT: the file's SHA-256, when known." }),
  }),
});

const ContractIdentityInputRef = builder.inputType('ContractIdentityInput', {
  description: 'Which contract ran: its form (or way column) and the SHA-256 of its canonical JSON.',
  fields: (t) => ({
    form: t.string({ required: true }),
    sha256: t.string({ required: true }),
  }),
});

const LedgerEventInputRef = builder.inputType('LedgerEventInput', {
  fields: (t) => ({
    id: t.string({ required: true, description: "The source's own stable event id." }),
    kind: t.string({ required: true }),
    direction: t.field({ type: DirectionEnum, required: true }),
    actionId: t.string({ required: true }),
    tool: t.string(),
    session: t.string(),
    turn: t.string(),
    task: t.string(),
    agent: t.string(),
    model: t.string(),
    status: t.string(),
    method: t.string(),
    url: t.string(),
    headers: t.field({ type: 'JSON' }),
    costUsd: t.field({ type: 'Decimal' }),
    inputTokens: t.int(),
    outputTokens: t.int(),
    occurredAt: t.field({ type: 'DateTime', required: true }),
    payload: t.field({ type: PayloadInputRef }),
    contract: t.field({ type: ContractIdentityInputRef, description: 'The Directory contract this event ran.' }),
    metadata: t.field({ type: 'JSON' }),
  }),
});

const AppendBatchInputRef = builder.inputType('AppendBatchInput', {
  fields: (t) => ({
    collector: t.string({ required: true }),
    position: t.field({ type: 'BigInt', description: "The collector's delivered position after this batch." }),
    events: t.field({ type: [LedgerEventInputRef], required: true }),
  }),
});

const AppendBatchResultRef = builder
  .objectRef<{ batchId: string; received: number; inserted: number; duplicates: number; position: bigint | null }>('AppendBatchResult')
  .implement({
    fields: (t) => ({
      batchId: t.exposeID('batchId'),
      received: t.exposeInt('received'),
      inserted: t.exposeInt('inserted'),
      duplicates: t.exposeInt('duplicates', { description: 'Events already in the ledger (or repeated in this batch).' }),
      position: t.expose('position', { type: 'BigInt', nullable: true, description: "The collector's delivered position." }),
    }),
  });

/** Drops the nulls GraphQL sends for omitted optional fields, so zod sees what the caller sent. */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value instanceof Date || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}

/** The ingest power and the token's collector and tools caveats (src/auth/authority.ts allowsIngest); a refusal is recorded. */
async function requireIngest(ctx: Context, batch: BatchInput): Promise<void> {
  const grant = ctx.caller.grant;
  const refusal = grant && ctx.services.authority.allowsIngest(grant, ctx.caller.door, batch);
  if (!refusal) return;
  await ctx.services.authority
    .record(refusal, { actionId: randomUUID(), ...(grant.task && { task: grant.task }), ...(grant.agent && { agent: grant.agent }) })
    .catch((error) => ctx.services.logger.error({ err: error }, 'recording a refusal failed'));
  throw new DomainError(ErrorCode.FORBIDDEN, refusal.message, { limit: refusal.limit, ...(refusal.caveat && { caveat: refusal.caveat }) });
}

builder.mutationField('appendBatch', (t) =>
  t.field({
    type: AppendBatchResultRef,
    description: 'Appends one batch in one transaction. A known event id adds nothing and counts as a duplicate.',
    args: { input: t.arg({ type: AppendBatchInputRef, required: true }) },
    resolve: async (_root, args, ctx) => {
      const input = withoutNulls(args.input) as Record<string, unknown>;
      const batch = parseInput(BatchInput, { ...input, position: input.position?.toString() }, 'appendBatch input');
      await requireIngest(ctx, batch);
      return ctx.services.ledger.append(batch);
    },
  }),
);
