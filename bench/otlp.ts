// OTLP traces in: spans/s through POST /v1/traces against POST /ledger/batches carrying the same events, in one run (target >= 0.7x).
//
//   npm run bench -- otlp [--spans 12000] [--batch 512] [--senders 4] [--repeat 3] [--db postgres|pglite]
//
// The spans are made by the OpenTelemetry SDK (agent runs: an invoke_agent span, two chat spans with
// ~1 KiB prompts and completions and token usage, two execute_tool spans with arguments and results,
// one plain HTTP span) and serialised by the official exporter's own serializer
// (@opentelemetry/otlp-transformer, protobuf) into requests of --batch spans, as BatchSpanProcessor
// sends them. The same requests are turned into the ingest door's JSON batches here, with the
// receiver's own mapping, so both doors append exactly the same events. Each repetition runs both
// doors, each on a fresh database and a fresh server child process, the order alternating; the
// figures are medians over repetitions, with the load average they ran at.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { context, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { mintWithRootKey } from '../src/auth/tokens.ts';
import { eventsOfSpans } from '../src/capture/otel-events.ts';
import { decodeProtobufTraces } from '../src/doors/otlp/proto.ts';
import { benchServerEntry } from './lib/build.ts';
import { postClient } from './lib/post.ts';
import { repoRoot, startServer } from './lib/server.ts';
import { fixed, int, median, mib, row, sum, target } from './lib/stats.ts';
import { createBenchTarget, dbLabel, parseDbKinds, type BenchDbKind } from './lib/target-db.ts';

const rootKey = randomBytes(32);
const auth = { authorization: `Bearer ${mintWithRootKey(rootKey)}` };
const goal = 0.7;

