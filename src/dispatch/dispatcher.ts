// The runner: a Directory row's contract → the outgoing call, recorded by the runner itself.
// Transport-free: a door hands it a DispatchRequest inside its invocation context; it never sees a
// request object. Order of a call: find the row → check the args against its args schema → render
// (secrets as names) → refuse CODE, unbound secrets and the retired build → (dry run: record and
// stop) → substitute secret values → send, with generic outbound capture switched off, recording
// the call OUT and the response IN itself (tool, contract identity, form). A door that can stream
// (DispatchOptions.stream) gets a streamed upstream answer as it arrives: the ledger's branch is teed
// and reads on its own (src/capture/tee.ts), the response IN is recorded when it ends.
import { isUtf8 } from 'node:buffer';
import { createHash, randomUUID } from 'node:crypto';
import { currentInvocation, withOutboundCaptureFor, withoutOutboundCapture, type Invocation, type OutboundFor } from '../context/request.ts';
import { bytesPayload } from '../capture/payload.ts';
import { StreamPublisher, teeStream, type StreamChunk, type StreamCut, type StreamState } from '../capture/tee.ts';
import type { Contract, StepContract } from '../directory/contracts.ts';
import type { Directory, StoredWay } from '../directory/directory.ts';
import { describeRetiredHit, findRetired, type RetiredTarget } from '../directory/retired.ts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { EventInput, PayloadInput } from '../ledger/input.ts';
import type { SecretRedactor } from '../secrets/redact.ts';
import type { Logger } from '../logger.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { checkArgs } from './args.ts';
import { builtins } from './builtins.ts';
import type { StdioWire } from './mcp-stdio.ts';
import { runCli, runHttp, runMcp, type Limits, type Sent, type StepAnswer } from './runners.ts';
import { render, renderCommand, templateSecrets, TemplateError } from './template.ts';
import type { CallAuthorizer } from '../auth/calls.ts';
import { serialize as serializeToken } from '../auth/macaroon.ts';
import { TOKEN_SECRET_NAME } from '../secrets/tokens.ts';
import type { Refusal as AuthRefusal } from '../auth/authority.ts';
import { plainTextExpected, plainTextProblem } from '../limits.ts';

export type DispatchRequest = { tool: string; args?: Record<string, unknown>; dryRun?: boolean; form?: string };
export type DispatchOutcome = 'OK' | 'ERROR' | 'REFUSED' | 'DRY_RUN';
export type DispatchResult = {
  tool: string;
  actionId: string;
  outcome: DispatchOutcome;
  dryRun: boolean;
  /** Upstream HTTP status / CLI exit code when there is one. */
  status?: number;
  /** Parsed JSON when the answer is JSON, else text (secret values replaced by their names). */
  output?: unknown;
  /** The answer as text when it is UTF-8. */
  outputText?: string;
  /** The exact answer bytes, base64 (secret values replaced by their names). */
  outputBase64?: string;
  /** Dry run: the rendered outgoing request(s), secrets still as [NAME]. */
  requests?: unknown[];
  /** A sequence: each step's own result. */
  steps?: DispatchResult[];
  /** REFUSED / ERROR: a SCREAMING_SNAKE code and a clear message. */
  error?: { code: string; message: string };
  /** A streamed answer (sent to the client as it arrived): how the ledger stored it. */
  stream?: { state: StreamState; size: number; sha256: string | null; clientDisconnected: boolean; cut?: StreamCut };
};

/** A streamed upstream answer handed to the door: its head, the client's bytes, and the result once it ends. */
export type StreamedAnswer = {
  status: number;
  contentType: string;
  headers: Record<string, string | string[]>;
  /** The client's branch, secret values replaced chunk by chunk. It closes after the response IN is recorded. */
  body: ReadableStream<Uint8Array>;
  /** Settles when the ledger's branch has finished (end, cut-off, error or timeout). */
  result: Promise<DispatchResult>;
};

export type StreamOptions = {
  /** How long the ledger keeps reading after the client has gone (STREAM_CUTOFF_MS). */
  cutoffMs: number;
  /** Bytes kept at most (with DISPATCH_RESPONSE_MAX_BYTES, the lower); a longer stream is MISSING. */
  payloadMaxBytes: number;
  /** Each chunk as it arrives, then the end (the stream registry). */
  publish?: (chunk: StreamChunk) => void;
  /** Called once, when the upstream answers with a stream; `dispatch` then resolves when it ends. */
  onStream(answer: StreamedAnswer): void;
};

