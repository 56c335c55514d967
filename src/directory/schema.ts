// The Directory's GraphQL types: sections, rows, tools with their contracts and events, and the links
// an issued token carries. Its root query fields: listing-schema.ts; its joins from recorded events back
// to rows and contracts: recorded-schema.ts.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder } from '../graphql/builder.ts';
import type { GraphQLResolveInfo } from 'graphql';
import type { Context } from '../graphql/context.ts';
import { nodeIdField, registerNode } from '../graphql/node.ts';
import { IssuedTokenRef } from '../auth/schema.ts';
import { badInput } from '../errors.ts';
import { decodeCursor } from '../ledger/cursor.ts';
import { parseFilter } from '../ledger/filter.ts';
import { pageSize, toPage } from '../ledger/reads.ts';
import { withoutNulls } from '../graphql/without-nulls.ts';
import { describedValues } from '../graphql/enum-values.ts';
import { LedgerEventConnectionRef, LedgerFilterRef } from '../ledger/read-schema.ts';
import { plannedEvents } from '../ledger/schema.ts';
import { ledgerScope, scopedFilter } from '../ledger/read-scope.ts';
import { ContractShapes, contractSha256 as sha, shapeOf, secretNamesIn, type Contract, type ContractShape } from './contracts.ts';
import type { StoredWay } from './directory.ts';
import { CredentialPlaces, credentialWords, formParts, type FormParts } from './form-parts.ts';
import { ContractForms, exampleArgs, FormNames, LinkForms, renderForms, type ContractForm, type LinkForm } from './forms.ts';
import { loadBatched } from '../graphql/loader.ts';
import { eventsReadAhead, type ToolRow } from './tool-reads.ts';
import { exactToolNames, linkDoor, liveLinks } from './links.ts';
import { eventsForTools } from './tool-events.ts';
import { describeProblem, type SectionProblem } from './sections.ts';

const formDescriptions: Record<ContractForm, string> = {
  REST: 'POST /api/tools/NAME with the args as the JSON body.',
  URL: 'GET /api/tools/NAME with the args in the query string.',
  DISPATCH: 'POST /api/dispatch with the canonical call.',
  DRY_RUN: 'POST /api/dispatch with dryRun: true: rendered and checked, not sent.',
  GRAPHQL_HTTP: 'The dispatch mutation, sent to /graphql over HTTP.',
  GRAPHQL_WS: 'A JavaScript snippet sending the dispatch mutation over graphql-ws.',
  GRAPHQL_SSE: 'The dispatch mutation on /graphql, answered as Server-Sent Events.',
  MCP_HTTP: 'An MCP tools/call on /mcp (streamable HTTP).',
  MCP_STDIO: 'An MCP tools/call to `dirledger mcp` over stdio.',
  MCP_CLIENT_CONFIG: 'A `claude mcp add` command and an mcpServers config for /mcp, then the tool to call.',
  CURL: 'A curl command line for POST /api/tools/NAME.',
  CLI: 'A `dirledger call` command line against this server.',
  HTTPIE: 'An HTTPie command line for POST /api/tools/NAME.',
  WEBHOOK: 'POST /hooks/NAME with the args as the JSON body.',
  JAVASCRIPT: 'A JavaScript fetch of POST /api/dispatch.',
  TYPESCRIPT: 'A TypeScript fetch of the typed dispatch mutation on /graphql (codegen from schema.graphql).',
  PYTHON: 'A Python urllib request to POST /api/dispatch.',
  GO: 'A Go net/http program calling POST /api/dispatch.',
  IN_PROCESS: "A TypeScript line calling this server's dispatcher in process; it needs no token.",
  SDK: 'A call through the dirledger/client package (client.tools.NAME).',
  NPX: 'A `dirledger call` command line run through npx, with nothing installed.',
  SSH: 'A `dirledger call` command line run on the server host over ssh.',
  APPLE_SHORTCUT: 'The settings of an Apple Shortcuts "Get Contents of URL" action for POST /api/tools/NAME.',
  WEBSOCKET: 'A JavaScript snippet calling over WS /api/ws, the token in its first message.',
  SSE: 'POST /api/dispatch with accept: text/event-stream: the result as Server-Sent Events.',
  POWERSHELL: 'A PowerShell Invoke-RestMethod for POST /api/tools/NAME.',
  UPSTREAM: "The outside service's own contract, called directly with its own secrets.",
  LINK_URL: 'GET /api/tools/NAME with the args and the token in the URL: one line, nothing else needed.',
  LINK_REST: 'POST /api/tools/NAME?token=…: a curl line with no Authorization header.',
  LINK_MCP: 'An mcpServers config for /mcp?token=…, which carries the token.',
};

