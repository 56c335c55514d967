// Recomputes the ledger's hash chain from the stored rows (src/ledger/chain.ts) and names what no
// longer matches: a changed event and its columns, a deleted event or batch, a changed batch row, a
// chain head that disagrees with the last batch, a collector whose position was rewound.
import type { SqlExecutor, SqlQueryable } from '../db/sql.ts';
import { batchSelectSql, EventCursor, lastPositionOf, type StoredBatch, type StoredEvent } from './verify-rows.ts';
import { BATCH_FIELDS, type ChainVersion, ChainVersions, GENESIS_LINK, batchLink, columnSumsSql, eventDigest, eventFieldsOf, parseDigests } from './chain.ts';

export const ChainProblemKinds = [
  'EVENT_CHANGED',
  'EVENT_MISSING',
  'EVENT_UNCHAINED',
  'BATCH_CHANGED',
  'BATCH_MISSING',
  'HEAD_MISMATCH',
  'COLLECTOR_REWOUND',
  'COLLECTOR_MISSING',
  'COLLECTOR_AHEAD',
] as const;
export type ChainProblemKind = (typeof ChainProblemKinds)[number];

export type ChainProblem = {
  kind: ChainProblemKind;
  message: string;
  chainSeq?: bigint;
  batchId?: string;
  position?: bigint;
  eventId?: string;
  /** The event columns whose values no longer hash as appended (EVENT_CHANGED), when they can be told. */
  columns?: string[];
  collector?: string;
};

export type LedgerVerification = {
  ok: boolean;
  /** Chained batches and events recomputed. */
  batches: number;
  events: number;
  firstSeq: bigint | null;
  lastSeq: bigint | null;
  /** The last batch's link: what a checkpoint at lastSeq signs. */
  lastLink: Buffer | null;
  /** The highest event position the verified batches cover. */
  lastPosition: bigint | null;
  /** Events at or below this position were stored before the chain began (not covered). */
  genesisPosition: bigint;
  head: { seq: bigint; link: Buffer } | null;
  /** The first `limit` problems in ledger order; `problemCount` counts them all. */
  problems: ChainProblem[];
  problemCount: number;
};

export type VerifyRange = {
  /** Verify the batches holding events from this position on (default: from the chain's start). */
  from?: bigint;
  /** ... up to the batch holding this position (default: to the head, with the head and collectors checked). */
  to?: bigint;
  /** Verify from the chain's start up to this batch (chain_seq) instead; what a checkpoint signs. */
  throughSeq?: bigint;
  /** Problems listed at most (default 100); all are counted. */
  limit?: number;
};

/** Recomputes the chain over `range` in one read-only snapshot. */
export async function verifyLedger(sql: SqlExecutor, range: VerifyRange = {}): Promise<LedgerVerification> {
  return sql.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return verifyIn(tx, range);
  });
}

