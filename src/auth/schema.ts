// GraphQL: issuing and reading tokens. issueToken needs the issue power (an admin token has it);
// inspectToken reads what anyone holding a token can read: its id and its limits in words.
import { spentOf, type BudgetState } from './spend.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import { currentInvocation, eventFields } from '../context/request.ts';
import { inspect } from './tokens.ts';
import type { Grant } from './verdict.ts';
import { Powers, ReadScopes, type Power, type ReadScope } from './caveats.ts';
import { TokenDoors, type Door } from '../context/door.ts';
import { describedValues } from '../graphql/enum-values.ts';
import { checkOfflineGrant, GrantRefused, grantEvent, type GrantRecord } from './grants.ts';
import { MalformedToken } from './macaroon.ts';
import type { Revocation } from './revocations.ts';

const doorDescriptions: Record<(typeof TokenDoors)[number], string> = {
  REST: 'POST /api/tools/NAME with the args as body, and the read routes under /api/directory and /api/ledger.',
  URL: 'GET /api/tools/NAME with the args in the query string.',
  DISPATCH: 'POST /api/dispatch with the canonical call (also `dirledger call --server`).',
  GRAPHQL: 'Operations on /graphql over plain HTTP.',
  GRAPHQL_WS: 'Operations on /graphql over graphql-ws (a WebSocket).',
  GRAPHQL_SSE: 'Operations on /graphql answered as Server-Sent Events (accept: text/event-stream).',
  MCP: 'POST /mcp, MCP streamable HTTP.',
  MCP_STDIO: 'MCP over stdio: `dirledger mcp` running the cores in process.',
  CLI: 'Kept for the dirledger command line in process; no route presents a token at this door today.',
  WEBHOOK: 'POST /hooks/NAME, with a token or a signature.',
  WEBSOCKET: 'WS /api/ws: calls as JSON messages on one socket.',
  SSE: 'POST /api/dispatch with accept: text/event-stream: the result as Server-Sent Events.',
  INGEST: 'POST /ledger/batches: a collector appending a batch of events.',
  OTLP: 'POST /v1/traces: OpenTelemetry traces in (OTLP/HTTP).',
  BLOB: 'GET /ledger/blob/SHA256: the stored bytes of one blob.',
  MODEL: 'The OpenAI- and Anthropic-compatible model routes under /v1 (chat completions, responses, embeddings, messages, models).',
} satisfies Record<Exclude<Door, 'INTERNAL'>, string>;

export const AuthDoorEnum = builder.enumType('AuthDoor', {
  description: 'A door a token may be limited to.',
  values: describedValues(TokenDoors, doorDescriptions),
});
const ReadScopeEnum = builder.enumType('ReadScope', {
  description: "What a token's holder may read of the ledger: nothing, its own task's events, or everything.",
  values: describedValues(
    ReadScopes.map((s) => s.toUpperCase() as Uppercase<ReadScope>),
    {
      NONE: 'Reads nothing of the ledger.',
      TASK: "Reads only its own task's events (the task of its task caveat).",
      ALL: 'Reads the whole ledger.',
    },
  ),
});
const PowerEnum = builder.enumType('Power', {
  description: 'What a token may do besides reading: call tools, append ledger batches, issue tokens, revoke tokens.',
  values: describedValues(
    Powers.map((p) => p.toUpperCase() as Uppercase<Power>),
    {
      CALL: 'Call tools, through any door that runs one.',
      INGEST: 'Append ledger batches (POST /ledger/batches, appendBatch, OTLP traces).',
      ISSUE: "Issue tokens; each keeps the issuing token's limits (tools, doors, time, task, reads…).",
      REVOKE: 'Revoke tokens, and pass this power on to tokens it issues.',
    },
  ),
});

