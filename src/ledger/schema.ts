// The Ledger's GraphQL objects (events, actions, blobs, batches) and the root fields that read one by id.
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import { builder } from '../graphql/builder.ts';
import { loadBatched } from '../graphql/loader.ts';
import { nodeIdField, registerNode } from '../graphql/node.ts';
import type { Context } from '../graphql/context.ts';
import { cachedPlan } from '../graphql/plan-cache.ts';
import { selectedFields } from '../graphql/selection.ts';
import type { LedgerEvent } from '../generated/prisma/client.ts';
import { planEventSelect, type PlannedEvents } from './event-select.ts';
import { encodeCursor } from './cursor.ts';
import { decodeJson, decodeText } from './storable.ts';
import { ledgerScope, ledgerScopeNow, scopeFilter, scopeWhere, type LedgerScope } from './read-scope.ts';
import { planned, readEvents } from './reads.ts';

/**
 * The events the field `info` resolves (LedgerEvents under `path`), planned into one statement with
 * `always` besides what the selection asks, the plan kept per place in the document
 * (graphql/plan-cache.ts) and per kind of read scope (the scope itself is a parameter of each statement).
 */
export function plannedEvents(ctx: Context, info: GraphQLResolveInfo, path?: string[], always: readonly string[] = ['position']): PlannedEvents {
  const key = `${always.join(',')}|${ledgerScopeNow(ctx).kind}`;
  return cachedPlan(ctx, info, { ...(path && { path }), key }, (query) => planEventSelect(query, always));
}