export const ContractFormEnum = builder.enumType('ContractForm', {
  description:
    'The forms the contract writer renders from the canonical call {"tool": NAME, "args": {...}}. UPSTREAM only for rows that wrap an outside service; LINK_URL, LINK_REST and LINK_MCP only with a live scoped token, which they carry.',
  values: describedValues(FormNames, formDescriptions),
});
export const ContractShapeEnum = builder.enumType('ContractShape', {
  description:
    'HTTP {method, url, headers, body}; MCP {method: "MCP", server, headers, tool, arguments}; CLI {method: "CLI", command}; SEQUENCE an array of those run in order; CODE {method: "CODE", language, code}.',
  values: describedValues(ContractShapes, {
    HTTP: 'An HTTP request: {method, url, headers, body}.',
    MCP: 'An MCP tools/call: {method: "MCP", server, headers, tool, arguments}; the server a URL or a stdio command.',
    CLI: 'A command line: {method: "CLI", command}, run without a shell.',
    SEQUENCE: 'An array of the other shapes, run in order.',
    CODE: 'Code to paste: {method: "CODE", language, code}; the runner never sends it.',
  }),
});
export const DirectorySectionStatusEnum = builder.enumType('DirectorySectionStatus', {
  description: "Whether a section's live version is its file as it is now.",
  values: {
    OK: { description: 'Built from the file as it is now.' },
    STALE: { description: 'The file as it is now failed validation; the previous version stays live.' },
    FAILED: { description: 'The file has never built; none of its rows are live.' },
  } as const,
});

type ContractShapeOut = {
  form: ContractForm | null;
  way: string | null;
  shape: ContractShape;
  door: string | null;
  json: Contract;
  text: string | null;
  secretNames: string[];
};

const CredentialPlaceEnum = builder.enumType('CredentialPlace', {
  description: 'Where a form puts the credential.',
  values: describedValues(CredentialPlaces, credentialWords),
});
const ContractPartsRef = builder.objectRef<FormParts>('ContractParts').implement({
  description:
    'What varies between the forms of one canonical call: where it is sent, where the credential goes, how the name and arguments are wrapped. The name and arguments themselves are the same in every form.',
  fields: (t) => ({
    sentTo: t.exposeString('sentTo', { description: 'Where the call is sent (the door).' }),
    credentialPlace: t.expose('credentialPlace', {
      type: CredentialPlaceEnum,
      description: 'Where the credential goes, as a value to compare; `credential` says it in words.',
    }),
    credential: t.exposeString('credential', { description: 'Where the credential goes, in words (secrets as [NAME]).' }),
    wrapping: t.exposeString('wrapping', { description: 'How the tool name and arguments are wrapped.' }),
  }),
});

export const ContractRef = builder.objectRef<ContractShapeOut>('Contract').implement({
  description:
    'One runnable contract. Credentials appear only as [SECRET_NAME] (the bearer token as [DIRLEDGER_TOKEN]); values are substituted by the runner into the outgoing request, never here. The LINK_* forms are the exception: each carries the scoped token it was rendered for.',
  fields: (t) => ({
    form: t.expose('form', { type: ContractFormEnum, nullable: true, description: 'The rendered form; null for a way column of the row.' }),
    way: t.exposeString('way', { nullable: true, description: 'The way column this contract came from (e.g. "way: http").' }),
    shape: t.expose('shape', { description: 'Which kind of call the contract is (HTTP, MCP, CLI, SEQUENCE, CODE).', type: ContractShapeEnum }),
    door: t.exposeString('door', { nullable: true, description: 'The door the form needs.' }),
    json: t.expose('json', { description: 'The contract as canonical JSON (secrets as [NAMES], never values).', type: 'JSON' }),
    text: t.exposeString('text', { nullable: true, description: 'Pasteable text, where it helps.' }),
    secretNames: t.exposeStringList('secretNames', { description: 'Secret names the contract uses, bound at run time from DIRLEDGER_SECRET_<NAME>.' }),
    sha256: t.string({ description: 'SHA-256 of the canonical JSON: the identity a ledger event records.', resolve: (c) => sha(c.json) }),
    parts: t.field({
      type: ContractPartsRef,
      nullable: true,
      description: 'For a rendered form, the parts that vary between forms; null for a way column of the row.',
      resolve: (c) => (c.form ? formParts(c.form, c.secretNames) : null),
    }),
  }),
});

