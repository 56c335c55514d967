// The resolver's HTTP door: GET /api/directory/resolve?q=…&minScore=&limit=&types=
import { z } from 'zod';
import { DomainError } from '../errors.ts';
import type { IndexedDirectoryRow } from '../resolver/directory-source.ts';
import type { Resolution } from '../resolver/types.ts';
import type { Services } from '../services.ts';
import { parseInput } from '../validation.ts';
import { errorResponse, json } from './respond.ts';

const integer = z
  .string()
  .regex(/^-?\d+$/, 'an integer')
  .transform(Number);
const ResolveParams = z.strictObject({
  q: z.string(),
  minScore: integer.optional(),
  limit: integer.optional(),
  /** Comma-separated, or repeated (`types=tool&types=credential`). */
  types: z.array(z.string()).optional(),
});

/** The JSON every non-GraphQL door answers: the Resolution, with each row as the Directory's row fields. */
export function resolutionJson(resolution: Resolution<IndexedDirectoryRow>) {
  return {
    query: resolution.query,
    readAs: resolution.readAs,
    corrections: resolution.corrections,
    matches: resolution.matches.map((m) => ({
      row: { name: m.row.stored.name, type: m.row.stored.type, kind: m.row.stored.kind, id: m.row.stored.rowId, description: m.row.stored.description },
      score: m.score,
      layer: m.layer,
      reason: m.reason,
      matchedWords: m.matchedWords,
    })),
    message: resolution.message,
  };
}

export function resolveRoute(request: Request, services: Services): Response {
  try {
    const url = new URL(request.url);
    const params: Record<string, unknown> = {};
    for (const key of new Set(url.searchParams.keys())) {
      params[key] =
        key === 'types'
          ? url.searchParams
              .getAll(key)
              .flatMap((v) => v.split(','))
              .map((v) => v.trim())
              .filter(Boolean)
          : url.searchParams.get(key);
    }
    const { q, minScore, limit, types } = parseInput(ResolveParams, params, 'resolve parameters');
    return json(resolutionJson(services.resolver.resolve(q, { minScore, limit, types })));
  } catch (error) {
    if (error instanceof DomainError) return errorResponse(error);
    throw error;
  }
}
