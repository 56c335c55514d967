// The runner's own events: one call OUT and one response IN per step (with the pipes of an MCP step
// over stdio), or a refusal, or a dry run. When each is made durable is the spool's contract:
// a TOOL_CALL `now`, before its first byte leaves; a result `beforeAnswer`, at the latest before the
// caller is answered (a streamed result too: staged before the stream ends for the door, whose
// answer OUT makes it durable before the client reads the end).
import { randomUUID } from 'node:crypto';
import type { Invocation } from '../context/request.ts';
import type { StreamCut } from '../capture/tee.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { EventInput, PayloadInput } from '../ledger/input.ts';
import { bytesPayload } from '../capture/payload.ts';
import { unrecorded } from '../capture/unrecorded.ts';
import { plainTextProblem } from '../limits.ts';
import type { Logger } from '../logger.ts';
import { describeSent, type RenderedStep, type Way } from './plan.ts';
import type { DispatchErrorCode, DispatchRequest, DispatchResult, ResultBase } from './result.ts';
import type { StdioWire } from './mcp-stdio.ts';
import type { StepAnswer } from './runners.ts';

export type RecordWhen = 'now' | 'beforeAnswer';

export type EventRecord = {
  /**
   * Where the runner's own events go (the background writer). `now`: durable before this resolves
   * (a call before it is sent); `beforeAnswer`: durable at the latest before the caller is answered.
   */
  record(events: EventInput[], when: RecordWhen): Promise<void>;
  logger?: Logger;
};

/** A step contract's identity as its events name it. */
export type ContractRef = { form: string; sha256: string };

/** What the events of one step carry besides their kind: the args, and the step's number in a sequence. */
export type StepExtra = { args: Record<string, unknown>; step?: number };

/** Builds and records the events of one call. */
export class CallRecorder {
  args: Record<string, unknown> = {};

  private readonly sink: EventRecord;
  private readonly invocation: Invocation | undefined;
  private readonly actionId: string;
  private readonly request: DispatchRequest;
  constructor(sink: EventRecord, invocation: Invocation | undefined, actionId: string, request: DispatchRequest) {
    this.sink = sink;
    this.invocation = invocation;
    this.actionId = actionId;
    this.request = request;
  }

  stepExtra(index?: number): StepExtra {
    return { args: this.args, ...(index && { step: index }) };
  }

  private base(kind: string, direction: 'IN' | 'OUT', extra: Record<string, unknown> = {}): EventInput {
    const inv = this.invocation;
    return {
      id: `${this.actionId}:dispatch:${randomUUID()}`,
      kind,
      direction,
      actionId: this.actionId,
      // A name no column can hold is kept only as escaped JSON in metadata (the call was refused for it).
      ...(plainTextProblem(this.request.tool) ? {} : { tool: this.request.tool.slice(0, 512) || '(none)' }),
      ...(inv?.session && { session: inv.session }),
      ...(inv?.turn && { turn: inv.turn }),
      ...(inv?.task && { task: inv.task }),
      ...(inv?.agent && { agent: inv.agent }),
      occurredAt: new Date(),
      payload: { state: 'NONE' },
      metadata: {
        capture: 'dispatch',
        ...(inv && { door: inv.door }),
        ...(this.request.form && { form: this.request.form }),
        ...(plainTextProblem(this.request.tool) && { toolName: JSON.stringify(this.request.tool.slice(0, 512)) }),
        ...extra,
      },
    };
  }

  /** The pipes of an MCP step over stdio: stdin as written (REQUEST/OUT), stdout as read (RESPONSE/IN, PARTIAL unless the call was answered). */
  private stdioEvents(wire: StdioWire | undefined, extra: StepExtra, contract: ContractRef | undefined, answered: boolean): EventInput[] {
    if (!wire) return [];
    const url = `stdio:${wire.argv.join(' ')}`.slice(0, 16_384);
    const meta = { via: 'MCP', argv: wire.argv, ...(extra.step !== undefined && { step: extra.step }), ...(contract && { contract }) };
    // The exit code, or the signal that ended it; ERROR for a program that never started.
    const exit = wire.exit ? String(wire.exit.signal ?? wire.exit.code ?? 'ERROR') : 'RUNNING';
    return [
      { ...this.base('REQUEST', 'OUT', { ...meta, capture: 'stdio' }), method: 'STDIO', url, payload: wire.sent.payload('COMPLETE') },
      {
        ...this.base('RESPONSE', 'IN', { ...meta, capture: 'stdio', ...(wire.exit && { exit: wire.exit }) }),
        method: 'STDIO',
        url,
        status: exit,
        payload: wire.received.payload(answered ? 'COMPLETE' : 'PARTIAL'),
      },
    ];
  }