async function verifyIn(sql: SqlQueryable, range: VerifyRange): Promise<LedgerVerification> {
  const limit = range.limit ?? 100;
  const problems: ChainProblem[] = [];
  let problemCount = 0;
  const report = (problem: ChainProblem) => {
    problemCount++;
    if (problems.length < limit) problems.push(problem);
  };

  const [headRow] = await sql.query<{ seq: bigint; link: Uint8Array; genesis_position: bigint }>(
    'SELECT seq, link, genesis_position FROM ledger_chain WHERE id',
  );
  const head = headRow ? { seq: headRow.seq, link: Buffer.from(headRow.link) } : null;
  const genesisPosition = headRow?.genesis_position ?? 0n;
  if (!head) report({ kind: 'HEAD_MISMATCH', message: 'The chain head row (ledger_chain) is missing.' });
  const [maxRow] = await sql.query<{ max: bigint | null }>('SELECT max(chain_seq) AS max FROM ledger_batch');
  const lastStoredSeq = maxRow?.max ?? 0n;

  const seqOf = async (position: bigint, direction: 'first' | 'last') =>
    (
      await sql.query<{ chain_seq: bigint }>(
        `SELECT b.chain_seq FROM ledger_event e JOIN ledger_batch b ON b.id = e.batch_id
         WHERE e.position ${direction === 'first' ? '>=' : '<='} $1 AND b.chain_seq IS NOT NULL
         ORDER BY e.position ${direction === 'first' ? 'ASC' : 'DESC'} LIMIT 1`,
        [position],
      )
    )[0]?.chain_seq ?? null;
  const through = range.throughSeq;
  const whole = range.from === undefined && range.to === undefined && through === undefined;
  const toEnd = range.to === undefined && through === undefined;
  const firstSeq = range.from === undefined || through !== undefined ? 1n : await seqOf(range.from, 'first');
  const lastSeq = through ?? (toEnd ? (head && head.seq > lastStoredSeq ? head.seq : lastStoredSeq) : await seqOf(range.to!, 'last'));

  let previous: Buffer | null = GENESIS_LINK;
  let after = genesisPosition;
  if (firstSeq !== null && firstSeq > 1n) {
    const [row] = await sql.query<{ chain_link: Uint8Array | null }>('SELECT chain_link FROM ledger_batch WHERE chain_seq = $1', [firstSeq - 1n]);
    previous = row?.chain_link ? Buffer.from(row.chain_link) : null;
    if (!row) report({ kind: 'BATCH_MISSING', chainSeq: firstSeq - 1n, message: `Batch ${firstSeq - 1n} of the chain is missing (deleted).` });
    const before = await lastPositionOf(sql, firstSeq - 1n);
    if (before !== null && before > after) after = before;
  }

  let batches = 0;
  let events = 0;
  let expectedSeq = firstSeq ?? 1n;
  let lastLink: Buffer | null = null;
  let lastPosition: bigint | null = null;
  let verifiedSeq: bigint | null = null;
  // With `to`, events past the last verified batch are not looked at; they belong to later batches.
  const cursor = firstSeq === null || lastSeq === null ? null : new EventCursor(sql, after, toEnd ? null : await lastPositionOf(sql, lastSeq));

  while (cursor && lastSeq !== null && expectedSeq <= lastSeq) {
    const page = (await sql.query<Record<string, unknown>>(batchSelectSql, [expectedSeq, lastSeq])).map(
      (row): StoredBatch => ({
        fields: BATCH_FIELDS.map((_, i) => (row[`f${i}`] as string | null) ?? null),
        version: ChainVersions.find((v) => String(v) === row[`f${BATCH_FIELDS.length - 1}`]) ?? null,
        seq: row.chain_seq as bigint,
        id: row.f0 as string,
        link: row.chain_link ? Buffer.from(row.chain_link as Uint8Array) : null,
        digests: row.event_digests ? Buffer.from(row.event_digests as Uint8Array) : null,
        sums: (row.column_sums as string[] | null) ?? null,
      }),
    );
    if (page.length === 0) {
      report({ kind: 'BATCH_MISSING', chainSeq: expectedSeq, message: `Batches ${expectedSeq} to ${lastSeq} of the chain are missing (deleted).` });
      break;
    }
    for (const batch of page) {
      if (batch.seq !== expectedSeq) {
        const gap = batch.seq - 1n === expectedSeq ? `Batch ${expectedSeq}` : `Batches ${expectedSeq} to ${batch.seq - 1n}`;
        report({ kind: 'BATCH_MISSING', chainSeq: expectedSeq, message: `${gap} of the chain ${gap.startsWith('Batches') ? 'are' : 'is'} missing (deleted).` });
        previous = null; // the missing batch's link is unknown: this batch's own link cannot be recomputed
      }
      await verifyBatch(sql, batch, previous, cursor, report);
      batches++;
      events += batch.digests ? batch.digests.length / 40 : 0;
      previous = batch.link;
      lastLink = batch.link;
      verifiedSeq = batch.seq;
      const entries = batch.digests ? parseDigests(batch.digests) : null;
      if (entries?.length) lastPosition = entries.at(-1)!.position;
      expectedSeq = batch.seq + 1n;
    }
  }

  if (cursor && toEnd) {
    // Events after the last chained batch were appended without the chain.
    for (let event = await cursor.peek(); event; event = await cursor.peek()) {
      report(unchained(event));
      cursor.take();
    }
  }
  if (toEnd && head) {
    const [last] = await sql.query<{ chain_seq: bigint; chain_link: Uint8Array | null }>(
      'SELECT chain_seq, chain_link FROM ledger_batch WHERE chain_seq IS NOT NULL ORDER BY chain_seq DESC LIMIT 1',
    );
    const lastStoredLink = last?.chain_link ? Buffer.from(last.chain_link) : GENESIS_LINK;
    if ((last?.chain_seq ?? 0n) !== head.seq) {
      report({
        kind: 'HEAD_MISMATCH',
        chainSeq: head.seq,
        message: `The chain head is at batch ${head.seq}, but the last chained batch stored is ${last?.chain_seq ?? 0n}: batches at the end were deleted.`,
      });
    } else if (!lastStoredLink.equals(head.link)) {
      report({ kind: 'HEAD_MISMATCH', chainSeq: head.seq, message: `The chain head's link differs from batch ${head.seq}'s.` });
    }
  }
  if (toEnd) await verifyCollectors(sql, report);

  return {
    ok: problemCount === 0,
    batches,
    events,
    firstSeq: batches ? (firstSeq ?? null) : null,
    lastSeq: verifiedSeq,
    lastLink,
    lastPosition,
    genesisPosition,
    head: whole || toEnd ? head : null,
    problems,
    problemCount,
  };
}

const unchained = (event: StoredEvent): ChainProblem => ({
  kind: 'EVENT_UNCHAINED',
  position: event.position,
  eventId: event.id,
  message: `Event ${event.id} at position ${event.position} is in no chained batch: it was added outside the ledger's append, or its position was changed.`,
});

