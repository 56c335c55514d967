// A call as the ledger shows it: its events, read back into the tool it named, when it ran, what
// the door answered and its outcome (the same words as a DispatchResult's). Pure.

export type CallOutcome = 'OK' | 'ERROR' | 'REFUSED' | 'DRY_RUN';

/** The columns of one event a call's summary needs (metadata read as its `step`, `code` and MCP `isError`). */
export type CallEventRow = {
  kind: string;
  direction: string;
  tool: string | null;
  status: string | null;
  method: string | null;
  capture: string | null;
  step: string | null;
  code: string | null;
  mcp_error: string | null;
  occurred_at: Date;
};

export type CallSummary = {
  tool: string | null;
  outcome: CallOutcome | null;
  /** What the door answered (its status), else the last status recorded. */
  status: string | null;
  startedAt: Date;
  endedAt: Date;
  events: number;
};

/**
 * Rows in position order. REFUSED when anything refused it, DRY_RUN when it was only rendered, ERROR
 * when a tool result failed (status ERROR or an error code; an HTTP status of 400 or more; a CLI or
 * built-in exit status other than 0; an MCP result with isError), OK when every result succeeded,
 * null when no tool ran (a read, an ingest).
 */
export function summarizeCall(rows: readonly CallEventRow[]): CallSummary {
  const first = rows[0]!;
  const answer = rows.findLast((r) => r.kind === 'RESPONSE' && r.direction === 'OUT' && r.capture === 'boundary');
  const methodOfStep = new Map(rows.filter((r) => r.kind === 'TOOL_CALL').map((r) => [r.step ?? '', r.method]));
  const results = rows.filter((r) => r.kind === 'TOOL_RESULT');
  const failed = (r: CallEventRow) => {
    if (r.status === 'ERROR' || r.code !== null || r.mcp_error === 'true') return true;
    const method = methodOfStep.get(r.step ?? '') ?? null;
    if (method === 'MCP') return false;
    if (method === 'CLI' || method === 'BUILTIN') return r.status !== '0';
    return Number(r.status) >= 400;
  };
  let outcome: CallOutcome | null = null;
  if (rows.some((r) => r.kind === 'REFUSAL')) outcome = 'REFUSED';
  else if (rows.some((r) => r.kind === 'DRY_RUN')) outcome = 'DRY_RUN';
  else if (results.length) outcome = results.some(failed) ? 'ERROR' : 'OK';
  let endedAt = first.occurred_at;
  for (const r of rows) if (r.occurred_at > endedAt) endedAt = r.occurred_at;
  return {
    tool: rows.find((r) => r.tool !== null)?.tool ?? null,
    outcome,
    status: answer?.status ?? rows.findLast((r) => r.status !== null)?.status ?? null,
    startedAt: first.occurred_at,
    endedAt,
    events: rows.length,
  };
}