type Problem = SectionProblem & { text?: string };
const DirectoryProblemRef = builder.objectRef<Problem>('DirectoryProblem').implement({
  description: 'Why a section (or a row of it) was not built: the section, row and column, and what was expected.',
  fields: (t) => ({
    section: t.exposeString('section', { description: "The section file's type." }),
    row: t.exposeInt('row', { description: 'The 1-based data row at fault, when one is.', nullable: true }),
    column: t.exposeString('column', { description: 'The column (header) at fault, when one is.', nullable: true }),
    message: t.exposeString('message', { description: 'The problem in words: what was expected and what the file holds.' }),
    text: t.string({ description: 'The offending text as written (shortened).', resolve: (p) => p.text ?? describeProblem(p) }),
  }),
});
type Refusal = { row: number; name: string; column: string; reason: string };
const DirectoryRefusalRef = builder.objectRef<Refusal>('DirectoryRefusal').implement({
  description: 'A row refused at build (it reaches the retired build), with the reason.',
  fields: (t) => ({
    row: t.exposeInt('row', { description: 'The 1-based data row.' }),
    name: t.exposeString('name', { description: "The row's name." }),
    column: t.exposeString('column', { description: 'The column whose value was refused.' }),
    reason: t.exposeString('reason', { description: 'Why the row was left out of the live version.' }),
  }),
});

export const DirectorySectionRef = builder.prismaObject('DirectorySection', {
  description: 'One section file (one per type) and the version of it that is live.',
  fields: (t) => ({
    type: t.exposeString('type', { description: "The section's type (the file's name without its extension)." }),
    file: t.exposeString('file', { description: "The file's name in the Directory folder." }),
    versionTag: t.exposeString('versionTag', { nullable: true, description: "SHA-256 of the live version's bytes." }),
    builtAt: t.expose('builtAt', { description: 'When the live version was built (UTC); null when it never built.', type: 'DateTime', nullable: true }),
    status: t.expose('status', { description: 'Whether the live version is the file as it is now.', type: DirectorySectionStatusEnum }),
    seenTag: t.exposeString('seenTag', { description: 'SHA-256 of the file as last read.' }),
    seenAt: t.expose('seenAt', { description: 'When the file was last read (UTC).', type: 'DateTime' }),
    errors: t.field({
      description: 'Why the file as it is now failed validation (empty when it built).',
      type: [DirectoryProblemRef],
      resolve: (s) => s.errors as Problem[],
    }),
    refusals: t.field({
      description: 'Rows left out of the live version, each with why.',
      type: [DirectoryRefusalRef],
      resolve: (s) => s.refusals as Refusal[],
    }),
    unknownHeaders: t.exposeStringList('unknownHeaders', { description: 'Headers nobody recognises: reported, never guessed at.' }),
    headers: t.exposeStringList('headers', { description: "The file's column headers, as written." }),
    rowCount: t.exposeInt('rowCount', { description: 'Rows in the live version.' }),
    builds: t.exposeInt('builds', { description: 'How many times this section was (re)built.' }),
  }),
});

const isTool = (row: { type: string; ways: unknown }) => row.type === 'tool' || Object.keys((row.ways as object) ?? {}).length > 0;

export const DirectoryRowRef = builder.prismaInterface('DirectoryRow', {
  name: 'DirectoryRow',
  description: 'One row of the Directory, as of its section’s live version.',
  fields: (t) => ({
    name: t.exposeString('name', { description: "The row's name: what a caller names it by (unique within its type)." }),
    type: t.exposeString('type', { description: "The row's type: its section's name (tool, model, credential, skill…)." }),
    kind: t.exposeString('kind', { description: "The row's kind column (free text, e.g. builtin, api); null when empty.", nullable: true }),
    id: t.exposeString('rowId', { nullable: true, description: "The row's own id column." }),
    description: t.exposeString('description', { description: "The row's description column: what it is for, in words." }),
    section: t.relation('section', { description: 'The section (file) the row comes from.' }),
  }),
  resolveType: (row) => (isTool(row) ? 'Tool' : 'Entry'),
});

