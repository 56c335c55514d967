// GraphQL: ledgerSpool, what is captured and not yet in the Ledger (the same as /healthz's `spool`).
// An operator's field: it needs a token that may read the whole ledger.
import { DomainError, ErrorCode } from '../errors.ts';
import { builder } from '../graphql/builder.ts';
import type { SpoolState } from '../services.ts';
import { ledgerScope } from './read-scope.ts';

const SpoolModeEnum = builder.enumType('SpoolMode', {
  description: 'DURABLE: captured events are on disk before the step they record goes on. MEMORY: held in memory until committed.',
  values: {
    DURABLE: { description: 'Captured events are on disk before the step they record goes on.' },
    MEMORY: { description: 'Captured events are held in memory until committed; a crash loses them.' },
  } as const,
});

const LedgerSpoolRef = builder.objectRef<SpoolState>('LedgerSpool').implement({
  description: 'Events captured and not yet committed to the Ledger.',
  fields: (t) => ({
    mode: t.field({
      description: 'DURABLE when a record is on disk before the call goes on, MEMORY when it is only in memory.',
      type: SpoolModeEnum,
      resolve: (s) => (s.mode === 'durable' ? 'DURABLE' : 'MEMORY'),
    }),
    events: t.exposeInt('events', { description: 'Records written to the spool not yet appended to the ledger.' }),
    bytes: t.exposeFloat('bytes', { nullable: true, description: 'Their bytes in the spool; null in MEMORY mode.' }),
    oldestAgeMs: t.exposeFloat('oldestAgeMs', { nullable: true, description: 'Age of the oldest of them; 0 when none, null in MEMORY mode.' }),
    writes: t.exposeFloat('writes', {
      nullable: true,
      description: 'Durable disk writes since start (one serves every append waiting for it); null in MEMORY mode.',
    }),
    appends: t.exposeFloat('appends', { nullable: true, description: 'Appends made durable since start; null in MEMORY mode.' }),
    writeP50Ms: t.exposeFloat('writeP50Ms', {
      nullable: true,
      description: 'Median time of one durable disk write over the last 1,024, in ms; null in MEMORY mode or before the first write.',
    }),
    writeP99Ms: t.exposeFloat('writeP99Ms', { nullable: true, description: '99th percentile of the same writes, in ms.' }),
    appendP50Ms: t.exposeFloat('appendP50Ms', {
      nullable: true,
      description:
        'Median wait of a call for its records to be durable (queueing behind the write in progress included) over the last 1,024, in ms; null in MEMORY mode or before the first.',
    }),
    appendP99Ms: t.exposeFloat('appendP99Ms', { nullable: true, description: '99th percentile of the same waits, in ms.' }),
    refused: t.exposeFloat('refused', {
      nullable: true,
      description: 'Appends refused since start (the disk failed, or room never came); null in MEMORY mode.',
    }),
  }),
});

builder.queryField('ledgerSpool', (t) =>
  t.field({
    type: LedgerSpoolRef,
    description: 'What is captured and not yet in the Ledger. Needs a token that may read the whole ledger (read = all).',
    resolve: async (_root, _args, ctx) => {
      const scope = await ledgerScope(ctx, 'ledgerSpool');
      if (scope.kind !== 'all')
        throw new DomainError(ErrorCode.FORBIDDEN, 'ledgerSpool needs a token that may read the whole ledger; this one reads one task.', { limit: 'read' });
      return ctx.services.spoolState();
    },
  }),
);