type Door = 'otlp' | 'ingest';
type Run = { door: Door; seconds: number; spansPerSecond: number; eventsPerSecond: number; stored: number; failed: number; load: number };

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      spans: { type: 'string', default: '12000' },
      batch: { type: 'string', default: '512' },
      senders: { type: 'string', default: '4' },
      repeat: { type: 'string', default: '3' },
      db: { type: 'string', default: 'postgres' },
    },
    strict: true,
  });
  const num = (name: 'spans' | 'batch' | 'senders' | 'repeat') => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: expected a positive whole number, got ${JSON.stringify(values[name])}`);
    return n;
  };
  const [kind] = parseDbKinds(values.db!) as [BenchDbKind];
  const senders = num('senders');
  const spans = agentSpans(num('spans'));
  const otlpBodies = chunks(spans, num('batch')).map((c) => Buffer.from(ProtobufTraceSerializer.serializeRequest(c)!));
  const ingestBodies = await sameEventsAsBatches(otlpBodies);
  const events = sum(ingestBodies.map((b) => b.events));
  console.log(
    `otlp: ${int(spans.length)} SDK spans (${int(events)} events) in ${otlpBodies.length} protobuf requests of ${values.batch} spans ` +
      `(${mib(sum(otlpBodies.map((b) => b.length)))}); the same events as ${ingestBodies.length} ingest batches ` +
      `(${mib(sum(ingestBodies.map((b) => b.body.length)))} of JSON); ${senders} senders; ${dbLabel(kind)}; ${values.repeat} repetition(s)`,
  );
  const entry = await benchServerEntry(repoRoot, 'otlp');
  const runs: Run[] = [];
  for (let i = 0; i < num('repeat'); i++) {
    const order: Door[] = i % 2 === 0 ? ['otlp', 'ingest'] : ['ingest', 'otlp'];
    for (const door of order) {
      const bodies =
        door === 'otlp'
          ? otlpBodies.map((body) => ({ path: '/v1/traces', body, type: 'application/x-protobuf' }))
          : ingestBodies.map((b) => ({ path: '/ledger/batches', body: b.body, type: 'application/json' }));
      const r = await measure(kind, entry, door, bodies, senders, spans.length);
      runs.push(r);
      console.log(
        row(
          `rep ${i + 1} ${door}`,
          `${int(r.spansPerSecond)} spans/s`,
          `${int(r.eventsPerSecond)} events/s`,
          `${fixed(r.seconds)} s`,
          `stored ${int(r.stored)}`,
          `failed ${r.failed}`,
          `load ${fixed(r.load)}`,
        ),
      );
      if (r.stored !== events || r.failed > 0) console.log(`  expected ${int(events)} events stored and no failed request`);
    }
  }
  const med = (door: Door) => median(runs.filter((r) => r.door === door).map((r) => r.spansPerSecond));
  const ratios = runs.filter((r) => r.door === 'otlp').map((r, i) => r.spansPerSecond / runs.filter((x) => x.door === 'ingest')[i]!.spansPerSecond);
  console.log(row('median otlp', `${int(med('otlp'))} spans/s`), row('median ingest', `${int(med('ingest'))} spans/s (same events)`));
  console.log(`ratio per repetition: ${ratios.map((r) => fixed(r)).join(', ')}; load average during the runs ${fixed(median(runs.map((r) => r.load)))}`);
  console.log(target('OTLP receiver vs ingest door (median of per-repetition ratios)', `${fixed(median(ratios))}x`, `>= ${goal}x`, median(ratios) >= goal));
}

async function measure(
  kind: BenchDbKind,
  entry: string | undefined,
  door: Door,
  bodies: { path: string; body: Buffer; type: string }[],
  senders: number,
  spans: number,
): Promise<Run> {
  const db = await createBenchTarget(kind, `otlp-${door}`);
  try {
    const server = await startServer(
      { ...db.env, DIRLEDGER_SECRET_DIRLEDGER_ROOT_KEY: rootKey.toString('hex'), AUTH_RATE_PER_SECOND: '0' },
      { entry, timeoutMs: 180_000 },
    );
    const client = postClient(server.origin, senders);
    let failed = 0;
    let seconds: number;
    const load = os.loadavg()[0]!;
    try {
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: senders }, async () => {
          while (next < bodies.length) {
            const b = bodies[next++]!;
            const answer = await client.post(b.path, b.body, { ...auth, 'content-type': b.type });
            if (answer.status !== 200) failed++;
          }
        }),
      );
      seconds = (performance.now() - t0) / 1000;
    } finally {
      client.close();
      await server.stop();
    }
    const [count] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_event WHERE id LIKE 'otel:%'");
    const events = count!.n;
    return { door, seconds, spansPerSecond: spans / seconds, eventsPerSecond: events / seconds, stored: events, failed, load: (load + os.loadavg()[0]!) / 2 };
  } finally {
    await db.drop();
  }
}

function chunks<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

const filler = (n: number, seed: number) =>
  `${'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45)).slice(0, n - 8)}${String(seed).padStart(8, '0')}`;

/** Agent runs made with the SDK: six spans each, as an instrumented agent emits them. */
export function agentSpans(count: number): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'bench-agents', 'service.instance.id': 'bench-1', 'host.name': 'bench' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('bench', '1.0.0');
  for (let run = 0; memory.getFinishedSpans().length < count; run++) {
    const agent = tracer.startSpan('invoke_agent planner', {
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner', 'gen_ai.conversation.id': `conv-${run}` },
    });
    const under = trace.setSpan(context.active(), agent);
    for (let k = 0; k < 2; k++) {
      const chat = tracer.startSpan(
        'chat gpt-4o',
        {
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.usage.input_tokens': 300 + k,
            'gen_ai.usage.output_tokens': 80,
            'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: filler(1024, run * 10 + k) }] }]),
            'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: filler(1024, run * 10 + k + 5) }] }]),
          },
        },
        under,
      );
      chat.end();
      const tool = tracer.startSpan(
        k === 0 ? 'execute_tool ECHO' : 'execute_tool lookup',
        {
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': k === 0 ? 'ECHO' : 'lookup',
            'gen_ai.tool.call.id': `call-${run}-${k}`,
            'gen_ai.tool.call.arguments': `{"q":"${filler(120, run)}"}`,
            'gen_ai.tool.call.result': `{"a":"${filler(200, run + k)}"}`,
          },
        },
        under,
      );
      tool.end();
    }
    const http = tracer.startSpan(
      'GET',
      { attributes: { 'http.request.method': 'GET', 'url.full': `https://example.com/item/${run}`, 'http.response.status_code': 200 } },
      under,
    );
    http.end();
    agent.end();
  }
  return memory.getFinishedSpans().slice(0, count);
}

/** The events the receiver makes of each request, as the ingest door's JSON batches (the Directory's ECHO row linked as the server links it). */
async function sameEventsAsBatches(bodies: Buffer[]): Promise<{ body: Buffer; events: number }[]> {
  const out: { body: Buffer; events: number }[] = [];
  for (const body of bodies) {
    const mapped = await eventsOfSpans(decodeProtobufTraces(body), { toolRow: async (name) => (name === 'ECHO' ? { type: 'tool', name } : null) });
    for (const batch of mapped.batches) {
      out.push({ body: Buffer.from(JSON.stringify({ ...batch, position: String(batch.position) })), events: batch.events.length });
    }
  }
  return out;
}
