// OpenTelemetry spans as the OTLP door decodes them (protobuf or JSON alike), before they become
// ledger events (otel-events.ts). Transport-free: ids are lowercase hex, times nanoseconds as text.

/** A string attribute value whose bytes are not UTF-8: kept as bytes for a payload, refused anywhere else. */
export class NotUtf8 {
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
}

/**
 * An attribute value with its AnyValue wrapper removed: bytes as base64 text and an int64 past 2^53
 * as its decimal text (as OTLP/JSON writes them), an empty AnyValue as null.
 */
export type OtelValue = string | number | boolean | null | NotUtf8 | OtelValue[] | { [key: string]: OtelValue };

/** Attributes by key, in the order sent (a repeated key keeps its last value). */
export type OtelAttributes = Map<string, OtelValue>;

/** A time as nanoseconds since the epoch (decimal text, exact) and whole milliseconds. */
export type OtelTime = { ns: string; ms: number };

export type OtelSpanEvent = { name: string; time: OtelTime; attributes: OtelAttributes; droppedAttributes: number };
export type OtelLink = { traceId: string; spanId: string; traceState: string; attributes: OtelAttributes };

export type OtelSpan = {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  traceState: string;
  name: string;
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  start: OtelTime;
  end: OtelTime;
  attributes: OtelAttributes;
  events: OtelSpanEvent[];
  links: OtelLink[];
  /** StatusCode: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  dropped: { attributes: number; events: number; links: number };
  /** Why this span cannot be taken as sent (an id of the wrong length, a name that is not UTF-8…). */
  problem?: string;
};

export type OtelScope = { name: string; version: string; attributes: OtelAttributes };

/** One ResourceSpans: the exporter's resource and its spans by instrumentation scope. */
export type OtelResourceSpans = {
  resource: OtelAttributes;
  /** Why none of this resource's spans can be taken (its attributes could not be read). */
  problem?: string;
  scopes: { scope: OtelScope; spans: OtelSpan[] }[];
};

/** Deepest AnyValue nesting read (arrays and key-value lists inside one another); deeper is a span's problem. */
export const OTEL_VALUE_MAX_DEPTH = 64;

export const spanKindNames = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'] as const;
export const statusCodeNames = ['UNSET', 'OK', 'ERROR'] as const;

/** Milliseconds of a decimal nanosecond count (exact: the digits are cut, not divided as a float). */
export const msOfNs = (ns: string): number => (ns.length > 6 ? Number(ns.slice(0, -6)) : 0);
