// The ledger's HTTP doors: batch ingest for collectors that do not speak GraphQL,
// and the raw bytes of a blob. Neither is recorded as an event.
import { currentGrant } from '../context/request.ts';
import { readLimitOf, readRefusal } from '../auth/read-scope.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { BatchInput, parseBatchFast } from '../ledger/input.ts';
import { taskReferencesBlob } from '../ledger/reads.ts';
import type { Services } from '../services.ts';
import { parseInput } from '../validation.ts';
import { recordRefusal, refusalResponse } from './authenticate.ts';
import { errorResponse, json, readJson } from './respond.ts';

/** What a request's body will hold, for the gate: its declared length, or the most a body may be when it declares none. */
export function bodyBytesOf(request: Request, limit: number): number {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  return Number.isFinite(declared) && declared >= 0 ? Math.min(declared, limit) : limit;
}

export async function ingestBatch(request: Request, services: Services): Promise<Response> {
  const gate = services.ingestGate;
  const limit = services.config.BATCH_MAX_BYTES;
  try {
    const result = await gate.run(bodyBytesOf(request, limit), async () => {
      const body = await readJson(request, limit);
      const batch = parseBatchFast(body) ?? parseInput(BatchInput, body, 'batch');
      const grant = currentGrant();
      const refusal = grant && services.authority.allowsIngest(grant, 'INGEST', batch);
      if (refusal) {
        await recordRefusal(services, refusal, grant, request);
        return { refused: refusalResponse(refusal) };
      }
      return services.ledger.append(batch);
    });
    if ('refused' in result) return result.refused;
    return json({
      batchId: result.batchId,
      received: result.received,
      inserted: result.inserted,
      duplicates: result.duplicates,
      position: result.position,
    });
  } catch (error) {
    if (error instanceof DomainError) return errorResponse(error);
    throw error;
  }
}

const sha256Pattern = /^[0-9a-f]{64}$/;

export async function serveBlob(request: Request, sha256: string, services: Services): Promise<Response> {
  const hash = sha256.toLowerCase();
  if (!sha256Pattern.test(hash)) {
    return json({ error: { code: 'BAD_INPUT', message: `Expected a SHA-256 as 64 hex digits, got ${JSON.stringify(sha256.slice(0, 80))}.` } }, 400);
  }
  const etag = `"${hash}"`;
  const grant = currentGrant();
  const limit = readLimitOf(grant);
  if (limit.kind === 'none') {
    const refusal = readRefusal(grant!, 'BLOB', 'the blob route');
    await recordRefusal(services, refusal, grant, request);
    return refusalResponse(refusal);
  }
  const notFound = () => json({ error: { code: 'NOT_FOUND', message: `No blob with SHA-256 ${hash}.` } }, 404);
  try {
    // A task-scoped token reads only bytes an event of its task references; others look unknown.
    if (limit.kind === 'task' && !(await taskReferencesBlob(services.db.prisma, limit.task, hash))) return notFound();
    const bytes = await services.ledger.readBlob(hash);
    if (!bytes) return notFound();
    // private: what a token may read is its own; a shared cache must not hand the bytes to another holder.
    const headers = { etag, 'cache-control': 'private, max-age=31536000, immutable', vary: 'authorization', 'content-type': 'application/octet-stream' };
    if (matchesEtag(request.headers.get('if-none-match'), hash)) return new Response(null, { status: 304, headers });
    return new Response(request.method === 'HEAD' ? null : new Uint8Array(bytes), {
      status: 200,
      headers: { ...headers, 'content-length': String(bytes.length) },
    });
  } catch (error) {
    if (error instanceof DomainError) return errorResponse(error);
    if (isDatabaseUnavailable(error)) {
      return errorResponse(new DomainError(ErrorCode.DATABASE_UNAVAILABLE, 'The ledger database is unavailable. Retry later.'));
    }
    throw error;
  }
}

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2): a list, W/ tags and `*` all match. */
function matchesEtag(header: string | null, hash: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === `"${hash}"`);
}
