// plugin-prisma's query for a field (queryFromInfo) and what a read makes of it (a planned statement),
// kept per place in a parsed document: yoga's parse cache hands the same document object to every
// request with the same text, so a repeated read plans once instead of walking its selection with
// plugin-prisma's planner each time (issue 17: ~8% of the server's CPU for one event). A place is the
// field's own nodes in that document under its parent type; its key adds the values of every variable
// used beneath it (arguments and directives) and the caller's `key` (call site, read scope). What is
// kept is the shape of a statement, never a row: each request binds its own values and scope.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode, type ValueNode } from 'graphql';

/** plugin-prisma's query for a model: `select` or `include`. */
export type PrismaQuery = { select?: Record<string, unknown>; include?: Record<string, unknown> };

/** A field's query and the plan derived from it; `id` names the selection (equal for equal queries). */
export type Planned<T> = { query: PrismaQuery; plan: T | null; id: string };

/** Distinct variable values kept per place; beyond it a place plans each time (e.g. a page size sent as a variable). */
export const PLANS_PER_PLACE = 32;

type Place = { variables: string[]; plans: Map<string, Planned<unknown>> };
const stats = { planned: 0, reused: 0 };

/** Plans made (queryFromInfo called) and plans reused from a document's cache, since start. */
export const planCacheStats = () => ({ ...stats });

const places = new WeakMap<object, Map<string, Place>>();
const nodeIds = new WeakMap<FieldNode, number>();
let nextNodeId = 0;

const nodeId = (node: FieldNode) => {
  let id = nodeIds.get(node);
  if (id === undefined) {
    id = nextNodeId++;
    nodeIds.set(node, id);
  }
  return id;
};

/** Every variable named in the arguments and directives beneath the field (fragments followed). */
function variablesUnder(info: GraphQLResolveInfo): string[] {
  const names = new Set<string>();
  const seen = new Set<string>();
  const value = (v: ValueNode): void => {
    if (v.kind === Kind.VARIABLE) names.add(v.name.value);
    else if (v.kind === Kind.LIST) v.values.forEach(value);
    else if (v.kind === Kind.OBJECT) for (const f of v.fields) value(f.value);
  };
  const within = (set: SelectionSetNode | undefined): void => {
    for (const s of set?.selections ?? []) {
      for (const d of s.directives ?? []) for (const a of d.arguments ?? []) value(a.value);
      if (s.kind === Kind.FIELD) {
        for (const a of s.arguments ?? []) value(a.value);
        within(s.selectionSet);
      } else if (s.kind === Kind.INLINE_FRAGMENT) within(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        within(info.fragments[s.name.value]?.selectionSet);
      }
    }
  };
  for (const node of info.fieldNodes) within(node.selectionSet);
  return [...names].sort();
}

// A variable's type fixes what its values can be, so a BigInt as `…n` meets no string of the same variable.
const json = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
/** The values of these variables as one key; an omitted one ('-') apart from null. */
const valuesKey = (names: string[], values: Record<string, unknown>) => names.map((n) => (values[n] === undefined ? '-' : json(values[n]))).join('\u0000');

/**
 * queryFromInfo for the field `info` resolves (under `path`) and `derive`'s plan of it, from the
 * document's cache when this place, these variable values and `key` were planned before. Only a
 * plan `derive` returns (not null) is kept, so a read that falls back to plugin-prisma's loaders
 * always gets its loader mappings recorded by a fresh queryFromInfo.
 */
export function cachedPlan<T>(
  context: object,
  info: GraphQLResolveInfo,
  place: { path?: string[]; key: string },
  derive: (query: PrismaQuery) => T | null,
): Planned<T> {
  let inDocument = places.get(info.operation);
  if (!inDocument) {
    inDocument = new Map();
    places.set(info.operation, inDocument);
  }
  const where = `${info.parentType.name}|${info.fieldNodes.map(nodeId).join(',')}|${place.path?.join('.') ?? ''}`;
  let at = inDocument.get(where);
  if (!at) {
    at = { variables: variablesUnder(info), plans: new Map() };
    inDocument.set(where, at);
  }
  const key = at.variables.length ? `${place.key}|${valuesKey(at.variables, info.variableValues)}` : place.key;
  const kept = at.plans.get(key) as Planned<T> | undefined;
  if (kept) {
    stats.reused++;
    return kept;
  }
  stats.planned++;
  const query = queryFromInfo({ context, info, ...(place.path && { path: place.path }) }) as PrismaQuery;
  const planned: Planned<T> = { query, plan: derive(query), id: json(query) };
  if (planned.plan !== null && at.plans.size < PLANS_PER_PLACE) at.plans.set(key, planned);
  return planned;
}