  /**
   * Records the events (see EventRecord.record); throws SPOOL_UNAVAILABLE when they cannot be, so
   * nothing goes on unrecorded, saying whether the call had `ran` (a result) or not (a call, a refusal).
   */
  private async emit(events: EventInput[], when: RecordWhen = 'beforeAnswer', ran = true): Promise<void> {
    try {
      await this.sink.record(events, when);
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.SPOOL_UNAVAILABLE) throw unrecorded(error, ran);
      this.sink.logger?.error({ err: error, actionId: this.actionId }, 'recording a dispatch event failed');
    }
  }

  async refuse(base: ResultBase, code: DispatchErrorCode, message: string, details: Record<string, unknown>): Promise<DispatchResult> {
    await this.emit([{ ...this.base('REFUSAL', 'OUT', { code, message, ...details }), status: 'REFUSED' }], 'beforeAnswer', false);
    return { ...base, outcome: 'REFUSED', error: { code, message } };
  }

  async dryRun(base: ResultBase, requests: unknown[], way?: Way): Promise<DispatchResult> {
    await this.emit(
      [
        {
          ...this.base('DRY_RUN', 'OUT', { args: this.args, ...(way && { way: way.header }) }),
          status: 'DRY_RUN',
          payload: { state: 'COMPLETE', text: JSON.stringify(requests) },
          ...(way && { contract: { form: way.header, sha256: way.sha256 } }),
        },
      ],
      'beforeAnswer',
      false,
    );
    return { ...base, outcome: 'DRY_RUN', requests };
  }

  /** The call OUT, durable before the first byte leaves (and before the timeout runs): a call the upstream received always has its TOOL_CALL. */
  callOut(step: RenderedStep, extra: StepExtra, contract: ContractRef | undefined): Promise<void> {
    return this.emit([{ ...this.base('TOOL_CALL', 'OUT', extra), ...describeSent(step), ...(contract && { contract }) }], 'now', false);
  }

  /** A send that failed: what its pipes carried, and the result IN with the code and (redacted) message. */
  sendFailed(error: unknown, failure: { code: DispatchErrorCode; message: string }, extra: StepExtra, contract: ContractRef | undefined): Promise<void> {
    const size = (error as { size?: number }).size;
    return this.emit([
      ...this.stdioEvents((error as { wire?: StdioWire }).wire, extra, contract, false),
      {
        ...this.base('TOOL_RESULT', 'IN', { ...extra, ...failure }),
        status: 'ERROR',
        payload: size ? { state: 'MISSING', size } : { state: 'NONE' },
        ...(contract && { contract }),
      },
    ]);
  }

  /** The MCP client's request could not be recorded, so it was not sent: its TOOL_RESULT says so. */
  unsent(refusal: DomainError, extra: StepExtra, contract: ContractRef | undefined): Promise<void> {
    return this.emit(
      [
        {
          ...this.base('TOOL_RESULT', 'IN', {
            ...extra,
            code: refusal.code,
            message: `Nothing was sent: the request to the MCP server could not be recorded (${refusal.message}).`,
          }),
          status: 'ERROR',
          ...(contract && { contract }),
        },
      ],
      'beforeAnswer',
      false,
    );
  }

  /** The answer IN, read whole. */
  answered(answer: StepAnswer, extra: StepExtra, contract: ContractRef | undefined, clientDisconnected: boolean): Promise<void> {
    const payload: PayloadInput = answer.bytes ? bytesPayload(answer.bytes) : { state: 'NONE' };
    return this.emit([
      ...this.stdioEvents(answer.wire, extra, contract, true),
      {
        ...this.base('TOOL_RESULT', 'IN', { ...extra, ...(answer.meta ?? {}), ...(clientDisconnected && { clientDisconnected: true }) }),
        status: String(answer.status),
        ...(answer.headers && { headers: answer.headers }),
        payload,
        ...(contract && { contract }),
      },
    ]);
  }

  /** A streamed answer IN, once its stream ended and before the door's stream ends: durable with the door's answer OUT, before the client reads the end. */
  streamEnded(
    answer: StepAnswer,
    ended: { payload: PayloadInput; clientDisconnected: boolean; cut?: StreamCut },
    error: { code: DispatchErrorCode; message: string } | undefined,
    extra: StepExtra,
    contract: ContractRef | undefined,
  ): Promise<void> {
    const meta = {
      ...extra,
      stream: true,
      clientDisconnected: ended.clientDisconnected,
      ...(ended.cut && { cut: ended.cut }),
      ...(error && { code: error.code, message: error.message }),
    };
    return this.emit(
      [
        {
          ...this.base('TOOL_RESULT', 'IN', meta),
          status: String(answer.status),
          ...(answer.headers && { headers: answer.headers }),
          payload: ended.payload,
          ...(contract && { contract }),
        },
      ],
      'beforeAnswer',
    );
  }
}
