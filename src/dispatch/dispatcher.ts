// The runner: a Directory row's contract → the outgoing call, with its own ledger record.
// Transport-free: doors hand it a DispatchRequest inside their invocation context.
import { randomUUID } from 'node:crypto';
import type { EventInput } from '../ledger/input.ts';
import { currentInvocation } from '../capture/context.ts';

export type DispatchRequest = { tool: string; args?: Record<string, unknown>; dryRun?: boolean; form?: string };
export type DispatchOutcome = 'OK' | 'ERROR' | 'REFUSED' | 'DRY_RUN';
export type DispatchResult = {
  tool: string;
  actionId: string;
  outcome: DispatchOutcome;
  dryRun: boolean;
  /** Upstream HTTP status / CLI exit code when there is one. */
  status?: number;
  /** Parsed JSON when the answer is JSON, else text. */
  output?: unknown;
  /** The answer as text when it is UTF-8. */
  outputText?: string;
  /** The exact answer bytes. */
  outputBase64?: string;
  /** Dry run: the rendered outgoing request(s), secrets still as [NAME]. */
  requests?: unknown[];
  /** A sequence: each step's own result. */
  steps?: DispatchResult[];
  /** REFUSED / ERROR: a SCREAMING_SNAKE code and a clear message. */
  error?: { code: string; message: string };
};

export type DispatcherDeps = {
  /** Where the runner's own events go (the background writer's enqueue). */
  record(events: EventInput[]): Promise<void>;
};

/** Runs Directory rows' contracts. `dispatch` runs inside the caller's invocation context. */
export class Dispatcher {
  constructor(private readonly deps: DispatcherDeps) {}

  async dispatch(request: DispatchRequest): Promise<DispatchResult> {
    const actionId = currentInvocation()?.actionId ?? randomUUID();
    const result: DispatchResult = {
      tool: request.tool,
      actionId,
      outcome: 'REFUSED',
      dryRun: Boolean(request.dryRun),
      error: { code: 'NOT_RUNNABLE', message: `The runner is not wired to a Directory yet; ${JSON.stringify(request.tool)} was not called.` },
    };
    await this.deps.record([
      { id: `${actionId}:refusal:${randomUUID()}`, kind: 'REFUSAL', direction: 'OUT', actionId, tool: request.tool, status: 'REFUSED', occurredAt: new Date(), payload: { state: 'NONE' }, metadata: { error: result.error } },
    ]);
    return result;
  }
}
