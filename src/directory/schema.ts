// The Directory's GraphQL types and the root fields that return them, and its joins with the Ledger.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { cursorToOffset, resolveOffsetConnection } from '@pothos/plugin-relay';
import { getArgumentValues } from 'graphql/execution/values.js';
import type { GraphQLObjectType, GraphQLResolveInfo } from 'graphql';
import { selectedFields } from '../graphql/selection.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import type { Grant } from '../auth/authority.ts';
import { parseCaveat, toolAllowed } from '../auth/caveats.ts';
import type { Door } from '../context/door.ts';
import { IssuedTokenRef } from '../auth/schema.ts';
import { badInput, DomainError, ErrorCode } from '../errors.ts';
import { decodeCursor } from '../ledger/cursor.ts';
import { filterConditions, planEventSelect, runRead, SqlParams, type EventQuery } from '../ledger/event-select.ts';
import { filterSql, parseFilter, type LedgerFilter } from '../ledger/filter.ts';
import { pageSize, toPage } from '../ledger/reads.ts';
import { LedgerEventConnectionRef, LedgerEventRef, LedgerFilterRef, withoutNulls } from '../ledger/schema.ts';
import { ledgerScope, ledgerScopeNow, scopedFilter } from '../ledger/read-scope.ts';
import { ContractShapes, contractSha256 as sha, shapeOf, secretNamesIn, type Contract, type ContractShape } from './contracts.ts';
import type { StoredWay } from './directory.ts';
import { ContractForms, exampleArgs, FormNames, LinkForms, renderForms, type ContractForm, type LinkForm } from './forms.ts';
import { loadBatched } from '../graphql/loader.ts';
import { eventsReadAhead, readTools, type Ahead, type ToolRow } from './tool-reads.ts';
import { describeProblem, type SectionProblem } from './sections.ts';

