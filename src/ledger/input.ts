// The shape of an appended batch, validated with zod at every door.
import { z } from 'zod';
import { BIGINT_MAX, isBigintText } from '../limits.ts';

export const Direction = z.enum(['IN', 'OUT']);
export const PayloadState = z.enum(['COMPLETE', 'PARTIAL', 'NONE', 'ARTIFACT', 'MISSING']);
/** The most a token count column holds (PostgreSQL `integer`): a larger count is refused as input, never stored as an overflow. */
export const TOKEN_COUNT_MAX = 2_147_483_647;
export type PayloadState = z.output<typeof PayloadState>;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 as 64 lowercase hex digits');
// PostgreSQL text and jsonb cannot hold U+0000, and a lone surrogate has no UTF-8 form: refused in
// names and ids; in content (url, headers, metadata) they are valid and stored escaped (storable.ts).
const storable = (s: string) => !s.includes('\u0000') && s.isWellFormed();
const storableMessage = 'text without NUL characters or unpaired surrogates';
const storableText = () => z.string().refine(storable, storableMessage);
const shortText = (max = 512) => storableText().pipe(z.string().min(1).max(max));
const decimalPattern = /^-?\d{1,10}(\.\d{1,10})?$/;
const base64 = z
  .string()
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64 text')
  .refine((s) => s.length % 4 === 0, 'base64 text (length a multiple of 4)');
const decimal = z
  .union([z.string(), z.number()])
  .transform(String)
  .pipe(z.string().regex(decimalPattern, 'an exact decimal with up to 10 digits before and after the point'));
const headerValue = z.union([z.string(), z.array(z.string())]);
const isoDateTime = z.iso.datetime({ offset: true });

/**
 * The event schemas at their limits, and unlimited in length for what the spool reads back: it wrote
 * each event with secret values replaced by their names, which can take a text past its limit.
 */
function eventSchemas(limited: boolean) {
  const bounded = (max: number) => (limited ? z.string().min(1).max(max) : z.string().min(1));
  const text = (max = 512) => storableText().pipe(bounded(max));
  const payload = z
    .object({
      state: PayloadState,
      text: z
        .string()
        .refine((t) => t.isWellFormed(), 'UTF-8 text without unpaired surrogates (send binary as base64)')
        .optional(),
      base64: base64.optional(),
      size: z.number().int().nonnegative().optional(),
      artifactUri: text(4096).optional(),
      artifactSha256: sha256.optional(),
    })
    .strict()
    .superRefine((p, ctx) => {
      const bodies = Number(p.text !== undefined) + Number(p.base64 !== undefined);
      const carries = p.state === 'COMPLETE' || p.state === 'PARTIAL';
      if (carries && bodies !== 1) {
        ctx.addIssue({ code: 'custom', path: ['text'], message: `exactly one of text or base64 for a ${p.state} payload` });
      }
      if (!carries && bodies > 0) {
        ctx.addIssue({ code: 'custom', path: [p.text !== undefined ? 'text' : 'base64'], message: `no bytes for a ${p.state} payload` });
      }
      if (p.state === 'ARTIFACT' && !p.artifactUri) {
        ctx.addIssue({ code: 'custom', path: ['artifactUri'], message: 'a URI for an ARTIFACT payload' });
      }
      if (p.state !== 'ARTIFACT' && (p.artifactUri || p.artifactSha256)) {
        ctx.addIssue({ code: 'custom', path: ['artifactUri'], message: 'an artifact reference only with state ARTIFACT' });
      }
    });
  const event = z
    .object({
      id: text(256),
      kind: text(128),
      direction: Direction,
      actionId: text(256),
      tool: text().optional(),
      session: text().optional(),
      turn: text().optional(),
      task: text().optional(),
      agent: text().optional(),
      model: text().optional(),
      status: text(128).optional(),
      method: text(32).optional(),
      url: bounded(16_384).optional(),
      headers: z.record(z.string(), headerValue).optional(),
      costUsd: decimal.optional(),
      inputTokens: z.number().int().nonnegative().max(TOKEN_COUNT_MAX).optional(),
      outputTokens: z.number().int().nonnegative().max(TOKEN_COUNT_MAX).optional(),
      occurredAt: z.union([isoDateTime, z.date()]).transform((v) => new Date(v)),
      payload: payload.default({ state: 'NONE' }),
      metadata: z.record(z.string(), z.unknown()).optional(),
      /** The Directory contract this event ran: its form (or way column) and the sha256 of its canonical JSON. */
      contract: z
        .object({ form: text(128), sha256 })
        .strict()
        .optional(),
    })
    .strict();
  return { payload, event };
}

const limited = eventSchemas(true);
export const PayloadInput = limited.payload;
export type PayloadInput = z.output<typeof PayloadInput>;
export const EventInput = limited.event;
export type EventInput = z.output<typeof EventInput>;

