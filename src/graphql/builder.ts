// The only SchemaBuilder. No types are defined here: each domain's schema.ts defines its own.
import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import type { Prisma } from '../generated/prisma/client.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import type PrismaTypes from '../generated/pothos-types.ts';
import type { Context } from './context.ts';

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
  plugins: [PrismaPlugin, RelayPlugin],
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
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
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

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
