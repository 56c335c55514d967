// The Directory's root query fields: the names-only listing (relay connection), one row, tools by
// name (their events read ahead when the query asks for them), the index and its counts.
import { cursorToOffset, resolveOffsetConnection } from '@pothos/plugin-relay';
import { getArgumentValues } from 'graphql/execution/values.js';
import type { GraphQLObjectType, GraphQLResolveInfo } from 'graphql';
import { badInput } from '../errors.ts';
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import { selectedFields } from '../graphql/selection.ts';
import { decodeCursor } from '../ledger/cursor.ts';
import { parseFilter } from '../ledger/filter.ts';
import { ledgerScopeNow, scopedFilter } from '../ledger/read-scope.ts';
import { pageSize } from '../ledger/reads.ts';
import { plannedEvents } from '../ledger/schema.ts';
import { withoutNulls } from '../graphql/without-nulls.ts';
import { DirectoryRowRef, DirectorySectionRef, ToolRef } from './schema.ts';
import { readTools, type Ahead } from './tool-reads.ts';

/** Tool.events as the query asks for it under this field, when it can be read ahead. */
function toolEventsAhead(ctx: Context, info: GraphQLResolveInfo): Ahead | undefined {
  const scope = ledgerScopeNow(ctx);
  const nodes = selectedFields(info, 'events');
  if (scope.kind === 'none' || nodes.length !== 1) return undefined;
  try {
    const def = (info.schema.getType('Tool') as GraphQLObjectType).getFields().events!;
    const args = getArgumentValues(def, nodes[0]!, info.variableValues) as { first?: number | null; after?: string | null; filter?: unknown };
    // Each page is grouped under its row (readTools), so its events need no tool column of their own.
    const { plan } = plannedEvents(ctx, info, ['events', 'edges', 'node'], ['position']);
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

type ListedShape = { name: string; type: string; kind: string | null };
const ListedRowRef = builder.objectRef<ListedShape>('ListedRow').implement({
  description: 'The names-only projection of a row.',
  fields: (t) => ({
    name: t.exposeString('name', { description: "The row's name." }),
    type: t.exposeString('type', { description: "The row's type (its section)." }),
    kind: t.exposeString('kind', { description: "The row's kind column; null when empty.", nullable: true }),
  }),
});

type IndexShape = { passes: number; sectionBuilds: number; lastBuildMs: number | null; lastBuiltAt: Date | null; dir: string };
const DirectoryIndexRef = builder.objectRef<IndexShape>('DirectoryIndex').implement({
  description: 'The derived index: the sections it was built from, with their version tags and build times.',
  fields: (t) => ({
    dir: t.exposeString('dir', { description: 'The folder of section files.' }),
    passes: t.exposeInt('passes', { description: 'Build passes run since start.' }),
    sectionBuilds: t.exposeInt('sectionBuilds', { description: 'Sections (re)built since start: only those whose content hash changed.' }),
    lastBuildMs: t.exposeFloat('lastBuildMs', { description: 'How long the last full build took, in milliseconds; null before the first.', nullable: true }),
    lastBuiltAt: t.expose('lastBuiltAt', { description: 'When the last full build started (UTC); null before the first.', type: 'DateTime', nullable: true }),
    sections: t.prismaField({
      description: 'Every section file and the version of it that is live, in type order.',
      type: [DirectorySectionRef],
      resolve: (query, _i, _a, ctx) => ctx.services.db.prisma.directorySection.findMany({ ...query, orderBy: { type: 'asc' } }),
    }),
  }),
});

type TypeCount = { type: string; rows: number };
const TypeCountRef = builder.objectRef<TypeCount>('DirectoryTypeCount').implement({
  description: 'How many rows one type has.',
  fields: (t) => ({ type: t.exposeString('type', { description: 'A row type.' }), rows: t.exposeInt('rows', { description: 'Rows of this type.' }) }),
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
    type: t.exposeString('type', { description: 'The type counted; null for all rows.', nullable: true }),
    rows: t.exposeInt('rows', { description: 'Rows counted (of `type`, or all).' }),
    rowsByType: t.expose('rowsByType', { description: 'Rows per type, in type order.', type: [TypeCountRef] }),
    namesOnlyBytes: t.exposeInt('namesOnlyBytes', { description: 'Bytes of the names-only listing (name, type, kind per row).' }),
    withDescriptionsBytes: t.exposeInt('withDescriptionsBytes', { description: 'Bytes of the listing with every description.' }),
    ratio: t.float({
      description: 'The ratio withDescriptionsBytes / namesOnlyBytes: how much smaller the names-only listing is.',
      resolve: (s) => (s.namesOnlyBytes ? Math.round((s.withDescriptionsBytes / s.namesOnlyBytes) * 10) / 10 : 0),
    }),
    namesOnlyTokensEstimate: t.int({
      description: 'At 3.7 bytes per token: an estimate, not a tokenizer count.',
      resolve: (s) => Math.round(s.namesOnlyBytes / 3.7),
    }),
    namesAloneBytes: t.exposeInt('namesAloneBytes', {
      description: "Bytes of the seed's names-only projection: names alone, one a line (GET /api/directory?names=1).",
    }),
    namesAloneRatio: t.float({
      description: 'The ratio withDescriptionsBytes / namesAloneBytes, to one decimal: the ratio the seed measures.',
      resolve: (s) => (s.namesAloneBytes ? Math.round((s.withDescriptionsBytes / s.namesAloneBytes) * 10) / 10 : 0),
    }),
    namesAloneTokensEstimate: t.int({
      description: 'At 3.7 bytes per token: an estimate, not a tokenizer count.',
      resolve: (s) => Math.round(s.namesAloneBytes / 3.7),
    }),
  }),
});

const ListedEdge = { name: 'DirectoryEdge', description: 'One listed row, with its cursor.' };
const maxPage = 1000;

builder.queryFields((t) => ({
  directory: t.connection(
    {
      type: ListedRowRef,
      description: 'The cheap names-only listing (name, type, kind), in section order.',
      args: { type: t.arg.string({ description: 'Only rows of this type (e.g. "tool"); all rows when omitted.' }) },
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
    { name: 'DirectoryConnection', description: 'Rows of the names-only listing, in section order, paged forward.' },
    ListedEdge,
  ),
  row: t.prismaField({
    type: DirectoryRowRef,
    nullable: true,
    description: 'One targeted read. A name used by several types answers the tool first, then the first type alphabetically, unless type is given.',
    args: {
      name: t.arg.string({ description: "The row's exact name.", required: true }),
      type: t.arg.string({ description: "The row's type, when the name is used by several." }),
    },
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
    args: { name: t.arg.string({ description: "The tool's exact name.", required: true }) },
    resolve: async (_root, args, ctx, info) =>
      (await readTools(ctx.services.db.sql, ctx.services.directory, [args.name], toolEventsAhead(ctx, info)))[0] ?? null,
  }),
  tools: t.field({
    type: [ToolRef],
    description: 'Several tools by name in one read (at most 100), in the order asked; unknown names are left out.',
    args: { names: t.arg.stringList({ description: 'Exact names, at most 100; the answer keeps their order.', required: true }) },
    resolve: async (_root, args, ctx, info) => {
      if (args.names.length > 100) throw badInput(`Invalid names: expected at most 100, got ${args.names.length}`);
      return readTools(ctx.services.db.sql, ctx.services.directory, args.names, toolEventsAhead(ctx, info));
    },
  }),
  directoryIndex: t.field({
    description: "How the Directory index was built: its folder's sections, build passes and timing.",
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
    description: 'Row counts and listing sizes: names-only against with descriptions, in bytes and estimated tokens.',
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
