// Real OpenTelemetry spans (the official SDK) and the official OTLP exporters (protobuf and JSON over
// HTTP), sending to a test server's /v1/traces.
import { context, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as HttpExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, NodeTracerProvider, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';

export type Recorder = { tracer: Tracer; finished(): ReadableSpan[]; reset(): void };

/** A tracer whose finished spans are kept in memory, to be exported (and re-exported) on demand. */
export function spanRecorder(resource: Attributes = { 'service.name': 'otel-test', 'service.instance.id': 'otel-test-1' }): Recorder {
  const memory = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ resource: resourceFromAttributes(resource), spanProcessors: [new SimpleSpanProcessor(memory)] });
  return { tracer: provider.getTracer('dirledger-test', '1.2.3'), finished: () => memory.getFinishedSpans(), reset: () => memory.reset() };
}

/** Starts a child of `parent` (no global context manager: the parent is passed explicitly). */
export function childOf(tracer: Tracer, parent: Span | undefined, name: string, attributes: Attributes = {}): Span {
  return tracer.startSpan(name, { attributes }, parent ? trace.setSpan(context.active(), parent) : context.active());
}

export type ExporterKind = 'proto' | 'http';
/** What an exporter's export() reports: code 0 success, 1 failure (ExportResultCode of @opentelemetry/core). */
export type ExportResult = { code: number; error?: Error };

/** Exports `spans` once with the official exporter of that kind; resolves with its result. */
export async function exportSpans(
  kind: ExporterKind,
  origin: string,
  spans: ReadableSpan[],
  options: { token?: string; gzip?: boolean } = {},
): Promise<ExportResult> {
  const config = {
    url: `${origin}/v1/traces`,
    headers: (options.token ? { authorization: `Bearer ${options.token}` } : {}) as Record<string, string>,
    ...(options.gzip && { compression: 'gzip' as never }),
    timeoutMillis: 10_000,
  };
  const exporter = kind === 'proto' ? new ProtoExporter(config) : new HttpExporter(config);
  try {
    return await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
  } finally {
    await exporter.shutdown();
  }
}

export const succeeded = (result: ExportResult) => result.code === 0;

/** An attribute value as OTLP/JSON writes it. */
export function anyValue(v: unknown): unknown {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  if (v && typeof v === 'object') return { kvlistValue: { values: Object.entries(v).map(([key, value]) => ({ key, value: anyValue(value) })) } };
  return {};
}
export const attributesJson = (attrs: Record<string, unknown>) => Object.entries(attrs).map(([key, value]) => ({ key, value: anyValue(value) }));

let counter = 0;
/** A fresh trace id and span ids (hex), distinct across a test run. */
export function ids(): { traceId: string; span: (n: number) => string } {
  counter++;
  const traceId = `${process.pid.toString(16).padStart(8, '0')}${counter.toString(16).padStart(8, '0')}${'ab'.repeat(8)}`;
  return { traceId, span: (n: number) => `${counter.toString(16).padStart(8, '0')}${n.toString(16).padStart(8, '0')}` };
}

export type JsonSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name?: string;
  attributes?: Record<string, unknown>;
  events?: unknown[];
  [k: string]: unknown;
};

/** An OTLP/JSON ExportTraceServiceRequest of one resource and scope. */
export function otlpJson(spans: JsonSpan[], resource: Record<string, unknown> = { 'service.name': 'json-test' }): Record<string, unknown> {
  return {
    resourceSpans: [
      {
        resource: { attributes: attributesJson(resource) },
        scopeSpans: [
          {
            scope: { name: 'hand-made', version: '0.1' },
            spans: spans.map(({ attributes, name, ...rest }) => ({
              name: name ?? 'span',
              kind: 1,
              startTimeUnixNano: '1764547200000000000',
              endTimeUnixNano: '1764547201500000000',
              attributes: attributesJson(attributes ?? {}),
              ...rest,
            })),
          },
        ],
      },
    ],
  };
}
