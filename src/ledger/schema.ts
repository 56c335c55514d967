// The Ledger's GraphQL types and the root fields that return them.
import { builder } from '../graphql/builder.ts';
import { parseInput } from '../validation.ts';
import { encodeCursor } from './cursor.ts';
import { BatchInput } from './input.ts';

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

export const BlobRef = builder.prismaObject('Blob', {
  description: 'Exact bytes, stored once under their SHA-256. Every read verifies the hash.',
  fields: (t) => ({
    sha256: t.exposeString('sha256'),
    size: t.expose('size', { type: 'BigInt', description: 'Bytes as recorded.' }),
    encoding: t.expose('encoding', { type: PayloadEncodingEnum }),
    storage: t.expose('storage', { type: BlobStorageEnum }),
    codec: t.exposeString('codec', { description: 'How inline bytes are compressed: deflate-raw or identity.' }),
    storedSize: t.expose('storedSize', { type: 'BigInt', description: 'Bytes actually stored after compression.' }),
    text: t.string({
      nullable: true,
      description: 'The bytes as text, when the encoding is UTF8.',
      select: { encoding: true, sha256: true },
      resolve: async (blob, _args, ctx) =>
        blob.encoding === 'UTF8' ? (await ctx.services.ledger.readBlob(blob.sha256))!.toString('utf8') : null,
    }),
    base64: t.string({
      description: 'The exact bytes, base64-encoded.',
      select: { sha256: true },
      resolve: async (blob, _args, ctx) => (await ctx.services.ledger.readBlob(blob.sha256))!.toString('base64'),
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

export type ActionShape = { id: string };
export const ActionRef = builder.objectRef<ActionShape>('Action');

export const LedgerEventRef = builder.prismaObject('LedgerEvent', {
  description: 'One thing that happened. Append-only.',
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
    tool: t.exposeString('tool', { nullable: true }),
    session: t.exposeString('session', { nullable: true }),
    turn: t.exposeString('turn', { nullable: true }),
    task: t.exposeString('task', { nullable: true }),
    agent: t.exposeString('agent', { nullable: true }),
    model: t.exposeString('model', { nullable: true }),
    status: t.exposeString('status', { nullable: true }),
    method: t.exposeString('method', { nullable: true }),
    url: t.exposeString('url', { nullable: true }),
    headers: t.expose('headers', { type: 'JSON', nullable: true }),
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
    metadata: t.expose('metadata', { type: 'JSON', nullable: true }),
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
    events: t.prismaField({
      type: [LedgerEventRef],
      description: 'In position order.',
      resolve: (query, action, _args, ctx) =>
        ctx.services.db.prisma.ledgerEvent.findMany({ ...query, where: { actionId: action.id }, orderBy: { position: 'asc' } }),
    }),
  }),
});

builder.queryFields((t) => ({
  event: t.prismaField({
    type: LedgerEventRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) =>
      ctx.services.db.prisma.ledgerEvent.findUnique({ ...query, where: { id: String(args.id) } }),
  }),
  action: t.field({
    type: ActionRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const one = await ctx.services.db.prisma.ledgerEvent.findFirst({
        where: { actionId: String(args.id) },
        select: { actionId: true },
      });
      return one ? { id: one.actionId } : null;
    },
  }),
  blob: t.prismaField({
    type: BlobRef,
    nullable: true,
    args: { sha256: t.arg.string({ required: true }) },
    resolve: (query, _root, args, ctx) =>
      ctx.services.db.prisma.blob.findUnique({ ...query, where: { sha256: args.sha256.toLowerCase() } }),
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

builder.mutationField('appendBatch', (t) =>
  t.field({
    type: AppendBatchResultRef,
    description: 'Appends one batch in one transaction. A known event id adds nothing and counts as a duplicate.',
    args: { input: t.arg({ type: AppendBatchInputRef, required: true }) },
    resolve: (_root, args, ctx) => {
      const input = withoutNulls(args.input) as Record<string, unknown>;
      return ctx.services.ledger.append(parseInput(BatchInput, { ...input, position: input.position?.toString() }, 'appendBatch input'));
    },
  }),
);
