// A deterministic stream of ledger batches shaped like agent traffic: model and tool
// requests and answers with ~2 KiB JSON payloads, some payloads repeated, some events resent.
import { Prng } from './prng.ts';

export type WorkloadOptions = {
  events: number;
  batchSize: number;
  /** Share of events whose payload repeats an earlier one (byte for byte). */
  repeatRatio: number;
  /** Share of events that are an earlier event sent again (same id, same everything). */
  resendRatio: number;
  seed: number;
  /** Collectors the batches are spread over, round-robin. */
  collectors: number;
};

export type WorkloadEvent = {
  id: string;
  kind: string;
  direction: 'IN' | 'OUT';
  actionId: string;
  tool?: string;
  session: string;
  turn: string;
  agent: string;
  model?: string;
  status: string;
  method: string;
  url: string;
  costUsd?: string;
  inputTokens?: number;
  outputTokens?: number;
  occurredAt: string;
  payload: { state: 'COMPLETE'; text: string };
};

export type WorkloadBatch = { index: number; collector: string; position: number; events: WorkloadEvent[]; resent: number };

const vocabulary = (
  'the a of to and in is for on with as by that this from at be it are or an not which request response tool call ' +
  'result error status user assistant system file path read write list search query index table row column value ' +
  'agent model token budget cost latency retry timeout session turn task ledger directory capability contract ' +
  'payload hash blob stored inline object compressed bytes event position cursor page filter group count sum ' +
  'customer invoice order shipment address email phone calendar meeting note draft review approve reject merge ' +
  'branch commit build deploy test failure warning info debug trace metric report summary analysis plan step'
).split(' ');
const tools = ['search_web', 'read_file', 'write_file', 'list_directory', 'run_query', 'send_email', 'create_event', 'fetch_url', 'summarize', 'git_diff'];
const models = ['claude-sonnet-4', 'claude-haiku-4', 'gpt-4.1', 'gpt-4.1-mini', 'gemini-2.5-pro', 'llama-3.3-70b'];
const agents = ['planner', 'researcher', 'writer', 'reviewer', 'ops'];
const statuses = ['200', '200', '200', '200', '201', '400', '404', '429', '500'];