const IssueTokenInput = builder.inputType('IssueTokenInput', {
  description: 'The limits of the new token; each becomes one caveat. Omitted limits are not added.',
  fields: (t) => ({
    tools: t.stringList({ required: false, description: 'Tool names; a trailing * is a prefix.' }),
    doors: t.field({
      description: "Only these doors may take the new token; omitted: no doors caveat is added (the issuer's own limits still apply).",
      type: [AuthDoorEnum],
      required: false,
    }),
    uses: t.int({ required: false, description: 'How many calls, counted across every token narrowed from this one.' }),
    notBefore: t.field({ description: 'The new token works only from this instant (UTC).', type: 'DateTime', required: false }),
    expires: t.field({ description: 'The new token stops working at this instant (UTC).', type: 'DateTime', required: false }),
    task: t.string({ required: false, description: 'Every call made with the token is filed under this task.' }),
    agent: t.string({ required: false, description: 'Every call made with the token is recorded as this agent.' }),
    folders: t.stringList({ required: false, description: 'File rows and path arguments only inside these folders.' }),
    audience: t.string({ required: false, description: 'Only at the server whose AUTH_AUDIENCE is this.' }),
    read: t.field({
      description: "Which ledger events the new token may read; omitted: no read caveat is added (the issuer's own limits still apply).",
      type: ReadScopeEnum,
      required: false,
    }),
    powers: t.field({ type: [PowerEnum], required: false, description: 'Omitted: every power the issuer may grant.' }),
    collectors: t.stringList({ required: false, description: 'Collector ids whose batches (and positions) the token may append; a trailing * is a prefix.' }),
    models: t.stringList({ required: false, description: 'Model rows the model door may call; a trailing * is a prefix.' }),
    tokens: t.int({ required: false, description: 'Model tokens (input and output) at most, shared by every token narrowed from this one.' }),
    costUsd: t.string({ required: false, description: 'Model cost in USD at most (a decimal), shared by every token narrowed from this one.' }),
  }),
});

type Issued = { token: string; tokenId: string; caveats: string[]; limits: string[] };
export const IssuedTokenRef = builder.objectRef<Issued>('IssuedToken').implement({
  description: 'A new token. It is shown once: the ledger stores this answer with the token replaced by [DIRLEDGER_TOKEN].',
  fields: (t) => ({
    token: t.exposeString('token', { description: 'The bearer token: send it as `Authorization: Bearer …` or `?token=`.' }),
    tokenId: t.exposeString('tokenId', { description: 'The id refusals and use counts are recorded under.' }),
    caveats: t.exposeStringList('caveats', { description: 'Its caveats, as signed.' }),
    limits: t.exposeStringList('limits', { description: 'Its limits, in words.' }),
  }),
});

const TokenRevocationRef = builder.objectRef<Revocation & { already?: boolean }>('TokenRevocation').implement({
  description: 'A revocation, as recorded (append-only): the id revoked, by whom, when and why.',
  fields: (t) => ({
    tokenId: t.exposeString('tokenId', { description: 'The revoked id: the token itself, or a token it was issued under.' }),
    reason: t.exposeString('reason', { description: 'Why it was revoked, as given.' }),
    revokedBy: t.exposeString('revokedBy', { description: 'The caller that revoked it (`token:<id>`).' }),
    revokedAt: t.expose('revokedAt', { description: 'When it was revoked (UTC).', type: 'DateTime' }),
    actionId: t.exposeString('actionId', { description: 'The action under which the REVOCATION ledger event is filed.' }),
    already: t.boolean({
      description: 'On revokeToken: true when the id had been revoked before (this is that first revocation).',
      resolve: (r) => r.already ?? false,
    }),
  }),
});

