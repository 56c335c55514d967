// The request context: who is asking, through which door, and (once the boundary records it) under
// which action id, carried through every await, timer and stream callback of one request by one
// AsyncLocalStorage, so no feature has to pass it along. The caller's grant lives only here.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { badInput } from '../errors.ts';
import type { StreamChunk, StreamCut } from './stream.ts';
import { Doors, type Door } from './door.ts';

/** Who is asking and through which door; `grant` is the token the door verified (absent with AUTHORITY=off). */
/**
 * What the caller's token lets it do. The floor only carries it: its shape is the auth layer's
 * (src/auth/authority.ts adds `grant` to GrantCarrier), so nothing here imports upward.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in src/auth/authority.ts
export interface GrantCarrier {}
export type Grant = GrantCarrier extends { grant: infer G } ? G : never;

export type Caller = Readonly<{ door: Door; grant?: Grant }>;

const label = (max = 512) => z.string().min(1).max(max);

export const InvocationInput = z
  .object({
    /** Generated when absent; becomes the actionId of every event the invocation records. */
    actionId: label(256).optional(),
    session: label().optional(),
    turn: label().optional(),
    task: label().optional(),
    agent: label().optional(),
    caller: label().optional(),
    /** The verified token the door admitted (default: the current caller's); its task and agent win over any header. */
    grant: z.custom<Grant>((v) => typeof v === 'object' && v !== null).optional(),
    door: z.enum(Doors),
    /** False for the runner, which records its own richer exchange. Default true. */
    captureOutbound: z.boolean().optional(),
    /** True where the door waits for everything the call recorded to be durable before it answers (the boundary). */
    answerWaitsForRecord: z.boolean().optional(),
  })
  .strict();
export type InvocationInput = z.input<typeof InvocationInput>;

/** A caller whose exchange is being recorded: every event it records carries these fields. */
export type Invocation = Caller &
  Readonly<{
    actionId: string;
    session?: string;
    turn?: string;
    task?: string;
    agent?: string;
    caller?: string;
    captureOutbound: boolean;
    answerWaitsForRecord?: boolean;
    /** Set while the runner lets a client it drives (the MCP SDK over HTTP) be captured: whose exchange it is. */
    outboundFor?: OutboundFor;
    startedAt: Date;
  }>;

/** The tool, contract and step an outbound exchange belongs to, when a runner's client makes it. */
export type OutboundFor = Readonly<{
  tool: string;
  via: string;
  contract?: { form: string; sha256: string };
  step?: number;
  /** The answer to the call's JSON-RPC `tools/call`, chunk by chunk as it arrives (for `streamCapture`). */
  publish?: (chunk: StreamChunk) => void;
  /** Why the exchange was stopped, when the runner stopped it at the stream cut-off. */
  cut?: () => StreamCut | undefined;
}>;

/** A Caller, or an Invocation once the boundary records the exchange. */
const storage = new AsyncLocalStorage<Caller>();

/** Runs `fn` as `caller`: the door sets it once the token is verified. */
export function runAsCaller<T>(caller: Caller, fn: () => T): T {
  return storage.run(caller, fn);
}

/** The caller the calling code runs for, or undefined outside every door. */
export function currentCaller(): Caller | undefined {
  return storage.getStore();
}

/** The grant of the caller the calling code runs for, if any. */
export function currentGrant(): Grant | undefined {
  return storage.getStore()?.grant;
}

/**
 * Runs `fn` inside a new invocation; everything it starts (awaits, timers, stream callbacks)
 * sees it through `currentInvocation()`. Throws BAD_INPUT naming the field when a value is invalid.
 */
