// The only SchemaBuilder. No types are defined here: each domain's schema.ts defines its own.
import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import type { Prisma } from '../generated/prisma/client.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import type PrismaTypes from '../generated/pothos-types.ts';
import type { Context } from './context.ts';
import PlannedRowsPlugin from './planned-rows.ts';

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
    BigInt: { Input: bigint; Output: bigint | number | string };
    Decimal: { Input: string; Output: Prisma.Decimal | string };
  };
}>({
  // First, so it wraps outermost: a planned row skips plugin-prisma's per-row check (planned-rows.ts).
  plugins: [PlannedRowsPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  prisma: {
    client: (ctx) => ctx.services.db.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: true,
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'warn',
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    edgesFieldOptions: { nullable: false, description: 'One edge per item of this page, in the order the field states.' },
    nodeFieldOptions: { nullable: false, description: 'The item.' },
    cursorFieldOptions: { description: "Pass as `after` to read the items after this one (opaque; for ledger reads, the event's commit position)." },
    pageInfoFieldOptions: { description: 'Where this page sits: whether more follow and the cursors at its ends.' },
    pageInfoTypeOptions: { description: 'Where a page sits in its list (Relay cursor connections).' },
    hasNextPageFieldOptions: { description: 'True when items follow this page: read them with after: endCursor.' },
    hasPreviousPageFieldOptions: { description: 'True when this page began after a cursor (items come before it).' },
    startCursorFieldOptions: { description: "The first item's cursor; null on an empty page." },
    endCursorFieldOptions: { description: "The last item's cursor, to pass as `after` for the next page; null on an empty page." },
    firstArgOptions: { description: 'How many items, from the start or after `after` (each field states its default and maximum).' },
    afterArgOptions: { description: 'A cursor from an earlier page (its endCursor): items after it.' },
    beforeArgOptions: { description: 'A cursor: items before it (fields that page forward only refuse it).' },
    lastArgOptions: { description: 'How many items before `before`, from the end (fields that page forward only refuse it).' },
    // Every type keeps its own `id` (event ids, action ids are what clients and the seed pass around);
    // the global id is `nodeId`, as PostGraphile names it (Relay's compiler: nodeInterfaceIdField).
    idFieldName: 'nodeId',
    idFieldOptions: { description: 'A global id for node(id:): opaque, stable, and readable only with the authority this object needs.' },
    nodeTypeOptions: { description: 'An object a client can refetch by its global id (nodeId) with node(id:).' },
    // node(id:) is graphql/node.ts's: it reads each type with its own root field's authority.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
});

builder.queryType({
  description: 'Reads: the Directory (what could be done) and the Ledger (what was done). A token reads only what its `read` caveat allows.',
});
builder.mutationType({ description: 'Writes: dispatching a call, appending a batch, issuing and revoking tokens. Each is recorded in the Ledger.' });
builder.subscriptionType({ description: 'Live reads over graphql-ws or GraphQL over SSE: new ledger events and streamed answers as they are recorded.' });