type Inspection = {
  tokenId: string | null;
  issuedBy: string[];
  caveats: string[];
  limits: string[];
  valid: boolean;
  uses: { caveat: string; used: number; max: number }[] | null;
  budgets?: BudgetState[] | null;
  revocation: Revocation | null;
};
const TokenBudgetRef = builder.objectRef<BudgetState>('TokenBudget').implement({
  description: 'One `tokens <= N` or `cost <= X` caveat: spent, held by calls in flight, and left (exact decimals as text; cost in USD).',
  fields: (t) => ({
    caveat: t.exposeString('caveat', { description: 'The spend caveat, as signed (e.g. "tokens <= 100000", "cost <= 5").' }),
    unit: t.exposeString('unit', { description: '`tokens` or `cost` (USD).' }),
    max: t.exposeString('max', { description: "The caveat's limit (tokens, or USD for cost)." }),
    spent: t.exposeString('spent', { description: 'Settled spend so far, across every token narrowed from the same one.' }),
    held: t.exposeString('held', { description: 'Held by calls not yet answered: their worst case.' }),
    left: t.exposeString('left', { description: 'What is left: max minus spent minus held.' }),
  }),
});
const TokenUseRef = builder.objectRef<{ caveat: string; used: number; max: number }>('TokenUse').implement({
  description: 'Uses taken under one `uses <= N` caveat.',
  fields: (t) => ({
    caveat: t.exposeString('caveat', { description: 'The uses caveat, as signed (e.g. "uses <= 5").' }),
    used: t.exposeInt('used', { description: 'How many it has had, across every token narrowed from the same one.' }),
    max: t.exposeInt('max', { description: 'How many uses it allows.' }),
  }),
});
const TokenInspectionRef = builder.objectRef<Inspection>('TokenInspection').implement({
  description: "What anyone can read of a token: its id and limits. `valid` and `uses` only say whether this server's key signed it.",
  fields: (t) => ({
    tokenId: t.exposeString('tokenId', { description: "The token's id (revokeToken takes it); null when the text is not a token.", nullable: true }),
    issuedBy: t.exposeStringList('issuedBy', { description: 'The ids of the tokens it was issued under, nearest first; revoking any of them revokes it.' }),
    caveats: t.exposeStringList('caveats', { description: "The token's caveats as signed, in order." }),
    limits: t.exposeStringList('limits', { description: 'The caveats in words, one sentence each.' }),
    valid: t.exposeBoolean('valid', { description: 'This server signed it and it is usable now (not expired, not for another audience).' }),
    uses: t.field({ type: [TokenUseRef], nullable: true, description: 'Per `uses` caveat, the uses spent so far (when valid).', resolve: (i) => i.uses }),
    budgets: t.field({
      type: [TokenBudgetRef],
      nullable: true,
      description: 'Per `tokens` / `cost` caveat, what is spent, held and left (when valid).',
      resolve: (i) => i.budgets ?? null,
    }),
    revoked: t.boolean({ description: 'It, or a token it was issued under, was revoked.', resolve: (i) => i.revocation !== null }),
    revocation: t.field({
      type: TokenRevocationRef,
      nullable: true,
      description: 'When revoked: which id, by whom, when and why.',
      resolve: (i) => i.revocation,
    }),
  }),
});

/** The caller's grant; with AUTHORITY=off every caller acts as admin. */
function grantOf(ctx: Context): Grant {
  if (ctx.caller.grant) return ctx.caller.grant;
  const admin = ctx.services.authority.authenticate(ctx.services.authority.mintToken(), 'GRAPHQL');
  if (!admin.ok) throw new Error('a freshly minted admin token did not verify');
  return admin.grant;
}

