// Rows read by a planned statement (src/ledger/event-select.ts) carry every column and relation their
// selection asks for, so plugin-prisma's per-row check (does a loader mapping say this field was
// loaded?) answers yes for each of them. This plugin, outermost, skips that check for such rows and
// calls the field's own resolver: issue 17 measured the check at 5–6% of the server's CPU for a page
// of 20–50 events, and it is what lets a cached plan (plan-cache.ts) skip recording mappings.
import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import { defaultFieldResolver, type GraphQLFieldResolver } from 'graphql';
import { plannedRow } from '../ledger/event-select.ts';

const isPlanned = (parent: unknown) => typeof parent === 'object' && parent !== null && (parent as Record<symbol, unknown>)[plannedRow] === true;

export class PlannedRowsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    // plugin-prisma wraps exactly these fields (a relation, or a field with its own `select`).
    if (fieldConfig.kind !== 'PrismaObject' || !fieldConfig.extensions?.pothosPrismaSelect) return resolver;
    const own = (fieldConfig.resolve ?? defaultFieldResolver) as GraphQLFieldResolver<unknown, Types['Context'], object>;
    return (parent, args, context, info) => (isPlanned(parent) ? own(parent, args, context, info) : resolver(parent, args, context, info));
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      plannedRows: PlannedRowsPlugin<Types>;
    }
  }
}

const pluginName = 'plannedRows';
SchemaBuilder.registerPlugin(pluginName, PlannedRowsPlugin);
export default pluginName;
