// OTLP/HTTP protobuf: ExportTraceServiceRequest decoded with protobufjs from trace.proto, and the
// answers (ExportTraceServiceResponse, google.rpc.Status) encoded with it.
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import {
  NotUtf8,
  OTEL_VALUE_MAX_DEPTH,
  type OtelAttributes,
  type OtelResourceSpans,
  type OtelSpan,
  type OtelTime,
  type OtelValue,
  msOfNs,
} from '../../capture/otel-spans.ts';

const root = protobuf.parse(readFileSync(new URL('./trace.proto', import.meta.url), 'utf8')).root;
const RequestType = root.lookupType('otlp.ExportTraceServiceRequest');
const ResponseType = root.lookupType('otlp.ExportTraceServiceResponse');
const StatusType = root.lookupType('otlp.RpcStatus');

/** A 64-bit field as protobufjs gives it: a Long (long.js is installed), or a number without it. */
type Wide = number | { low: number; high: number; unsigned: boolean; toString(): string; toNumber(): number };
type Bytes = Uint8Array;
type PbValue = {
  value?: string;
  stringValue: Bytes;
  boolValue: boolean;
  intValue: Wide;
  doubleValue: number;
  bytesValue: Bytes;
  arrayValue?: { values: PbValue[] };
  kvlistValue?: { values: PbKeyValue[] };
};
type PbKeyValue = { key: Bytes; value?: PbValue };
type PbSpan = {
  traceId: Bytes;
  spanId: Bytes;
  traceState: Bytes;
  parentSpanId: Bytes;
  name: Bytes;
  kind: number;
  startTimeUnixNano: Wide;
  endTimeUnixNano: Wide;
  attributes: PbKeyValue[];
  droppedAttributesCount: number;
  events: { timeUnixNano: Wide; name: Bytes; attributes: PbKeyValue[]; droppedAttributesCount: number }[];
  droppedEventsCount: number;
  links: { traceId: Bytes; spanId: Bytes; traceState: Bytes; attributes: PbKeyValue[] }[];
  droppedLinksCount: number;
  status?: { code: number; message: Bytes };
};
type PbRequest = {
  resourceSpans: {
    resource?: { attributes: PbKeyValue[] };
    scopeSpans: { scope?: { name: Bytes; version: Bytes; attributes: PbKeyValue[] }; spans: PbSpan[] }[];
  }[];
};

/** Thrown while reading one span or resource: why it cannot be taken (the rest of the request still is). */
class Unreadable extends Error {}

/** How deep protobufjs reads messages inside one another (protoc's default); deeper is an undecodable body. */
export const protobufDepthLimit = protobuf.Reader.recursionLimit;

/**
 * The request's spans; throws when the body is not an ExportTraceServiceRequest, or nests messages
 * deeper than protobufDepthLimit (an AnyValue about 47 arrays deep).
 */
export function decodeProtobufTraces(body: Uint8Array): OtelResourceSpans[] {
  const message = RequestType.decode(body) as unknown as PbRequest;
  return message.resourceSpans.map((rs) => {
    const out: OtelResourceSpans = { resource: new Map(), scopes: [] };
    try {
      out.resource = attributesOf(rs.resource?.attributes ?? []);
    } catch (error) {
      if (!(error instanceof Unreadable)) throw error;
      out.problem = `its resource cannot be read: ${error.message}`;
    }
    for (const ss of rs.scopeSpans) {
      let scope = { name: '', version: '', attributes: new Map() as OtelAttributes };
      let scopeProblem: string | undefined;
      try {
        scope = {
          name: text(ss.scope?.name, 'scope name'),
          version: text(ss.scope?.version, 'scope version'),
          attributes: attributesOf(ss.scope?.attributes ?? []),
        };
      } catch (error) {
        if (!(error instanceof Unreadable)) throw error;
        scopeProblem = `its instrumentation scope cannot be read: ${error.message}`;
      }
      out.scopes.push({ scope, spans: ss.spans.map((s) => spanOf(s, scopeProblem)) });
    }
    return out;
  });
}

