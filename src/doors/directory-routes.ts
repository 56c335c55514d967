// The Directory's HTTP door: GET /api/directory (name, type, kind), ?full=1 (with descriptions) and
// ?names=1 (names alone, one a line: the seed's names-only projection).
import { plainTextProblem } from '../limits.ts';
import type { Services } from '../services.ts';
import { json } from './respond.ts';

/** The same bytes directoryStats counts: a JSON array of {name, type, kind[, description]}. */
export async function listDirectory(request: Request, services: Services): Promise<Response> {
  const url = new URL(request.url);
  const full = ['1', 'true', 'yes'].includes(url.searchParams.get('full') ?? '');
  const alone = ['1', 'true', 'yes'].includes(url.searchParams.get('names') ?? '');
  const type = url.searchParams.get('type') || null;
  const problem = type === null ? undefined : plainTextProblem(type);
  if (problem) return json({ error: { code: 'BAD_INPUT', message: `Invalid type: expected plain text, got ${problem}.`, field: 'type' } }, 400);
  const { body, count } = alone ? await services.directory.namesAlone(type) : await services.directory.listing(type, full);
  return new Response(request.method === 'HEAD' ? null : body, {
    status: 200,
    headers: { 'content-type': alone ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8', 'x-directory-rows': String(count) },
  });
}
