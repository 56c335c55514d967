// The Ledger core: append() is the only write path; reads verify every byte they serve.
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { sqlExecutorOf } from '../db/client.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { TextArray, type SqlExecutor } from '../db/sql.ts';
import { DomainError, ErrorCode, badInput } from '../errors.ts';
import type { BatchInput, EventInput, PayloadState } from './input.ts';
import { objectKey, type ObjectStore } from './object-store.ts';
import { SYNC_DEFLATE_MAX_BYTES, decodeInline, encodeInline, encodeSmallInline, labelEncoding, sha256Hex, type PayloadEncoding } from './payload.ts';
import type { SecretRedactor } from '../secrets/redact.ts';
import { type BatchHead, type BlobRow, type ChainMode, type PreparedBlob, type PreparedEvent, appendStatement, blobRow } from './append.ts';
import { CURRENT_CHAIN_VERSION } from './chain.ts';
import { storedColumns, takeRedacted } from './redacted-event.ts';
import { LRUCache } from 'lru-cache';

export type LedgerLimits = {
  inlineMaxBytes: number;
  payloadMaxBytes: number;
  /** The chain version each batch is appended with (default: the current one). 'off' only to measure what the chain costs (bench); such batches fail verification. */
  chain?: ChainMode;
};

export type AppendResult = {
  batchId: string;
  received: number;
  inserted: number;
  duplicates: number;
  /** The collector's delivered position after this batch. */
  position: bigint | null;
  /** Events this batch added, in position order. */
  appended: { id: string; position: bigint }[];
};

/**
 * Which of these hashes are stored. The hashes arrive as a binary text[] (TextArray) and are cast to
 * bpchar[] because blob.sha256 is char(64): against text[] PostgreSQL compares sha256::text and cannot
 * use the primary key, so every batch scanned the whole blob table (ingest slowed as the ledger grew).
 */
export const knownBlobsSql = 'SELECT sha256 FROM blob WHERE sha256 = ANY($1::text[]::bpchar[])';

export class Ledger {
  private readonly listeners = new Set<(result: AppendResult) => void>();
  /** Blob hashes known to be stored (~6 MB of hashes at most). */
  // Bounded by count through maxSize, not max: lru-cache allocates arrays for `max` entries up front.
  private readonly knownBlobs = new LRUCache<string, true>({ maxSize: 65_536, sizeCalculation: () => 1 });

  private readonly sql: SqlExecutor;

  readonly prisma: PrismaClient;
  readonly objects: ObjectStore;
  private readonly redactor: SecretRedactor;
  readonly limits: LedgerLimits;
  /** `sql` defaults to the driver-level executor openDatabase opened with `prisma`. */
  constructor(prisma: PrismaClient, objects: ObjectStore, redactor: SecretRedactor, limits: LedgerLimits, sql?: SqlExecutor) {
    this.prisma = prisma;
    this.objects = objects;
    this.redactor = redactor;
    this.limits = limits;
    const executor = sql ?? sqlExecutorOf(prisma);
    if (!executor) throw new Error('Ledger needs the SQL executor of its database: open it with openDatabase, or pass one.');
    this.sql = executor;
  }

  /** Called after each commit that added events (never before, never for a rolled-back batch). */
  onAppended(listener: (result: AppendResult) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Appends one batch in one transaction: blobs, events (a known id adds nothing and
   * counts as a duplicate), the batch's accounting row and the collector's position.
   */
  async append(batch: BatchInput): Promise<AppendResult> {
    const batchId = randomUUID();
    const seen = new Set<string>();
    const blobs = new Map<string, PreparedBlob>();
    const events: PreparedEvent[] = [];
    let bytes = 0;
    for (let i = 0; i < batch.events.length; i++) {
      // Hashing, redacting and encoding a batch is a few µs an event: in slices, so a request that
      // arrives meanwhile (a dispatched call's answer) waits for one slice, not the whole batch.
      if (i % 64 === 63) await new Promise<void>((resolve) => setImmediate(resolve));
      const input = batch.events[i]!;
      if (seen.has(input.id)) continue;
      seen.add(input.id);
      const prepared = this.prepare(input, blobs);
      bytes += prepared.receivedBytes;
      events.push(prepared.event);
    }
    // From here on only what was prepared is referenced, not `batch`: its payload text (most of a
    // batch's heap) is garbage once prepared, instead of being copied by every young-generation
    // collection while the batch waits for the database.
    const head: BatchHead = {
      collector: this.redactor.text(batch.collector, new Set()),
      position: batch.position ?? null,
      received: batch.events.length,
      bytes,
    };
    return this.write(batchId, head, blobs, events);
  }

  private async write(batchId: string, head: BatchHead, blobs: Map<string, PreparedBlob>, events: PreparedEvent[]): Promise<AppendResult> {
    try {
      const blobRows = await this.storeBlobs([...blobs.values()]);
      // One statement, so one transaction and one round trip: the commit lock, the blobs, the events,
      // the batch row and the collector's position. The lock is held only while it executes.
      const appended = await appendStatement(this.sql, this.limits.chain ?? CURRENT_CHAIN_VERSION, batchId, head, blobRows, events);
      for (const row of blobRows) this.rememberBlob(row.sha256);
      const result: AppendResult = {
        batchId,
        received: head.received,
        inserted: appended.events.length,
        duplicates: head.received - appended.events.length,
        position: appended.collectorPosition,
        appended: appended.events,
      };
      if (result.inserted > 0) for (const listener of this.listeners) listener(result);
      return result;
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        throw new DomainError(ErrorCode.DATABASE_UNAVAILABLE, 'The ledger database is unavailable; nothing was written. Retry later.');
      }
      throw error;
    }
  }

