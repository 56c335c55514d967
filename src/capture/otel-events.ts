// Spans → ledger events (docs/ARCHITECTURE.md, "OpenTelemetry in"). Every span becomes events whose
// ids are fixed by its trace id and span id, so an exporter's retry adds nothing: a model call is a
// MODEL_CALL/MODEL_RESULT pair, a tool execution a TOOL_CALL/TOOL_RESULT pair, any other span one SPAN
// event. A span that cannot be stored as sent is rejected (counted for OTLP's partial success), never
// stored altered.
import { BIGINT_MAX } from '../limits.ts';
import { type BatchInput, type EventInput, type PayloadInput, parseEvent } from '../ledger/input.ts';
import {
  agentOf,
  type Content,
  holdsNotUtf8,
  promptOf,
  requestModelOf,
  responseModelOf,
  roleOf,
  sessionOf,
  takeContent,
  toolCallIdOf,
  usageOf,
} from './otel-genai.ts';
import { Lineage, type SpanFilings, spanActionId } from './otel-lineage.ts';
import {
  NotUtf8,
  type OtelAttributes,
  type OtelResourceSpans,
  type OtelScope,
  type OtelSpan,
  type OtelValue,
  spanKindNames,
  statusCodeNames,
} from './otel-spans.ts';

/** The kinds of event a span becomes. */
export const OtelEventKind = {
  SPAN: 'SPAN',
  MODEL_CALL: 'MODEL_CALL',
  MODEL_RESULT: 'MODEL_RESULT',
  TOOL_CALL: 'TOOL_CALL',
  TOOL_RESULT: 'TOOL_RESULT',
} as const;

export type SpanUsage = { input?: number | undefined; output?: number | undefined; cached?: number | undefined; cacheWrite?: number | undefined };
export type SpanCharge = { costUsd: string; price: { id: string; date: string }; row: string };

export type SpanMapping = {
  /** The Directory row a tool name means, when one does. */
  toolRow(name: string): Promise<{ type: string; name: string } | null>;
  /**
   * A model call's charge at the price of the model row its name means (src/model/charge.ts): the cost
   * in USD as exact decimal text, the price row charged and the row. Without it, or without such a row,
   * no cost is recorded.
   */
  chargeOf?(model: string, usage: SpanUsage): Promise<SpanCharge | undefined>;
  /** What spans stored earlier were filed under: a span whose parent came in an earlier request inherits from it. */
  filings?: SpanFilings;
  /** The task and agent the ingesting token is bound to: they win over what the spans say. */
  task?: string | undefined;
  agent?: string | undefined;
};

export type MappedSpans = {
  /**
   * One batch per collector (the exporter's service.instance.id, else service.name), at most 10,000
   * events each; its position is the latest span end time (ns) delivered.
   */
  batches: BatchInput[];
  spans: number;
  rejected: number;
  /** Why spans were rejected: the first few reasons. */
  reasons: string[];
};

const MAX_REASONS = 5;
const BATCH_MAX_EVENTS = 10_000;

class SpanProblem extends Error {}

export async function eventsOfSpans(request: readonly OtelResourceSpans[], mapping: SpanMapping): Promise<MappedSpans> {
  const out: MappedSpans = { batches: [], spans: 0, rejected: 0, reasons: [] };
  const byCollector = new Map<string, { events: EventInput[]; latest: string }>();
  const lineage = new Lineage(request);
  await lineage.resolve(mapping.filings, mapping.agent === undefined ? [sessionOf, agentOf] : [sessionOf]);
  for (const resourceSpans of request) {
    const collector = collectorOf(resourceSpans.resource);
    let resource: Record<string, unknown> | undefined;
    let resourceProblem = resourceSpans.problem;
    try {
      resource = attributesJson(resourceSpans.resource, 'resource attribute');
    } catch (error) {
      resourceProblem ??= (error as Error).message;
    }
    for (const { scope, spans } of resourceSpans.scopes) {
      for (const span of spans) {
        out.spans++;
        try {
          if (resourceProblem || span.problem) throw new SpanProblem(resourceProblem ?? span.problem);
          const events = await eventsOfSpan(span, { collector, resource: resource!, scope, lineage, mapping });
          let delivered = byCollector.get(collector);
          if (!delivered) {
            delivered = { events: [], latest: '0' };
            byCollector.set(collector, delivered);
          }
          delivered.events.push(...events);
          if (laterNs(span.end.ns, delivered.latest) && !laterNs(span.end.ns, BIGINT_MAX_TEXT)) delivered.latest = span.end.ns;
        } catch (error) {
          if (!(error instanceof SpanProblem)) throw error;
          out.rejected++;
          if (out.reasons.length < MAX_REASONS) out.reasons.push(`span ${span.traceId || '?'}/${span.spanId || '?'}: ${error.message}`);
        }
      }
    }
  }
  // The collector's position: the latest end time (ns) of the spans it delivered, kept forward by the ledger.
  for (const [collector, { events, latest }] of byCollector) {
    for (let i = 0; i < events.length; i += BATCH_MAX_EVENTS)
      out.batches.push({ collector, position: BigInt(latest), events: events.slice(i, i + BATCH_MAX_EVENTS) });
  }
  return out;
}

