// The Ledger's GraphQL objects (events, actions, blobs, batches) and the root fields that read one by id.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder } from '../graphql/builder.ts';
import { loadBatched } from '../graphql/loader.ts';
import { nodeIdField, registerNode } from '../graphql/node.ts';
import type { Context } from '../graphql/context.ts';
import { selectedFields } from '../graphql/selection.ts';
import type { LedgerEvent } from '../generated/prisma/client.ts';
import type { EventQuery } from './event-select.ts';
import { encodeCursor } from './cursor.ts';
import { decodeJson, decodeText } from './storable.ts';
import { ledgerScope, ledgerScopeNow, scopeFilter, scopeWhere, type LedgerScope } from './read-scope.ts';
import { readEvents } from './reads.ts';

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

/** One event by id, as the caller may read it (`event(id:)` and `node(id:)`). */
async function readEvent(ctx: Context, id: string, query: EventQuery): Promise<LedgerEvent | null> {
  const scope = await ledgerScope(ctx, 'event');
  const rows = await readEvents(ctx.services.db, query, { filter: scopeFilter(scope), id, order: 'ASC', limit: 1 });
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
  event: t.prismaField({
    type: LedgerEventRef,
    nullable: true,
    description: `One event by id.${scopeNote}`,
    args: { id: t.arg.id({ required: true, description: "The event's own id (LedgerEvent.id)." }) },
    resolve: (query, _root, args, ctx) => readEvent(ctx, String(args.id), query),
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
        const query: EventQuery = queryFromInfo({ context: ctx, info, path: ['events'] });
        const events = await readEvents(ctx.services.db, query, { filter: scopeFilter(scope), actionId: String(args.id), order: 'ASC' });
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
registerNode(LedgerEventRef, (id, ctx, info) => readEvent(ctx, id, queryFromInfo({ context: ctx, info, typeName: 'LedgerEvent' })));
builder.objectField(ActionRef, 'nodeId', (t) => t.field(nodeIdField<ActionShape>('Action', (a) => a.id)));
registerNode(ActionRef, async (id, ctx) => findAction(ctx, id, await ledgerScope(ctx, 'action')));
builder.prismaObjectField(BlobRef, 'nodeId', (t) => t.field({ ...nodeIdField<{ sha256: string }>('Blob', (b) => b.sha256), select: { sha256: true } }));
registerNode(BlobRef, (id, ctx, info) => readBlob(ctx, id, queryFromInfo({ context: ctx, info, typeName: 'Blob' })));