export async function contractsBySha(ctx: Context, sha256: string): Promise<{ shape: string; contract: unknown } | undefined> {
  // In memory: no batch to wait for (the batch waits a turn of the event loop for its other keys).
  return (
    ctx.services.directory.contractInMemory(sha256) ?? loadBatched(ctx, 'contract_version', sha256, (keys) => ctx.services.directory.contractsByHash(keys))
  );
}

const formsArg = { description: 'Which forms (default: every form that applies).' };

export const ToolRef = builder.prismaObject('DirectoryRow', {
  variant: 'Tool',
  interfaces: [DirectoryRowRef],
  description: 'A row that holds at least one runnable contract (every row of the tool section is a Tool).',
  fields: (t) => ({
    argsSchema: t.expose('argsSchema', { type: 'JSON', nullable: true, description: 'JSON Schema of the arguments.' }),
    runnable: t.exposeBoolean('runnable', { description: 'True when at least one contract can run now (every secret it names is bound).' }),
    reasons: t.exposeStringList('reasons', { description: 'Why the row is not runnable (empty when it is).' }),
    secretNames: t.exposeStringList('secretNames', { description: 'Secret names its contracts use.' }),
    unboundSecrets: t.exposeStringList('unboundSecrets', { description: 'Of those, the names not bound in the secret registry.' }),
    text: t.expose('text', { type: 'JSON', description: 'Free-text columns, label → text.' }),
    ways: t.field({
      type: [ContractRef],
      description: "The row's own way columns, each one contract.",
      resolve: async (row, _args, ctx) => {
        const ways = Object.values(row.ways as Record<string, StoredWay>);
        const found = await Promise.all(ways.map((w) => contractsBySha(ctx, w.sha256)));
        return ways.map((w, i) => {
          const json = found[i]!.contract as Contract;
          return { form: null, way: w.header, shape: w.shape, door: null, json, text: null, secretNames: secretNamesIn(json) };
        });
      },
    }),
    upstream: t.field({
      type: ContractRef,
      nullable: true,
      description: "For a row wrapping an outside service: that service's own call.",
      resolve: async (row, _args, ctx) => {
        if (!row.upstreamSha256) return null;
        const json = (await contractsBySha(ctx, row.upstreamSha256))!.contract as Contract;
        return {
          form: 'UPSTREAM' as const,
          way: null,
          shape: shapeOf(json),
          door: 'the outside service itself',
          json,
          text: null,
          secretNames: secretNamesIn(json),
        };
      },
    }),
    contracts: t.field({
      type: [ContractRef],
      description: 'The forms rendered from the canonical call {"tool": NAME, "args": ARGS}; ARGS defaults to an example built from the args schema.',
      args: {
        forms: t.arg({ type: [ContractFormEnum], ...formsArg }),
        args: t.arg({ type: 'JSON', description: 'The arguments to write into every form.' }),
        token: t.arg.string({
          description:
            'A scoped token to render the credential-free links with (LINK_URL, LINK_REST, LINK_MCP, appended): it must verify now, allow this tool and have uses left, else the error says which.',
        }),
      },
      resolve: async (row, args, ctx) => {
        const callArgs = args.args ?? exampleArgs(row.argsSchema);
        if (!callArgs || typeof callArgs !== 'object' || Array.isArray(callArgs)) throw badInput('Invalid args: expected a JSON object of arguments');
        const asked = args.forms ?? [...ContractForms, ...(args.token ? LinkForms : [])];
        const links = asked.filter((f): f is LinkForm => (LinkForms as readonly string[]).includes(f));
        if (links.length && !args.token) throw badInput(`Invalid forms: ${links.join(', ')} need a token (the token argument) to carry`, { field: 'token' });
        const live = args.token && links.length ? await liveLinks(ctx, args.token, row.name, links) : [];
        const upstream = row.upstreamSha256 ? ((await contractsBySha(ctx, row.upstreamSha256))?.contract as Contract | undefined) : undefined;
        return renderForms(
          { tool: row.name, args: callArgs as Record<string, unknown> },
          { baseUrl: ctx.services.publicUrl, ...(upstream ? { upstream } : {}), ...(args.token ? { linkToken: args.token } : {}) },
          asked.filter((f) => !links.includes(f as LinkForm) || live.includes(f as LinkForm)),
        ).map((f) => ({ ...f, way: null }));
      },
    }),
    events: t.field({
      type: LedgerEventConnectionRef,
      description: "Every ledger event with this tool name, in position order: from a capability to its uses. A task-scoped token sees only its task's.",
      args: {
        first: t.arg.int({ description: 'How many events (default 50, at most 500).' }),
        after: t.arg.string({ description: 'A cursor from an earlier page (its endCursor): events after it.' }),
        filter: t.arg({ description: "Narrows the tool's events further.", type: LedgerFilterRef }),
      },
      resolve: async (row, args, ctx, info) => {
        const take = pageSize(args.first);
        const ahead = (row as ToolRow)[eventsReadAhead];
        if (ahead) return toPage(ahead as { position: bigint }[], take, args.after ?? undefined) as never;
        const after = args.after ? decodeCursor(args.after) : null;
        const filter = scopedFilter(parseFilter(withoutNulls(args.filter ?? {})), await ledgerScope(ctx, 'Tool.events'));
        const selection = plannedEvents(ctx, info, ['edges', 'node'], ['position', 'tool']);
        const key = JSON.stringify({ take, after: after?.toString() ?? null, filter, selection: selection.id });
        const rows = await loadBatched(ctx, `tool-events:${key}`, row.name, (names) => eventsForTools(ctx, names, take, after, filter, selection));
        return toPage((rows ?? []) as { position: bigint }[], take, args.after ?? undefined) as never;
      },
    }),
  }),
});

