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
