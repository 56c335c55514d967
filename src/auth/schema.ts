// GraphQL: issuing and reading tokens. issueToken needs the issue power (an admin token has it);
// inspectToken reads what anyone holding a token can read: its id and its limits in words.
import { DomainError, ErrorCode } from '../errors.ts';
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import { currentInvocation, eventFields } from '../capture/context.ts';
import { inspect, type Grant } from './authority.ts';
import { AuthDoors, Powers, ReadScopes, type AuthDoor } from './caveats.ts';
import { checkOfflineGrant, GrantRefused, grantEvent, type GrantRecord } from './grants.ts';
import { MalformedToken } from './macaroon.ts';

export const AuthDoorEnum = builder.enumType('AuthDoor', {
  description: 'A door a token may be limited to.',
  values: AuthDoors,
});
const ReadScopeEnum = builder.enumType('ReadScope', {
  description: "What a token's holder may read of the ledger: nothing, its own task's events, or everything.",
  values: ReadScopes.map((s) => s.toUpperCase()) as ['NONE', 'TASK', 'ALL'],
});
const PowerEnum = builder.enumType('Power', {
  description: 'What a token may do besides reading: call tools, append ledger batches, issue tokens.',
  values: Powers.map((p) => p.toUpperCase()) as ['CALL', 'INGEST', 'ISSUE'],
});

