// The runner: a Directory row's contract → the outgoing call, recorded by the runner itself.
// Transport-free: a door hands it a DispatchRequest inside its invocation context; it never sees a
// request object. Order of a call: find the row → check the args against its args schema → render
// (secrets as names) → refuse CODE, unbound secrets and the retired build → (dry run: record and
// stop) → substitute secret values → send, with generic outbound capture switched off, recording
// the call OUT and the response IN itself (tool, contract identity, form). A door that can stream
// (DispatchOptions.stream) gets a streamed upstream answer as it arrives: the ledger's branch is teed
// and reads on its own (src/capture/tee.ts), the response IN is recorded when it ends.
import { randomUUID } from 'node:crypto';
import { currentInvocation, type Invocation } from '../context/request.ts';
import type { CallAuthorizer } from '../auth/calls.ts';
import { serialize as serializeToken } from '../auth/macaroon.ts';
import type { Directory } from '../directory/directory.ts';
import type { RetiredTarget } from '../directory/retired.ts';
import type { RunnableRow } from '../directory/row-meant.ts';
import type { Contract, StepContract } from '../directory/contracts.ts';
import { plainTextProblem } from '../limits.ts';
import type { SecretRedactor } from '../secrets/redact.ts';
import { LRUCache } from 'lru-cache';
import { checkArgs } from './args.ts';
import { builtins } from './builtins.ts';
import { checkToolName, chooseWay, planSteps, type RenderedStep, type SelfTarget, type Way } from './plan.ts';
import { CallRecorder, type ContractRef, type EventRecord } from './record.ts';
import {
  answerOutput,
  forbidden,
  Refusal,
  type DispatchErrorCode,
  type DispatchRequest,
  type DispatchResult,
  type ResultBase,
  type StreamOptions,
} from './result.ts';
import type { StepAnswer } from './runners.ts';
import { sendFailure, sendStep, spoolRefusalIn, StepClock } from './send.ts';
import { unrecorded as unrecordedCall } from '../capture/unrecorded.ts';
import { streamAnswer } from './stream.ts';
import { TemplateError } from './template.ts';

export type DispatcherOptions = EventRecord & {
  /** This server's base URL (services.publicUrl), for contracts that reach the server itself. */
  selfOrigin?: () => string;
  /** The token's say on each call (src/auth/calls.ts); absent: every call allowed. */
  authorize?: CallAuthorizer;
  directory: Directory;
  redactor: SecretRedactor;
  secrets: Record<string, string>;
  retired: RetiredTarget[];
  timeoutMs: number;
  responseMaxBytes: number;
  /** An MCP call goes on this long after its caller went away (STREAM_CUTOFF_MS: an MCP answer is a stream); absent: cancelled at once. */
  streamCutoffMs?: number;
  /** The runnable row a name that names none probably meant (the resolver's best match), for "did you mean". */
  suggest?: (name: string) => string | undefined;
};

/**
 * `signal`: the caller went away (before an answer: CANCELLED; during a stream: the client
 * disconnected, and the ledger reads on up to the cut-off). `stream`: the door can stream.
 */
export type DispatchOptions = { signal?: AbortSignal; stream?: StreamOptions };

/** One step to send: how it is sent, and its identity in the events. */
type StepCall = { base: ResultBase; step: RenderedStep; contract: ContractRef | undefined; tool: string; index?: number };

/** A tool name that names no runnable row, with the row the resolver thinks was meant. */
export function notFoundMessage(name: string, meant: string | undefined): string {
  const told = `No Directory row is called ${JSON.stringify(name)}.`;
  return meant && meant !== name ? `${told} Did you mean ${JSON.stringify(meant)}?` : told;
}

/** Runs Directory rows' contracts. `dispatch` runs inside the caller's invocation context. */
export class Dispatcher {
  /** Step contract → its hash in contract_version. */
  private remembered = new LRUCache<string, string>({ max: 10_000 });

  private readonly options: DispatcherOptions;
  constructor(options: DispatcherOptions) {
    this.options = options;
  }

