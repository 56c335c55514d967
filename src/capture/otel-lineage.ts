// Where a span without a session or agent takes them from: its nearest ancestor in the same export
// request that names them, else what the ancestor just outside the request was filed under, from a
// bounded cache of spans stored by this process or from the ledger (their action id is the span's).
// Exporters batch by time, so a parent may come in an earlier request; one that comes later (a child
// often ends, and is exported, first) is not waited for: the ledger is append-only.
import { LRUCache } from 'lru-cache';
import type { EventInput } from '../ledger/input.ts';
import type { OtelAttributes, OtelResourceSpans, OtelSpan } from './otel-spans.ts';

/** What a span's events were filed under. */
export type Filing = { session?: string; agent?: string };

/** A span's action id, `otel:<trace>:<span>`: every event of the span carries it. */
export const spanActionId = (traceId: string, spanId: string) => `otel:${traceId}:${spanId}`;

/** How many spans' filings the cache keeps (about 200 bytes each). */
export const FILING_CACHE_SPANS = 50_000;

/** A span's action id from a 16-byte trace id and an 8-byte span id, in lowercase hex. */
const WELL_FORMED = /^otel:[0-9a-f]{32}:[0-9a-f]{16}$/;

/** Bounded hops up a chain of parents: a hostile request may send a cycle. */
const MAX_HOPS = 256;

/** The filings of spans stored earlier: this process's own first, then the ledger's for the rest. */
export class SpanFilings {
  // Bounded by count through maxSize, not max: lru-cache allocates arrays for `max` entries up front.
  private readonly cache = new LRUCache<string, Filing>({ maxSize: FILING_CACHE_SPANS, sizeCalculation: () => 1 });
  private readonly lookup: (actionIds: string[]) => Promise<Map<string, Filing>>;
  constructor(lookup: (actionIds: string[]) => Promise<Map<string, Filing>>) {
    this.lookup = lookup;
  }

  /** The filings of these spans (by action id) that were stored; one ledger read for those not cached. */
  async of(actionIds: readonly string[]): Promise<Map<string, Filing>> {
    const found = new Map<string, Filing>();
    const missed: string[] = [];
    for (const id of actionIds) {
      const hit = this.cache.get(id);
      if (hit) found.set(id, hit);
      else missed.push(id);
    }
    if (missed.length === 0) return found;
    for (const [id, filing] of await this.lookup(missed)) {
      found.set(id, filing);
      this.cache.set(id, filing);
    }
    return found;
  }

  /** Remembers what the stored spans were filed under (their first event each). */
  remember(events: readonly EventInput[]): void {
    for (const e of events) {
      if (e.actionId.startsWith('otel:') && !this.cache.has(e.actionId)) {
        this.cache.set(e.actionId, { ...(e.session && { session: e.session }), ...(e.agent && { agent: e.agent }) });
      }
    }
  }
}

type Reader = (a: OtelAttributes) => string | undefined;

/** The spans of one request by id, and the filings of the ancestors just outside it that some span needs. */
export class Lineage {
  private readonly spans = new Map<string, OtelSpan>();
  private outside = new Map<string, Filing>();
  constructor(request: readonly OtelResourceSpans[]) {
    for (const r of request) for (const s of r.scopes) for (const span of s.spans) this.spans.set(spanActionId(span.traceId, span.spanId), span);
  }

  /** Reads the filings of every ancestor outside the request that a span lacking `readers`' values leads to. */
  async resolve(filings: SpanFilings | undefined, readers: readonly Reader[]): Promise<void> {
    if (!filings) return;
    const needed = new Set<string>();
    for (const span of this.spans.values()) {
      for (const read of readers) {
        const found = this.walk(span, read);
        if (found.outside) needed.add(found.outside);
      }
    }
    if (needed.size) this.outside = await filings.of([...needed]);
  }

  /** The value the nearest ancestor names (in the request), else what the ancestor outside it was filed under. */
  inherited(span: OtelSpan, read: Reader, field: keyof Filing): string | undefined {
    const found = this.walk(span, read);
    return found.value ?? (found.outside ? this.outside.get(found.outside)?.[field] : undefined);
  }

  /** Up the parents from `span` (itself excluded) to the first naming a value, or to the first parent not in the request. */
  private walk(span: OtelSpan, read: Reader): { value?: string; outside?: string } {
    if (read(span.attributes) !== undefined) return {};
    let at = span;
    for (let step = 0; step < MAX_HOPS && at.parentSpanId; step++) {
      const key = spanActionId(at.traceId, at.parentSpanId);
      const parent = this.spans.get(key);
      // Only well-formed ids are looked up: a hostile request's are never sent to the database.
      if (!parent) return WELL_FORMED.test(key) ? { outside: key } : {};
      const value = read(parent.attributes);
      if (value !== undefined) return { value };
      at = parent;
    }
    return {};
  }
}