const IssueTokenInput = builder.inputType('IssueTokenInput', {
  description: 'The limits of the new token; each becomes one caveat. Omitted limits are not added.',
  fields: (t) => ({
    tools: t.stringList({ required: false, description: 'Tool names; a trailing * is a prefix.' }),
    doors: t.field({ type: [AuthDoorEnum], required: false }),
    uses: t.int({ required: false, description: 'How many calls, counted across every token narrowed from this one.' }),
    notBefore: t.field({ type: 'DateTime', required: false }),
    expires: t.field({ type: 'DateTime', required: false }),
    task: t.string({ required: false, description: 'Every call made with the token is filed under this task.' }),
    agent: t.string({ required: false, description: 'Every call made with the token is recorded as this agent.' }),
    folders: t.stringList({ required: false, description: 'File rows and path arguments only inside these folders.' }),
    audience: t.string({ required: false, description: 'Only at the server whose AUTH_AUDIENCE is this.' }),
    read: t.field({ type: ReadScopeEnum, required: false }),
    powers: t.field({ type: [PowerEnum], required: false, description: 'Omitted: every power the issuer may grant.' }),
    collectors: t.stringList({ required: false, description: 'Collector ids whose batches (and positions) the token may append; a trailing * is a prefix.' }),
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

type Inspection = { tokenId: string | null; caveats: string[]; limits: string[]; valid: boolean; uses: { caveat: string; used: number; max: number }[] | null };
const TokenUseRef = builder.objectRef<{ caveat: string; used: number; max: number }>('TokenUse').implement({
  description: 'Uses taken under one `uses <= N` caveat.',
  fields: (t) => ({ caveat: t.exposeString('caveat'), used: t.exposeInt('used'), max: t.exposeInt('max') }),
});
const TokenInspectionRef = builder.objectRef<Inspection>('TokenInspection').implement({
  description: "What anyone can read of a token: its id and limits. `valid` and `uses` only say whether this server's key signed it.",
  fields: (t) => ({
    tokenId: t.exposeString('tokenId', { nullable: true }),
    caveats: t.exposeStringList('caveats'),
    limits: t.exposeStringList('limits'),
    valid: t.exposeBoolean('valid', { description: 'This server signed it and it is usable now (not expired, not for another audience).' }),
    uses: t.field({ type: [TokenUseRef], nullable: true, description: 'Per `uses` caveat, the uses spent so far (when valid).', resolve: (i) => i.uses }),
  }),
});

const doorOfCaller = { WS: 'GRAPHQL_WS', SSE: 'GRAPHQL_SSE', HTTP: 'GRAPHQL', IN_PROCESS: 'GRAPHQL' } as const satisfies Record<string, AuthDoor>;

/** The caller's grant; with AUTHORITY=off every caller acts as admin. */
function grantOf(ctx: Context): Grant {
  if (ctx.grant) return ctx.grant;
  const admin = ctx.services.authority.authenticate(ctx.services.authority.mintToken(), 'GRAPHQL');
  if (!admin.ok) throw new Error('a freshly minted admin token did not verify');
  return admin.grant;
}

builder.mutationField('issueToken', (t) =>
  t.field({
    type: IssuedTokenRef,
    description: 'Issues a scoped token (needs the issue power). A token issued by a non-admin token also carries every limit of its issuer but powers and uses.',
    args: { input: t.arg({ type: IssueTokenInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const door = doorOfCaller[ctx.caller.door];
      const grant = grantOf(ctx);
      const plain = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined));
      if (plain.read) plain.read = String(plain.read).toLowerCase();
      if (plain.powers) plain.powers = (plain.powers as string[]).map((p) => p.toLowerCase());
      const issued = ctx.services.authority.issue(grant, door, plain);
      if (!issued.ok) {
        if ('invalid' in issued) throw new DomainError(ErrorCode.BAD_INPUT, issued.invalid);
        await ctx.services.authority.record(issued.refusal, { actionId: crypto.randomUUID(), ...(grant.task && { task: grant.task }) });
        throw new DomainError(ErrorCode.FORBIDDEN, issued.refusal.message, { limit: issued.refusal.limit });
      }
      // On the record before it is handed out: a grant the ledger cannot take is not given.
      await recordGrant(ctx, { tokenId: issued.tokenId, caveats: issued.caveats, via: 'ISSUE', door, ...(ctx.grant && { issuer: ctx.grant }) });
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
  values: ['NARROW', 'ADMIN'] as const,
});

builder.mutationField('recordGrant', (t) =>
  t.field({
    type: TokenInspectionRef,
    description:
      'Records the grant of a token made offline (`dirledger token narrow|admin --url`): a GRANT event with its id, caveats and issuer (the bearer), never the token. NARROW needs a narrowing of the bearer token; ADMIN an admin token presenting itself.',
    args: { token: t.arg.string({ required: true }), via: t.arg({ type: GrantViaEnum, required: true }) },
    resolve: async (_root, { token, via }, ctx) => {
      const door = doorOfCaller[ctx.caller.door];
      let record: GrantRecord;
      try {
        record = checkOfflineGrant(ctx.services.authority, token, via, door, ctx.grant);
      } catch (error) {
        if (error instanceof GrantRefused) throw new DomainError(ErrorCode.BAD_INPUT, error.message, { field: 'token' });
        throw error;
      }
      await recordGrant(ctx, record);
      const checked = ctx.services.authority.authenticate(token, door);
      const valid = checked.ok || !['credential', 'not_before', 'expires'].includes(checked.refusal.limit);
      return { ...inspect(token), valid, uses: null };
    },
  }),
);

builder.queryField('inspectToken', (t) =>
  t.field({
    type: TokenInspectionRef,
    description: 'Lists the limits of a token, as anyone holding it can read them.',
    args: { token: t.arg.string({ required: true }) },
    resolve: async (_root, { token }, ctx) => {
      let read: ReturnType<typeof inspect>;
      try {
        read = inspect(token);
      } catch (error) {
        if (error instanceof MalformedToken) throw new DomainError(ErrorCode.BAD_INPUT, `Expected a dirledger token: ${error.message}.`, { field: 'token' });
        throw error;
      }
      const checked = ctx.services.authority.authenticate(token, doorOfCaller[ctx.caller.door]);
      // Signed here and inside its time window and audience; a door or tool caveat does not make it invalid.
      const valid = checked.ok || !['credential', 'not_before', 'expires'].includes(checked.refusal.limit);
      const uses = checked.ok ? await ctx.services.authority.usesOf(checked.grant) : null;
      return { ...read, valid, uses };
    },
  }),
);
