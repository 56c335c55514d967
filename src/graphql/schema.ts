// Assembles the schema: each domain's schema.ts registers its types on the one builder.
import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.ts';
import './scalars.ts';
import '../ledger/schema.ts';
import '../ledger/read-schema.ts';
import '../ledger/append-schema.ts';
import '../directory/schema.ts';
import '../directory/listing-schema.ts';
import '../directory/recorded-schema.ts';
import '../resolver/schema.ts';
import '../live/schema.ts';
import '../dispatch/schema.ts';
import '../ledger/task-schema.ts';
import '../ledger/spool-schema.ts';
import '../ledger/verify-schema.ts';
import '../ledger/snapshot-schema.ts';
import '../auth/schema.ts';
import '../model/schema.ts';

export const schema = builder.toSchema({ sortSchema: true });

export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema)).trim()}\n`;
}