export const ContractFormEnum = builder.enumType('ContractForm', {
  description:
    'The forms the contract writer renders from the canonical call {"tool": NAME, "args": {...}}. UPSTREAM only for rows that wrap an outside service; LINK_URL, LINK_REST and LINK_MCP only with a live scoped token, which they carry.',
  values: FormNames,
});
export const ContractShapeEnum = builder.enumType('ContractShape', {
  description:
    'HTTP {method, url, headers, body}; MCP {method: "MCP", server, headers, tool, arguments}; CLI {method: "CLI", command}; SEQUENCE an array of those run in order; CODE {method: "CODE", language, code}.',
  values: ContractShapes,
});
export const DirectorySectionStatusEnum = builder.enumType('DirectorySectionStatus', {
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

export const ContractRef = builder.objectRef<ContractShapeOut>('Contract').implement({
  description:
    'One runnable contract. Credentials appear only as [SECRET_NAME] (the bearer token as [DIRLEDGER_TOKEN]); values are substituted by the runner into the outgoing request, never here. The LINK_* forms are the exception: each carries the scoped token it was rendered for.',
  fields: (t) => ({
    form: t.expose('form', { type: ContractFormEnum, nullable: true, description: 'The rendered form; null for a way column of the row.' }),
    way: t.exposeString('way', { nullable: true, description: 'The way column this contract came from (e.g. "way: http").' }),
    shape: t.expose('shape', { type: ContractShapeEnum }),
    door: t.exposeString('door', { nullable: true, description: 'The door the form needs.' }),
    json: t.expose('json', { type: 'JSON' }),
    text: t.exposeString('text', { nullable: true, description: 'Pasteable text, where it helps.' }),
    secretNames: t.exposeStringList('secretNames'),
    sha256: t.string({ description: 'sha256 of the canonical JSON: the identity a ledger event records.', resolve: (c) => sha(c.json) }),
  }),
});

type Problem = SectionProblem & { text?: string };
const DirectoryProblemRef = builder.objectRef<Problem>('DirectoryProblem').implement({
  description: 'Why a section (or a row of it) was not built: the section, row and column, and what was expected.',
  fields: (t) => ({
    section: t.exposeString('section'),
    row: t.exposeInt('row', { nullable: true }),
    column: t.exposeString('column', { nullable: true }),
    message: t.exposeString('message'),
    text: t.string({ resolve: (p) => p.text ?? describeProblem(p) }),
  }),
});
type Refusal = { row: number; name: string; column: string; reason: string };
const DirectoryRefusalRef = builder.objectRef<Refusal>('DirectoryRefusal').implement({
  description: 'A row refused at build (it reaches the retired build), with the reason.',
  fields: (t) => ({
    row: t.exposeInt('row'),
    name: t.exposeString('name'),
    column: t.exposeString('column'),
    reason: t.exposeString('reason'),
  }),
});

export const DirectorySectionRef = builder.prismaObject('DirectorySection', {
  description: 'One section file (one per type) and the version of it that is live.',
  fields: (t) => ({
    type: t.exposeString('type'),
    file: t.exposeString('file'),
    versionTag: t.exposeString('versionTag', { nullable: true, description: "sha256 of the live version's bytes." }),
    builtAt: t.expose('builtAt', { type: 'DateTime', nullable: true }),
    status: t.expose('status', { type: DirectorySectionStatusEnum }),
    seenTag: t.exposeString('seenTag', { description: 'sha256 of the file as last read.' }),
    seenAt: t.expose('seenAt', { type: 'DateTime' }),
    errors: t.field({ type: [DirectoryProblemRef], resolve: (s) => s.errors as Problem[] }),
    refusals: t.field({ type: [DirectoryRefusalRef], resolve: (s) => s.refusals as Refusal[] }),
    unknownHeaders: t.exposeStringList('unknownHeaders', { description: 'Headers nobody recognises: reported, never guessed at.' }),
    headers: t.exposeStringList('headers'),
    rowCount: t.exposeInt('rowCount'),
    builds: t.exposeInt('builds', { description: 'How many times this section was (re)built.' }),
  }),
});

/** Tool.events as the query asks for it under this field, when it can be read ahead. */
function toolEventsAhead(ctx: Context, info: GraphQLResolveInfo): Ahead | undefined {
  const scope = ledgerScopeNow(ctx);
  const nodes = selectedFields(info, 'events');
  if (scope.kind === 'none' || nodes.length !== 1) return undefined;
  try {
    const def = (info.schema.getType('Tool') as GraphQLObjectType).getFields().events!;
    const args = getArgumentValues(def, nodes[0]!, info.variableValues) as { first?: number | null; after?: string | null; filter?: unknown };
    const plan = planEventSelect(queryFromInfo({ context: ctx, info, path: ['events', 'edges', 'node'] }) as EventQuery, ['position', 'tool']);
    if (!plan) return undefined;
    return {
      take: pageSize(args.first),
      after: args.after ? decodeCursor(args.after) : null,
      filter: scopedFilter(parseFilter(withoutNulls(args.filter ?? {})), scope),
      plan,
    };
  } catch {
    return undefined; // bad arguments: Tool.events reads its own page and answers with the error there
  }
}

const isTool = (row: { type: string; ways: unknown }) => row.type === 'tool' || Object.keys((row.ways as object) ?? {}).length > 0;

export const DirectoryRowRef = builder.prismaInterface('DirectoryRow', {
  name: 'DirectoryRow',
  description: 'One row of the Directory, as of its section’s live version.',
  fields: (t) => ({
    name: t.exposeString('name'),
    type: t.exposeString('type'),
    kind: t.exposeString('kind', { nullable: true }),
    id: t.exposeString('rowId', { nullable: true, description: "The row's own id column." }),
    description: t.exposeString('description'),
    section: t.relation('section'),
  }),
  resolveType: (row) => (isTool(row) ? 'Tool' : 'Entry'),
});

async function contractsBySha(ctx: Context, sha256: string): Promise<{ shape: string; contract: unknown } | undefined> {
  return loadBatched(ctx, 'contract_version', sha256, (keys) => ctx.services.directory.contractsByHash(keys));
}

const formsArg = { description: 'Which forms (default: every form that applies).' };

export const ToolRef = builder.prismaObject('DirectoryRow', {
  variant: 'Tool',
  interfaces: [DirectoryRowRef],
  description: 'A row that holds at least one runnable contract (every row of the tool section is a Tool).',
  fields: (t) => ({
    argsSchema: t.expose('argsSchema', { type: 'JSON', nullable: true, description: 'JSON Schema of the arguments.' }),
    runnable: t.exposeBoolean('runnable'),
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
      args: { first: t.arg.int(), after: t.arg.string(), filter: t.arg({ type: LedgerFilterRef }) },
      resolve: async (row, args, ctx, info) => {
        const take = pageSize(args.first);
        const ahead = (row as ToolRow)[eventsReadAhead];
        if (ahead) return toPage(ahead as { position: bigint }[], take, args.after ?? undefined) as never;
        const after = args.after ? decodeCursor(args.after) : null;
        const filter = scopedFilter(parseFilter(withoutNulls(args.filter ?? {})), await ledgerScope(ctx, 'Tool.events'));
        const query = queryFromInfo({ context: ctx, info, path: ['edges', 'node'] });
        const key = JSON.stringify({ take, after: after?.toString() ?? null, filter });
        const rows = await loadBatched(ctx, `tool-events:${key}`, row.name, (names) => eventsForTools(ctx, names, take, after, filter, query));
        return toPage((rows ?? []) as { position: bigint }[], take, args.after ?? undefined) as never;
      },
    }),
  }),
});

