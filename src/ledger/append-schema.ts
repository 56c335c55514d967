// appendBatch: a collector's batch of events, appended in one transaction under the ingest power.
import { randomUUID } from 'node:crypto';
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import { withoutNulls } from '../graphql/without-nulls.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { parseInput } from '../validation.ts';
import { BatchInput } from './input.ts';
import { DirectionEnum, PayloadStateEnum } from './schema.ts';

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