function sentence(r: Prng, min: number, max: number): string {
  const text = r.words(vocabulary, r.int(min, max));
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

/** Paragraphs are drawn from a fixed pool of sentences, so generating rows stays cheap next to ingesting them. */
const sentencePool = (() => {
  const r = new Prng(0x5eed);
  return Array.from({ length: 8192 }, () => sentence(r, 6, 18));
})();

function paragraph(r: Prng, chars: number): string {
  let out = '';
  while (out.length < chars) out += (out ? ' ' : '') + r.pick(sentencePool);
  return out;
}

/** One payload of roughly `target` bytes, as one of four realistic JSON shapes. */
function payloadFor(r: Prng, kind: string, tool: string, model: string, target: number): string {
  switch (kind) {
    case 'model.request':
      return JSON.stringify({
        model,
        max_tokens: r.pick([1024, 2048, 4096]),
        temperature: r.pick([0, 0.2, 0.7, 1]),
        system: paragraph(r, target * 0.25),
        messages: Array.from({ length: r.int(2, 4) }, (_, i) => ({
          role: i % 2 ? 'assistant' : 'user',
          content: paragraph(r, (target * 0.6) / 3),
        })),
        tools: Array.from({ length: r.int(1, 3) }, () => ({ name: r.pick(tools), description: sentence(r, 8, 16) })),
      });
    case 'model.response':
      return JSON.stringify({
        id: `msg_${r.hex(24)}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [
          { type: 'text', text: paragraph(r, target * 0.7) },
          { type: 'tool_use', id: `toolu_${r.hex(20)}`, name: tool, input: { query: r.words(vocabulary, 5), limit: r.int(1, 50) } },
        ],
        stop_reason: r.pick(['end_turn', 'tool_use', 'max_tokens']),
        usage: { input_tokens: r.int(200, 20000), output_tokens: r.int(20, 4000) },
      });
    case 'tool.request':
      return JSON.stringify({
        jsonrpc: '2.0',
        id: r.int(1, 1_000_000),
        method: 'tools/call',
        params: {
          name: tool,
          arguments: {
            query: r.words(vocabulary, r.int(3, 12)),
            path: `/srv/${r.words(vocabulary, 3).replaceAll(' ', '/')}.json`,
            options: { limit: r.int(1, 100), recursive: r.chance(0.5), filters: Array.from({ length: r.int(1, 5) }, () => r.words(vocabulary, 2)) },
            context: paragraph(r, target * 0.7),
          },
        },
      });
    default:
      return JSON.stringify({
        jsonrpc: '2.0',
        id: r.int(1, 1_000_000),
        result: {
          content: Array.from({ length: r.int(2, 6) }, () => ({
            type: 'text',
            text: paragraph(r, target / 5),
            annotations: { priority: r.next().toFixed(3), audience: [r.pick(['user', 'assistant'])] },
          })),
          rows: Array.from({ length: r.int(2, 8) }, (_, i) => ({ id: i + 1, name: r.words(vocabulary, 2), value: r.int(0, 99_999), ok: r.chance(0.9) })),
          isError: r.chance(0.05),
        },
      });
  }
}

/**
 * The batches, generated lazily and identically on every call with the same options.
 * Memory stays bounded: only a window of earlier payloads and events is kept for repeats.
 */
export function* workload(o: WorkloadOptions): Generator<WorkloadBatch> {
  const r = new Prng(o.seed);
  const earlierPayloads: string[] = [];
  const earlierEvents: WorkloadEvent[] = [];
  const window = 4096;
  const start = Date.UTC(2026, 9, 1);
  const kinds = ['model.request', 'model.response', 'tool.request', 'tool.response'] as const;
  let made = 0;
  let unique = 0;
  for (let index = 0; made < o.events; index++) {
    const events: WorkloadEvent[] = [];
    let resent = 0;
    const n = Math.min(o.batchSize, o.events - made);
    for (let i = 0; i < n; i++, made++) {
      if (earlierEvents.length > 0 && r.chance(o.resendRatio)) {
        events.push(r.pick(earlierEvents));
        resent++;
        continue;
      }
      const k = unique++;
      const kind = kinds[k % 4]!;
      const action = Math.floor(k / 2);
      const tool = r.pick(tools);
      const model = r.pick(models);
      let text: string;
      if (earlierPayloads.length > 0 && r.chance(o.repeatRatio)) text = r.pick(earlierPayloads);
      else {
        text = payloadFor(r, kind, tool, model, r.int(1400, 2600));
        if (earlierPayloads.length < window) earlierPayloads.push(text);
        else earlierPayloads[r.int(0, window - 1)] = text;
      }
      const isModel = kind.startsWith('model');
      const event: WorkloadEvent = {
        id: `evt_${o.seed}_${k}`,
        kind,
        direction: kind.endsWith('request') ? 'OUT' : 'IN',
        actionId: `act_${o.seed}_${action}`,
        ...(isModel ? {} : { tool }),
        session: `ses_${Math.floor(k / 400)}`,
        turn: `turn_${Math.floor(k / 8)}`,
        agent: agents[Math.floor(k / 400) % agents.length]!,
        ...(isModel ? { model } : {}),
        status: kind.endsWith('response') ? r.pick(statuses) : 'sent',
        method: 'POST',
        url: isModel ? 'https://api.example.com/v1/messages' : `https://tools.example.com/mcp/${tool}`,
        ...(isModel && kind === 'model.response'
          ? { costUsd: (r.int(1, 500_000) / 1e7).toFixed(7), inputTokens: r.int(200, 20_000), outputTokens: r.int(20, 4000) }
          : {}),
        occurredAt: new Date(start + k * 37).toISOString(),
        payload: { state: 'COMPLETE', text },
      };
      events.push(event);
      if (earlierEvents.length < window) earlierEvents.push(event);
      else earlierEvents[r.int(0, window - 1)] = event;
    }
    yield { index, collector: `bench-${index % o.collectors}`, position: Math.floor(index / o.collectors) + 1, events, resent };
  }
}