builder.objectFields(IssuedTokenRef, (t) => ({
  links: t.field({
    type: [ContractRef],
    description:
      "The credential-free links (LINK_URL, LINK_REST, LINK_MCP) for each tool its `tools` caveat names exactly, with the token inside and the tool's example args; links through a door the token may not use are left out.",
    resolve: async (issued, _args, ctx) => {
      const names = exactToolNames(issued.caveats);
      if (names.length === 0) return [];
      const rows = await ctx.services.db.prisma.directoryRow.findMany({ where: { name: { in: names } }, orderBy: { type: 'asc' } });
      const { authority } = ctx.services;
      return names.flatMap((name) => {
        const row = ctx.services.directory.rowMeant(rows, name, 'tool');
        if (!row) return [];
        const links = LinkForms.filter((form) => {
          const checked = authority.authenticate(issued.token, linkDoor[form]);
          return checked.ok ? !authority.allowsTool(checked.grant, linkDoor[form], name) : checked.refusal.limit !== 'doors';
        });
        return renderForms({ tool: name, args: exampleArgs(row.argsSchema) }, { baseUrl: ctx.services.publicUrl, linkToken: issued.token }, links).map((f) => ({
          ...f,
          way: null,
        }));
      });
    },
  }),
}));

const EntryRef = builder.prismaObject('DirectoryRow', {
  variant: 'Entry',
  interfaces: [DirectoryRowRef],
  description: 'A row with no contract: an article, credential, flow, task, file, variable…',
  fields: (t) => ({
    text: t.expose('text', { type: 'JSON', description: 'Free-text columns, label → text.' }),
  }),
});

type RowKey = { type: string; name: string };
const rowKey = (row: RowKey) => `${row.type}:${row.name}`;

/** A row by "type:name" as a Tool or an Entry, null when it is the other kind; the Directory is readable by any caller that reaches GraphQL, as row(name:, type:) is. */
function rowNode(variant: 'Tool' | 'Entry') {
  return async (id: string, ctx: Context, info: GraphQLResolveInfo) => {
    const colon = id.indexOf(':');
    const where = { type_name: { type: id.slice(0, colon), name: id.slice(colon + 1) } };
    const row = await ctx.services.db.prisma.directoryRow.findUnique({ ...queryFromInfo({ context: ctx, info, typeName: variant }), where });
    return row && isTool(row) === (variant === 'Tool') ? row : null;
  };
}

for (const [ref, variant] of [
  [ToolRef, 'Tool'],
  [EntryRef, 'Entry'],
] as const) {
  builder.prismaObjectField(ref, 'nodeId', (t) => t.field({ ...nodeIdField<RowKey>(variant, rowKey), select: { type: true, name: true } }));
  registerNode(ref, rowNode(variant));
}