  private prepare(input: EventInput, blobs: Map<string, PreparedBlob>): { event: PreparedEvent; receivedBytes: number } {
    // Every stored string goes through the one rule, identifiers included: an id or action id that
    // holds a secret is stored with it replaced, like any other column.
    // The columns and payload the spool redacted on the way in, with this redactor, else redacted here.
    const redacted = takeRedacted(input, this.redactor);
    const found = new Set<string>(redacted?.found);
    const text = (v: string | undefined) => (v === undefined ? null : this.redactor.text(v, found));
    const { url, headers, metadata } = redacted ?? storedColumns(input, this.redactor, found);
    this.refuseSecretHash(input.id, 'contract.sha256', input.contract?.sha256);
    this.refuseSecretHash(input.id, 'payload.artifactSha256', input.payload.artifactSha256);
    const payload = input.payload;
    let state: PayloadState = payload.state;
    let sha256: string | null = null;
    let size: bigint | null = payload.size === undefined ? null : BigInt(payload.size);
    let encoding: PayloadEncoding | null = null;
    let receivedBytes = 0;
    if (state === 'COMPLETE' || state === 'PARTIAL') {
      const known = redacted?.payload;
      const raw = known ? undefined : payload.text !== undefined ? Buffer.from(payload.text, 'utf8') : Buffer.from(payload.base64!, 'base64');
      receivedBytes = known ? known.size : raw!.length;
      if (receivedBytes > this.limits.payloadMaxBytes) {
        state = 'MISSING';
        size = BigInt(receivedBytes);
      } else {
        for (const name of known?.found ?? []) found.add(name);
        const bytes = known ? known.bytes : this.redactor.bytes(raw!, found);
        sha256 = sha256Hex(bytes);
        size = BigInt(bytes.length);
        encoding = labelEncoding(bytes);
        if (!blobs.has(sha256)) blobs.set(sha256, { sha256, bytes, encoding });
      }
    }
    // Only the columns are kept, not `input`: its payload text is garbage once the bytes are in `blobs`.
    const artifact = state === 'ARTIFACT';
    return {
      receivedBytes,
      event: {
        id: text(input.id)!,
        kind: text(input.kind)!,
        direction: input.direction,
        actionId: text(input.actionId)!,
        tool: text(input.tool),
        session: text(input.session),
        turn: text(input.turn),
        task: text(input.task),
        agent: text(input.agent),
        model: text(input.model),
        status: text(input.status),
        method: text(input.method),
        url,
        headers,
        costUsd: input.costUsd ?? null,
        inputTokens: input.inputTokens ?? null,
        outputTokens: input.outputTokens ?? null,
        occurredAt: input.occurredAt,
        state,
        sha256,
        size,
        encoding,
        artifactUri: artifact ? text(payload.artifactUri) : null,
        artifactSha256: artifact ? (payload.artifactSha256 ?? null) : null,
        redacted: found.size === 0 ? '' : [...found].sort().join(','),
        metadata,
        contractForm: text(input.contract?.form),
        contractSha256: input.contract?.sha256 ?? null,
      },
    };
  }