export const BatchInput = z
  .object({
    collector: shortText(256),
    position: z
      .union([z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.string().refine(isBigintText, `a whole number from 0 to ${BIGINT_MAX}`)])
      .transform((v) => BigInt(v))
      .optional(),
    events: z.array(EventInput).min(1).max(10_000),
  })
  .strict();
export type BatchInput = z.output<typeof BatchInput>;

// The fast path of the ingest door and of the background writer. zod costs several microseconds
// per event (and as much again in garbage) on a 500-event batch, and ~60 µs on each event the
// runner records; every field is checked here by hand under the same rules, and anything this does
// not recognise or would refuse goes through the schema above, so every refusal still comes from
// zod and names the field. `test/ledger/input-fast.test.ts` holds both paths to the same answers.

const eventKeys = new Set([
  'id',
  'kind',
  'direction',
  'actionId',
  'tool',
  'session',
  'turn',
  'task',
  'agent',
  'model',
  'status',
  'method',
  'url',
  'costUsd',
  'inputTokens',
  'outputTokens',
  'occurredAt',
  'payload',
  'headers',
  'metadata',
  'contract',
]);
const optionalText: [key: string, max: number][] = [
  ['tool', 512],
  ['session', 512],
  ['turn', 512],
  ['task', 512],
  ['agent', 512],
  ['model', 512],
  ['status', 128],
  ['method', 32],
];
const isText = (v: unknown, max: number): v is string => typeof v === 'string' && v.length >= 1 && v.length <= max && storable(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isTokenCount = (v: unknown): v is number => isCount(v) && v <= TOKEN_COUNT_MAX;
const isRecord = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};
const payloadKeys = new Set(['state', 'text', 'base64', 'size', 'artifactUri', 'artifactSha256']);
const payloadStates = new Set(['COMPLETE', 'PARTIAL', 'NONE', 'ARTIFACT', 'MISSING']);
const sha256Pattern = /^[0-9a-f]{64}$/;
const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

/** The UTF-8 bytes a payload's text was decoded from, by payload object (see `withTextBytes`). */
const textBytes = new WeakMap<object, Buffer>();

/**
 * Keeps `bytes` beside `payload`, whose `text` was decoded from them and which is never changed, and
 * whose owner never writes to them again: the spool takes them instead of encoding the text again
 * (a recorded answer is kilobytes). Parsing the event carries them to its copy of the payload.
 */
export function withTextBytes(payload: PayloadInput, bytes: Buffer): PayloadInput {
  if (payload.text !== undefined) textBytes.set(payload, bytes);
  return payload;
}

/** The bytes of the payload's text, when `withTextBytes` kept them. */
export const textBytesOf = (payload: object): Buffer | undefined => textBytes.get(payload);

function fastPayload(p: unknown): PayloadInput | undefined {
  const out = fastPayloadCopy(p);
  const bytes = out && textBytes.get(p as object);
  if (bytes) textBytes.set(out, bytes);
  return out;
}

function fastPayloadCopy(p: unknown): PayloadInput | undefined {
  if (p === undefined) return { state: 'NONE' };
  if (!isRecord(p)) return undefined;
  for (const key in p) if (!payloadKeys.has(key)) return undefined;
  const { state, text, base64, size, artifactUri, artifactSha256 } = p;
  if (typeof state !== 'string' || !payloadStates.has(state)) return undefined;
  const out = { state } as PayloadInput;
  if (text !== undefined) {
    if (typeof text !== 'string' || !text.isWellFormed()) return undefined;
    out.text = text;
  }
  if (base64 !== undefined) {
    if (typeof base64 !== 'string' || base64.length % 4 !== 0 || !base64Pattern.test(base64)) return undefined;
    out.base64 = base64;
  }
  if (size !== undefined) {
    if (!isCount(size)) return undefined;
    out.size = size;
  }
  if (artifactUri !== undefined) {
    if (!isText(artifactUri, 4096)) return undefined;
    out.artifactUri = artifactUri;
  }
  if (artifactSha256 !== undefined) {
    if (typeof artifactSha256 !== 'string' || !sha256Pattern.test(artifactSha256)) return undefined;
    out.artifactSha256 = artifactSha256;
  }
  // PayloadInput's cross-field rules; any break goes to zod for its message.
  const bodies = Number(text !== undefined) + Number(base64 !== undefined);
  const carries = state === 'COMPLETE' || state === 'PARTIAL';
  if (carries ? bodies !== 1 : bodies > 0) return undefined;
  if (state === 'ARTIFACT' ? !artifactUri : artifactUri || artifactSha256) return undefined;
  return out;
}

