// GraphQL: the dispatch mutation (over HTTP, SSE and graphql-ws, wherever the schema is served).
// A GraphQL operation has no per-call HTTP exchange on graphql-ws, so the mutation records its own
// boundary: the canonical call IN and the result OUT, around the runner's call OUT / response IN.
import { captureCall, jsonAnswer } from '../capture/boundary.ts';
import { currentInvocation } from '../context/request.ts';
import type { Contract } from '../directory/contracts.ts';
import { loadBatched } from '../graphql/loader.ts';
import { ContractFormEnum } from '../directory/schema.ts';
import { builder } from '../graphql/builder.ts';
import { DispatchOutcomeEnum } from '../ledger/task-schema.ts';
import { LedgerEventRef } from '../ledger/schema.ts';
import { decodeJson, decodeText } from '../ledger/storable.ts';
import type { DispatchResult } from './result.ts';
import { CLIENT_ADDED_HEADERS, matchContract, type ContractDifference, type ContractMatch } from './match.ts';

const DispatchError = builder.objectRef<{ code: string; message: string }>('DispatchError').implement({
  description: 'Why a call was refused or failed: a SCREAMING_SNAKE code and a message saying what was expected and what arrived.',
  fields: (t) => ({
    code: t.exposeString('code', { description: 'SCREAMING_SNAKE code (e.g. NOT_FOUND, FORBIDDEN, UPSTREAM_ERROR).' }),
    message: t.exposeString('message', { description: 'What was expected and what arrived, in words; secret values are never shown.' }),
  }),
});

export const DispatchResultRef = builder.objectRef<DispatchResult>('DispatchResult');
DispatchResultRef.implement({
  description: 'The result of one dispatched call: secret values never appear in it (they read as [NAME]).',
  fields: (t) => ({
    tool: t.exposeString('tool', { description: "The Directory row's name that ran." }),
    actionId: t.exposeString('actionId', { description: 'The action id every ledger event of this call carries.' }),
    outcome: t.field({ description: 'How the call ended.', type: DispatchOutcomeEnum, resolve: (r) => r.outcome }),
    dryRun: t.exposeBoolean('dryRun', { description: 'True when nothing was sent (the rendered requests are in `requests`).' }),
    status: t.int({ nullable: true, description: 'Upstream HTTP status or CLI exit code, when there is one.', resolve: (r) => r.status ?? null }),
    output: t.field({ type: 'JSON', nullable: true, description: 'Parsed JSON when the answer is JSON, else its text.', resolve: (r) => r.output ?? null }),
    outputText: t.string({ nullable: true, description: 'The answer as text, when it is UTF-8.', resolve: (r) => r.outputText ?? null }),
    outputBase64: t.string({ nullable: true, description: 'The answer bytes as base64, when they are not UTF-8.', resolve: (r) => r.outputBase64 ?? null }),
    requests: t.field({
      type: ['JSON'],
      nullable: true,
      description: 'Dry run: the rendered request(s), secrets as [NAME].',
      resolve: (r) => r.requests ?? null,
    }),
    steps: t.field({ type: [DispatchResultRef], nullable: true, description: "A sequence: each step's own result.", resolve: (r) => r.steps ?? null }),
    error: t.field({ description: 'Why a REFUSED or ERROR call failed; null when OK.', type: DispatchError, nullable: true, resolve: (r) => r.error ?? null }),
  }),
});