  /** A hash column holds 64 hex digits and cannot be changed: one that spells a secret (its hex form) is refused. */
  private refuseSecretHash(id: string, field: string, hash: string | undefined): void {
    if (hash === undefined) return;
    const found = new Set<string>();
    if (this.redactor.text(hash, found) === hash) return;
    const safeId = this.redactor.text(id, new Set());
    throw badInput(
      `Event ${JSON.stringify(safeId)}: ${field} holds the secret ${[...found].map((n) => `[${n}]`).join(', ')} (hex-encoded); a hash column cannot be redacted, so the batch was refused.`,
      {
        field,
        secrets: [...found],
      },
    );
  }

  /** Encodes new blobs: small ones compressed for inline rows, large ones written to the object store. */
  private async storeBlobs(blobs: PreparedBlob[]): Promise<BlobRow[]> {
    const unknown = blobs.filter((b) => !this.knownBlobs.has(b.sha256));
    if (unknown.length === 0) return [];
    const existing = new Set(
      (
        await this.sql.query<{ sha256: string }>(knownBlobsSql, [new TextArray(unknown.map((b) => b.sha256))], {
          prepared: 'ledger_known_blobs',
          genericPlan: true,
        })
      ).map((r) => r.sha256),
    );
    const fresh = unknown.filter((b) => !existing.has(b.sha256)).sort((a, b) => (a.sha256 < b.sha256 ? -1 : 1));
    for (const sha of existing) this.rememberBlob(sha);
    const rows: BlobRow[] = [];
    const puts: Promise<void>[] = [];
    for (const [i, blob] of fresh.entries()) {
      if (blob.bytes.length > this.limits.inlineMaxBytes) {
        const key = objectKey(blob.sha256);
        const put = this.objects.put(key, blob.bytes);
        put.catch(() => {}); // awaited below; handled now so a failure while compressing is not "unhandled"
        puts.push(put);
        rows.push(blobRow(blob, 'OBJECT', 'identity', null, key, blob.bytes.length));
        continue;
      }
      // Small payloads compress synchronously; yield now and then so a batch holding the commit lock is not kept waiting.
      if (i % 32 === 31) await new Promise<void>((resolve) => setImmediate(resolve));
      const { codec, data } = blob.bytes.length <= SYNC_DEFLATE_MAX_BYTES ? encodeSmallInline(blob.bytes) : await encodeInline(blob.bytes);
      rows.push(blobRow(blob, 'INLINE', codec, data, null, data.length));
    }
    await Promise.all(puts);
    return rows;
  }

  private rememberBlob(sha256: string): void {
    this.knownBlobs.set(sha256, true);
  }

  /** The exact stored bytes of a blob, verified against its hash; null for an unknown hash. */
  async readBlob(sha256: string): Promise<Buffer | null> {
    const rows = await this.prisma.$queryRawUnsafe<{ storage: 'INLINE' | 'OBJECT'; codec: string; data: Uint8Array | null; object_key: string | null }[]>(
      'SELECT storage::text AS storage, codec, data, object_key FROM blob WHERE sha256 = $1',
      sha256,
    );
    const row = rows[0];
    return row ? this.blobBytes({ sha256, storage: row.storage, codec: row.codec, data: row.data, objectKey: row.object_key }) : null;
  }

  /** The bytes of a blob row already read (inline data, or its object fetched), verified against its hash. */
  async blobBytes(row: StoredBlob): Promise<Buffer> {
    const { sha256 } = row;
    let bytes: Buffer | null;
    if (row.storage === 'INLINE') {
      try {
        bytes = await decodeInline(row.codec, row.data!);
      } catch (error) {
        throw new DomainError(ErrorCode.BLOB_CORRUPT, `Blob ${sha256} failed verification: its inline bytes do not decode (${(error as Error).message}).`);
      }
    } else bytes = await this.objects.get(row.objectKey!);
    if (!bytes) {
      throw new DomainError(ErrorCode.BLOB_CORRUPT, `Blob ${sha256} is recorded but its object is missing from the ${this.objects.kind} store.`);
    }
    if (sha256Hex(bytes) !== sha256) {
      throw new DomainError(ErrorCode.BLOB_CORRUPT, `Blob ${sha256} failed verification: the stored bytes no longer match their hash.`);
    }
    return bytes;
  }
}

/** The columns of a blob row that locate and verify its bytes. */
export type StoredBlob = { sha256: string; storage: 'INLINE' | 'OBJECT'; codec: string; data: Uint8Array | null; objectKey: string | null };
