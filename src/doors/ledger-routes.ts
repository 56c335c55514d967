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
import { IngestGate } from './ingest-gate.ts';
import { errorResponse, json, readJson } from './respond.ts';

/**
 * Batches read, parsed and appended at once per app; each batch held costs several times its body
 * in memory. On PostgreSQL appends hold the commit lock one at a time anyway; three in flight keep
 * both cores busy (one batch under the lock, one storing its blobs, one being parsed and hashed
 * here). PGlite runs every statement on this thread, so one batch in the database and one being
 * read and prepared is all the overlap there is.
 */
const INGEST_SLOTS = { postgres: 3, pglite: 2 } as const;
/** Requests waiting for the gate at most (each holds only its socket); one more is refused at once. */
const INGEST_MAX_WAITING = 256;

const gates = new WeakMap<Services, IngestGate>();

/** The app's one ingest gate, shared by every door that appends collectors' batches (ingest, OTLP). */
export function ingestGate(services: Services): IngestGate {
  let gate = gates.get(services);
  if (!gate) {
    const { INGEST_INFLIGHT_MAX_BYTES, INGEST_WAIT_MAX_MS } = services.config;
    gate = new IngestGate({
      slots: INGEST_SLOTS[services.db.kind],
      maxBytes: INGEST_INFLIGHT_MAX_BYTES,
      maxWaiting: INGEST_MAX_WAITING,
      maxWaitMs: INGEST_WAIT_MAX_MS,
    });
    gates.set(services, gate);
  }
  return gate;
}

/** What a request's body will hold, for the gate: its declared length, or the most a body may be when it declares none. */
export function bodyBytesOf(request: Request, limit: number): number {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  return Number.isFinite(declared) && declared >= 0 ? Math.min(declared, limit) : limit;
}

export async function ingestBatch(request: Request, services: Services): Promise<Response> {
  const gate = ingestGate(services);
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