export const DirectionEnum = builder.enumType('Direction', {
  description: 'IN: arrived at this system. OUT: sent by it.',
  values: {
    IN: { description: 'Arrived at this system.' },
    OUT: { description: 'Sent by this system.' },
  } as const,
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
  values: {
    UTF8: { description: 'Text: strict UTF-8 decoding gives back the identical bytes.' },
    BINARY: { description: 'Anything else: read the bytes as base64.' },
  } as const,
});
export const BlobStorageEnum = builder.enumType('BlobStorage', {
  description: "Where a blob's bytes are kept.",
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
    sha256: t.exposeString('sha256', { description: "SHA-256 of the exact bytes, lowercase hex: the blob's key." }),
    size: t.expose('size', { type: 'BigInt', description: 'Bytes as recorded.' }),
    encoding: t.expose('encoding', {
      description: 'UTF8 when the bytes decode strictly as UTF-8 and back to the same bytes, else BINARY.',
      type: PayloadEncodingEnum,
    }),
    storage: t.expose('storage', {
      description: 'Where the bytes are kept: INLINE (compressed in the database) or OBJECT (the object store).',
      type: BlobStorageEnum,
    }),
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
    id: t.exposeID('id', { description: "The batch's id." }),
    collector: t.exposeString('collector', { description: 'The collector that sent the batch.' }),
    position: t.expose('position', {
      description: "The collector's delivered position after this batch; null when it sent none.",
      type: 'BigInt',
      nullable: true,
    }),
    received: t.exposeInt('received', { description: 'Events in the batch as sent.' }),
    inserted: t.exposeInt('inserted', { description: 'Events newly appended.' }),
    duplicates: t.exposeInt('duplicates', { description: 'Events already in the ledger (or repeated in the batch): not appended again.' }),
    bytes: t.expose('bytes', { description: 'Payload bytes the batch carried, as received.', type: 'BigInt' }),
    receivedAt: t.expose('receivedAt', { description: 'When the batch was appended (UTC).', type: 'DateTime' }),
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
    kind: t.exposeString('kind', { description: 'What happened: REQUEST, RESPONSE, TOOL_CALL, TOOL_RESULT, MODEL_CALL, MODEL_RESULT, REFUSAL, GRANT…' }),
    direction: t.expose('direction', { description: 'IN: arrived at this system; OUT: sent by it.', type: DirectionEnum }),
    actionId: t.exposeID('actionId', { description: 'The request this event belongs to: every event of one call shares it.' }),
    toolName: t.exposeString('tool', { nullable: true, description: 'The name of the tool this event concerns (LedgerEvent.tool opens its Directory row).' }),
    session: t.exposeString('session', { description: 'The session it belongs to, as the caller named it; null when none.', nullable: true }),
    turn: t.exposeString('turn', { description: 'The turn within its session; null when none.', nullable: true }),
    task: t.exposeString('task', {
      description: 'The task it was done for (a task-bound token files every call under its task); null when none.',
      nullable: true,
    }),
    agent: t.exposeString('agent', {
      description: "The agent that acted, as the caller named it (x-dirledger-agent or the token's agent caveat); null when none.",
      nullable: true,
    }),
    model: t.exposeString('model', { description: 'The model named (model traffic); null when none.', nullable: true }),
    status: t.exposeString('status', {
      description: "The answer's status: HTTP status, exit code, or a door's own (e.g. OK); null when none.",
      nullable: true,
    }),
    method: t.exposeString('method', { description: 'The HTTP method, or CLI/MCP/CODE for other calls; null when none.', nullable: true }),
    url: t.string({
      description: 'The URL called or served, secrets redacted; null when none.',
      nullable: true,
      select: { url: true },
      resolve: (e) => (e.url === null ? null : decodeText(e.url)),
    }),
    headers: t.field({
      description: 'HTTP headers as recorded (lowercase names), secrets replaced by [NAMES]; null when none.',
      type: 'JSON',
      nullable: true,
      select: { headers: true },
      resolve: (e) => decodeJson(e.headers),
    }),
    costUsd: t.expose('costUsd', {
      description: 'Cost in US dollars, exact to 10 decimal places (MODEL_RESULT events); null when none.',
      type: 'Decimal',
      nullable: true,
    }),
    inputTokens: t.exposeInt('inputTokens', { description: 'Input tokens the provider counted (MODEL_RESULT events); null when none.', nullable: true }),
    outputTokens: t.exposeInt('outputTokens', { description: 'Output tokens the provider counted (MODEL_RESULT events); null when none.', nullable: true }),
    occurredAt: t.expose('occurredAt', { description: 'When it happened, as the source saw it (UTC, milliseconds).', type: 'DateTime' }),
    recordedAt: t.expose('recordedAt', { description: "When the ledger appended it (UTC): its commit, not the event's own time.", type: 'DateTime' }),
    payloadState: t.expose('payloadState', { description: "Whether and how the body's bytes are stored.", type: PayloadStateEnum }),
    payloadSha256: t.exposeString('payloadSha256', { description: 'SHA-256 of the stored bytes; null when none are stored.', nullable: true }),
    payloadSize: t.expose('payloadSize', {
      description: 'Bytes of the body (for MISSING, the size that was not stored); null when unknown.',
      type: 'BigInt',
      nullable: true,
    }),
    payloadEncoding: t.expose('payloadEncoding', { description: 'UTF8 or BINARY; null when no bytes are stored.', type: PayloadEncodingEnum, nullable: true }),
    artifactUri: t.exposeString('artifactUri', { description: 'ARTIFACT: where the file lives (a file:// or object URI), secrets redacted.', nullable: true }),
    artifactSha256: t.exposeString('artifactSha256', { description: "ARTIFACT: the file's SHA-256, when known.", nullable: true }),
    redactedSecrets: t.exposeStringList('redactedSecrets', { description: 'Names of secrets whose values were replaced.' }),
    metadata: t.field({
      description: 'Everything else recorded, as JSON (refusal limit, price id, stream state…), secrets redacted; null when none.',
      type: 'JSON',
      nullable: true,
      select: { metadata: true },
      resolve: (e) => decodeJson(e.metadata),
    }),
    payload: t.relation('payload', { description: 'The stored bytes (COMPLETE or PARTIAL); null when the event has none.', nullable: true }),
    batch: t.relation('batch', { description: 'The batch that appended this event.' }),
    action: t.field({
      description: 'Every event of this request (linked by actionId).',
      type: ActionRef,
      select: { actionId: true },
      resolve: (e) => ({ id: e.actionId }),
    }),
  }),
});