/** Why a call was refused (nothing sent) or failed. */
export const DispatchErrorCode = {
  /** A field no name can hold (NUL, an unpaired surrogate, too long); `details.field` names it. */
  BAD_INPUT: 'BAD_INPUT',
  TOOL_NOT_FOUND: 'TOOL_NOT_FOUND',
  /** The caller's token does not allow this call (which limit: `details.limit`). */
  FORBIDDEN: 'FORBIDDEN',
  NOT_RUNNABLE: 'NOT_RUNNABLE',
  ARGS_INVALID: 'ARGS_INVALID',
  CODE_NOT_EXECUTED: 'CODE_NOT_EXECUTED',
  SECRET_UNBOUND: 'SECRET_UNBOUND',
  RETIRED_BUILD: 'RETIRED_BUILD',
  CLI_SYNTAX: 'CLI_SYNTAX',
  UPSTREAM_STATUS: 'UPSTREAM_STATUS',
  UPSTREAM_ERROR: 'UPSTREAM_ERROR',
  TOOL_ERROR: 'TOOL_ERROR',
  EXIT_STATUS: 'EXIT_STATUS',
  TIMEOUT: 'TIMEOUT',
  CANCELLED: 'CANCELLED',
  RESPONSE_TOO_LARGE: 'RESPONSE_TOO_LARGE',
} as const;
export type DispatchErrorCode = (typeof DispatchErrorCode)[keyof typeof DispatchErrorCode];

/** The HTTP status a door answers a result with. */
export function httpStatusOfResult(result: DispatchResult): number {
  if (result.outcome === 'OK' || result.outcome === 'DRY_RUN') return 200;
  const byCode: Record<string, number> = {
    BAD_INPUT: 400,
    TOOL_NOT_FOUND: 404,
    FORBIDDEN: 403,
    NOT_RUNNABLE: 409,
    ARGS_INVALID: 400,
    CODE_NOT_EXECUTED: 409,
    SECRET_UNBOUND: 409,
    RETIRED_BUILD: 403,
    CLI_SYNTAX: 409,
    TIMEOUT: 504,
    CANCELLED: 499,
  };
  return byCode[result.error?.code ?? ''] ?? 502;
}

export type RecordWhen = 'now' | 'beforeAnswer';

export type DispatcherOptions = {
  prisma: PrismaClient;
  /** This server's base URL (services.publicUrl), for contracts that reach the server itself. */
  selfOrigin?: () => string;
  /** The token's say on each call (src/auth/calls.ts); absent: every call allowed. */
  authorize?: CallAuthorizer;
  directory: Directory;
  /**
   * Where the runner's own events go (the background writer). `now`: durable before this resolves
   * (a call before it is sent); `beforeAnswer`: durable at the latest before the caller is answered.
   */
  record(events: EventInput[], when: RecordWhen): Promise<void>;
  redactor: SecretRedactor;
  secrets: Record<string, string>;
  retired: RetiredTarget[];
  timeoutMs: number;
  responseMaxBytes: number;
  /** An MCP call goes on this long after its caller went away (STREAM_CUTOFF_MS: an MCP answer is a stream); absent: cancelled at once. */
  streamCutoffMs?: number;
  logger?: Logger;
};

/**
 * `signal`: the caller went away (before an answer: CANCELLED; during a stream: the client
 * disconnected, and the ledger reads on up to the cut-off). `stream`: the door can stream.
 */
export type DispatchOptions = { signal?: AbortSignal; stream?: StreamOptions };

type Row = { type: string; name: string; kind: string | null; ways: Record<string, StoredWay>; argsSchema: unknown; reasons: string[] };
type Way = { header: string; sha256: string; contract: Contract };

const wayOrder = ['HTTP', 'MCP', 'CLI', 'SEQUENCE'];
const rowCacheMax = 10_000;

/** A token's refusal as the runner's own: the caller sees the message, the REFUSAL event the detail. */
const forbidden = (r: AuthRefusal) =>
  new Refusal('FORBIDDEN', r.message, { limit: r.limit, door: r.door, reason: r.reason, ...(r.caveat && { caveat: r.caveat }), ...(r.tokenId && { tokenId: r.tokenId }) });