export function runInInvocation<T>(input: InvocationInput, fn: () => T): T {
  let data = fitInvocation(input);
  if (!data) {
    const parsed = InvocationInput.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw badInput(`Invalid invocation ${issue.path.join('.') || 'context'}: ${issue.message}.`, { field: issue.path.join('.') });
    }
    data = parsed.data;
  }
  const { captureOutbound, actionId, ...rest } = data;
  const grant = data.grant ?? currentGrant();
  // The task and agent of a bound token are not the request's to choose.
  if (grant?.task !== undefined) rest.task = grant.task;
  if (grant?.agent !== undefined) rest.agent = grant.agent;
  if (grant) rest.caller = grant.caller;
  const invocation: Invocation = Object.freeze({
    ...rest,
    ...(grant && { grant }),
    actionId: actionId ?? randomUUID(),
    captureOutbound: captureOutbound ?? true,
    startedAt: new Date(),
  });
  return storage.run(invocation, fn);
}

const labelMax: Record<string, number> = { actionId: 256, session: 512, turn: 512, task: 512, agent: 512, caller: 512 };
const doorNames: ReadonlySet<string> = new Set(Doors);

/**
 * The input as InvocationInput would parse it, without zod for what every recorded request sends
 * (issue 17: its safeParse was ~1% of a recorded Directory read); undefined when any field is not
 * plainly valid, and zod then says what is wrong. Accepts exactly what the schema accepts.
 */
function fitInvocation(input: InvocationInput): z.output<typeof InvocationInput> | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const out: Record<string, unknown> = {};
  for (const key in input) {
    const value = (input as Record<string, unknown>)[key];
    if (!Object.hasOwn(input, key)) continue;
    if (value === undefined) {
      if (!(key in labelMax) && key !== 'grant' && key !== 'captureOutbound' && key !== 'answerWaitsForRecord') return undefined;
      continue;
    }
    const max = labelMax[key];
    if (max !== undefined) {
      if (typeof value !== 'string' || value.length < 1 || value.length > max) return undefined;
    } else if (key === 'door') {
      if (typeof value !== 'string' || !doorNames.has(value)) return undefined;
    } else if (key === 'grant') {
      if (typeof value !== 'object' || value === null) return undefined;
    } else if (key === 'captureOutbound' || key === 'answerWaitsForRecord') {
      if (typeof value !== 'boolean') return undefined;
    } else return undefined;
    out[key] = value;
  }
  return 'door' in out ? (out as z.output<typeof InvocationInput>) : undefined;
}

/** The invocation the calling code runs in, or undefined outside every invocation. */
export function currentInvocation(): Invocation | undefined {
  const current = storage.getStore();
  return current && 'actionId' in current ? (current as Invocation) : undefined;
}

/** Runs `fn` in the current invocation with generic outbound capture off (the runner records its own calls). */
export function withoutOutboundCapture<T>(fn: () => T): T {
  const current = currentInvocation();
  if (!current?.captureOutbound) return fn();
  return storage.run(Object.freeze({ ...current, captureOutbound: false }), fn);
}

/**
 * Runs `fn` in the current invocation with generic outbound capture on, each exchange tagged with
 * `outboundFor`: for a client the runner drives whose own wire traffic is the exact record (the MCP
 * SDK over HTTP), where the runner's events hold the call and its result, not the bytes.
 */
export function withOutboundCaptureFor<T>(outboundFor: OutboundFor, fn: () => T): T {
  const current = currentInvocation();
  if (!current) return fn();
  return storage.run(Object.freeze({ ...current, captureOutbound: true, outboundFor }), fn);
}

/** Binds `fn` to the invocation current now, for callbacks run later by code that loses the context. */
export function bindToInvocation<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return AsyncLocalStorage.bind(fn);
}

/** The ledger fields an invocation puts on every event recorded inside it (absent values left out). */
export function eventFields(invocation: Invocation): { actionId: string; session?: string; turn?: string; task?: string; agent?: string } {
  const { actionId, session, turn, task, agent } = invocation;
  return { actionId, ...(session && { session }), ...(turn && { turn }), ...(task && { task }), ...(agent && { agent }) };
}
