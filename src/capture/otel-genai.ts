// What a span says in the GenAI vocabularies: the OpenTelemetry semantic conventions (stable names
// and the older experimental ones frameworks still emit), OpenLLMetry (Traceloop) and OpenInference
// (Arize Phoenix), and the Vercel AI SDK. Each reader lists its names in the order they are tried;
// docs/ARCHITECTURE.md ("OpenTelemetry in") has the table.
import { TOKEN_COUNT_MAX } from '../ledger/input.ts';
import { NotUtf8, type OtelAttributes, type OtelSpan, type OtelValue } from './otel-spans.ts';

/** What a span is: a model call, a tool execution, or any other span. */
export type SpanRole = { kind: 'model'; operation: string } | { kind: 'tool'; name: string } | { kind: 'span'; operation?: string };

/** gen_ai.operation.name values (and llm.request.type / OpenInference kinds) that are a call to a model. */
const modelOperations = new Set(['chat', 'text_completion', 'embeddings', 'generate_content', 'completion', 'embedding', 'rerank']);
const openInferenceModelKinds: Record<string, string> = { LLM: 'chat', EMBEDDING: 'embeddings', RERANKER: 'rerank' };

const text = (attrs: OtelAttributes, ...keys: string[]): string | undefined => {
  for (const key of keys) {
    const v = attrs.get(key);
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
};

export function roleOf(span: OtelSpan): SpanRole {
  const a = span.attributes;
  const operation = text(a, 'gen_ai.operation.name');
  const legacyType = text(a, 'llm.request.type');
  const inference = text(a, 'openinference.span.kind');
  const traceloop = text(a, 'traceloop.span.kind');
  if (
    operation === 'execute_tool' ||
    inference === 'TOOL' ||
    traceloop === 'tool' ||
    (!operation && (a.has('gen_ai.tool.name') || a.has('ai.toolCall.name')))
  ) {
    return { kind: 'tool', name: text(a, 'gen_ai.tool.name', 'tool.name', 'traceloop.entity.name', 'ai.toolCall.name') ?? span.name };
  }
  if (operation && modelOperations.has(operation)) return { kind: 'model', operation };
  if (!operation && legacyType && modelOperations.has(legacyType)) return { kind: 'model', operation: legacyType };
  if (!operation && inference && openInferenceModelKinds[inference]) return { kind: 'model', operation: openInferenceModelKinds[inference] };
  // A span naming a model and no operation (older instrumentations set only gen_ai.system and the model).
  if (!operation && (a.has('gen_ai.request.model') || a.has('llm.model_name'))) return { kind: 'model', operation: 'chat' };
  return operation ? { kind: 'span', operation } : { kind: 'span' };
}

export const requestModelOf = (a: OtelAttributes) =>
  text(a, 'gen_ai.request.model', 'llm.model_name', 'embedding.model_name', 'ai.model.id', 'llm.request.model');
export const responseModelOf = (a: OtelAttributes) => text(a, 'gen_ai.response.model', 'llm.response.model', 'ai.response.model');
export const sessionOf = (a: OtelAttributes) =>
  text(a, 'gen_ai.conversation.id', 'session.id', 'traceloop.association.properties.session_id', 'ai.telemetry.metadata.sessionId');
export const agentOf = (a: OtelAttributes) => text(a, 'gen_ai.agent.name', 'agent.name', 'traceloop.association.properties.agent_name');
export const toolCallIdOf = (a: OtelAttributes) => text(a, 'gen_ai.tool.call.id', 'tool_call.id', 'ai.toolCall.id');

/** A token count: a whole number from 0 to what the Ledger's token columns hold, sent as an int or its decimal text (a larger one is no count; the span's attributes keep it). */
function count(attrs: OtelAttributes, keys: readonly string[]): number | undefined {
  for (const key of keys) {
    const v = attrs.get(key);
    const n = typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : v;
    if (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= TOKEN_COUNT_MAX) return n;
  }
  return undefined;
}
const inputTokenKeys = [
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.prompt_tokens',
  'llm.usage.prompt_tokens',
  'llm.token_count.prompt',
  'ai.usage.promptTokens',
];
const outputTokenKeys = [
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.completion_tokens',
  'llm.usage.completion_tokens',
  'llm.token_count.completion',
  'ai.usage.completionTokens',
];
/** Input tokens read from a cache (part of the input count, charged at the cached price). */
const cachedTokenKeys = [
  'gen_ai.usage.cache_read.input_tokens',
  'gen_ai.usage.cache_read_input_tokens',
  'llm.token_count.prompt_details.cache_read',
  'ai.usage.cachedInputTokens',
];
/** Input tokens written to a cache (part of the input count, charged at the 5-minute cache-write price: no lifetime is said). */
const cacheWriteTokenKeys = [
  'gen_ai.usage.cache_creation.input_tokens',
  'gen_ai.usage.cache_creation_input_tokens',
  'llm.token_count.prompt_details.cache_write',
];
export const usageOf = (a: OtelAttributes) => ({
  input: count(a, inputTokenKeys),
  output: count(a, outputTokenKeys),
  cached: count(a, cachedTokenKeys),
  cacheWrite: count(a, cacheWriteTokenKeys),
});

/** Which content a payload carries. */
export type ContentSide = 'systemInstructions' | 'modelInput' | 'modelOutput' | 'toolArguments' | 'toolResult';

/** The content found: its value and where it was read from (attribute keys, or `event:<name>/<key>`). */
export type Content = { value: OtelValue; from: string };

/** Where each side's content may be, in order: a whole attribute, an attribute of a span event, or an indexed family. */
type Source = { attribute: string } | { event: string; attribute: string } | { indexed: string; field?: string };
const sources: Record<ContentSide, Source[]> = {
  /** Instructions given apart from the chat history (part of the prompt: see `promptOf`). */
  systemInstructions: [
    { attribute: 'gen_ai.system_instructions' },
    { event: 'gen_ai.client.inference.operation.details', attribute: 'gen_ai.system_instructions' },
  ],
  modelInput: [
    { attribute: 'gen_ai.input.messages' },
    { event: 'gen_ai.client.inference.operation.details', attribute: 'gen_ai.input.messages' },
    { attribute: 'gen_ai.prompt' },
    { event: 'gen_ai.content.prompt', attribute: 'gen_ai.prompt' },
    { indexed: 'gen_ai.prompt' },
    { indexed: 'llm.input_messages', field: 'message' },
    { attribute: 'ai.prompt.messages' },
    { attribute: 'ai.prompt' },
    { attribute: 'input.value' },
    { attribute: 'traceloop.entity.input' },
  ],
  modelOutput: [
    { attribute: 'gen_ai.output.messages' },
    { event: 'gen_ai.client.inference.operation.details', attribute: 'gen_ai.output.messages' },
    { attribute: 'gen_ai.completion' },
    { event: 'gen_ai.content.completion', attribute: 'gen_ai.completion' },
    { indexed: 'gen_ai.completion' },
    { indexed: 'llm.output_messages', field: 'message' },
    { attribute: 'ai.response.text' },
    { attribute: 'output.value' },
    { attribute: 'traceloop.entity.output' },
  ],
  toolArguments: [
    { attribute: 'gen_ai.tool.call.arguments' },
    { attribute: 'ai.toolCall.args' },
    { attribute: 'input.value' },
    { attribute: 'traceloop.entity.input' },
  ],
  toolResult: [
    { attribute: 'gen_ai.tool.call.result' },
    { attribute: 'ai.toolCall.result' },
    { attribute: 'output.value' },
    { attribute: 'traceloop.entity.output' },
  ],
};

/**
 * The content of one side, taken out of the span: the attributes (or span event) it was read from are
 * removed from `attributes` / `events`, so its bytes are stored once, as the payload.
 */
export function takeContent(side: ContentSide, attributes: OtelAttributes, events: OtelSpan['events']): Content | undefined {
  for (const source of sources[side]) {
    if ('indexed' in source) {
      const found = takeIndexed(attributes, source.indexed, source.field);
      if (found) return found;
    } else if ('event' in source) {
      const i = events.findIndex((e) => e.name === source.event && e.attributes.has(source.attribute));
      if (i < 0) continue;
      const event = events[i]!;
      const value = event.attributes.get(source.attribute)!;
      event.attributes = new Map(event.attributes);
      event.attributes.delete(source.attribute);
      if (event.attributes.size === 0) events.splice(i, 1);
      return { value, from: `event:${source.event}/${source.attribute}` };
    } else {
      const value = attributes.get(source.attribute);
      if (value === undefined || value === null || value === '') continue;
      attributes.delete(source.attribute);
      return { value, from: source.attribute };
    }
  }
  return undefined;
}

/**
 * A model call's prompt as the GenAI conventions define it: the system instructions given apart
 * from the chat history, and the messages. With both, one JSON object holding each as it was sent
 * (`{"system_instructions": …, "input_messages": …}`, a string kept a string); with one, that one.
 */
export function promptOf(system: Content | undefined, input: Content | undefined): Content | undefined {
  if (!system) return input;
  return {
    value: { system_instructions: system.value, ...(input && { input_messages: input.value }) },
    from: input ? `${system.from} + ${input.from}` : system.from,
  };
}

/**
 * An indexed family (`gen_ai.prompt.0.role`, `gen_ai.prompt.0.content`, `llm.input_messages.1.message.content`…)
 * as the list of its entries in index order, each entry's fields by the rest of their key.
 */
function takeIndexed(attributes: OtelAttributes, prefix: string, field?: string): Content | undefined {
  const head = `${prefix}.`;
  const inner = field ? `${field}.` : '';
  const entries = new Map<number, Record<string, OtelValue>>();
  const taken: string[] = [];
  for (const [key, value] of attributes) {
    if (!key.startsWith(head)) continue;
    const rest = key.slice(head.length);
    const dot = rest.indexOf('.');
    const index = dot > 0 ? rest.slice(0, dot) : '';
    if (!/^\d{1,6}$/.test(index)) continue;
    const name = rest.slice(dot + 1);
    if (!name.startsWith(inner) || name.length === inner.length) continue;
    const n = Number(index);
    let entry = entries.get(n);
    if (!entry) {
      entry = Object.create(null) as Record<string, OtelValue>;
      entries.set(n, entry);
    }
    entry[name.slice(inner.length)] = value;
    taken.push(key);
  }
  if (taken.length === 0) return undefined;
  for (const key of taken) attributes.delete(key);
  const list = [...entries.entries()].sort((x, y) => x[0] - y[0]).map(([, entry]) => ({ ...entry }));
  return { value: list, from: `${prefix}.N.${inner}*` };
}

/** True when a value holds bytes that are not UTF-8 anywhere inside it. */
export function holdsNotUtf8(value: OtelValue): boolean {
  if (value instanceof NotUtf8) return true;
  if (Array.isArray(value)) return value.some(holdsNotUtf8);
  if (value !== null && typeof value === 'object') return Object.values(value).some(holdsNotUtf8);
  return false;
}
