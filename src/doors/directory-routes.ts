// The Directory's HTTP door: GET /api/directory (names only) and ?full=1 (with descriptions).
import type { Services } from '../services.ts';

/** The same bytes directoryStats counts: a JSON array of {name, type, kind[, description]}. */
export async function listDirectory(request: Request, services: Services): Promise<Response> {
  const url = new URL(request.url);
  const full = ['1', 'true', 'yes'].includes(url.searchParams.get('full') ?? '');
  const type = url.searchParams.get('type') || null;
  const { body, count } = await services.directory.listing(type, full);
  return new Response(request.method === 'HEAD' ? null : body, {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-directory-rows': String(count) },
  });
}
