// The resolver's GraphQL door: resolve(query, minScore, limit, types): Resolution.
import { DirectoryRowRef } from '../directory/schema.ts';
import { builder } from '../graphql/builder.ts';
import type { IndexedDirectoryRow } from './directory-source.ts';
import { layerDescription, layerScore, ResolverLayer, type Correction, type Resolution, type ResolverMatch } from './types.ts';

export const ResolverLayerEnum = builder.enumType('ResolverLayer', {
  description: 'The layer that matched a row. Its score names it; a score is never a probability.',
  values: Object.fromEntries(
    Object.values(ResolverLayer).map((layer) => [layer, { description: `${layer === 'ALIAS' ? '750–772' : layerScore[layer]}: ${layerDescription[layer]}.` }]),
  ) as Record<ResolverLayer, { description: string }>,
});

const ResolverCorrectionRef = builder.objectRef<Correction>('ResolverCorrection').implement({
  description: 'A query word read as a word of the Directory (Damerau–Levenshtein, within the edit budget).',
  fields: (t) => ({
    from: t.exposeString('from', { description: 'The word as typed.' }),
    to: t.exposeString('to', { description: 'The word it was read as.' }),
    distance: t.exposeInt('distance', { description: 'Edits between them.' }),
  }),
});

const ResolverMatchRef = builder.objectRef<ResolverMatch<IndexedDirectoryRow>>('ResolverMatch').implement({
  description: 'One row of the Directory and why it matched.',
  fields: (t) => ({
    row: t.field({ description: 'The Directory row.', type: DirectoryRowRef, resolve: (match) => match.row.stored }),
    score: t.exposeInt('score', { description: "The layer's score: 1000, 900, 850, 800, 750–772, 700, 600, 300 or 200." }),
    layer: t.field({
      description: 'Which layer matched (exact name, alias, words…): earlier layers outrank later ones.',
      type: ResolverLayerEnum,
      resolve: (match) => match.layer,
    }),
    reason: t.exposeString('reason', { description: 'Why this row matched, in words.' }),
    matchedWords: t.exposeStringList('matchedWords', { description: 'The query words that matched (as read; as typed for EDIT_DISTANCE and SOUNDS_LIKE).' }),
  }),
});

const ResolutionRef = builder.objectRef<Resolution<IndexedDirectoryRow>>('Resolution').implement({
  description: 'Words in, ranked Directory rows out, each with the reason attached. Never a row that does not exist.',
  fields: (t) => ({
    query: t.exposeString('query', { description: 'The query as asked.' }),
    readAs: t.exposeStringList('readAs', { description: 'The words after framing, stop words and correction.' }),
    corrections: t.field({
      description: 'Spelling corrections applied to the query before ranking.',
      type: [ResolverCorrectionRef],
      resolve: (r) => r.corrections,
    }),
    matches: t.field({ description: 'Rows in rank order, best first.', type: [ResolverMatchRef], resolve: (r) => r.matches }),
    message: t.exposeString('message', {
      description: 'What the resolution means in words (no row by that name, did you mean…); null when there is nothing to say.',
    }),
  }),
});

builder.queryField('resolve', (t) =>
  t.field({
    type: ResolutionRef,
    description: 'Resolves anyone’s words to ranked Directory rows (the same answer as GET /api/directory/resolve and `dirledger find`).',
    args: {
      query: t.arg.string({ description: 'What the caller calls the row: a name, an alias, or words.', required: true }),
      minScore: t.arg.int({ description: 'Refuse anything scored below this (0–1000).' }),
      limit: t.arg.int({ description: 'At most this many matches (1–100, default 10).' }),
      types: t.arg.stringList({ description: 'Only rows of these types.' }),
    },
    resolve: (_root, args, ctx) => ctx.services.resolver.resolve(args.query, { minScore: args.minScore, limit: args.limit, types: args.types }),
  }),
);
