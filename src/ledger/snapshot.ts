// One call's picture of a window of the ledger (the seed's counts-route snapshot): how many events,
// how many distinct tools, models and sessions, and the tokens and cost they add up to, summed in
// SQL from the rows that match (one statement).
import type { Database } from '../db/client.ts';
import { badInput } from '../errors.ts';
import { filterConditions, runRead, SqlParams } from './event-select.ts';
import type { LedgerFilter } from './filter.ts';

export type LedgerSnapshot = {
  asOf: Date;
  /** The window as asked (e.g. `1d`), or null when the filter alone bounds it. */
  window: string | null;
  filter: LedgerFilter;
  events: number;
  distinctTools: number;
  distinctModels: number;
  distinctSessions: number;
  inputTokens: bigint;
  outputTokens: bigint;
  /** Exact decimal, as text without trailing zeros. */
  costUsd: string;
};

const units: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30m`, `1h`, `1d`, `30d`: at most 3650 days. */
export const windowPattern = /^([1-9]\d{0,5})([mhd])$/;

/** The filter for the window ending now: occurredFrom moved to now − window (a later occurredFrom of the filter stays). */
export function windowFilter(window: string | null | undefined, filter: LedgerFilter, now: Date): LedgerFilter {
  if (window === null || window === undefined) return filter;
  const m = windowPattern.exec(window);
  const ms = m ? Number(m[1]) * units[m[2]!]! : Number.NaN;
  if (!m || ms > 3650 * units.d!) throw badInput(`Invalid window: expected a duration like 30m, 1h, 1d or 30d (at most 3650d), got ${JSON.stringify(window)}`);
  const from = new Date(now.getTime() - ms);
  return { ...filter, occurredFrom: filter.occurredFrom && filter.occurredFrom > from ? filter.occurredFrom : from };
}

type SnapshotRow = { events: bigint; tools: bigint; models: bigint; sessions: bigint; input_tokens: string; output_tokens: string; cost_usd: string };

export async function ledgerSnapshot(db: Database, window: string | null, filter: LedgerFilter, now = new Date()): Promise<LedgerSnapshot> {
  const windowed = windowFilter(window, filter, now);
  const params = new SqlParams();
  const where = filterConditions(windowed, params);
  const text = `SELECT count(*) AS events, count(DISTINCT e.tool) AS tools, count(DISTINCT e.model) AS models, count(DISTINCT e.session) AS sessions,
       coalesce(sum(e.input_tokens), 0)::text AS input_tokens, coalesce(sum(e.output_tokens), 0)::text AS output_tokens,
       trim_scale(coalesce(sum(e.cost_usd), 0))::text AS cost_usd FROM ledger_event e${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
  const [row] = await runRead<SnapshotRow>(db.sql, text, params);
  return {
    asOf: now,
    window: window ?? null,
    filter: windowed,
    events: Number(row!.events),
    distinctTools: Number(row!.tools),
    distinctModels: Number(row!.models),
    distinctSessions: Number(row!.sessions),
    inputTokens: BigInt(row!.input_tokens),
    outputTokens: BigInt(row!.output_tokens),
    costUsd: row!.cost_usd,
  };
}
