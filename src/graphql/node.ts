// Relay global object identification: the Node interface, `nodeId` (a global id) on each type a
// client refetches, and `node(id:)`. Each domain registers its types with the same read, and the same
// authority, as its own root field, so a global id never reads what the direct field would not.
import { brandWithType, getTypeBrand } from '@pothos/core';
import { GraphQLError, type GraphQLResolveInfo } from 'graphql';
import { builder } from './builder.ts';
import type { Context } from './context.ts';

/** Reads one object by its own id, as the type's root field does (null when absent or not readable). */
export type NodeLoader = (id: string, ctx: Context, info: GraphQLResolveInfo) => Promise<object | null>;

const loaders = new Map<string, NodeLoader>();
const NodeRef = builder.nodeInterfaceRef();

/** The global id of `typename`'s object `id`: base64 of "Typename:id", as Relay's own servers make it. */
export function globalId(typename: string, id: string): string {
  return Buffer.from(`${typename}:${id}`, 'utf8').toString('base64');
}

const badId = (id: string, why: string) =>
  new GraphQLError(`Invalid id: expected a global id from a nodeId field, got ${JSON.stringify(id.slice(0, 80))} (${why})`, {
    extensions: { code: 'BAD_USER_INPUT', argument: 'id' },
  });

/** The type and own id a global id names; a malformed id or an unknown type is the caller's mistake. */
export function parseGlobalId(id: string): { typename: string; id: string } {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(id) || id.length % 4 !== 0) throw badId(id, 'not base64');
  const text = Buffer.from(id, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (globalId(text.slice(0, colon), text.slice(colon + 1)) !== id || colon < 1 || colon === text.length - 1) throw badId(id, 'not "Type:id"');
  const typename = text.slice(0, colon);
  if (!loaders.has(typename)) throw badId(id, `no type ${JSON.stringify(typename.slice(0, 40))} is refetched by id`);
  return { typename, id: text.slice(colon + 1) };
}

/** The types node(id:) refetches (test/server/recording.test.ts holds the recording rule's table to them). */
export const nodeTypenames = (): string[] => [...loaders.keys()];

type NodeableRef = { name: string; addInterfaces(interfaces: (typeof NodeRef)[]): void };

/** Makes `ref` a Node, refetched by `load`; its `nodeId` field is added by the caller (prisma types need a select). */
export function registerNode(ref: NodeableRef, load: NodeLoader): void {
  ref.addInterfaces([NodeRef]);
  loaders.set(ref.name, load);
}

/** The `nodeId` field of a type registered with registerNode (the same words as the Node interface's, in builder.ts). */
export function nodeIdField<T>(typename: string, idOf: (value: T) => string) {
  return {
    type: 'ID' as const,
    description: 'A global id for node(id:): opaque, stable, and readable only with the authority this object needs.',
    resolve: (value: T) => globalId(typename, idOf(value)),
  };
}

builder.queryField('node', (t) =>
  t.field({
    type: NodeRef,
    nullable: true,
    description:
      "Refetches any object that has a nodeId (Relay's global object identification). Null when it does not exist or the caller's token may not read it, exactly as the type's own root field would answer.",
    args: { id: t.arg.id({ required: true, description: 'A nodeId, as read from any object that has one.' }) },
    resolve: async (_root, args, ctx, info) => {
      const { typename, id } = parseGlobalId(String(args.id));
      const found = await loaders.get(typename)!(id, ctx, info);
      if (found && !getTypeBrand(found)) brandWithType(found, typename as never); // a type name is a brand the config store resolves
      return found;
    },
  }),
);