  async dispatch(request: DispatchRequest, options: DispatchOptions = {}): Promise<DispatchResult> {
    const invocation = currentInvocation();
    const actionId = invocation?.actionId ?? randomUUID();
    const dryRun = Boolean(request.dryRun);
    const base = { tool: request.tool, actionId, dryRun };
    const events = new CallRecorder(this.options, invocation, actionId, request);
    try {
      const { row, args } = await this.admit(request, events);
      const builtin = row.kind === 'builtin' ? builtins[row.name] : undefined;
      if (builtin) {
        const shown = { method: 'BUILTIN', tool: row.name, arguments: args };
        if (dryRun) return await events.dryRun(base, [shown]);
        const answer = () =>
          Promise.resolve(builtin(args)).then((value) => ({ status: 0, bytes: Buffer.from(JSON.stringify(value ?? null)), contentType: 'application/json' }));
        return await this.step({ base, step: { kind: 'builtin', shown }, contract: undefined, tool: row.name }, events, answer);
      }
      const way = await this.way(row);
      const rendered = planSteps(row, way, args, { secrets: this.options.secrets, retired: this.options.retired, self: () => this.selfTarget(invocation) });
      if (dryRun)
        return await events.dryRun(
          base,
          rendered.map((r) => r.shown),
          way,
        );
      return await this.run(base, row.name, way, rendered, events, options);
    } catch (error) {
      if (error instanceof Refusal || error instanceof TemplateError) {
        const refusal = error instanceof Refusal ? error : new Refusal(error.code, error.message, error.field ? { field: error.field } : {});
        return events.refuse(base, refusal.code, this.options.redactor.text(refusal.message, new Set()), refusal.details);
      }
      throw error;
    }
  }

  /** The row's args schema (for a door that types query values), or null. */
  async argsSchema(tool: string): Promise<unknown> {
    if (plainTextProblem(tool)) return null;
    return (await this.options.directory.runnableRow(tool))?.argsSchema ?? null;
  }

  /** The checks before a call is planned: its name, the token's say on the tool, the row, the args, the token's say on the call. */
  private async admit(request: DispatchRequest, events: CallRecorder): Promise<{ row: RunnableRow; args: Record<string, unknown> }> {
    checkToolName(request.tool);
    const toolRefusal = this.options.authorize?.tool(request.tool);
    if (toolRefusal) throw forbidden(toolRefusal);
    const row = await this.options.directory.runnableRow(request.tool);
    if (!row) throw new Refusal('TOOL_NOT_FOUND', notFoundMessage(request.tool, this.options.suggest?.(request.tool)));
    const checked = checkArgs(row.argsSchema, request.args ?? {});
    if (!checked.ok) throw new Refusal('ARGS_INVALID', checked.message, { field: checked.field });
    events.args = checked.args;
    const callRefusal = await this.options.authorize?.call({
      tool: row.name,
      rowType: row.type,
      args: checked.args,
      argsSchema: row.argsSchema,
      dryRun: Boolean(request.dryRun),
    });
    if (callRefusal) throw forbidden(callRefusal);
    return { row, args: checked.args };
  }

  private async way(row: RunnableRow): Promise<Way> {
    const chosen = chooseWay(row);
    const stored = (await this.options.directory.contractsByHash([chosen.sha256])).get(chosen.sha256);
    if (!stored) throw new Error(`contract ${chosen.sha256} of ${row.name} is missing from contract_version`);
    return { header: chosen.header, sha256: chosen.sha256, contract: stored.contract as Contract };
  }

  /** This server, for a contract that reaches it: sent with the caller's own token. */
  private selfTarget(invocation: Invocation | undefined): SelfTarget {
    return { origin: this.options.selfOrigin?.() ?? '', ...(invocation?.grant?.token && { token: serializeToken(invocation.grant.token) }) };
  }