builder.mutationField('issueToken', (t) =>
  t.field({
    type: IssuedTokenRef,
    description:
      'Issues a scoped token (needs the issue power). A token issued by a non-admin token also carries every limit of its issuer but powers and uses; an issuer with `uses <= N` spends one use per token issued, and the new token gets at most the uses it had left. Only a holder of the revoke power may pass it on.',
    args: { input: t.arg({ description: "The new token's limits; every one narrows the caller's own.", type: IssueTokenInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const door = ctx.caller.door;
      const grant = grantOf(ctx);
      const plain = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined));
      if (plain.read) plain.read = String(plain.read).toLowerCase();
      if (plain.powers) plain.powers = (plain.powers as string[]).map((p) => p.toLowerCase());
      const issued = await ctx.services.authority.issueCounted(grant, door, plain);
      if (!issued.ok) {
        if ('invalid' in issued) throw new DomainError(ErrorCode.BAD_INPUT, issued.invalid);
        await ctx.services.authority.record(issued.refusal, { actionId: crypto.randomUUID(), ...(grant.task && { task: grant.task }) });
        throw new DomainError(ErrorCode.FORBIDDEN, issued.refusal.message, { limit: issued.refusal.limit });
      }
      // On the record before it is handed out: a grant the ledger cannot take is not given.
      await recordGrant(ctx, { tokenId: issued.tokenId, caveats: issued.caveats, via: 'ISSUE', door, ...(ctx.caller.grant && { issuer: ctx.caller.grant }) });
      return { token: issued.token, tokenId: issued.tokenId, caveats: issued.caveats, limits: issued.limits };
    },
  }),
);

/** Writes the GRANT event now (not queued), under the current invocation's action when there is one. */
async function recordGrant(ctx: Context, record: GrantRecord): Promise<void> {
  const invocation = currentInvocation();
  await ctx.services.writer.writeNow([grantEvent(record, invocation ? eventFields(invocation) : {})]);
}

const GrantViaEnum = builder.enumType('GrantVia', {
  description: 'How a token whose grant is recorded was made offline: narrowed by a holder, or minted from the root key.',
  values: {
    NARROW: { description: 'A narrowing of the bearer token, made offline with `dirledger token narrow`.' },
    ADMIN: { description: 'An admin token minted offline from the root key (`dirledger token admin`), presenting itself.' },
  } as const,
});

builder.mutationField('recordGrant', (t) =>
  t.field({
    type: TokenInspectionRef,
    description:
      'Records the grant of a token made offline (`dirledger token narrow|admin --url`): a GRANT event with its id, caveats and issuer (the bearer), never the token. NARROW needs a narrowing of the bearer token; ADMIN an admin token presenting itself.',
    args: {
      token: t.arg.string({ description: "The token that was narrowed or minted offline; it must verify with this server's key.", required: true }),
      via: t.arg({
        description: 'NARROW: a narrowing of the bearer token; ADMIN: an admin token minted from the root key.',
        type: GrantViaEnum,
        required: true,
      }),
    },
    resolve: async (_root, { token, via }, ctx) => {
      const door = ctx.caller.door;
      let record: GrantRecord;
      try {
        record = checkOfflineGrant(ctx.services.authority, token, via, door, ctx.caller.grant);
      } catch (error) {
        if (error instanceof GrantRefused) throw new DomainError(ErrorCode.BAD_INPUT, error.message, { field: 'token' });
        throw error;
      }
      await recordGrant(ctx, record);
      const checked = ctx.services.authority.authenticate(token, door);
      const valid = checked.ok || !['credential', 'not_before', 'expires'].includes(checked.refusal.limit);
      const read = inspect(token);
      const revocation = read.tokenId ? await ctx.services.revocations.find([read.tokenId, ...read.issuedBy]) : null;
      return { ...read, valid, uses: null, revocation };
    },
  }),
);

builder.queryField('inspectToken', (t) =>
  t.field({
    type: TokenInspectionRef,
    description: 'Lists the limits of a token, as anyone holding it can read them.',
    args: { token: t.arg.string({ description: "The token's text; it is never recorded.", required: true }) },
    resolve: async (_root, { token }, ctx) => {
      let read: ReturnType<typeof inspect>;
      try {
        read = inspect(token);
      } catch (error) {
        if (error instanceof MalformedToken) throw new DomainError(ErrorCode.BAD_INPUT, `Expected a dirledger token: ${error.message}.`, { field: 'token' });
        throw error;
      }
      const checked = ctx.services.authority.authenticate(token, ctx.caller.door);
      // Signed here and inside its time window and audience; a door or tool caveat does not make it invalid.
      const valid = checked.ok || !['credential', 'not_before', 'expires', 'revoked'].includes(checked.refusal.limit);
      const uses = checked.ok ? await ctx.services.authority.usesOf(checked.grant) : null;
      const budgets = checked.ok ? await spentOf(ctx.services.db.sql, checked.grant.budgets) : null;
      // Only a token this server signed names a lineage worth looking up.
      const signed = checked.ok || checked.refusal.limit !== 'credential' || checked.refusal.reason.startsWith('the token is for audience');
      const revocation = signed && read.tokenId ? await ctx.services.revocations.find([read.tokenId, ...read.issuedBy]) : null;
      return { ...read, valid, uses, budgets, revocation };
    },
  }),
);