builder.objectType(ActionRef, {
  description: 'Every event of one request, linked by the action id.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The action id every event of this request carries (LedgerEvent.actionId).' }),
    events: t.field({
      type: [LedgerEventRef],
      description: 'In position order (those the caller may read).',
      resolve: async (action, _args, ctx, info) => {
        if (action.events) return action.events as never;
        const selection = plannedEvents(ctx, info, undefined, ['position', 'actionId']);
        const scope = ledgerScopeNow(ctx);
        const key = `action-events:${scope.kind === 'task' ? `task:${scope.task}` : scope.kind}:${selection.id}`;
        const rows = await loadBatched(ctx, key, action.id, (ids) => eventsOfActions(ctx, ids, scope, selection));
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
  selection: PlannedEvents,
): Promise<Map<string, Record<string, unknown>[]>> {
  const rows = await readEvents(ctx.services.db, selection, { filter: scopeFilter(scope), actionIds: ids, order: 'ASC' }, ['position', 'actionId']);
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

/** One event by id, as the caller may read it (`event(id:)` and `node(id:)`). */
async function readEvent(ctx: Context, id: string, selection: PlannedEvents): Promise<LedgerEvent | null> {
  const scope = await ledgerScope(ctx, 'event');
  const rows = await readEvents(ctx.services.db, selection, { filter: scopeFilter(scope), id, order: 'ASC', limit: 1 });
  return (rows[0] ?? null) as LedgerEvent | null;
}

/** An action the caller may read one event of (`action(id:)` without events, and `node(id:)`). */
async function findAction(ctx: Context, id: string, scope: LedgerScope): Promise<ActionShape | null> {
  const one = await ctx.services.db.prisma.ledgerEvent.findFirst({ where: { actionId: id, ...scopeWhere(scope) }, select: { actionId: true } });
  return one ? { id: one.actionId } : null;
}

type BlobQuery = { select?: Record<string, unknown>; include?: Record<string, unknown> };

/** Stored bytes by hash, as the caller may read them (`blob(sha256:)` and `node(id:)`). */
async function readBlob(ctx: Context, hash: string, query: BlobQuery) {
  const scope = await ledgerScope(ctx, 'blob');
  const sha256 = hash.toLowerCase();
  if (scope.kind === 'all') return ctx.services.db.prisma.blob.findUnique({ ...query, where: { sha256 } });
  // Bytes an event of the task references; any other reads as unknown.
  return ctx.services.db.prisma.blob.findFirst({ ...query, where: { sha256, events: { some: { task: scope.task } } } });
}

builder.queryFields((t) => ({
  event: t.field({
    type: LedgerEventRef,
    nullable: true,
    description: `One event by id.${scopeNote}`,
    args: { id: t.arg.id({ required: true, description: "The event's own id (LedgerEvent.id)." }) },
    resolve: (_root, args, ctx, info) => readEvent(ctx, String(args.id), plannedEvents(ctx, info)),
  }),
  action: t.field({
    type: ActionRef,
    nullable: true,
    description: `Every event of one request.${scopeNote}`,
    args: { id: t.arg.id({ required: true, description: 'The action id its events share (LedgerEvent.actionId).' }) },
    resolve: async (_root, args, ctx, info) => {
      const scope = await ledgerScope(ctx, 'action');
      if (selectedFields(info, 'events').length) {
        // The events are read here with their selection: one statement answers both "is there such an action" and its events.
        const events = await readEvents(ctx.services.db, plannedEvents(ctx, info, ['events']), {
          filter: scopeFilter(scope),
          actionId: String(args.id),
          order: 'ASC',
        });
        return events.length ? { id: String(args.id), events } : null;
      }
      return findAction(ctx, String(args.id), scope);
    },
  }),
  blob: t.prismaField({
    type: BlobRef,
    nullable: true,
    description: `Stored bytes by SHA-256.${scopeNote.replace("'s;", "'s (bytes an event of the task references);")}`,
    args: { sha256: t.arg.string({ required: true, description: 'The SHA-256 of the bytes, 64 hex digits in either case.' }) },
    resolve: (query, _root, args, ctx) => readBlob(ctx, args.sha256, query),
  }),
}));

builder.prismaObjectField(LedgerEventRef, 'nodeId', (t) => t.field({ ...nodeIdField<{ id: string }>('LedgerEvent', (e) => e.id), select: { id: true } }));
registerNode(LedgerEventRef, (id, ctx, info) => readEvent(ctx, id, planned(queryFromInfo({ context: ctx, info, typeName: 'LedgerEvent' }))));
builder.objectField(ActionRef, 'nodeId', (t) => t.field(nodeIdField<ActionShape>('Action', (a) => a.id)));
registerNode(ActionRef, async (id, ctx) => findAction(ctx, id, await ledgerScope(ctx, 'action')));
builder.prismaObjectField(BlobRef, 'nodeId', (t) => t.field({ ...nodeIdField<{ sha256: string }>('Blob', (b) => b.sha256), select: { sha256: true } }));
registerNode(BlobRef, (id, ctx, info) => readBlob(ctx, id, queryFromInfo({ context: ctx, info, typeName: 'Blob' })));
