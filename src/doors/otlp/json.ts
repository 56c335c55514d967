// OTLP/HTTP JSON (the protobuf JSON mapping with OTLP's exceptions): lowerCamelCase keys, trace and
// span ids as hex, enums as integers, 64-bit integers as decimal strings (numbers accepted too),
// bytes as base64. Unknown fields are ignored, as the spec asks.
import { badInput } from '../../errors.ts';
import {
  OTEL_VALUE_MAX_DEPTH,
  type OtelAttributes,
  type OtelLink,
  type OtelResourceSpans,
  type OtelSpan,
  type OtelSpanEvent,
  type OtelTime,
  type OtelValue,
  msOfNs,
} from '../../capture/otel-spans.ts';

/** Thrown while reading one span or resource: why it cannot be taken (the rest of the request still is). */
class Unreadable extends Error {}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const listOf = (v: unknown, what: string): unknown[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Unreadable(`expected ${what} as a JSON array`);
  return v;
};
const objectOf = (v: unknown, what: string): Json => {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new Unreadable(`expected ${what} as a JSON object`);
  return v;
};

/** The request's spans; throws BAD_INPUT when the body is not an ExportTraceServiceRequest at all. */
export function decodeJsonTraces(body: unknown): OtelResourceSpans[] {
  if (!isObject(body)) throw badInput('Expected an OTLP ExportTraceServiceRequest as a JSON object.');
  const list = body.resourceSpans ?? [];
  if (!Array.isArray(list)) throw badInput('Expected resourceSpans as a JSON array.');
  return list.map((rs) => {
    const out: OtelResourceSpans = { resource: new Map(), scopes: [] };
    let scopeSpans: unknown[] = [];
    try {
      if (!isObject(rs)) throw new Unreadable('expected each of resourceSpans as a JSON object');
      scopeSpans = listOf(rs.scopeSpans, 'scopeSpans');
      out.resource = attributesOf(objectOf(rs.resource, 'resource').attributes);
    } catch (error) {
      if (!(error instanceof Unreadable)) throw error;
      out.problem = `its resource cannot be read: ${error.message}`;
    }
    for (const ss of scopeSpans) {
      let scope = { name: '', version: '', attributes: new Map() as OtelAttributes };
      let spans: unknown[] = [];
      let scopeProblem: string | undefined;
      try {
        if (!isObject(ss)) throw new Unreadable('expected each of scopeSpans as a JSON object');
        spans = listOf(ss.spans, 'spans');
        const s = objectOf(ss.scope, 'scope');
        scope = { name: str(s.name, 'scope name'), version: str(s.version, 'scope version'), attributes: attributesOf(s.attributes) };
      } catch (error) {
        if (!(error instanceof Unreadable)) throw error;
        scopeProblem = `its instrumentation scope cannot be read: ${error.message}`;
      }
      out.scopes.push({ scope, spans: spans.map((s) => spanOf(s, scopeProblem)) });
    }
    return out;
  });
}

const zeroTime: OtelTime = { ns: '0', ms: 0 };

function spanOf(raw: unknown, scopeProblem: string | undefined): OtelSpan {
  const s = isObject(raw) ? raw : {};
  const span: OtelSpan = {
    traceId: typeof s.traceId === 'string' ? s.traceId.toLowerCase().slice(0, 64) : '',
    spanId: typeof s.spanId === 'string' ? s.spanId.toLowerCase().slice(0, 32) : '',
    parentSpanId: '',
    traceState: '',
    name: '',
    kind: 0,
    start: zeroTime,
    end: zeroTime,
    attributes: new Map(),
    events: [],
    links: [],
    status: { code: 0, message: '' },
    dropped: { attributes: 0, events: 0, links: 0 },
  };
  try {
    if (scopeProblem) throw new Unreadable(scopeProblem);
    if (!isObject(raw)) throw new Unreadable('expected each span as a JSON object');
    span.traceId = id(s.traceId, 32, 'trace id');
    span.spanId = id(s.spanId, 16, 'span id');
    span.parentSpanId = s.parentSpanId === undefined || s.parentSpanId === '' ? '' : id(s.parentSpanId, 16, 'parent span id');
    span.traceState = str(s.traceState, 'trace state');
    span.name = str(s.name, 'span name');
    span.kind = int32(s.kind, 'kind');
    span.start = time(s.startTimeUnixNano, 'startTimeUnixNano');
    span.end = time(s.endTimeUnixNano, 'endTimeUnixNano');
    span.attributes = attributesOf(s.attributes);
    span.events = listOf(s.events, 'events').map(eventOf);
    span.links = listOf(s.links, 'links').map(linkOf);
    const status = objectOf(s.status, 'status');
    span.status = { code: int32(status.code, 'status code'), message: str(status.message, 'status message') };
    span.dropped = {
      attributes: int32(s.droppedAttributesCount, 'droppedAttributesCount'),
      events: int32(s.droppedEventsCount, 'droppedEventsCount'),
      links: int32(s.droppedLinksCount, 'droppedLinksCount'),
    };
  } catch (error) {
    if (!(error instanceof Unreadable)) throw error;
    span.problem = error.message;
  }
  return span;
}