/** A copy of a string-keyed record whose values pass; undefined otherwise (or for a `__proto__` key, left to zod). */
function fastRecord<T>(v: unknown, value: (x: unknown) => x is T): Record<string, T> | undefined {
  if (!isRecord(v)) return undefined;
  const out: Record<string, T> = {};
  for (const key in v) {
    if (key === '__proto__') return undefined;
    const x = v[key];
    if (!value(x)) return undefined;
    out[key] = x;
  }
  return out;
}
const isHeaderValue = (x: unknown): x is string | string[] => typeof x === 'string' || (Array.isArray(x) && x.every((y) => typeof y === 'string'));
const isAnything = (_x: unknown): _x is unknown => true;

/** One event as EventInput would parse it, by hand; undefined when zod must answer (an unknown shape, or a refusal). */
export function parseEventFast(e: unknown): EventInput | undefined {
  if (!isRecord(e)) return undefined;
  for (const key in e) if (!eventKeys.has(key)) return undefined;
  const { id, kind, direction, actionId, occurredAt, costUsd, inputTokens, outputTokens, headers, metadata, contract } = e;
  if (!isText(id, 256) || !isText(kind, 128) || !isText(actionId, 256) || (direction !== 'IN' && direction !== 'OUT')) return undefined;
  let at: Date;
  if (typeof occurredAt === 'string' && isoDateTime._zod.pattern.test(occurredAt)) at = new Date(occurredAt);
  else if (occurredAt instanceof Date && !Number.isNaN(occurredAt.getTime())) at = new Date(occurredAt);
  else return undefined;
  const payload = fastPayload(e.payload);
  if (!payload) return undefined;
  const out: EventInput = { id, kind, direction, actionId, occurredAt: at, payload };
  for (const [key, max] of optionalText) {
    const v = e[key];
    if (v === undefined) continue;
    if (!isText(v, max)) return undefined;
    (out as Record<string, unknown>)[key] = v;
  }
  if (costUsd !== undefined) {
    if (typeof costUsd !== 'string' && typeof costUsd !== 'number') return undefined;
    const decimal = String(costUsd);
    if (!decimalPattern.test(decimal)) return undefined;
    out.costUsd = decimal;
  }
  if (inputTokens !== undefined) {
    if (!isTokenCount(inputTokens)) return undefined;
    out.inputTokens = inputTokens;
  }
  if (outputTokens !== undefined) {
    if (!isTokenCount(outputTokens)) return undefined;
    out.outputTokens = outputTokens;
  }
  if (headers !== undefined) {
    const h = fastRecord(headers, isHeaderValue);
    if (!h) return undefined;
    out.headers = h;
  }
  if (metadata !== undefined) {
    const m = fastRecord(metadata, isAnything);
    if (!m) return undefined;
    out.metadata = m;
  }
  if (e.url !== undefined) {
    if (typeof e.url !== 'string' || e.url.length < 1 || e.url.length > 16_384) return undefined;
    out.url = e.url;
  }
  if (contract !== undefined) {
    if (!isRecord(contract)) return undefined;
    for (const key in contract) if (key !== 'form' && key !== 'sha256') return undefined;
    if (!isText(contract.form, 128) || typeof contract.sha256 !== 'string' || !sha256Pattern.test(contract.sha256)) return undefined;
    out.contract = { form: contract.form, sha256: contract.sha256 };
  }
  return out;
}

/** One event as EventInput would parse it: the fast path when it recognises every field, zod otherwise. */
export function parseEvent(input: unknown): z.ZodSafeParseResult<EventInput> {
  const fast = parseEventFast(input);
  return fast ? { success: true, data: fast } : EventInput.safeParse(input);
}

const SpooledEventInput = eventSchemas(false).event;

/** An event as the spool wrote it, read back on replay: EventInput without its length limits (see eventSchemas). */
export function parseSpooledEvent(input: unknown): z.ZodSafeParseResult<EventInput> {
  const fast = parseEventFast(input);
  return fast ? { success: true, data: fast } : SpooledEventInput.safeParse(input);
}

/**
 * A batch as BatchInput would parse it, without zod for the events of the common shape; undefined
 * when the batch itself is not of that shape or an event fails its schema (parse it with BatchInput
 * then, for the message).
 */
export function parseBatchFast(input: unknown): BatchInput | undefined {
  if (!isRecord(input)) return undefined;
  for (const key in input) if (key !== 'collector' && key !== 'position' && key !== 'events') return undefined;
  const { collector, position, events } = input;
  if (!isText(collector, 256) || !Array.isArray(events) || events.length < 1 || events.length > 10_000) return undefined;
  let at: bigint | undefined;
  if (isCount(position) || (typeof position === 'string' && isBigintText(position))) at = BigInt(position);
  else if (position !== undefined) return undefined;
  const parsed: EventInput[] = new Array(events.length);
  for (let i = 0; i < events.length; i++) {
    const event = parseEvent(events[i]);
    if (!event.success) return undefined;
    parsed[i] = event.data;
  }
  return at === undefined ? { collector, events: parsed } : { collector, position: at, events: parsed };
}
