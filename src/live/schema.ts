// The live GraphQL fields: ledgerEvents (replay from a cursor, then live) and streamCapture.
// Both end with one error result carrying a SCREAMING_SNAKE code when they end early
// (SUBSCRIBER_TOO_SLOW with extensions.cursor, DATABASE_UNAVAILABLE, TOKEN_EXPIRED, TOKEN_REVOKED), then complete.
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import { builder } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import { decodeCursor } from '../ledger/cursor.ts';
import { parseFilter } from '../ledger/filter.ts';
import { labelEncoding } from '../ledger/payload.ts';
import { ledgerScope, scopedFilter } from '../ledger/read-scope.ts';
import { withoutNulls } from '../graphql/without-nulls.ts';
import { LedgerFilterRef } from '../ledger/read-schema.ts';
import { LedgerEventRef, PayloadStateEnum } from '../ledger/schema.ts';
import type { LedgerEvent } from '../generated/prisma/client.ts';
import { isLiveEnd, type LiveItem } from './tail.ts';
import type { LiveChunk } from './streams.ts';
import { leased } from './lease.ts';

const StreamCutEnum = builder.enumType('StreamCut', {
  description: 'Why a stream stopped before its end.',
  values: {
    CUTOFF: { description: 'The client disconnected and the stream ran past the cut-off.' },
    SOURCE_ERROR: { description: 'The source broke off.' },
  } as const,
});

const StreamChunkRef = builder.objectRef<LiveChunk>('StreamChunk').implement({
  description:
    'One chunk of a streamed answer as the ledger received it, secrets replaced by [NAME]. Bytes that may begin a secret wait for the next chunk; the last chunk has final: true, the bytes still held, and the stored state and blob hash.',
  fields: (t) => ({
    actionId: t.exposeID('actionId', { description: 'The action whose answer is streaming.' }),
    sequence: t.exposeInt('sequence', { description: 'From 0, one per chunk, the final chunk included.' }),
    offset: t.exposeInt('offset', { description: 'Byte offset of this chunk in the stream (on the final chunk: the total size).' }),
    size: t.int({ description: 'Bytes in this chunk.', resolve: (c) => c.bytes.length }),
    text: t.string({
      nullable: true,
      description: 'The bytes as text, when they are well-formed UTF-8 on their own (a chunk may split a character: then use base64).',
      resolve: (c) => (labelEncoding(c.bytes) === 'UTF8' ? c.bytes.toString('utf8') : null),
    }),
    base64: t.string({ description: 'The exact bytes (secrets replaced by [NAME]), base64-encoded.', resolve: (c) => c.bytes.toString('base64') }),
    final: t.exposeBoolean('final', { description: 'True on the last chunk of the stream.' }),
    state: t.expose('state', { type: PayloadStateEnum, nullable: true, description: 'On the final chunk: COMPLETE, PARTIAL or MISSING, as stored.' }),
    sha256: t.exposeString('sha256', { nullable: true, description: 'On the final chunk: the SHA-256 of the stored blob (null when MISSING).' }),
    totalSize: t.exposeInt('size', { nullable: true, description: 'On the final chunk: every byte received.' }),
    cut: t.expose('cut', {
      description: 'When a secret straddled chunk boundaries: how the cut was made; null otherwise.',
      type: StreamCutEnum,
      nullable: true,
    }),
  }),
});

const planned = new WeakSet<object>();

/**
 * Tells plugin-prisma, once per subscription, that the tail's rows already hold every column: then
 * fields such as `cursor` read the row instead of loading it again for each event and subscriber.
 * A selection that reaches a relation (payload, batch…) is left to the plugin's loader.
 */
function planOnce(ctx: Context, info: GraphQLResolveInfo): void {
  if (planned.has(ctx)) return;
  planned.add(ctx);
  // Planned first against a throwaway context: the plan records what it would load as a side effect.
  const query = queryFromInfo({ context: { ...ctx }, info }) as { select?: Record<string, unknown>; include?: Record<string, unknown> };
  const scalarsOnly = !query.include && Object.values(query.select ?? {}).every((v) => v === true);
  if (scalarsOnly) queryFromInfo({ context: ctx, info });
}

builder.subscriptionFields((t) => ({
  ledgerEvents: t.field({
    type: LedgerEventRef,
    description:
      "Events matching the filter as they commit. With after (any ledger cursor) everything after it is replayed from the database, then the subscription continues live with no gap and no duplicate; without it, it starts at the current head. A subscriber that falls too far behind gets one SUBSCRIBER_TOO_SLOW error with extensions.cursor (its last delivered event) and the subscription completes: subscribe again with that cursor. A task-scoped token receives only its task's events (merged into the filter).",
    args: {
      filter: t.arg({ description: "Which events; omitted: all the caller may read (a task-scoped token's task is merged in).", type: LedgerFilterRef }),
      after: t.arg.string({ description: 'Resume after this cursor (from an event, a page or a SUBSCRIBER_TOO_SLOW error).' }),
    },
    subscribe: async (_root, args, ctx) => {
      const parsed = parseFilter(withoutNulls(args.filter ?? {}));
      const after = args.after === null || args.after === undefined ? undefined : decodeCursor(args.after);
      const filter = scopedFilter(parsed, await ledgerScope(ctx, 'ledgerEvents'));
      return leased(ctx.services.live.subscribe(filter, after, ctx.caller), ctx.caller.grant, ctx.caller.door, 'ledgerEvents', ctx.services);
    },
    resolve: (item: LiveItem, _args, ctx, info) => {
      if (isLiveEnd(item)) throw item.end;
      planOnce(ctx, info);
      return item as LedgerEvent;
    },
  }),
  streamCapture: t.field({
    type: StreamChunkRef,
    description:
      "The chunks of a streamed answer (an HTTP upstream's event stream or chunked body, or an MCP tool's answer to tools/call) as the ledger receives them: those so far first (for a late subscriber), then live ones, ending with a final chunk carrying the stored state and blob hash. A stream that has not started yet is waited for. A task-scoped token sees only streams of its task: another task's stream looks like one that has not started.",
    args: { actionId: t.arg.id({ description: 'The action whose streamed answer to follow (its x-dirledger-action).', required: true }) },
    subscribe: async (_root, args, ctx) => {
      const scope = await ledgerScope(ctx, 'streamCapture');
      return leased(
        ctx.services.streams.subscribe(String(args.actionId), scope.kind === 'task' ? scope.task : undefined),
        ctx.caller.grant,
        ctx.caller.door,
        'streamCapture',
        ctx.services,
      );
    },
    resolve: (item: LiveChunk | { end: Error }) => {
      if ('end' in item) throw item.end;
      return item;
    },
  }),
}));