function eventOf(raw: unknown): OtelSpanEvent {
  const e = objectOf(raw, 'a span event');
  return {
    name: str(e.name, 'event name'),
    time: time(e.timeUnixNano, 'event timeUnixNano'),
    attributes: attributesOf(e.attributes),
    droppedAttributes: int32(e.droppedAttributesCount, 'droppedAttributesCount'),
  };
}

function linkOf(raw: unknown): OtelLink {
  const l = objectOf(raw, 'a link');
  return {
    traceId: id(l.traceId, 32, 'link trace id'),
    spanId: id(l.spanId, 16, 'link span id'),
    traceState: str(l.traceState, 'link trace state'),
    attributes: attributesOf(l.attributes),
  };
}

function id(v: unknown, digits: number, what: string): string {
  if (typeof v !== 'string' || v.length !== digits || !/^[0-9a-fA-F]+$/.test(v) || /^0+$/.test(v)) {
    throw new Unreadable(`expected a ${what} of ${digits} hex digits, not all zero, got ${typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : typeof v}`);
  }
  return v.toLowerCase();
}

function str(v: unknown, what: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Unreadable(`expected the ${what} as a string, got ${typeof v}`);
  return v;
}

function int32(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Unreadable(`expected ${what} as an integer, got ${JSON.stringify(v)}`);
  return v;
}

/** A fixed64 nanosecond count: a decimal string (the OTLP/JSON form) or a JSON number. */
function time(v: unknown, what: string): OtelTime {
  if (v === undefined || v === null) return zeroTime;
  let ns: string;
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) ns = BigInt(v).toString();
  else if (typeof v === 'number' && Number.isInteger(v) && v >= 0) ns = BigInt(v).toString();
  else throw new Unreadable(`expected ${what} as nanoseconds (a decimal string), got ${JSON.stringify(v).slice(0, 40)}`);
  if (BigInt(ns) > 0xffff_ffff_ffff_ffffn) throw new Unreadable(`expected ${what} to fit 64 bits`);
  return { ns, ms: msOfNs(ns) };
}

function attributesOf(raw: unknown): OtelAttributes {
  const out: OtelAttributes = new Map();
  for (const kv of listOf(raw, 'attributes')) {
    const { key, value } = objectOf(kv, 'an attribute');
    if (typeof key !== 'string') throw new Unreadable('expected each attribute key as a string');
    out.set(key, anyValueOf(value, 0, key));
  }
  return out;
}

function anyValueOf(raw: unknown, depth: number, key: string): OtelValue {
  if (raw === undefined || raw === null) return null;
  const v = objectOf(raw, `the value of attribute ${key}`);
  if ('stringValue' in v) return str(v.stringValue, `value of attribute ${key}`);
  if ('boolValue' in v) {
    if (typeof v.boolValue !== 'boolean') throw new Unreadable(`expected attribute ${key}'s boolValue as true or false`);
    return v.boolValue;
  }
  if ('intValue' in v) {
    const n = v.intValue;
    if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
    if (typeof n === 'string' && /^-?\d{1,19}$/.test(n)) return Number.isSafeInteger(Number(n)) ? Number(n) : BigInt(n).toString();
    throw new Unreadable(`expected attribute ${key}'s intValue as a 64-bit integer, got ${JSON.stringify(n).slice(0, 40)}`);
  }
  if ('doubleValue' in v) {
    const d = v.doubleValue;
    if (typeof d === 'number') return d;
    if (d === 'NaN' || d === 'Infinity' || d === '-Infinity') return Number(d);
    throw new Unreadable(`expected attribute ${key}'s doubleValue as a number`);
  }
  if ('bytesValue' in v) return str(v.bytesValue, `bytesValue of attribute ${key}`);
  if ('arrayValue' in v || 'kvlistValue' in v) {
    if (depth >= OTEL_VALUE_MAX_DEPTH) throw new Unreadable(`attribute ${key} nests values deeper than ${OTEL_VALUE_MAX_DEPTH} levels`);
    if ('arrayValue' in v) return listOf(objectOf(v.arrayValue, 'arrayValue').values, 'arrayValue.values').map((x) => anyValueOf(x, depth + 1, key));
    const out: { [k: string]: OtelValue } = {};
    for (const kv of listOf(objectOf(v.kvlistValue, 'kvlistValue').values, 'kvlistValue.values')) {
      const entry = objectOf(kv, 'a kvlistValue entry');
      if (typeof entry.key !== 'string') throw new Unreadable(`expected each key inside attribute ${key} as a string`);
      Object.defineProperty(out, entry.key, { value: anyValueOf(entry.value, depth + 1, key), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return null;
}
