// GraphQL: verifying the ledger's hash chain and its signed checkpoints (operator only: an admin token).
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { checkCheckpoint, exportCheckpoint, type Checkpoint, type CheckpointCheck } from './checkpoint.ts';
import { type ChainProblemKinds, verifyLedger, type ChainProblem, type LedgerVerification } from './verify.ts';

/** Refuses (and records the refusal) unless the caller holds an admin token; AUTHORITY=off lets everyone through. */
async function requireOperator(ctx: Context, what: string): Promise<void> {
  const grant = ctx.caller.grant;
  if (!grant || grant.admin) return;
  const refusal = {
    limit: 'power',
    door: ctx.caller.door,
    reason: `${what} needs an operator (admin) token; this token has caveats`,
    message: `${what} needs an operator (admin) token.`,
    status: 403,
    tokenId: grant.tokenId,
  } as const;
  await ctx.services.authority.record(refusal, { actionId: crypto.randomUUID(), ...(grant.task && { task: grant.task }) });
  throw new DomainError(ErrorCode.FORBIDDEN, refusal.message, { limit: 'operator' });
}

const ChainProblemKindEnum = builder.enumType('ChainProblemKind', {
  description: 'What no longer matches the hash chain.',
  values: {
    EVENT_CHANGED: { description: 'An event row no longer hashes as appended; `columns` names what changed when it can be told.' },
    EVENT_MISSING: { description: 'An event the chain recorded is gone (deleted).' },
    EVENT_UNCHAINED: { description: 'An event in no chained batch: added behind the append path, or its position changed.' },
    BATCH_CHANGED: { description: 'A batch row (collector, position, counts, time or stored digests) no longer hashes to its link.' },
    BATCH_MISSING: { description: 'A batch of the chain is gone (deleted).' },
    HEAD_MISMATCH: { description: 'The chain head disagrees with the last batch stored.' },
    COLLECTOR_REWOUND: { description: "A collector's delivered position is below what its batches carried (deleted and inserted again)." },
    COLLECTOR_MISSING: { description: 'A collector named by batches has no row.' },
    COLLECTOR_AHEAD: { description: "A collector's position is beyond anything its batches carried." },
  } satisfies Record<(typeof ChainProblemKinds)[number], unknown>,
});

const ChainProblemRef = builder.objectRef<ChainProblem>('ChainProblem').implement({
  description: 'One place where the stored rows no longer match the hash chain.',
  fields: (t) => ({
    kind: t.field({ description: 'What kind of break this is.', type: ChainProblemKindEnum, resolve: (p) => p.kind }),
    message: t.exposeString('message', { description: 'The break in words: what was expected and what is stored.' }),
    chainSeq: t.field({
      description: 'The chain sequence number of that batch (1, 2, 3… in commit order).',
      type: 'BigInt',
      nullable: true,
      resolve: (p) => p.chainSeq ?? null,
    }),
    batchId: t.string({ description: 'The batch where the chain breaks, when one row is at fault.', nullable: true, resolve: (p) => p.batchId ?? null }),
    position: t.field({ description: 'The position of that event.', type: 'BigInt', nullable: true, resolve: (p) => p.position ?? null }),
    eventId: t.string({
      description: 'The event whose stored row no longer matches its digest, when one is.',
      nullable: true,
      resolve: (p) => p.eventId ?? null,
    }),
    columns: t.stringList({
      nullable: true,
      description: 'EVENT_CHANGED: the event columns that changed, when they can be told.',
      resolve: (p) => p.columns ?? null,
    }),
    collector: t.string({ description: 'The collector of that batch.', nullable: true, resolve: (p) => p.collector ?? null }),
  }),
});

const hex = (b: Buffer | null | undefined) => (b ? b.toString('hex') : null);

const LedgerVerificationRef = builder.objectRef<LedgerVerification>('LedgerVerification').implement({
  description: 'The hash chain recomputed from the stored rows (docs/ARCHITECTURE.md, Tamper evidence).',
  fields: (t) => ({
    ok: t.exposeBoolean('ok', { description: 'Every row hashes as appended and nothing is missing.' }),
    batches: t.exposeInt('batches', { description: 'Chained batches recomputed.' }),
    events: t.exposeInt('events', { description: 'Events the recomputed batches appended.' }),
    firstSeq: t.field({
      description: 'The first chain sequence number verified; null when no batch was.',
      type: 'BigInt',
      nullable: true,
      resolve: (v) => v.firstSeq,
    }),
    lastSeq: t.field({
      description: 'The last chain sequence number verified; null when no batch was.',
      type: 'BigInt',
      nullable: true,
      resolve: (v) => v.lastSeq,
    }),
    lastLink: t.string({ nullable: true, description: 'The last recomputed batch link, hex.', resolve: (v) => hex(v.lastLink) }),
    lastPosition: t.field({
      description: 'The highest event position verified; null when none was.',
      type: 'BigInt',
      nullable: true,
      resolve: (v) => v.lastPosition,
    }),
    genesisPosition: t.field({
      type: 'BigInt',
      description: 'Events at or below this position predate the chain and are not covered.',
      resolve: (v) => v.genesisPosition,
    }),
    headSeq: t.field({
      description: "The chain's head sequence number as stored; null before the first chained batch.",
      type: 'BigInt',
      nullable: true,
      resolve: (v) => v.head?.seq ?? null,
    }),
    headLink: t.string({
      description: "The chain's head link (hex) as stored; null before the first chained batch.",
      nullable: true,
      resolve: (v) => hex(v.head?.link),
    }),
    problems: t.field({ type: [ChainProblemRef], description: 'The first problems in ledger order (at most `limit`).', resolve: (v) => v.problems }),
    problemCount: t.exposeInt('problemCount', { description: 'Every break found, even when `problems` lists only the first `limit`.' }),
  }),
});

