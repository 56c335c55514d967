// appendBatch: a collector's batch of events, appended in one transaction under the ingest power.
import { randomUUID } from 'node:crypto';
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import { withoutNulls } from '../graphql/without-nulls.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { parseInput } from '../validation.ts';
import { batchBytesOf } from './ingest-gate.ts';
import { BatchInput } from './input.ts';
import { DirectionEnum, PayloadStateEnum } from './schema.ts';

const PayloadInputRef = builder.inputType('PayloadInput', {
  description: 'The bytes of an event, as UTF-8 text or base64, with their declared state.',
  fields: (t) => ({
    state: t.field({
      description: 'Which bytes are stored: COMPLETE or PARTIAL need text or base64; NONE, ARTIFACT and MISSING carry none.',
      type: PayloadStateEnum,
      required: true,
    }),
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
    form: t.string({ description: 'A ContractForm name, or the way column (e.g. "way: http").', required: true }),
    sha256: t.string({ description: "SHA-256 of the contract's canonical JSON, lowercase hex.", required: true }),
  }),
});

const LedgerEventInputRef = builder.inputType('LedgerEventInput', {
  description: 'One event as a collector sends it; the id makes a resend harmless (a known id is a duplicate).',
  fields: (t) => ({
    id: t.string({ required: true, description: "The source's own stable event id." }),
    kind: t.string({
      description: 'What happened (REQUEST, RESPONSE, TOOL_CALL, TOOL_RESULT, MODEL_CALL, MODEL_RESULT…): 1 to 64 characters.',
      required: true,
    }),
    direction: t.field({ description: 'IN: arrived at the system that recorded it; OUT: sent by it.', type: DirectionEnum, required: true }),
    actionId: t.string({ description: 'The request this event belongs to: every event of one call shares it.', required: true }),
    tool: t.string({ description: "The Directory row's name it concerns; a `tools` caveat on the ingest token must allow it." }),
    session: t.string({ description: 'The session it belongs to.' }),
    turn: t.string({ description: 'The turn within its session.' }),
    task: t.string({ description: 'The task it was done for.' }),
    agent: t.string({ description: 'The agent that acted.' }),
    model: t.string({ description: 'The model named (model traffic).' }),
    status: t.string({ description: "The answer's status: HTTP status, exit code, or a door's own." }),
    method: t.string({ description: 'The HTTP method, or CLI/MCP/CODE for other calls.' }),
    url: t.string({ description: 'The URL called or served (secrets redacted before storing).' }),
    headers: t.field({ description: 'HTTP headers as a JSON object of name → value; secrets are replaced by their names before storing.', type: 'JSON' }),
    costUsd: t.field({ description: 'Cost in US dollars, exact to 10 decimal places.', type: 'Decimal' }),
    inputTokens: t.int({ description: 'Input tokens the provider counted.' }),
    outputTokens: t.int({ description: 'Output tokens the provider counted.' }),
    occurredAt: t.field({ description: 'When it happened, as the source saw it (stored to the millisecond, UTC).', type: 'DateTime', required: true }),
    payload: t.field({ description: "The body's bytes and their state; omitted: the event has no body (NONE).", type: PayloadInputRef }),
    contract: t.field({ type: ContractIdentityInputRef, description: 'The Directory contract this event ran.' }),
    metadata: t.field({ description: 'Anything else, as a JSON object (stored as JSON, secrets redacted).', type: 'JSON' }),
  }),
});

const AppendBatchInputRef = builder.inputType('AppendBatchInput', {
  description: "A collector's batch: appended in one transaction, or not at all.",
  fields: (t) => ({
    collector: t.string({ description: 'The collector sending the batch (its name); a `collector` caveat must allow it.', required: true }),
    position: t.field({ type: 'BigInt', description: "The collector's delivered position after this batch." }),
    events: t.field({
      description: 'The events, appended in this order in one transaction (positions follow it).',
      type: [LedgerEventInputRef],
      required: true,
    }),
  }),
});

const AppendBatchResultRef = builder
  .objectRef<{ batchId: string; received: number; inserted: number; duplicates: number; position: bigint | null }>('AppendBatchResult')
  .implement({
    description: 'What one appendBatch did.',
    fields: (t) => ({
      batchId: t.exposeID('batchId', { description: 'The id of the LedgerBatch row that records this append.' }),
      received: t.exposeInt('received', { description: 'Events in the batch as sent.' }),
      inserted: t.exposeInt('inserted', { description: 'Events newly appended.' }),
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
    args: {
      input: t.arg({ description: "The batch: its collector, its events, and the collector's position after it.", type: AppendBatchInputRef, required: true }),
    },
    resolve: async (_root, args, ctx) => {
      const input = withoutNulls(args.input) as Record<string, unknown>;
      const batch = parseInput(BatchInput, { ...input, position: input.position?.toString() }, 'appendBatch input');
      await requireIngest(ctx, batch);
      // Parsed already, so its bytes are held: it waits for room beside the HTTP and OTLP batches all the same.
      return ctx.services.ingestGate.run(batchBytesOf(batch), () => ctx.services.ledger.append(batch));
    },
  }),
);