class Refusal extends Error {
  readonly code: DispatchErrorCode;
  readonly details: Record<string, unknown>;
  constructor(
    code: DispatchErrorCode,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

/** Runs Directory rows' contracts. `dispatch` runs inside the caller's invocation context. */
export class Dispatcher {
  private rows = new Map<string, Row | null>();
  private rowsGeneration = -1;
  private remembered = new Map<string, string>();

  private readonly options: DispatcherOptions;
  constructor(options: DispatcherOptions) {
    this.options = options;
  }

  async dispatch(request: DispatchRequest, options: DispatchOptions = {}): Promise<DispatchResult> {
    const invocation = currentInvocation();
    const actionId = invocation?.actionId ?? randomUUID();
    const dryRun = Boolean(request.dryRun);
    const base = { tool: request.tool, actionId, dryRun };
    const events = new EventSink(this.options, invocation, actionId, request);
    try {
      const nameProblem = typeof request.tool !== 'string' || request.tool.length > 512 ? 'more than 512 characters' : plainTextProblem(request.tool);
      if (nameProblem) throw new Refusal('BAD_INPUT', `Invalid tool: expected a tool name (${plainTextExpected}, at most 512), got ${JSON.stringify(String(request.tool).slice(0, 80))} (it holds ${nameProblem}).`, { field: 'tool' });
      const toolRefusal = this.options.authorize?.tool(request.tool);
      if (toolRefusal) throw forbidden(toolRefusal);
      const row = await this.row(request.tool);
      if (!row) throw new Refusal('TOOL_NOT_FOUND', `No Directory row is called ${JSON.stringify(request.tool)}.`);
      const checked = checkArgs(row.argsSchema, request.args ?? {});
      if (!checked.ok) throw new Refusal('ARGS_INVALID', checked.message, { field: checked.field });
      const args = checked.args;
      events.args = args;
      const callRefusal = await this.options.authorize?.call({ tool: row.name, rowType: row.type, args, argsSchema: row.argsSchema, dryRun });
      if (callRefusal) throw forbidden(callRefusal);

      const builtin = row.kind === 'builtin' ? builtins[row.name] : undefined;
      if (builtin) {
        if (dryRun) return await events.dryRun(base, [{ method: 'BUILTIN', tool: row.name, arguments: args }]);
        return await events.step(base, { kind: 'builtin', shown: { method: 'BUILTIN', tool: row.name, arguments: args } }, undefined, () =>
          Promise.resolve(builtin(args)).then((value) => ({ status: 0, bytes: Buffer.from(JSON.stringify(value ?? null)), contentType: 'application/json' })),
        );
      }

      const way = await this.chooseWay(row);
      const steps = Array.isArray(way.contract) ? way.contract : [way.contract];
      const code = steps.findIndex((s) => s.method === 'CODE');
      if (code >= 0) {
        const others = Object.values(row.ways).filter((w) => w.shape !== 'CODE').map((w) => w.header);
        throw new Refusal(
          'CODE_NOT_EXECUTED',
          `${JSON.stringify(row.name)} ${steps.length > 1 ? `step ${code + 1} ` : ''}is a CODE contract, which the runner never executes. ` +
            (others.length ? `Its runnable ways: ${others.join(', ')}.` : 'The row has no other way; paste the code where it belongs, or add an HTTP, MCP or CLI way.'),
        );
      }
      const unbound = templateSecrets(way.contract).filter((name) => !(name in this.options.secrets));
      if (unbound.length) {
        throw new Refusal('SECRET_UNBOUND', `${JSON.stringify(row.name)} needs the secret${unbound.length > 1 ? 's' : ''} ${unbound.map((n) => `[${n}]`).join(', ')}, which ${unbound.length > 1 ? 'are' : 'is'} not bound; nothing was sent.`, { secrets: unbound });
      }
      // Only a contract that reaches this server itself carries the caller's token.
      const reachesSelf = steps.some((step) => step.method === 'MCP' && isSelfMcp(step.server));
      const self: SelfTarget | undefined = reachesSelf
        ? { origin: this.options.selfOrigin?.() ?? '', ...(invocation?.grant?.token && { token: serializeToken(invocation.grant.token) }) }
        : undefined;
      const rendered = steps.map((step) => renderStep(step, args, this.options.secrets, self));
      const shown = rendered.map((r) => r.shown);
      const hit = findRetired(shown, this.options.retired) ?? findRetired(args, this.options.retired);
      if (hit) throw new Refusal('RETIRED_BUILD', `${JSON.stringify(row.name)} was refused: the rendered request ${describeRetiredHit(hit)}; nothing was sent.`, { target: hit.target, where: hit.where, via: hit.via });
      if (dryRun) return await events.dryRun(base, shown, way);

      const contractFor = async (i: number) =>
        Array.isArray(way.contract) ? { form: `${way.header} step ${i + 1}`, sha256: await this.remember(steps[i]!) } : { form: way.header, sha256: way.sha256 };
      if (rendered.length === 1) {
        const contract = await contractFor(0);
        const publish = options.stream?.publish;
        return await events.step(
          base,
          rendered[0]!,
          contract,
          (signal, cut) => this.send(rendered[0]!, signal, { tool: row.name, contract, cut, ...(publish && { publish }) }, Boolean(options.stream)),
          options.signal,
          undefined,
          options.stream,
        );
      }
      const results: DispatchResult[] = [];
      for (const [i, step] of rendered.entries()) {
        const contract = await contractFor(i);
        const result = await events.step({ ...base }, step, contract, (signal, cut) => this.send(step, signal, { tool: row.name, contract, step: i + 1, cut }), options.signal, i + 1);
        results.push(result);
        if (result.outcome !== 'OK') break;
      }
      const last = results.at(-1)!;
      const { steps: _s, ...lastFields } = last;
      return { ...lastFields, ...base, steps: results, ...(results.length < rendered.length && { error: { code: last.error!.code, message: `Step ${results.length} of ${rendered.length} failed, so the sequence stopped: ${last.error!.message}` } }) };
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
    return (await this.row(tool))?.argsSchema ?? null;
  }

  /**
   * An HTTP step is recorded by the runner itself (its TOOL_CALL and TOOL_RESULT hold the exact
   * bytes), so generic capture is off for it. The MCP SDK's HTTP traffic is captured on the wire,
   * tagged with the tool and contract: the runner's events hold the tool call and its result, and
   * only the wire holds the bytes (the handshake, the session header, an event-stream answer).
   */
  private send(step: RenderedStep, signal: AbortSignal, wire: Omit<OutboundFor, 'via'>, streaming = false): Promise<StepAnswer> {
    const limits = { signal, maxBytes: this.options.responseMaxBytes, streaming };
    if (step.kind === 'mcp' && !step.sent.argv) return withOutboundCaptureFor({ ...wire, via: 'MCP' }, () => runMcp(step.sent, limits));
    return withoutOutboundCapture(() => {
      if (step.kind === 'http') return runHttp(step.sent, limits);
      if (step.kind === 'mcp') return this.runMcpOverStdio(step.sent, limits, wire);
      if (step.kind === 'cli') return runCli(step.sent, limits);
      throw new Error('a builtin is answered in process, not sent');
    });
  }

  /**
   * An MCP step over stdio: the runner records the bytes of its pipes itself (the REQUEST/OUT and
   * RESPONSE/IN beside its TOOL_CALL and TOOL_RESULT), and at a streaming door publishes the
   * server's stdout as it arrives, ending COMPLETE when the call was answered, else PARTIAL.
   */
  private async runMcpOverStdio(sent: Extract<Sent, { server: string }>, limits: Limits, wire: Omit<OutboundFor, 'via'>): Promise<StepAnswer> {
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

  /** A step contract's identity (stored once in contract_version). */
  private async remember(step: StepContract): Promise<string> {
    const key = JSON.stringify(step);
    let sha = this.remembered.get(key);
    if (!sha) {
      sha = await this.options.directory.rememberContract(step);
      if (this.remembered.size >= rowCacheMax) this.remembered.clear();
      this.remembered.set(key, sha);
    }
    return sha;
  }

  private async row(name: string): Promise<Row | null> {
    if (this.rowsGeneration !== this.options.directory.generation) {
      this.rows.clear();
      this.rowsGeneration = this.options.directory.generation;
    }
    if (this.rows.has(name)) return this.rows.get(name)!;
    const generation = this.rowsGeneration;
    const found = await this.options.prisma.directoryRow.findMany({
      where: { name },
      select: { type: true, name: true, kind: true, ways: true, argsSchema: true, reasons: true, ordinal: true },
    });
    const withWay = found.filter((r) => Object.keys((r.ways as object) ?? {}).length > 0);
    const pick = withWay.find((r) => r.type === 'tool') ?? withWay[0] ?? null;
    const row = pick && { type: pick.type, name: pick.name, kind: pick.kind, ways: pick.ways as Record<string, StoredWay>, argsSchema: pick.argsSchema, reasons: pick.reasons };
    if (generation === this.options.directory.generation) {
      if (this.rows.size >= rowCacheMax) this.rows.clear();
      this.rows.set(name, row);
    }
    return row;
  }

  private async chooseWay(row: Row): Promise<Way> {
    const ways = Object.values(row.ways);
    const ranked = [...ways].sort((a, b) => rank(a.shape) - rank(b.shape));
    const chosen = ranked[0];
    if (!chosen) throw new Refusal('NOT_RUNNABLE', `${JSON.stringify(row.name)} has no way to call it${row.reasons.length ? `: ${row.reasons.join('; ')}` : ''}.`);
    const contracts = await this.options.directory.contractsByHash([chosen.sha256]);
    const stored = contracts.get(chosen.sha256);
    if (!stored) throw new Error(`contract ${chosen.sha256} of ${row.name} is missing from contract_version`);
    return { header: chosen.header, sha256: chosen.sha256, contract: stored.contract as Contract };
  }
}

const rank = (shape: string) => {
  const i = wayOrder.indexOf(shape);
  return i < 0 ? wayOrder.length : i;
};

export type RenderedStep =
  | { kind: 'http'; shown: unknown; sent: { method: string; url: string; headers: Record<string, string>; body?: unknown } }
  | { kind: 'mcp'; shown: unknown; sent: { server: string; argv?: string[]; headers: Record<string, string>; tool: string; arguments: Record<string, unknown> } }
  | { kind: 'cli'; shown: unknown; sent: { argv: string[] } }
  | { kind: 'builtin'; shown: unknown; sent?: undefined };

/**
 * This server, for contracts that reach it: an MCP `server` of "/mcp" is resolved against `origin`
 * and sent with the caller's own token (shown as [DIRLEDGER_TOKEN]), so the inner call is checked
 * by the same authority as the outer one.
 */
export type SelfTarget = { origin: string; token?: string };

/** This server's own MCP endpoint, as an MCP contract names it (resolved against the public URL). */
export const selfMcpPath = '/mcp';

/**
 * An MCP server of `/mcp` (with a query, if any) is this server itself; any other server starting
 * with `/` is a command line whose program has an absolute path (`/usr/bin/node server.mjs`).
 */
export function isSelfMcp(server: string): boolean {
  return server === selfMcpPath || server.startsWith(`${selfMcpPath}?`);
}

export function renderStep(step: StepContract, args: Record<string, unknown>, secrets: Record<string, string>, self?: SelfTarget): RenderedStep {
  if (step.method === 'CLI') {
    const argv = renderCommand(step.command, args, secrets);
    return { kind: 'cli', shown: { method: 'CLI', command: step.command, argv: argv.shown }, sent: { argv: argv.sent } };
  }
  if (step.method === 'MCP') {
    const selfRelative = isSelfMcp(step.server) && self !== undefined;
    const serverText = selfRelative ? `${self.origin}${step.server}` : step.server;
    const overHttp = /^https?:/i.test(serverText);
    const server = render(serverText, args, secrets, overHttp ? 'url' : 'text');
    // A command line is split into words first, then each {{arg}} filled inside its word, as for a
    // CLI contract: an argument never becomes two words, and shell syntax is refused (CLI_SYNTAX).
    const argv = overHttp ? undefined : renderCommand(serverText, args, secrets).sent;
    const headers = render(step.headers ?? {}, args, secrets, 'header');
    if (selfRelative) {
      (headers.shown as Record<string, string>).authorization = `Bearer [${TOKEN_SECRET_NAME}]`;
      // Without a caller token (AUTHORITY=off, or re-rendering for matchesContract) the name is sent as is.
      (headers.sent as Record<string, string>).authorization = self.token ? `Bearer ${self.token}` : `Bearer [${TOKEN_SECRET_NAME}]`;
    }
    const tool = render(step.tool, args, secrets, 'text');
    const argumentsR = render(step.arguments ?? {}, args, secrets, 'json');
    return {
      kind: 'mcp',
      shown: { method: 'MCP', server: server.shown, headers: headers.shown, tool: tool.shown, arguments: argumentsR.shown },
      sent: { server: server.sent as string, ...(argv && { argv }), headers: headers.sent as Record<string, string>, tool: tool.sent as string, arguments: argumentsR.sent as Record<string, unknown> },
    };
  }
  if (step.method === 'CODE') throw new Error('CODE is refused before rendering');
  const url = render(step.url, args, secrets, 'url');
  const headers = render(step.headers ?? {}, args, secrets, 'header');
  const body = step.body === undefined ? undefined : render(step.body, args, secrets, 'json');
  return {
    kind: 'http',
    shown: { method: step.method, url: url.shown, headers: headers.shown, ...(body && { body: body.shown }) },
    sent: { method: step.method, url: url.sent as string, headers: headers.sent as Record<string, string>, ...(body && { body: body.sent }) },
  };
}

/** Builds the runner's own events: one call OUT and one response IN per step, or a refusal, or a dry run. */
class EventSink {
  args: Record<string, unknown> = {};

  private readonly options: DispatcherOptions;
  private readonly invocation: Invocation | undefined;
  private readonly actionId: string;
  private readonly request: DispatchRequest;
  constructor(
    options: DispatcherOptions,
    invocation: Invocation | undefined,
    actionId: string,
    request: DispatchRequest,
  ) {
    this.options = options;
    this.invocation = invocation;
    this.actionId = actionId;
    this.request = request;
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
  private stdioEvents(wire: StdioWire | undefined, extra: Record<string, unknown>, contract: { form: string; sha256: string } | undefined, answered: boolean): EventInput[] {
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

  /** Records the events (see DispatcherOptions.record); throws SPOOL_UNAVAILABLE when they cannot be, so nothing goes on unrecorded. */
  private async emit(events: EventInput[], when: RecordWhen = 'beforeAnswer'): Promise<void> {
    try {
      await this.options.record(events, when);
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.SPOOL_UNAVAILABLE) throw error;
      this.options.logger?.error({ err: error, actionId: this.actionId }, 'recording a dispatch event failed');
    }
  }

  async refuse(base: ResultBase, code: DispatchErrorCode, message: string, details: Record<string, unknown>): Promise<DispatchResult> {
    await this.emit([{ ...this.base('REFUSAL', 'OUT', { code, message, ...details }), status: 'REFUSED' }]);
    return { ...base, outcome: 'REFUSED', error: { code, message } };
  }

  async dryRun(base: ResultBase, requests: unknown[], way?: Way): Promise<DispatchResult> {
    await this.emit([
      {
        ...this.base('DRY_RUN', 'OUT', { args: this.args, ...(way && { way: way.header }) }),
        status: 'DRY_RUN',
        payload: { state: 'COMPLETE', text: JSON.stringify(requests) },
        ...(way && { contract: { form: way.header, sha256: way.sha256 } }),
      },
    ]);
    return { ...base, outcome: 'DRY_RUN', requests };
  }

  /** Sends one step under the timeout and the caller's signal, and records it. */
  async step(
    base: ResultBase,
    step: RenderedStep,
    contract: { form: string; sha256: string } | undefined,
    send: (signal: AbortSignal, cut: () => StreamCut | undefined) => Promise<StepAnswer>,
    callerSignal?: AbortSignal,
    index?: number,
    stream?: StreamOptions,
  ): Promise<DispatchResult> {
    const extra = { args: this.args, ...(index && { step: index }) };
    const call = { ...this.base('TOOL_CALL', 'OUT', extra), ...describeSent(step), ...(contract && { contract }) };
    // Recorded before the first byte leaves (and before the timeout runs): a call the upstream received always has its TOOL_CALL.
    await this.emit([call], 'now');
    // One controller and one timer per step (AbortSignal.any is slow and long-lived on Node 20).
    const controller = new AbortController();
    const timeout = { aborted: false };
    const timer = setTimeout(() => {
      timeout.aborted = true;
      controller.abort(new Error(`timed out after ${this.options.timeoutMs} ms`));
    }, this.options.timeoutMs);
    // An MCP answer is a stream: after the caller has gone the call goes on up to the cut-off, so
    // the ledger still gets its answer (the wire capture keeps what arrived if it is cut).
    const keepAfterCaller = step.kind === 'mcp' ? (this.options.streamCutoffMs ?? 0) : 0;
    let cutoff: NodeJS.Timeout | undefined;
    let cutoffReached = false;
    const abortForCaller = () => controller.abort(new Error('the caller went away'));
    const onCaller = () => {
      if (keepAfterCaller > 0) {
        cutoff ??= setTimeout(() => {
          cutoffReached = true;
          abortForCaller();
        }, keepAfterCaller);
      } else abortForCaller();
    };
    if (callerSignal?.aborted) onCaller();
    else callerSignal?.addEventListener('abort', onCaller, { once: true });
    const signal = controller.signal;
    let answer: StepAnswer;
    try {
      answer = await send(signal, () => (cutoffReached ? 'CUTOFF' : undefined));
    } catch (error) {
      clearTimeout(timer);
      clearTimeout(cutoff);
      callerSignal?.removeEventListener('abort', onCaller);
      const unrecorded = spoolRefusalIn(error);
      if (unrecorded) {
        // The MCP client's request could not be recorded, so it was not sent: the door answers 503 + Retry-After.
        await this.emit([
          {
            ...this.base('TOOL_RESULT', 'IN', { ...extra, code: unrecorded.code, message: `Nothing was sent: the request to the MCP server could not be recorded (${unrecorded.message}).` }),
            status: 'ERROR',
            ...(contract && { contract }),
          },
        ]);
        throw unrecorded;
      }
      const code: DispatchErrorCode = timeout.aborted ? 'TIMEOUT' : callerSignal?.aborted ? 'CANCELLED' : ((error as { code?: string }).code === 'RESPONSE_TOO_LARGE' ? 'RESPONSE_TOO_LARGE' : 'UPSTREAM_ERROR');
      const message =
        code === 'TIMEOUT'
          ? `${JSON.stringify(base.tool)} did not answer within ${this.options.timeoutMs} ms; the call was abandoned.`
          : code === 'CANCELLED'
            ? keepAfterCaller > 0
              ? `The caller went away; the call went on for up to ${keepAfterCaller} ms more, then was cancelled.`
              : 'The caller went away; the call was cancelled.'
            : code === 'RESPONSE_TOO_LARGE'
              ? `The answer passed ${this.options.responseMaxBytes} bytes; the call was stopped and the answer not kept.`
              : `The call failed: ${errorText(error)}`;
      const safe = this.options.redactor.text(message, new Set());
      const size = (error as { size?: number }).size;
      await this.emit([
        ...this.stdioEvents((error as { wire?: StdioWire }).wire, extra, contract, false),
        {
          ...this.base('TOOL_RESULT', 'IN', { ...extra, code, message: safe }),
          status: 'ERROR',
          payload: size ? { state: 'MISSING', size } : { state: 'NONE' },
          ...(contract && { contract }),
        },
      ]);
      return { ...base, outcome: 'ERROR', error: { code, message: safe } };
    }
    clearTimeout(cutoff);
    callerSignal?.removeEventListener('abort', onCaller);
    if (answer.body && stream) return this.streamed(base, answer as StepAnswer & { body: ReadableStream<Uint8Array> }, extra, contract, stream, { timer, timeout }, callerSignal);
    clearTimeout(timer);
    const ok = answer.ok ?? (step.kind === 'http' ? answer.status < 400 : answer.status === 0);
    const payload: PayloadInput = answer.bytes ? bytesPayload(answer.bytes) : { state: 'NONE' };
    await this.emit([
      ...this.stdioEvents(answer.wire, extra, contract, true),
      {
        ...this.base('TOOL_RESULT', 'IN', { ...extra, ...(answer.meta ?? {}), ...(keepAfterCaller > 0 && callerSignal?.aborted && { clientDisconnected: true }) }),
        status: String(answer.status),
        ...(answer.headers && { headers: answer.headers }),
        payload,
        ...(contract && { contract }),
      },
    ]);
    const out = this.output(answer);
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

  /**
   * A streamed answer (its call OUT already recorded): the upstream is teed, the ledger's branch reads
   * on its own (after a client disconnect, up to the cut-off) and the response IN is recorded when it
   * ends. The timeout still bounds the whole call: past it the upstream is aborted (PARTIAL).
   */
  private async streamed(
    base: ResultBase,
    answer: StepAnswer & { body: ReadableStream<Uint8Array> },
    extra: Record<string, unknown>,
    contract: { form: string; sha256: string } | undefined,
    stream: StreamOptions,
    clock: { timer: NodeJS.Timeout; timeout: { aborted: boolean } },
    clientSignal?: AbortSignal,
  ): Promise<DispatchResult> {
    const tee = teeStream(answer.body, {
      cutoffMs: stream.cutoffMs,
      payloadMaxBytes: Math.min(stream.payloadMaxBytes, this.options.responseMaxBytes),
      ...(stream.publish && { publish: stream.publish }),
      ...(clientSignal && { clientSignal }),
    });
    const redactor = this.options.redactor;
    const result = tee.recorded.then(async (r): Promise<DispatchResult> => {
      clearTimeout(clock.timer);
      const timedOut = clock.timeout.aborted && r.state !== 'COMPLETE';
      const error = timedOut
        ? { code: 'TIMEOUT' as const, message: `${JSON.stringify(base.tool)} was still streaming after ${this.options.timeoutMs} ms; the call was abandoned and what arrived kept as PARTIAL.` }
        : r.cut === 'CUTOFF'
          ? { code: 'CANCELLED' as const, message: `The caller went away; the stream was read for up to ${stream.cutoffMs} ms more and what arrived kept as PARTIAL.` }
          : r.cut === 'SOURCE_ERROR'
            ? { code: 'UPSTREAM_ERROR' as const, message: redactor.text(`The stream broke: ${r.error ?? 'unknown error'}`, new Set()) }
            : undefined;
      // The caller has had the answer as it streamed: nothing later waits for this, so it is made durable now.
      await this.emit(
        [
        {
          ...this.base('TOOL_RESULT', 'IN', { ...extra, stream: true, clientDisconnected: r.clientDisconnected, ...(r.cut && { cut: r.cut }), ...(error && { code: error.code, message: error.message }) }),
          status: String(answer.status),
          ...(answer.headers && { headers: answer.headers }),
          payload: r.payload,
          ...(contract && { contract }),
        },
        ],
        'now',
      );
      const stored = r.bytes === null ? null : redactor.bytes(r.bytes, new Set());
      // The hash of the bytes as stored: re-hashed only when a secret was replaced.
      const sha256 = stored === null ? null : stored === r.bytes ? r.sha256 : createHash('sha256').update(stored).digest('hex');
      const summary = { state: r.state, size: r.size, sha256, clientDisconnected: r.clientDisconnected, ...(r.cut && { cut: r.cut }) };
      return { ...base, outcome: error ? 'ERROR' : 'OK', status: answer.status, stream: summary, ...(error && { error }) };
    });
    const reader = tee.client.getReader();
    // Redacted across chunk edges: a secret split between two chunks is caught as in one buffer.
    const redacting = redactor.stream();
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          for (;;) {
            let next: ReadableStreamReadResult<Uint8Array>;
            try {
              next = await reader.read();
            } catch (error) {
              controller.error(error);
              return;
            }
            if (next.done) {
              const rest = redacting.end();
              if (rest.length) controller.enqueue(rest);
              // The response IN is queued before the client's stream (and so the door's answer OUT) ends.
              await result.catch(() => {});
              controller.close();
              return;
            }
            const out = redacting.push(next.value);
            if (out.length) {
              controller.enqueue(out);
              return;
            }
          }
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
    if (clientSignal?.aborted) void body.cancel(clientSignal.reason).catch(() => {});
    stream.onStream({ status: answer.status, contentType: answer.contentType ?? '', headers: answer.headers ?? {}, body, result });
    return result;
  }

  /** The answer for the caller: secret values replaced by names, JSON parsed when it is JSON. */
  private output(answer: StepAnswer): Pick<DispatchResult, 'output' | 'outputText' | 'outputBase64'> {
    if (!answer.bytes) return {};
    const bytes = this.options.redactor.bytes(answer.bytes, new Set());
    if (answer.value !== undefined) {
      const text = bytes.toString('utf8');
      return { output: JSON.parse(text), outputText: text };
    }
    if (!isUtf8(bytes)) return { outputBase64: bytes.toString('base64') };
    const text = bytes.toString('utf8');
    let output: unknown = text;
    if (/json/i.test(answer.contentType ?? '') || /^\s*[[{"]/.test(text)) {
      try {
        output = JSON.parse(text);
      } catch {
        output = text;
      }
    }
    return { output, outputText: text };
  }
}

type ResultBase = { tool: string; actionId: string; dryRun: boolean };

export function describeSent(step: RenderedStep): Partial<EventInput> {
  const sent = step.sent as Sent | undefined;
  if (step.kind === 'http' && sent && 'url' in sent) {
    const body = sent.body === undefined ? undefined : typeof sent.body === 'string' ? sent.body : JSON.stringify(sent.body);
    return { method: sent.method, url: sent.url.slice(0, 16_384), headers: withJsonType(sent.headers, sent.body), payload: body === undefined ? { state: 'NONE' } : { state: 'COMPLETE', text: body } };
  }
  if (step.kind === 'mcp' && sent && 'server' in sent) {
    return {
      method: 'MCP',
      ...(/^https?:/i.test(sent.server) && { url: sent.server.slice(0, 16_384) }),
      headers: sent.headers,
      payload: { state: 'COMPLETE', text: JSON.stringify({ server: sent.server, tool: sent.tool, arguments: sent.arguments }) },
    };
  }
  if (step.kind === 'cli' && sent && 'argv' in sent) return { method: 'CLI', payload: { state: 'COMPLETE', text: JSON.stringify({ argv: sent.argv }) } };
  return { method: 'BUILTIN', payload: { state: 'COMPLETE', text: JSON.stringify(step.shown) } };
}

export function withJsonType(headers: Record<string, string>, body: unknown): Record<string, string> {
  if (body === undefined || typeof body === 'string') return headers;
  if (Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) return headers;
  return { ...headers, 'content-type': 'application/json' };
}

/** A SPOOL_UNAVAILABLE refusal behind an error (the outbound capture's, wrapped by fetch and the MCP client), if any. */
function spoolRefusalIn(error: unknown): DomainError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DomainError && e.code === ErrorCode.SPOOL_UNAVAILABLE) return e;
  }
  return undefined;
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}
