// GraphQL: the model rows of the Directory, their prices as charged, and from a model to its events
// (as Tool.events goes from a capability to its uses).
import { plannedEvents } from '../ledger/schema.ts';
import type { LedgerEvent } from '../generated/prisma/client.ts';
import { builder } from '../graphql/builder.ts';
import { nodeIdField, registerNode } from '../graphql/node.ts';
import { parseFilter } from '../ledger/filter.ts';
import { ledgerScope, scopedFilter } from '../ledger/read-scope.ts';
import { filteredEventPage, PAGE_DEFAULT, PAGE_MAX } from '../ledger/reads.ts';
import { withoutNulls } from '../graphql/without-nulls.ts';
import { LedgerEventConnectionRef, LedgerFilterRef, LedgerOrderEnum } from '../ledger/read-schema.ts';
import type { ModelRow } from './catalog.ts';
import type { Price } from './price.ts';

const ModelPriceRef = builder.objectRef<Price>('ModelPrice').implement({
  description: 'A price as events are charged with it: USD per million tokens (exact decimals as text), stored once under `id`.',
  fields: (t) => ({
    id: t.exposeString('sha256', { description: 'The SHA-256 its events name (metadata.price.id); model_price keeps it after the row changes.' }),
    input: t.exposeString('input', { description: 'USD per million uncached input tokens, exact decimal text.' }),
    output: t.exposeString('output', { description: 'USD per million output tokens, exact decimal text.' }),
    cached: t.exposeString('cached', { description: 'Per million input tokens read from the prompt cache.' }),
    cacheWrite: t.exposeString('cacheWrite', {
      description: 'Per million input tokens written to the prompt cache for 5 minutes (Anthropic: 1.25× input unless the row says).',
    }),
    cacheWrite1h: t.exposeString('cacheWrite1h', {
      description: 'Per million input tokens written to the prompt cache for 1 hour (Anthropic: 2× input unless the row says).',
    }),
    date: t.exposeString('date', { description: 'The date the price was taken.' }),
  }),
});

const ModelRef = builder.objectRef<ModelRow>('Model').implement({
  description: 'A Directory row of type `model`, as the model door routes to it.',
  fields: (t) => ({
    name: t.exposeString('name', { description: "The row's name: what a client sends as `model`." }),
    provider: t.exposeString('provider', { description: "The provider column (anthropic speaks Anthropic's wire, any other OpenAI's)." }),
    wire: t.exposeString('wire', { description: '`openai` (/v1/chat/completions, /v1/responses, /v1/embeddings) or `anthropic` (/v1/messages).' }),
    upstreamModel: t.exposeString('upstreamModel', { description: 'The name the upstream knows it by.' }),
    upstream: t.field({ type: 'JSON', description: 'Its upstream contract, secrets as [NAMES].', resolve: (m) => m.upstream }),
    contextWindow: t.exposeInt('contextWindow', { description: 'The context window in tokens, from the row; null when the row gives none.', nullable: true }),
    maxOutput: t.exposeInt('maxOutput', {
      description: "The most output tokens a call may ask for (the budget's worst case when the call names none); null when the row gives none.",
      nullable: true,
    }),
    price: t.field({ description: 'The price events of this row are charged with now.', type: ModelPriceRef, resolve: (m) => m.price }),
    unboundSecrets: t.exposeStringList('unbound', { description: 'Secret names its upstream needs that are not bound: it cannot be called until they are.' }),
    events: t.field({
      type: LedgerEventConnectionRef,
      description: "Every ledger event of this model, in position order: from a model to its calls. A task-scoped token sees only its task's.",
      args: {
        filter: t.arg({ description: "Narrows the model's events further (a model other than this one matches nothing).", type: LedgerFilterRef }),
        first: t.arg.int({ description: `How many events (default ${PAGE_DEFAULT}, at most ${PAGE_MAX}).` }),
        after: t.arg.string({ description: 'A cursor from an earlier page (its endCursor): events after it.' }),
        order: t.arg({ description: 'ASC oldest first (the default) or DESC newest first.', type: LedgerOrderEnum }),
      },
      resolve: async (model, args, ctx, info) => {
        const asked = parseFilter(withoutNulls(args.filter ?? {}));
        const filter = { ...asked, model: !asked.model || asked.model.includes(model.name) ? [model.name] : [] };
        return filteredEventPage<LedgerEvent>(
          ctx.services.db,
          scopedFilter(filter, await ledgerScope(ctx, 'Model.events')),
          args,
          plannedEvents(ctx, info, ['edges', 'node']),
        ) as never;
      },
    }),
  }),
});

builder.objectField(ModelRef, 'nodeId', (t) => t.field(nodeIdField<ModelRow>('Model', (m) => m.name)));
// By its exact name (a global id names one row; model(name:) also routes a near name).
registerNode(ModelRef, async (id, ctx) => (await ctx.services.models.rows()).find((m) => m.name === id) ?? null);

builder.queryFields((t) => ({
  models: t.field({
    type: [ModelRef],
    description: 'Every well-formed model row of the Directory, in Directory order (`unboundSecrets` says which cannot be called yet).',
    resolve: (_root, _args, ctx) => ctx.services.models.rows(),
  }),
  model: t.field({
    type: ModelRef,
    nullable: true,
    description: 'The model row a name means, as the model door routes it (exact, else a clear resolver match); null when none.',
    args: { name: t.arg.string({ description: 'A model name, exact or near (as the model door routes it).', required: true }) },
    resolve: async (_root, { name }, ctx) => {
      const routed = await ctx.services.models.route(name);
      return 'row' in routed ? routed.row : null;
    },
  }),
}));
