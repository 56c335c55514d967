// What an action's events were filed under (session, agent), by action id: an OTLP span inherits them
// from its parent span stored by an earlier request (src/capture/otel-lineage.ts).
import type { SqlQueryable } from '../db/sql.ts';

const filedSql = `SELECT DISTINCT ON (action_id) action_id, session, agent FROM ledger_event
  WHERE action_id = ANY($1::text[]) ORDER BY action_id, position`;

export async function filedUnder(sql: SqlQueryable, actionIds: string[]): Promise<Map<string, { session?: string; agent?: string }>> {
  const rows = await sql.query<{ action_id: string; session: string | null; agent: string | null }>(filedSql, [actionIds]);
  return new Map(rows.map((r) => [r.action_id, { ...(r.session !== null && { session: r.session }), ...(r.agent !== null && { agent: r.agent }) }]));
}