/** A span ending past PostgreSQL's bigint (after the year 2262) moves no position. */
const BIGINT_MAX_TEXT = BIGINT_MAX.toString();

/** Decimal texts without leading zeros compare by length, then digit by digit. */
const laterNs = (a: string, b: string) => a.length > b.length || (a.length === b.length && a > b);

function collectorOf(resource: OtelAttributes): string {
  for (const key of ['service.instance.id', 'service.name']) {
    const v = resource.get(key);
    if (typeof v === 'string' && v !== '') return v;
  }
  return 'unknown_service';
}

type SpanContext = { collector: string; resource: Record<string, unknown>; scope: OtelScope; lineage: Lineage; mapping: SpanMapping };

/** What every event of one span shares, and the span's attributes and events left once content is taken out. */
type SpanParts = {
  id: string;
  common: Pick<EventInput, 'actionId' | 'session' | 'agent' | 'task'>;
  start: Date;
  end: Date;
  status: 'OK' | 'ERROR' | undefined;
  attributes: OtelAttributes;
  events: OtelSpan['events'];
};
/** A span's events, the content each payload was read from, and what their metadata adds. */
type Mapped = { events: EventInput[]; contents: (Content | undefined)[]; extra: Record<string, unknown> };

async function eventsOfSpan(span: OtelSpan, ctx: SpanContext): Promise<EventInput[]> {
  const { mapping } = ctx;
  const id = spanActionId(span.traceId, span.spanId);
  const parts: SpanParts = {
    id,
    common: {
      actionId: id,
      ...optional('session', sessionOf(span.attributes) ?? ctx.lineage.inherited(span, sessionOf, 'session')),
      ...optional('agent', mapping.agent ?? agentOf(span.attributes) ?? ctx.lineage.inherited(span, agentOf, 'agent')),
      ...optional('task', mapping.task),
    },
    start: dateOf(span.start.ms, 'start time'),
    end: dateOf(span.end.ms, 'end time'),
    status: span.status.code === 2 ? 'ERROR' : span.status.code === 1 ? 'OK' : undefined,
    attributes: new Map(span.attributes),
    events: span.events.map((e) => ({ ...e })),
  };
  const role = roleOf(span);
  const { events, contents, extra } =
    role.kind === 'model'
      ? await modelEvents(span, parts, role.operation, mapping)
      : role.kind === 'tool'
        ? await toolEvents(span, parts, role.name, mapping)
        : otherEvents(parts, role.operation);
  // The whole span rides with the first event; a pair's second names its span only.
  const [first, second] = events as [EventInput, EventInput | undefined];
  first.metadata = { otel: spanJson(span, parts.attributes, parts.events, ctx), ...extra, ...optional('payloadFrom', contents[0]?.from) };
  if (second)
    second.metadata = { otel: { traceId: span.traceId, spanId: span.spanId, name: span.name }, ...extra, ...optional('payloadFrom', contents[1]?.from) };
  return events.map(validated);
}

async function modelEvents(span: OtelSpan, parts: SpanParts, operation: string, mapping: SpanMapping): Promise<Mapped> {
  const system = takeContent('systemInstructions', parts.attributes, parts.events);
  const input = promptOf(system, takeContent('modelInput', parts.attributes, parts.events));
  const output = operation === 'embeddings' || operation === 'embedding' ? undefined : takeContent('modelOutput', parts.attributes, parts.events);
  const requested = requestModelOf(span.attributes);
  const answered = responseModelOf(span.attributes) ?? requested;
  const usage = usageOf(span.attributes);
  const charge = answered ? await mapping.chargeOf?.(answered, usage) : undefined;
  const call: EventInput = {
    ...parts.common,
    id: `${parts.id}:call`,
    kind: OtelEventKind.MODEL_CALL,
    direction: 'OUT',
    occurredAt: parts.start,
    ...optional('model', requested ?? answered),
    payload: payloadOf(input),
  };
  const result: EventInput = {
    ...parts.common,
    id: `${parts.id}:result`,
    kind: OtelEventKind.MODEL_RESULT,
    direction: 'IN',
    occurredAt: parts.end,
    ...optional('model', answered),
    ...optional('status', parts.status),
    ...optional('inputTokens', usage.input),
    ...optional('outputTokens', usage.output),
    ...optional('costUsd', charge?.costUsd),
    payload: payloadOf(output),
  };
  const charged = charge && { price: { ...charge.price, row: charge.row } };
  return {
    events: [call, result],
    contents: [input, output],
    extra: {
      operation,
      ...(usage.cached !== undefined && { cachedTokens: usage.cached }),
      ...(usage.cacheWrite !== undefined && { cacheWriteTokens: usage.cacheWrite }),
      ...charged,
    },
  };
}