/** The door each link comes in through. */
const linkDoor = { LINK_URL: 'URL', LINK_REST: 'REST', LINK_MCP: 'MCP' } as const satisfies Record<LinkForm, Door>;

/**
 * The links a scoped token may be rendered into for one tool: those whose door it verifies at now
 * (signature, time window, audience, doors), when it may call the tool and has uses left. Throws
 * UNAUTHENTICATED or FORBIDDEN saying which check failed.
 */
async function liveLinks(ctx: Context, token: string, tool: string, links: readonly LinkForm[]): Promise<LinkForm[]> {
  const { authority } = ctx.services;
  let grant: Grant | undefined;
  let refused: { message: string; limit: string; status: number } | undefined;
  const live: LinkForm[] = [];
  for (const form of links) {
    const checked = authority.authenticate(token, linkDoor[form]);
    if (!checked.ok) {
      refused ??= checked.refusal;
      continue;
    }
    const tools = authority.allowsTool(checked.grant, linkDoor[form], tool);
    if (tools) {
      refused ??= tools;
      continue;
    }
    grant = checked.grant;
    live.push(form);
  }
  if (!grant) {
    if (!refused || refused.status === 401)
      throw new DomainError(ErrorCode.UNAUTHENTICATED, `Invalid token: it does not verify at this server. ${refused?.message ?? ''}`.trim(), {
        field: 'token',
      });
    throw new DomainError(ErrorCode.FORBIDDEN, `The token cannot link ${JSON.stringify(tool)}: ${refused.message}`, { field: 'token', limit: refused.limit });
  }
  const spent = (await authority.usesOf(grant)).find((u) => u.used >= u.max);
  if (spent)
    throw new DomainError(ErrorCode.FORBIDDEN, `The token cannot link ${JSON.stringify(tool)}: all ${spent.max} of its uses are spent (${spent.caveat}).`, {
      field: 'token',
      limit: 'uses',
    });
  return live;
}

/** The tool names a token's `tools` caveats name exactly (no prefix) and every one of them allows. */
function exactToolNames(caveats: readonly string[]): string[] {
  const lists = caveats.flatMap((text) => {
    try {
      const caveat = parseCaveat(text);
      return caveat.kind === 'tools' ? [caveat.names] : [];
    } catch {
      return [];
    }
  });
  const names = new Set(lists.flat().filter((n) => !n.endsWith('*')));
  return [...names].filter((n) => lists.every((list) => toolAllowed(list, n)));
}

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