const TOKEN_ID = /^[0-9a-f]{32}$/;
const REASON_MAX_CHARS = 1_000;

/** A token id, or a whole token (its id is read from it). */
function tokenIdOf(value: string): string {
  const lower = value.trim().toLowerCase();
  if (TOKEN_ID.test(lower)) return lower;
  try {
    const id = inspect(value.trim()).tokenId;
    if (id) return id;
  } catch {
    // answered below
  }
  throw new DomainError(
    ErrorCode.BAD_INPUT,
    `Expected a token id (32 hexadecimal characters) or a dirledger token, got ${JSON.stringify(value.slice(0, 40))}.`,
    { field: 'tokenId' },
  );
}

function reasonOf(value: string): string {
  const reason = value.trim();
  if (!reason) throw new DomainError(ErrorCode.BAD_INPUT, 'Expected a reason for the revocation, got an empty one.', { field: 'reason' });
  if (reason.length > REASON_MAX_CHARS)
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected a reason of at most ${REASON_MAX_CHARS} characters, got ${reason.length}.`, { field: 'reason' });
  if (!reason.isWellFormed() || reason.includes('\0'))
    throw new DomainError(ErrorCode.BAD_INPUT, 'Expected a reason without NUL characters or lone surrogates.', { field: 'reason' });
  return reason;
}

builder.mutationField('revokeToken', (t) =>
  t.field({
    type: TokenRevocationRef,
    description:
      'Revokes a token by its id, and with it every token narrowed or issued from it (needs the revoke power; an admin token has it). Recorded append-only, as a REVOCATION ledger event; every instance refuses the token within a second, and its live subscriptions end with TOKEN_REVOKED.',
    args: {
      tokenId: t.arg.string({ required: true, description: 'The token id (from inspectToken or a refusal), or the whole token.' }),
      reason: t.arg.string({ required: true, description: 'Why, in words (recorded).' }),
    },
    resolve: async (_root, args, ctx) => {
      const door = ctx.caller.door;
      const grant = grantOf(ctx);
      const actionId = currentInvocation()?.actionId ?? crypto.randomUUID();
      const refusal = ctx.services.authority.requirePower(grant, 'revoke', door);
      if (refusal) {
        await ctx.services.authority.record(refusal, { actionId, ...(grant.task && { task: grant.task }) });
        throw new DomainError(ErrorCode.FORBIDDEN, refusal.message, { limit: refusal.limit });
      }
      const tokenId = tokenIdOf(args.tokenId);
      const reason = reasonOf(args.reason);
      const { revocation, already } = await ctx.services.revocations.revoke({ tokenId, reason, revokedBy: grant.caller, actionId });
      // The table makes it effective; the ledger event is its record. Its id is fixed per token, so a retry after a failed write adds it once.
      await ctx.services.writer.writeNow([
        {
          id: `revocation:${tokenId}`,
          actionId: revocation.actionId,
          kind: 'REVOCATION',
          direction: 'IN',
          status: 'REVOKED',
          ...(grant.task && { task: grant.task }),
          ...(grant.agent && { agent: grant.agent }),
          occurredAt: revocation.revokedAt,
          payload: { state: 'NONE' },
          metadata: { capture: 'authority', tokenId, reason: revocation.reason, revokedBy: revocation.revokedBy, door },
        },
      ]);
      return { ...revocation, already };
    },
  }),
);