async function toolEvents(span: OtelSpan, parts: SpanParts, name: string, mapping: SpanMapping): Promise<Mapped> {
  const args = takeContent('toolArguments', parts.attributes, parts.events);
  const result = takeContent('toolResult', parts.attributes, parts.events);
  const row = await mapping.toolRow(name);
  const callId = toolCallIdOf(span.attributes);
  const tool = row?.name ?? name;
  const shared = { ...parts.common, tool };
  return {
    events: [
      { ...shared, id: `${parts.id}:call`, kind: OtelEventKind.TOOL_CALL, direction: 'OUT', occurredAt: parts.start, payload: payloadOf(args) },
      {
        ...shared,
        id: `${parts.id}:result`,
        kind: OtelEventKind.TOOL_RESULT,
        direction: 'IN',
        occurredAt: parts.end,
        ...optional('status', parts.status),
        payload: payloadOf(result),
      },
    ],
    contents: [args, result],
    extra: { directoryRow: row, ...optional('toolCallId', callId) },
  };
}

function otherEvents(parts: SpanParts, operation: string | undefined): Mapped {
  return {
    events: [
      {
        ...parts.common,
        id: parts.id,
        kind: OtelEventKind.SPAN,
        direction: 'IN',
        occurredAt: parts.start,
        ...optional('status', parts.status),
        payload: { state: 'NONE' },
      },
    ],
    contents: [],
    extra: optional('operation', operation),
  };
}

const optional = <K extends string, V>(key: K, value: V | undefined) => (value === undefined ? {} : ({ [key]: value } as { [P in K]: V }));

function dateOf(ms: number, what: string): Date {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) throw new SpanProblem(`its ${what} is outside the range of dates`);
  return date;
}

/** The exact bytes of a content value: a string as its UTF-8, bytes that are not UTF-8 as they are, anything else as JSON. */
function payloadOf(content: Content | undefined): PayloadInput {
  if (!content) return { state: 'NONE' };
  const { value, from } = content;
  if (value instanceof NotUtf8) return { state: 'COMPLETE', base64: Buffer.from(value.bytes).toString('base64') };
  if (typeof value === 'string') {
    if (!value.isWellFormed()) throw new SpanProblem(`${from} holds an unpaired surrogate, which has no UTF-8 bytes to store`);
    return { state: 'COMPLETE', text: value };
  }
  if (holdsNotUtf8(value)) throw new SpanProblem(`${from} holds text that is not UTF-8 inside a structured value`);
  return { state: 'COMPLETE', text: JSON.stringify(jsonOf(value, from)) };
}

function validated(event: EventInput): EventInput {
  const parsed = parseEvent(event);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new SpanProblem(`its ${event.kind} event cannot hold it: ${issue.path.join('.')}: ${issue.message}`);
}

function spanJson(span: OtelSpan, attributes: OtelAttributes, events: OtelSpan['events'], ctx: SpanContext): Record<string, unknown> {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId && { parentSpanId: span.parentSpanId }),
    ...(span.traceState && { traceState: span.traceState }),
    name: span.name,
    kind: spanKindNames[span.kind] ?? span.kind,
    start: span.start.ns,
    end: span.end.ns,
    status: { code: statusCodeNames[span.status.code] ?? span.status.code, ...(span.status.message && { message: span.status.message }) },
    attributes: attributesJson(attributes, 'attribute'),
    ...(events.length > 0 && {
      events: events.map((e) => ({ name: e.name, time: e.time.ns, attributes: attributesJson(e.attributes, `attribute of event ${e.name}`) })),
    }),
    ...(span.links.length > 0 && {
      links: span.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: attributesJson(l.attributes, 'link attribute') })),
    }),
    ...((span.dropped.attributes || span.dropped.events || span.dropped.links) && { dropped: span.dropped }),
    scope: { name: ctx.scope.name, ...(ctx.scope.version && { version: ctx.scope.version }) },
    collector: ctx.collector,
    resource: ctx.resource,
  };
}

function attributesJson(attributes: OtelAttributes, what: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of attributes) setOwn(out, key, jsonOf(value, `${what} ${key}`));
  return out;
}

/** `out[key] = value`, except that a `__proto__` key becomes an own property instead of the prototype. */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** A value as JSON for the metadata: bytes that are not UTF-8 cannot be, and NaN or ±Infinity are written as text. */
function jsonOf(value: OtelValue, where: string): unknown {
  if (value instanceof NotUtf8) throw new SpanProblem(`${where} holds text that is not UTF-8`);
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return value.map((v) => jsonOf(v, where));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) setOwn(out, key, jsonOf(value[key]!, where));
    return out;
  }
  return value;
}