/** The first `take + 1` events of each tool, with the columns `query` selects, in one statement for the whole batch of tools. */
async function eventsForTools(
  ctx: Context,
  names: string[],
  take: number,
  after: bigint | null,
  filter: LedgerFilter,
  query: EventQuery,
): Promise<Map<string, unknown[]>> {
  const out = new Map<string, unknown[]>(names.map((n) => [n, []]));
  const plan = planEventSelect(query, ['position', 'tool']);
  if (!plan) return eventsForToolsThroughPrisma(ctx, names, take, after, filter, query, out);
  const params = new SqlParams();
  const where = [`e.tool = t.name`, ...filterConditions(filter, params)];
  if (after !== null) where.push(`e.position > ${params.add(after, '::bigint')}`);
  // The join to blob (and batch) is made after each tool's LIMIT, so only the rows returned are joined.
  const text =
    `SELECT ${plan.columns} FROM unnest(${params.add(names, '::text[]')}) AS t(name) ` +
    `CROSS JOIN LATERAL (SELECT * FROM ledger_event e WHERE ${where.join(' AND ')} ORDER BY e.position ASC LIMIT ${params.add(take + 1, '::int')}) e ` +
    `${plan.joins} ORDER BY e.position ASC`;
  for (const row of await runRead(ctx.services.db.sql, text, params)) {
    const event = plan.read(row);
    out.get(event.tool as string)?.push(event);
  }
  return out;
}

/** The same through Prisma, for a selection event-select.ts does not plan: two statements. */
async function eventsForToolsThroughPrisma(
  ctx: Context,
  names: string[],
  take: number,
  after: bigint | null,
  filter: LedgerFilter,
  query: EventQuery,
  out: Map<string, unknown[]>,
): Promise<Map<string, unknown[]>> {
  const prisma = ctx.services.db.prisma;
  const ids = await prisma.$queryRaw<{ id: string }[]>(Prisma.sql`
    SELECT e.id FROM unnest(${names}::text[]) AS t(name)
    CROSS JOIN LATERAL (
      SELECT id FROM ledger_event
      WHERE tool = t.name AND ${filterSql(filter)} ${after === null ? Prisma.empty : Prisma.sql`AND position > ${after}`}
      ORDER BY position ASC LIMIT ${take + 1}
    ) e`);
  if (ids.length === 0) return out;
  const select = query.select ? { select: { ...query.select, position: true, tool: true } } : query;
  const events = (await prisma.ledgerEvent.findMany({
    ...(select as object),
    where: { id: { in: ids.map((r) => r.id) } },
    orderBy: { position: 'asc' },
  })) as unknown as { tool: string | null }[];
  for (const e of events) out.get(e.tool!)?.push(e);
  return out;
}

builder.prismaObject('DirectoryRow', {
  variant: 'Entry',
  interfaces: [DirectoryRowRef],
  description: 'A row with no contract: an article, credential, flow, task, file, variable…',
  fields: (t) => ({
    text: t.expose('text', { type: 'JSON', description: 'Free-text columns, label → text.' }),
  }),
});

type ListedShape = { name: string; type: string; kind: string | null };
const ListedRowRef = builder.objectRef<ListedShape>('ListedRow').implement({
  description: 'The names-only projection of a row.',
  fields: (t) => ({
    name: t.exposeString('name'),
    type: t.exposeString('type'),
    kind: t.exposeString('kind', { nullable: true }),
  }),
});

type IndexShape = { passes: number; sectionBuilds: number; lastBuildMs: number | null; lastBuiltAt: Date | null; dir: string };
const DirectoryIndexRef = builder.objectRef<IndexShape>('DirectoryIndex').implement({
  description: 'The derived index: the sections it was built from, with their version tags and build times.',
  fields: (t) => ({
    dir: t.exposeString('dir', { description: 'The folder of section files.' }),
    passes: t.exposeInt('passes', { description: 'Build passes run since start.' }),
    sectionBuilds: t.exposeInt('sectionBuilds', { description: 'Sections (re)built since start: only those whose content hash changed.' }),
    lastBuildMs: t.exposeFloat('lastBuildMs', { nullable: true }),
    lastBuiltAt: t.expose('lastBuiltAt', { type: 'DateTime', nullable: true }),
    sections: t.prismaField({
      type: [DirectorySectionRef],
      resolve: (query, _i, _a, ctx) => ctx.services.db.prisma.directorySection.findMany({ ...query, orderBy: { type: 'asc' } }),
    }),
  }),
});