  /** Sends the planned steps in order; a sequence stops at the first step that is not OK. */
  private async run(
    base: ResultBase,
    tool: string,
    way: Way,
    rendered: RenderedStep[],
    events: CallRecorder,
    options: DispatchOptions,
  ): Promise<DispatchResult> {
    const contractFor = async (i: number): Promise<ContractRef> =>
      Array.isArray(way.contract)
        ? { form: `${way.header} step ${i + 1}`, sha256: await this.remember(way.contract[i]!) }
        : { form: way.header, sha256: way.sha256 };
    if (rendered.length === 1) {
      const call = { base, step: rendered[0]!, contract: await contractFor(0), tool };
      return await this.step(call, events, undefined, options.signal, options.stream);
    }
    const results: DispatchResult[] = [];
    for (const [i, step] of rendered.entries()) {
      const result = await this.step({ base: { ...base }, step, contract: await contractFor(i), tool, index: i + 1 }, events, undefined, options.signal);
      results.push(result);
      if (result.outcome !== 'OK') break;
    }
    const last = results.at(-1)!;
    const { steps: _s, ...lastFields } = last;
    return {
      ...lastFields,
      ...base,
      steps: results,
      ...(results.length < rendered.length && {
        error: { code: last.error!.code, message: `Step ${results.length} of ${rendered.length} failed, so the sequence stopped: ${last.error!.message}` },
      }),
    };
  }

  /** Sends one step under the timeout and the caller's signal (or answers a builtin in process), and records it. */
  private async step(
    call: StepCall,
    events: CallRecorder,
    inProcess?: () => Promise<StepAnswer>,
    callerSignal?: AbortSignal,
    stream?: StreamOptions,
  ): Promise<DispatchResult> {
    const { base, step, contract } = call;
    const extra = events.stepExtra(call.index);
    await events.callOut(step, extra, contract);
    const keepAfterCaller = step.kind === 'mcp' ? (this.options.streamCutoffMs ?? 0) : 0;
    const clock = new StepClock(this.options.timeoutMs, keepAfterCaller, callerSignal);
    const wire = {
      tool: call.tool,
      contract,
      cut: clock.cut,
      ...(call.index && { step: call.index }),
      ...(!call.index && stream?.publish && { publish: stream.publish }),
    };
    let answer: StepAnswer;
    try {
      answer = await (inProcess
        ? inProcess()
        : sendStep(step, { signal: clock.signal, maxBytes: this.options.responseMaxBytes, streaming: Boolean(stream) }, wire));
    } catch (error) {
      clock.stop();
      clock.answered();
      const unrecorded = spoolRefusalIn(error);
      if (unrecorded) {
        // The door answers 503 + Retry-After: nothing was sent.
        await events.unsent(unrecorded, extra, contract);
        throw unrecordedCall(unrecorded, false);
      }
      const failure = sendFailure(error, clock, base.tool, this.options.responseMaxBytes);
      const safe = { code: failure.code, message: this.options.redactor.text(failure.message, new Set()) };
      await events.sendFailed(error, safe, extra, contract);
      return { ...base, outcome: 'ERROR', error: safe };
    }
    clock.answered();
    if (answer.body && stream)
      return streamAnswer(
        {
          base,
          answer: answer as StepAnswer & { body: ReadableStream<Uint8Array> },
          extra,
          contract,
          clock,
          ...(callerSignal && { clientSignal: callerSignal }),
        },
        stream,
        events,
        this.options.redactor,
        this.options.responseMaxBytes,
      );
    clock.stop();
    await events.answered(answer, extra, contract, keepAfterCaller > 0 && clock.callerGone);
    const ok = answer.ok ?? (step.kind === 'http' ? answer.status < 400 : answer.status === 0);
    const out = answerOutput(answer, this.options.redactor);
    if (ok) return { ...base, outcome: 'OK', status: answer.status, ...out };
    const code: DispatchErrorCode = step.kind === 'http' ? 'UPSTREAM_STATUS' : step.kind === 'cli' ? 'EXIT_STATUS' : 'TOOL_ERROR';
    const message =
      step.kind === 'http'
        ? `The upstream answered HTTP ${answer.status}.`
        : step.kind === 'cli'
          ? `The command exited with status ${answer.status}.`
          : 'The MCP tool answered with isError.';
    return { ...base, outcome: 'ERROR', status: answer.status, ...out, error: { code, message } };
  }

  /** A step contract's identity (stored once in contract_version). */
  private async remember(step: StepContract): Promise<string> {
    const key = JSON.stringify(step);
    let sha = this.remembered.get(key);
    if (!sha) {
      sha = await this.options.directory.rememberContract(step);
      this.remembered.set(key, sha);
    }
    return sha;
  }
}