builder.mutationField('dispatch', (t) =>
  t.field({
    type: DispatchResultRef,
    description: 'Runs a Directory tool with the canonical call {tool, args}; dryRun renders without sending.',
    args: {
      tool: t.arg.string({ description: 'The Directory row to run, by name.', required: true }),
      args: t.arg({ description: "The tool's arguments as a JSON object, checked against its args schema.", type: 'JSON', required: false }),
      dryRun: t.arg.boolean({ description: 'True: render the outgoing request(s) and record the dry run, send nothing.', required: false }),
      form: t.arg({ type: ContractFormEnum, required: false, description: 'The form the caller used, recorded on the events.' }),
    },
    resolve: async (_root, a, ctx) => {
      const args = (a.args ?? {}) as Record<string, unknown>;
      const door = ctx.caller.door;
      const form = a.form ?? (door === 'GRAPHQL_WS' ? 'GRAPHQL_WS' : door === 'GRAPHQL_SSE' ? 'GRAPHQL_SSE' : 'GRAPHQL_HTTP');
      const call = { tool: a.tool, args, ...(a.dryRun != null && { dryRun: a.dryRun }), form };
      const run = () => ctx.services.dispatcher.dispatch(call);
      if (currentInvocation()) return run();
      const request = { method: 'MUTATION', url: 'graphql:dispatch', headers: {}, body: Buffer.from(JSON.stringify(call)) };
      return captureCall(ctx.services, { door, tool: a.tool, request }, run, jsonAnswer);
    },
  }),
);

// ---- LedgerEvent.matchesContract: a recorded outbound call against its contract's rendering ----

const ContractDifferenceRef = builder.objectRef<ContractDifference>('ContractDifference').implement({
  description: "One part of a recorded call that differs from its contract's rendering; secrets read as [NAME] on both sides.",
  fields: (t) => ({
    part: t.exposeString('part', { description: '"method", "url", "header:NAME" (lower case), "body", or "contract" when the contract cannot be rendered.' }),
    expected: t.exposeString('expected', { nullable: true, description: 'What the contract renders to (null: absent).' }),
    recorded: t.exposeString('recorded', { nullable: true, description: 'What the ledger recorded (null: absent).' }),
  }),
});

const ContractMatchRef = builder.objectRef<ContractMatch>('ContractMatch').implement({
  description: 'Whether a recorded outbound call equals its contract rendered with the recorded args.',
  fields: (t) => ({
    matches: t.exposeBoolean('matches', { description: 'True when the call is exactly the contract with its arguments filled in.' }),
    differences: t.field({
      description: 'Each way the call differs from the contract (empty when it matches).',
      type: [ContractDifferenceRef],
      resolve: (m) => m.differences,
    }),
  }),
});

builder.prismaObjectFields(LedgerEventRef, (t) => ({
  matchesContract: t.field({
    type: ContractMatchRef,
    nullable: true,
    description:
      'Compares this outbound call with its contract rendered with the args the runner recorded (metadata.args), secrets as [NAME] on both sides, ' +
      `header names case-insensitive, headers the HTTP client adds itself ignored (${CLIENT_ADDED_HEADERS.join(', ')}). ` +
      'A call made by something other than the runner shows as not matching. Null when the event is not an outbound call or carries no contract identity.',
    select: { direction: true, method: true, url: true, headers: true, metadata: true, payloadState: true, payloadSha256: true, contractSha256: true },
    resolve: async (e, _a, ctx) => {
      if (e.direction !== 'OUT' || !e.method || !e.contractSha256) return null;
      const sha256 = e.contractSha256;
      const stored = await loadBatched(ctx, 'contract_version', sha256, (keys) => ctx.services.directory.contractsByHash(keys));
      const bytes =
        e.payloadSha256 && (e.payloadState === 'COMPLETE' || e.payloadState === 'PARTIAL') ? await ctx.services.ledger.readBlob(e.payloadSha256) : null;
      const args = (decodeJson(e.metadata) as Record<string, unknown> | null)?.args;
      return matchContract(
        stored?.contract as Contract | undefined,
        args,
        {
          method: e.method,
          url: e.url && decodeText(e.url),
          headers: decodeJson(e.headers) as Record<string, unknown> | null,
          body: bytes ? bytes.toString('utf8') : null,
        },
        sha256,
        ctx.services.publicUrl,
      );
    },
  }),
}));