type TypeCount = { type: string; rows: number };
const TypeCountRef = builder.objectRef<TypeCount>('DirectoryTypeCount').implement({
  fields: (t) => ({ type: t.exposeString('type'), rows: t.exposeInt('rows') }),
});
type StatsShape = {
  type: string | null;
  rows: number;
  rowsByType: TypeCount[];
  namesOnlyBytes: number;
  withDescriptionsBytes: number;
  namesAloneBytes: number;
};
const DirectoryStatsRef = builder.objectRef<StatsShape>('DirectoryStats').implement({
  description: 'Counted from the data: the bytes are those of GET /api/directory and GET /api/directory?full=1 for the same type.',
  fields: (t) => ({
    type: t.exposeString('type', { nullable: true }),
    rows: t.exposeInt('rows'),
    rowsByType: t.expose('rowsByType', { type: [TypeCountRef] }),
    namesOnlyBytes: t.exposeInt('namesOnlyBytes'),
    withDescriptionsBytes: t.exposeInt('withDescriptionsBytes'),
    ratio: t.float({ resolve: (s) => (s.namesOnlyBytes ? Math.round((s.withDescriptionsBytes / s.namesOnlyBytes) * 10) / 10 : 0) }),
    namesOnlyTokensEstimate: t.int({
      description: 'At 3.7 bytes per token: an estimate, not a tokenizer count.',
      resolve: (s) => Math.round(s.namesOnlyBytes / 3.7),
    }),
    namesAloneBytes: t.exposeInt('namesAloneBytes', {
      description: "Bytes of the seed's names-only projection: names alone, one a line (GET /api/directory?names=1).",
    }),
    namesAloneRatio: t.float({
      description: 'withDescriptionsBytes / namesAloneBytes, to one decimal: the ratio the seed measures.',
      resolve: (s) => (s.namesAloneBytes ? Math.round((s.withDescriptionsBytes / s.namesAloneBytes) * 10) / 10 : 0),
    }),
    namesAloneTokensEstimate: t.int({
      description: 'At 3.7 bytes per token: an estimate, not a tokenizer count.',
      resolve: (s) => Math.round(s.namesAloneBytes / 3.7),
    }),
  }),
});

const ListedEdge = { name: 'DirectoryEdge' };
const maxPage = 1000;

builder.queryFields((t) => ({
  directory: t.connection(
    {
      type: ListedRowRef,
      description: 'The cheap names-only listing (name, type, kind), in section order.',
      args: { type: t.arg.string() },
      resolve: async (_root, args, ctx) => {
        const first = args.first ?? 100;
        if (first < 0 || first > maxPage) throw badInput(`Invalid first: expected a whole number from 0 to ${maxPage}, got ${first}`);
        if (args.last !== undefined && args.last !== null) throw badInput('Invalid last: the directory pages forward only (first, after)');
        if (args.after) checkListCursor(args.after);
        return resolveOffsetConnection({ args: { first, after: args.after }, defaultSize: first, maxSize: maxPage }, ({ offset, limit }) =>
          ctx.services.db.prisma.directoryRow.findMany({
            where: args.type ? { type: args.type } : {},
            select: { name: true, type: true, kind: true },
            orderBy: [{ type: 'asc' }, { ordinal: 'asc' }],
            skip: offset,
            take: limit,
          }),
        );
      },
    },
    { name: 'DirectoryConnection' },
    ListedEdge,
  ),
  row: t.prismaField({
    type: DirectoryRowRef,
    nullable: true,
    description: 'One targeted read. A name used by several types answers the tool first, then the first type alphabetically, unless type is given.',
    args: { name: t.arg.string({ required: true }), type: t.arg.string() },
    resolve: async (query, _root, args, ctx) => {
      const rows = await ctx.services.db.prisma.directoryRow.findMany({
        ...query,
        where: { name: args.name, ...(args.type ? { type: args.type } : {}) },
        orderBy: { type: 'asc' },
      });
      return ctx.services.directory.rowMeant(rows, args.name, 'any');
    },
  }),
  tool: t.field({
    type: ToolRef,
    nullable: true,
    description: 'One tool by name, with its contracts.',
    args: { name: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx, info) =>
      (await readTools(ctx.services.db.sql, ctx.services.directory, [args.name], toolEventsAhead(ctx, info)))[0] ?? null,
  }),
  tools: t.field({
    type: [ToolRef],
    description: 'Several tools by name in one read (at most 100), in the order asked; unknown names are left out.',
    args: { names: t.arg.stringList({ required: true }) },
    resolve: async (_root, args, ctx, info) => {
      if (args.names.length > 100) throw badInput(`Invalid names: expected at most 100, got ${args.names.length}`);
      return readTools(ctx.services.db.sql, ctx.services.directory, args.names, toolEventsAhead(ctx, info));
    },
  }),
  directoryIndex: t.field({
    type: DirectoryIndexRef,
    resolve: (_root, _args, ctx) => {
      const d = ctx.services.directory;
      return {
        dir: d.options.dir,
        passes: d.passes,
        sectionBuilds: d.sectionBuilds,
        lastBuildMs: d.lastBuild?.ms ?? null,
        lastBuiltAt: d.lastBuild?.startedAt ?? null,
      };
    },
  }),
  directoryStats: t.field({
    type: DirectoryStatsRef,
    args: { type: t.arg.string({ description: 'Count one type (e.g. "tool"); all rows when omitted.' }) },
    resolve: async (_root, args, ctx) => {
      const d = ctx.services.directory;
      const type = args.type ?? null;
      const [names, full, alone, groups] = await Promise.all([
        d.listing(type, false),
        d.listing(type, true),
        d.namesAlone(type),
        ctx.services.db.prisma.directoryRow.groupBy({ by: ['type'], where: type ? { type } : {}, _count: { _all: true }, orderBy: { type: 'asc' } }),
      ]);
      return {
        type,
        rows: names.count,
        rowsByType: groups.map((g) => ({ type: g.type, rows: g._count._all })),
        namesOnlyBytes: Buffer.byteLength(names.body),
        withDescriptionsBytes: Buffer.byteLength(full.body),
        namesAloneBytes: Buffer.byteLength(alone.body),
      };
    },
  }),
}));

