// `dirledger find <words>`: asks a running server's resolver over HTTP (GET /api/directory/resolve),
// so the CLI answers from the same live index as the GraphQL and HTTP doors.
import type { resolutionJson } from '../doors/resolver-routes.ts';
import { EXIT_REFUSED, isRefusalStatus, refusalLine } from './token.ts';

export type FindOptions = { url: string; token?: string; minScore?: string; limit?: string; types?: string; json?: boolean };
type Answer = ReturnType<typeof resolutionJson>;

/** Prints the answer; returns the exit code (0 answered, 2 refused as bad input, 3 server unreachable or failing, 4 refused for its credential). */
export async function find(words: string[], opts: FindOptions, out = process.stdout, err = process.stderr): Promise<number> {
  const url = new URL('/api/directory/resolve', opts.url);
  url.searchParams.set('q', words.join(' '));
  if (opts.minScore !== undefined) url.searchParams.set('minScore', opts.minScore);
  if (opts.limit !== undefined) url.searchParams.set('limit', opts.limit);
  if (opts.types !== undefined) url.searchParams.set('types', opts.types);
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) } });
  } catch (error) {
    err.write(`Cannot reach the server at ${opts.url} (${(error as Error).message}). Start one with \`dirledger serve\` or pass --url.\n`);
    return 3;
  }
  const body = (await response.json().catch(() => null)) as (Answer & { error?: { code: string; message: string } }) | null;
  if (isRefusalStatus(response.status)) {
    err.write(`${refusalLine(response.status, body?.error, Boolean(opts.token))}\n`);
    return EXIT_REFUSED;
  }
  if (!response.ok || !body || body.error) {
    err.write(`${body?.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${response.status}`}\n`);
    return response.status === 400 ? 2 : 3;
  }
  if (opts.json) {
    out.write(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  out.write(`read as: ${body.readAs.join(' ') || '(nothing)'}\n`);
  for (const m of body.matches) out.write(`${String(m.score).padStart(4)}  ${m.row.name} (${m.row.type})  ${m.layer}: ${m.reason}\n`);
  out.write(`${body.message}\n`);
  return 0;
}