async function verifyBatch(
  sql: SqlQueryable,
  batch: StoredBatch,
  previous: Buffer | null,
  cursor: EventCursor,
  report: (problem: ChainProblem) => void,
): Promise<void> {
  const where = `batch ${batch.seq} (${batch.id})`;
  const entries = batch.digests ? parseDigests(batch.digests) : null;
  if (!batch.link || !entries) {
    report({ kind: 'BATCH_CHANGED', chainSeq: batch.seq, batchId: batch.id, message: `The chain columns of ${where} are missing or malformed.` });
    return;
  }
  const version = batch.version;
  if (version === null) {
    const stored = batch.fields[BATCH_FIELDS.length - 1];
    report({
      kind: 'BATCH_CHANGED',
      chainSeq: batch.seq,
      batchId: batch.id,
      message: `The chain_version of ${where} is ${stored ?? 'NULL'}, not a version of the chain (${ChainVersions.join(', ')}): it was changed, so neither it nor its events can be recomputed.`,
    });
  }
  const changed: StoredEvent[] = [];
  const matched: bigint[] = [];
  let missing = 0;
  for (const entry of entries) {
    let event = await cursor.peek();
    while (event && event.position < entry.position) {
      report(unchained(event));
      cursor.take();
      event = await cursor.peek();
    }
    if (!event || event.position !== entry.position) {
      missing++;
      report({
        kind: 'EVENT_MISSING',
        chainSeq: batch.seq,
        batchId: batch.id,
        position: entry.position,
        message: `The event at position ${entry.position}, appended in ${where}, is missing (deleted).`,
      });
      continue;
    }
    cursor.take();
    if (version === null) continue;
    matched.push(event.position);
    if (!eventDigest(version, event.fields).equals(entry.digest)) changed.push(event);
  }
  if (changed.length && version !== null) {
    const columns = missing === 0 ? await changedColumns(sql, version, batch, matched) : undefined;
    // Version 2's digest leaves the position out: an event whose digest is another entry's was moved there.
    const appendedAt = new Map(version === 2 ? entries.map((e) => [e.digest.toString('hex'), e.position]) : []);
    for (const event of changed) {
      const movedFrom = appendedAt.get(eventDigest(version, event.fields).toString('hex'));
      const named = movedFrom === undefined ? columns : ['position'];
      const what = movedFrom === undefined ? (columns?.length ? `: changed ${columns.join(', ')}` : '') : `: changed position (appended at ${movedFrom})`;
      report({
        kind: 'EVENT_CHANGED',
        chainSeq: batch.seq,
        batchId: batch.id,
        position: event.position,
        eventId: event.id,
        ...(named && { columns: named }),
        message: `Event ${event.id} at position ${event.position} no longer matches what ${where} appended${what}.`,
      });
    }
  }
  // The batch row itself: its columns and stored digests must hash to its stored link.
  if (previous && version !== null && !batchLink(version, previous, batch.fields, batch.digests!).equals(batch.link)) {
    report({
      kind: 'BATCH_CHANGED',
      chainSeq: batch.seq,
      batchId: batch.id,
      message: `The row of ${where} no longer hashes to its link: its columns (collector, position, counts, received_at, chain_version) or stored digests were changed.`,
    });
  }
}

/** The columns whose per-batch sums differ from those stored when the batch was appended. */
async function changedColumns(sql: SqlQueryable, version: ChainVersion, batch: StoredBatch, positions: bigint[]): Promise<string[] | undefined> {
  const fields = eventFieldsOf(version);
  if (!batch.sums || batch.sums.length !== fields.length) return undefined;
  const [row] = await sql.query<{ sums: string[] }>(columnSumsSql(version), [positions.map(String)]);
  if (!row) return undefined;
  return fields.filter((_, i) => row.sums[i] !== batch.sums![i]).map((f) => f.column);
}

async function verifyCollectors(sql: SqlQueryable, report: (problem: ChainProblem) => void): Promise<void> {
  // A collector's delivered position is the highest position any of its batches carried (GREATEST on append).
  const rows = await sql.query<{ collector: string; recorded: bigint | null; delivered: bigint | null }>(
    `SELECT coalesce(b.collector, c.id) AS collector, b.recorded, c.delivered_position AS delivered
     FROM (SELECT collector, max(position) AS recorded FROM ledger_batch WHERE position IS NOT NULL GROUP BY collector) b
     FULL JOIN collector c ON c.id = b.collector
     WHERE b.recorded IS DISTINCT FROM c.delivered_position
     ORDER BY 1`,
  );
  for (const { collector, recorded, delivered } of rows) {
    if (delivered === null) {
      report({ kind: 'COLLECTOR_MISSING', collector, message: `Collector ${JSON.stringify(collector)} is missing; its batches delivered up to ${recorded}.` });
    } else if (recorded === null || delivered > recorded) {
      report({
        kind: 'COLLECTOR_AHEAD',
        collector,
        message: `Collector ${JSON.stringify(collector)} is at ${delivered}, beyond any position its batches carried (${recorded ?? 'none'}).`,
      });
    } else {
      report({
        kind: 'COLLECTOR_REWOUND',
        collector,
        message: `Collector ${JSON.stringify(collector)} was rewound: it is at ${delivered}, but its batches delivered up to ${recorded}.`,
      });
    }
  }
}
