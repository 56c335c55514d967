// Sending one rendered step: the runner for its kind (HTTP, MCP over HTTP or stdio, CLI), under the
// call's timeout and its caller's signal. Nothing here records: the recorder does (record.ts).
import { DomainError, ErrorCode } from '../errors.ts';
import { withOutboundCaptureFor, withoutOutboundCapture, type OutboundFor } from '../context/request.ts';
import { StreamPublisher, type StreamCut } from '../capture/tee.ts';
import type { RenderedStep } from './plan.ts';
import type { DispatchErrorCode } from './result.ts';
import { runCli, runHttp, type Limits, type Sent, type StepAnswer } from './runners.ts';

/**
 * An HTTP step is recorded by the runner itself (its TOOL_CALL and TOOL_RESULT hold the exact
 * bytes), so generic capture is off for it. The MCP SDK's HTTP traffic is captured on the wire,
 * tagged with the tool and contract: the runner's events hold the tool call and its result, and
 * only the wire holds the bytes (the handshake, the session header, an event-stream answer).
 */
export function sendStep(step: RenderedStep, limits: Limits, wire: Omit<OutboundFor, 'via'>): Promise<StepAnswer> {
  if (step.kind === 'mcp' && !step.sent.argv) return withOutboundCaptureFor({ ...wire, via: 'MCP' }, () => runMcp(step.sent, limits));
  return withoutOutboundCapture(() => {
    if (step.kind === 'http') return runHttp(step.sent, limits);
    if (step.kind === 'mcp') return runMcpOverStdio(step.sent, limits, wire);
    if (step.kind === 'cli') return runCli(step.sent, limits);
    throw new Error('a builtin is answered in process, not sent');
  });
}

/** The MCP client (src/dispatch/run-mcp.ts, with the SDK) loads with the first MCP step, not at start. */
async function runMcp(sent: Extract<Sent, { server: string }>, limits: Limits): Promise<StepAnswer> {
  const { runMcp: run } = await import('./run-mcp.ts');
  return run(sent, limits);
}

/**
 * An MCP step over stdio: the runner records the bytes of its pipes itself (the REQUEST/OUT and
 * RESPONSE/IN beside its TOOL_CALL and TOOL_RESULT), and at a streaming door publishes the
 * server's stdout as it arrives, ending COMPLETE when the call was answered, else PARTIAL.
 */
async function runMcpOverStdio(sent: Extract<Sent, { server: string }>, limits: Limits, wire: Omit<OutboundFor, 'via'>): Promise<StepAnswer> {
  if (!wire.publish) return runMcp(sent, limits);
  const publisher = new StreamPublisher(wire.publish);
  try {
    const answer = await runMcp(sent, { ...limits, onStdout: (chunk) => publisher.chunk(chunk) });
    publisher.end(answer.wire?.received.overflowed ? 'MISSING' : 'COMPLETE');
    return answer;
  } catch (error) {
    publisher.end('PARTIAL', wire.cut?.() ?? 'SOURCE_ERROR');
    throw error;
  }
}

/**
 * One step's clock: one controller and one timer (AbortSignal.any is slow and long-lived on Node 20).
 * An MCP answer is a stream: after the caller has gone the call goes on up to `keepAfterCallerMs`,
 * so the ledger still gets its answer (the wire capture keeps what arrived if it is cut).
 */
export class StepClock {
  readonly signal: AbortSignal;
  timedOut = false;
  private cutoffReached = false;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private cutoff: NodeJS.Timeout | undefined;
  private readonly onCaller = () => {
    if (this.keepAfterCallerMs <= 0) return this.abortForCaller();
    this.cutoff ??= setTimeout(() => {
      this.cutoffReached = true;
      this.abortForCaller();
    }, this.keepAfterCallerMs);
  };

  readonly timeoutMs: number;
  readonly keepAfterCallerMs: number;
  private readonly callerSignal?: AbortSignal;
  constructor(timeoutMs: number, keepAfterCallerMs: number, callerSignal?: AbortSignal) {
    this.timeoutMs = timeoutMs;
    this.keepAfterCallerMs = keepAfterCallerMs;
    this.callerSignal = callerSignal;
    this.signal = this.controller.signal;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    if (callerSignal?.aborted) this.onCaller();
    else callerSignal?.addEventListener('abort', this.onCaller, { once: true });
  }

  /** CUTOFF once the caller has gone and the cut-off passed. */
  cut = (): StreamCut | undefined => (this.cutoffReached ? 'CUTOFF' : undefined);

  get callerGone(): boolean {
    return Boolean(this.callerSignal?.aborted);
  }

  /** The answer (or failure) is in: the caller no longer matters; the timeout still runs until `stop`. */
  answered(): void {
    clearTimeout(this.cutoff);
    this.callerSignal?.removeEventListener('abort', this.onCaller);
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private abortForCaller(): void {
    this.controller.abort(new Error('the caller went away'));
  }
}

/** A SPOOL_UNAVAILABLE refusal behind an error (the outbound capture's, wrapped by fetch and the MCP client), if any. */
export function spoolRefusalIn(error: unknown): DomainError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DomainError && e.code === ErrorCode.SPOOL_UNAVAILABLE) return e;
  }
  return undefined;
}

/** Why a send failed (its code) and what the caller is told (before redaction). */
export function sendFailure(error: unknown, clock: StepClock, tool: string, responseMaxBytes: number): { code: DispatchErrorCode; message: string } {
  if (clock.timedOut) return { code: 'TIMEOUT', message: `${JSON.stringify(tool)} did not answer within ${clock.timeoutMs} ms; the call was abandoned.` };
  if (clock.callerGone) {
    const keep = clock.keepAfterCallerMs;
    return {
      code: 'CANCELLED',
      message:
        keep > 0 ? `The caller went away; the call went on for up to ${keep} ms more, then was cancelled.` : 'The caller went away; the call was cancelled.',
    };
  }
  if ((error as { code?: string }).code === 'RESPONSE_TOO_LARGE') {
    return { code: 'RESPONSE_TOO_LARGE', message: `The answer passed ${responseMaxBytes} bytes; the call was stopped and the answer not kept.` };
  }
  return { code: 'UPSTREAM_ERROR', message: `The call failed: ${errorText(error)}` };
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}