function spanOf(s: PbSpan, scopeProblem: string | undefined): OtelSpan {
  const span: OtelSpan = {
    traceId: hex(s.traceId),
    spanId: hex(s.spanId),
    parentSpanId: hex(s.parentSpanId),
    traceState: '',
    name: '',
    kind: s.kind,
    start: timeOf(s.startTimeUnixNano),
    end: timeOf(s.endTimeUnixNano),
    attributes: new Map(),
    events: [],
    links: [],
    status: { code: s.status?.code ?? 0, message: '' },
    dropped: { attributes: s.droppedAttributesCount, events: s.droppedEventsCount, links: s.droppedLinksCount },
  };
  try {
    if (scopeProblem) throw new Unreadable(scopeProblem);
    if (s.traceId.length !== 16 || view(s.traceId).every((b) => b === 0))
      throw new Unreadable(`expected a trace id of 16 bytes, not all zero, got ${s.traceId.length} bytes`);
    if (s.spanId.length !== 8 || view(s.spanId).every((b) => b === 0))
      throw new Unreadable(`expected a span id of 8 bytes, not all zero, got ${s.spanId.length} bytes`);
    if (s.parentSpanId.length !== 0 && s.parentSpanId.length !== 8)
      throw new Unreadable(`expected a parent span id of 8 bytes or none, got ${s.parentSpanId.length} bytes`);
    span.name = text(s.name, 'span name');
    span.traceState = text(s.traceState, 'trace state');
    span.status.message = text(s.status?.message, 'status message');
    span.attributes = attributesOf(s.attributes);
    span.events = s.events.map((e) => {
      const name = text(e.name, 'event name');
      return { name, time: timeOf(e.timeUnixNano), attributes: attributesOf(e.attributes), droppedAttributes: e.droppedAttributesCount };
    });
    span.links = s.links.map((l) => ({
      traceId: hex(l.traceId),
      spanId: hex(l.spanId),
      traceState: text(l.traceState, 'link trace state'),
      attributes: attributesOf(l.attributes),
    }));
  } catch (error) {
    if (!(error instanceof Unreadable)) throw error;
    span.problem = error.message;
  }
  return span;
}

/** A bytes field as a Buffer view: protobufjs leaves an absent one as its default (an empty array). */
const view = (bytes: Bytes | undefined): Buffer =>
  !bytes || bytes.length === 0 ? empty : Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const empty = Buffer.alloc(0);

const hex = (bytes: Bytes): string => view(bytes).toString('hex');

function text(bytes: Bytes | undefined, what: string): string {
  const b = view(bytes);
  if (b.length === 0) return '';
  if (!isUtf8(b)) throw new Unreadable(`its ${what} is not UTF-8`);
  return b.toString('utf8');
}

function timeOf(wide: Wide): OtelTime {
  // Long's own toString divides in a loop; two 32-bit halves through BigInt are several times faster.
  const ns = typeof wide === 'number' ? String(wide) : ((BigInt(wide.high >>> 0) << 32n) | BigInt(wide.low >>> 0)).toString();
  return { ns, ms: msOfNs(ns) };
}

function attributesOf(list: readonly PbKeyValue[]): OtelAttributes {
  const out: OtelAttributes = new Map();
  for (const kv of list) {
    const key = text(kv.key, 'attribute key');
    out.set(key, anyValueOf(kv.value, 0, key));
  }
  return out;
}

function anyValueOf(v: PbValue | undefined, depth: number, key: string): OtelValue {
  if (!v) return null;
  switch (v.value) {
    case 'stringValue': {
      const b = view(v.stringValue);
      return isUtf8(b) ? b.toString('utf8') : new NotUtf8(b);
    }
    case 'boolValue':
      return v.boolValue;
    case 'intValue': {
      const n = typeof v.intValue === 'number' ? v.intValue : v.intValue.toNumber();
      return Number.isSafeInteger(n) ? n : v.intValue.toString();
    }
    case 'doubleValue':
      return v.doubleValue;
    case 'bytesValue':
      return view(v.bytesValue).toString('base64');
    case 'arrayValue':
    case 'kvlistValue': {
      if (depth >= OTEL_VALUE_MAX_DEPTH) throw new Unreadable(`attribute ${key} nests values deeper than ${OTEL_VALUE_MAX_DEPTH} levels`);
      if (v.value === 'arrayValue') return (v.arrayValue?.values ?? []).map((x) => anyValueOf(x, depth + 1, key));
      const out: { [k: string]: OtelValue } = {};
      for (const kv of v.kvlistValue?.values ?? []) {
        Object.defineProperty(out, text(kv.key, 'attribute key'), {
          value: anyValueOf(kv.value, depth + 1, key),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    default:
      return null;
  }
}

/** ExportTraceServiceResponse: empty on full success, else partial_success with the rejected count and why. */
export function encodeProtobufResponse(rejected: number, message: string): Uint8Array {
  const body = rejected > 0 || message ? { partialSuccess: { rejectedSpans: rejected, errorMessage: message } } : {};
  return ResponseType.encode(ResponseType.create(body)).finish();
}

/** google.rpc.Status, the body of a failed export. */
export function encodeProtobufStatus(code: number, message: string): Uint8Array {
  return StatusType.encode(StatusType.create({ code, message })).finish();
}

/** For tests and the benchmark: a request's plain object (protobufjs's fromObject form) as protobuf bytes. */
export function encodeProtobufRequest(request: Record<string, unknown>): Uint8Array {
  return RequestType.encode(RequestType.fromObject(request)).finish();
}

/** The decoded answer, for tests: `{ partialSuccess?: { rejectedSpans, errorMessage } }`. */
export function decodeProtobufResponse(body: Uint8Array): { partialSuccess?: { rejectedSpans: string; errorMessage: string } } {
  return ResponseType.toObject(ResponseType.decode(body), { longs: String, defaults: false }) as never;
}

export function decodeProtobufStatus(body: Uint8Array): { code?: number; message?: string } {
  return StatusType.toObject(StatusType.decode(body)) as never;
}