/** The listing pages by offset with the relay plugin's cursors; one it did not make is BAD_INPUT, not a masked error. */
function checkListCursor(cursor: string): void {
  let offset = Number.NaN;
  try {
    offset = cursorToOffset(cursor);
  } catch {}
  if (!Number.isInteger(offset) || offset < 0)
    throw badInput(`Invalid after: expected a cursor returned by directory, got ${JSON.stringify(cursor.slice(0, 40))}`);
}

// ---- from a recorded call back to its contract ----

type RecordedShape = { form: string; sha256: string; tool: string | null };
const RecordedContractRef = builder.objectRef<RecordedShape>('RecordedContract').implement({
  description: 'The exact contract an event ran, kept by its hash after the row changes.',
  fields: (t) => ({
    form: t.exposeString('form', { description: 'A ContractForm name, or the way column (e.g. "way: http").' }),
    sha256: t.exposeString('sha256'),
    shape: t.field({
      type: ContractShapeEnum,
      nullable: true,
      resolve: async (c, _a, ctx) => ((await contractsBySha(ctx, c.sha256))?.shape as ContractShape | undefined) ?? null,
    }),
    json: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Null only when the hash names no stored contract.',
      resolve: async (c, _a, ctx) => (await contractsBySha(ctx, c.sha256))?.contract ?? null,
    }),
  }),
});

builder.prismaObjectFields(LedgerEventRef, (t) => ({
  tool: t.field({
    type: DirectoryRowRef,
    nullable: true,
    description: "The Directory row of this event's tool, as it is now (toolName is the recorded name).",
    select: { tool: true },
    resolve: async (e, _a, ctx) => {
      if (!e.tool) return null;
      return (
        (await loadBatched(ctx, 'tool-row', e.tool, async (names) => {
          const rows = await ctx.services.db.prisma.directoryRow.findMany({ where: { name: { in: names } }, orderBy: { type: 'asc' } });
          const out = new Map<string, (typeof rows)[number]>();
          for (const name of names) {
            const row = ctx.services.directory.rowMeant(rows, name, 'any');
            if (row) out.set(name, row);
          }
          return out;
        })) ?? null
      );
    },
  }),
  contract: t.field({
    type: RecordedContractRef,
    nullable: true,
    description: 'The identity of the contract this event ran (form and hash), resolvable after the row changes.',
    select: { contractForm: true, contractSha256: true, tool: true },
    resolve: (e) => (e.contractForm && e.contractSha256 ? { form: e.contractForm, sha256: e.contractSha256, tool: e.tool } : null),
  }),
}));
