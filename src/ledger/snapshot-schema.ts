// ledgerSnapshot: a window of the ledger in one call (the seed's counts-route snapshot).
import { builder } from '../graphql/builder.ts';
import { ledgerScope, scopedFilter } from './read-scope.ts';
import { filterArg, LedgerFilterRef, LedgerFilterValueRef } from './read-schema.ts';
import { ledgerSnapshot, type LedgerSnapshot } from './snapshot.ts';

const LedgerSnapshotRef = builder.objectRef<LedgerSnapshot>('LedgerSnapshot').implement({
  description: 'How many events a window of the ledger holds, how many distinct tools, models and sessions, and the tokens and cost they add up to.',
  fields: (t) => ({
    asOf: t.expose('asOf', { type: 'DateTime', description: 'When the window ended (the time of the read).' }),
    window: t.exposeString('window', { nullable: true, description: 'The window as asked (30m, 1h, 1d, 30d); null when only the filter bounds it.' }),
    filter: t.field({ type: LedgerFilterValueRef, description: 'The filter counted, with the window as its occurredFrom.', resolve: (s) => s.filter }),
    events: t.exposeInt('events', { description: 'Events in the window.' }),
    distinctTools: t.exposeInt('distinctTools', { description: 'Distinct tool names among them (events without a tool not counted).' }),
    distinctModels: t.exposeInt('distinctModels', { description: 'Distinct models among them.' }),
    distinctSessions: t.exposeInt('distinctSessions', { description: 'Distinct sessions among them.' }),
    inputTokens: t.expose('inputTokens', { type: 'BigInt', description: 'Input tokens summed over the window.' }),
    outputTokens: t.expose('outputTokens', { type: 'BigInt', description: 'Output tokens summed over the window.' }),
    costUsd: t.expose('costUsd', { type: 'Decimal', description: 'Exact cost summed over the window, in US dollars.' }),
  }),
});

builder.queryField('ledgerSnapshot', (t) =>
  t.field({
    type: LedgerSnapshotRef,
    description:
      "A window of the ledger in one call: events, distinct tools, models and sessions, tokens and cost, summed in SQL. A task-scoped token's snapshot covers only its task's events.",
    args: {
      window: t.arg.string({ description: 'How far back from now: 30m, 1h, 1d, 30d (at most 3650d); absent: the filter alone bounds it.' }),
      filter: t.arg({ type: LedgerFilterRef, description: 'Which events count (combined with the window).' }),
    },
    resolve: async (_root, args, ctx) =>
      ledgerSnapshot(ctx.services.db, args.window ?? null, scopedFilter(filterArg(args.filter), await ledgerScope(ctx, 'ledgerSnapshot'))),
  }),
);