const LedgerCheckpointRef = builder.objectRef<Checkpoint>('LedgerCheckpoint').implement({
  description: "The chain's head at one batch, signed with the server's Ed25519 checkpoint key. Keep `json` outside the database.",
  fields: (t) => ({
    seq: t.field({ description: 'The chain sequence number it signs.', type: 'BigInt', resolve: (c) => BigInt(c.seq) }),
    position: t.field({ description: 'The highest event position the chain covered at `seq`.', type: 'BigInt', resolve: (c) => BigInt(c.position) }),
    link: t.exposeString('link', { description: 'The chain link at `seq`, hex: what the signature covers.' }),
    createdAt: t.exposeString('createdAt', { description: 'When the checkpoint was signed (UTC).' }),
    publicKey: t.exposeString('publicKey', { description: 'Ed25519 public key, raw 32 bytes base64url.' }),
    signature: t.exposeString('signature', { description: 'Ed25519 signature over seq, position and link, base64url.' }),
    json: t.string({ description: 'The checkpoint as the file `dirledger checkpoint verify` reads.', resolve: (c) => JSON.stringify(c) }),
  }),
});

const CheckpointCheckRef = builder.objectRef<CheckpointCheck>('CheckpointCheck').implement({
  description: 'A signed checkpoint checked against the chain as stored now.',
  fields: (t) => ({
    ok: t.exposeBoolean('ok', { description: 'True when the signature holds and the chain link at its position is the one it signed.' }),
    message: t.exposeString('message', { description: 'Why the check failed; null when it passed.' }),
    checkpoint: t.field({
      description: 'The checkpoint as read back (signature checked).',
      type: LedgerCheckpointRef,
      nullable: true,
      resolve: (c) => c.checkpoint,
    }),
    verification: t.field({
      description: "The chain verified up to the checkpoint's position.",
      type: LedgerVerificationRef,
      nullable: true,
      resolve: (c) => c.verification,
    }),
  }),
});

const position = (name: string, v: bigint | null | undefined) => {
  if (v !== null && v !== undefined && v < 0n) throw new DomainError(ErrorCode.BAD_INPUT, `${name}: expected a ledger position (0 or more), got ${v}.`);
  return v ?? undefined;
};

builder.queryField('verifyLedger', (t) =>
  t.field({
    type: LedgerVerificationRef,
    description:
      'Recomputes the hash chain over the batches holding positions from..to (default: all, with the head and collectors) and names what no longer matches. Operator only.',
    args: {
      from: t.arg({ description: 'Verify the batches holding positions from this one on; omitted: from the first.', type: 'BigInt', required: false }),
      to: t.arg({ description: 'Verify the batches holding positions up to this one; omitted: up to the head.', type: 'BigInt', required: false }),
      limit: t.arg.int({ required: false, defaultValue: 100, description: 'Problems listed at most (1 to 1000); all are counted.' }),
    },
    resolve: async (_root, args, ctx) => {
      await requireOperator(ctx, 'Verifying the ledger');
      const limit = args.limit ?? 100;
      if (limit < 1 || limit > 1000) throw new DomainError(ErrorCode.BAD_INPUT, `limit: expected 1 to 1000, got ${limit}.`);
      return verifyLedger(ctx.services.db.sql, { from: position('from', args.from), to: position('to', args.to), limit });
    },
  }),
);

builder.queryField('ledgerCheckpoint', (t) =>
  t.field({
    type: LedgerCheckpointRef,
    description: "Signs the chain's current head (Ed25519, key derived from the root key). Operator only.",
    resolve: async (_root, _args, ctx) => {
      await requireOperator(ctx, 'Signing a checkpoint');
      return exportCheckpoint(ctx.services.db.sql, ctx.services.checkpointKey);
    },
  }),
);

builder.queryField('verifyLedgerCheckpoint', (t) =>
  t.field({
    type: CheckpointCheckRef,
    description: "Checks a checkpoint (its JSON) against this database: signed by this server's key, and the chain up to it unchanged. Operator only.",
    args: { checkpoint: t.arg.string({ description: 'A checkpoint as `dirledger checkpoint export` printed it (JSON).', required: true }) },
    resolve: async (_root, args, ctx) => {
      await requireOperator(ctx, 'Checking a checkpoint');
      if (args.checkpoint.length > 4096)
        throw new DomainError(ErrorCode.BAD_INPUT, `checkpoint: expected at most 4096 characters, got ${args.checkpoint.length}.`);
      return checkCheckpoint(ctx.services.db.sql, args.checkpoint, ctx.services.checkpointKey.publicRaw);
    },
  }),
);
