// A fake model upstream speaking OpenAI's and Anthropic's wire formats (JSON and event streams, tool
// calls, usage, errors), for the demo Directory's model rows (DIRLEDGER_FAKE_MODELS=1) and the tests.
// Its own figures: input tokens = the bytes of the body it received, output tokens = the request's
// output bound (else 16), cached = half the input when the prompt says FAKE_CACHED; FAKE_CACHE_WRITE
// (Anthropic): a quarter of the input written to the cache for 5 minutes, an eighth for 1 hour. Words in the
// prompt steer it: FAKE_TOOL (a tool call), FAKE_ERROR_400 / FAKE_ERROR_500, FAKE_MIDSTREAM_ERROR,
// FAKE_SLOW (a chunk every 50 ms), FAKE_NO_USAGE (no usage anywhere), FAKE_STAMP (a streamed chat
// answer of 20 chunks 2 ms apart, each the wall-clock time it was written, for measuring forwarding).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeUsage = { input: number; output: number; cached: number; cacheWrite: number; cacheWrite1h: number };
export type FakeCall = { path: string; headers: IncomingMessage['headers']; body: Buffer; usage: FakeUsage | null };
export type FakeUpstream = { origin: string; port: number; calls: FakeCall[]; close(): Promise<void> };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `onRequest`: sees each request's body as it arrives, before it is answered (a test's probe). */
export async function startFakeUpstream(port = 0, host = '127.0.0.1', options: { onRequest?: (body: Buffer) => void } = {}): Promise<FakeUpstream> {
  const calls: FakeCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      options.onRequest?.(body);
      answer(req, res, body, calls).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    origin: `http://${host}:${bound}`,
    port: bound,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Req = {
  model?: string;
  stream?: boolean;
  max_tokens?: number;
  max_completion_tokens?: number;
  max_output_tokens?: number;
  stream_options?: { include_usage?: boolean };
  encoding_format?: string;
  input?: unknown;
};

async function answer(req: IncomingMessage, res: ServerResponse, body: Buffer, calls: FakeCall[]): Promise<void> {
  const path = (req.url ?? '').replace(/^\/(openai|anthropic)/, '');
  const anthropic = (req.url ?? '').startsWith('/anthropic') || path.startsWith('/v1/messages');
  let parsed: Req;
  try {
    parsed = JSON.parse(body.toString('utf8')) as Req;
  } catch {
    return json(res, 400, errorOf(anthropic, 'invalid_request_error', 'fake upstream: the body is not JSON'));
  }
  const text = body.toString('utf8');
  const has = (word: string) => text.includes(word);
  const input = body.length;
  const output = parsed.max_completion_tokens ?? parsed.max_tokens ?? parsed.max_output_tokens ?? 16;
  const writes = anthropic && has('FAKE_CACHE_WRITE');
  const usage =
    has('FAKE_NO_USAGE') || path.endsWith('count_tokens')
      ? null
      : {
          input,
          output: path.endsWith('embeddings') ? 0 : output,
          cached: has('FAKE_CACHED') ? Math.floor(input / 2) : 0,
          cacheWrite: writes ? Math.floor(input / 4) : 0,
          cacheWrite1h: writes ? Math.floor(input / 8) : 0,
        };
  const call: FakeCall = { path, headers: req.headers, body, usage };
  calls.push(call);
  if (has('FAKE_ERROR_400')) {
    call.usage = null;
    return json(res, 400, errorOf(anthropic, 'invalid_request_error', 'fake upstream: you asked for a 400'));
  }
  if (has('FAKE_ERROR_500')) {
    call.usage = null;
    return json(res, 500, errorOf(anthropic, anthropic ? 'api_error' : 'server_error', 'fake upstream: you asked for a 500'));
  }
  const model = parsed.model ?? 'fake';
  const words = Array.from({ length: Math.max(1, Math.min(output, 64)) }, (_, i) => `w${i}`);
  if (path === '/v1/messages/count_tokens') return json(res, 200, { input_tokens: input });
  if (path === '/v1/embeddings') return json(res, 200, embeddings(model, parsed, usage));
  if (path === '/v1/messages')
    return parsed.stream ? anthropicStream(res, model, words, usage, has) : json(res, 200, anthropicMessage(model, words, usage, has('FAKE_TOOL')));
  if (path === '/v1/responses')
    return parsed.stream ? responsesStream(res, model, words, usage, has) : json(res, 200, responseObject(model, words.join(' '), usage));
  if (path === '/v1/chat/completions') {
    const asked = parsed.stream_options?.include_usage === true;
    return parsed.stream
      ? chatStream(res, model, words, asked, asked ? usage : null, has)
      : json(res, 200, chatCompletion(model, words.join(' '), usage, has('FAKE_TOOL')));
  }
  return json(res, 404, errorOf(anthropic, anthropic ? 'not_found_error' : 'invalid_request_error', `fake upstream: no route ${path}`));
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const bytes = Buffer.from(JSON.stringify(value));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length, 'x-request-id': `req_fake_${status}` });
  res.end(bytes);
}

function errorOf(anthropic: boolean, type: string, message: string) {
  return anthropic ? { type: 'error', error: { type, message } } : { error: { message, type, param: null, code: null } };
}

const openaiUsage = (u: FakeCall['usage']) =>
  u && { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output, prompt_tokens_details: { cached_tokens: u.cached } };
const anthropicUsage = (u: FakeUsage) => ({
  input_tokens: u.input - u.cached - u.cacheWrite - u.cacheWrite1h,
  cache_read_input_tokens: u.cached,
  cache_creation_input_tokens: u.cacheWrite + u.cacheWrite1h,
  cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite, ephemeral_1h_input_tokens: u.cacheWrite1h },
  output_tokens: u.output,
});

const toolCall = { id: 'call_fake_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' } };

function chatCompletion(model: string, text: string, usage: FakeCall['usage'], tool: boolean) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_764_547_200,
    model,
    choices: [
      {
        index: 0,
        message: tool ? { role: 'assistant', content: null, tool_calls: [toolCall], refusal: null } : { role: 'assistant', content: text, refusal: null },
        logprobs: null,
        finish_reason: tool ? 'tool_calls' : 'stop',
      },
    ],
    ...(usage && { usage: openaiUsage(usage) }),
  };
}

function embeddings(model: string, parsed: Req, usage: FakeCall['usage']) {
  const vector = [0.25, -0.5, 0.125];
  const embedding = parsed.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
  return {
    object: 'list',
    data: [{ object: 'embedding', index: 0, embedding }],
    model,
    ...(usage && { usage: { prompt_tokens: usage.input, total_tokens: usage.input } }),
  };
}

function responseObject(model: string, text: string, usage: FakeCall['usage'], status = 'completed') {
  return {
    id: 'resp_fake',
    object: 'response',
    created_at: 1_764_547_200,
    status,
    model,
    output: [{ type: 'message', id: 'msg_fake', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
    ...(usage && {
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cached },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input + usage.output,
      },
    }),
  };
}

function anthropicMessage(model: string, words: string[], usage: FakeCall['usage'], tool: boolean) {
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model,
    content: tool ? [{ type: 'tool_use', id: 'toolu_fake_1', name: 'get_weather', input: { city: 'Lisbon' } }] : [{ type: 'text', text: words.join(' ') }],
    stop_reason: tool ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    ...(usage && { usage: anthropicUsage(usage) }),
  };
}

/** Writes event-stream frames, slowly when asked; a client that went away ends it. */
async function streamOut(res: ServerResponse, frames: (string | (() => string))[], slow: boolean, pauseMs = 50): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': 'req_fake_stream' });
  for (const frame of frames) {
    if (res.destroyed) return;
    res.write(typeof frame === 'string' ? frame : frame());
    if (slow) await sleep(pauseMs);
  }
  res.end();
}

/** Milliseconds since the epoch, to the microsecond: comparable across processes on one machine. */
export const wallClockMs = () => performance.timeOrigin + performance.now();

const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const event = (type: string, value: unknown) => `event: ${type}\ndata: ${JSON.stringify(value)}\n\n`;
const pieces = (words: string[], n = 4) => Array.from({ length: Math.ceil(words.length / n) }, (_, i) => `${words.slice(i * n, i * n + n).join(' ')} `);

/** `asked`: the caller set stream_options.include_usage, so every chunk carries `"usage":null` and a last chunk the usage, as OpenAI does. */
function chatStream(res: ServerResponse, model: string, words: string[], asked: boolean, usage: FakeCall['usage'], has: (w: string) => boolean) {
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_764_547_200, model };
  const chunk = (delta: unknown, finish: string | null = null) =>
    data({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(asked && { usage: null }) });
  const frames: (string | (() => string))[] = [chunk({ role: 'assistant', content: '' })];
  if (has('FAKE_STAMP')) {
    for (let i = 0; i < 20; i++) frames.push(() => chunk({ content: `@${wallClockMs().toFixed(3)} ` }));
    frames.push(chunk({}, 'stop'), 'data: [DONE]\n\n');
    return streamOut(res, frames, true, 2);
  }
  if (has('FAKE_TOOL')) {
    frames.push(chunk({ tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
    frames.push(
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Lisbon"}' } }] }),
    );
    frames.push(chunk({}, 'tool_calls'));
  } else {
    const parts = pieces(words);
    for (const [i, part] of parts.entries()) {
      frames.push(chunk({ content: part }));
      if (has('FAKE_MIDSTREAM_ERROR') && i === 0)
        return streamOut(res, [...frames, data({ error: { message: 'fake upstream broke mid-stream', type: 'server_error' } })], false);
    }
    frames.push(chunk({}, 'stop'));
  }
  if (usage) frames.push(data({ ...base, choices: [], usage: openaiUsage(usage) }));
  frames.push('data: [DONE]\n\n');
  return streamOut(res, frames, has('FAKE_SLOW'));
}

function responsesStream(res: ServerResponse, model: string, words: string[], usage: FakeCall['usage'], has: (w: string) => boolean) {
  const text = words.join(' ');
  const frames = [
    event('response.created', { type: 'response.created', sequence_number: 0, response: { ...responseObject(model, '', null, 'in_progress'), output: [] } }),
  ];
  let n = 1;
  for (const part of pieces(words))
    frames.push(
      event('response.output_text.delta', {
        type: 'response.output_text.delta',
        sequence_number: n++,
        item_id: 'msg_fake',
        output_index: 0,
        content_index: 0,
        delta: part,
      }),
    );
  frames.push(event('response.completed', { type: 'response.completed', sequence_number: n, response: responseObject(model, text, usage) }));
  return streamOut(res, frames, has('FAKE_SLOW'));
}

function anthropicStream(res: ServerResponse, model: string, words: string[], usage: FakeCall['usage'], has: (w: string) => boolean) {
  const start = {
    ...anthropicMessage(model, [], null, false),
    content: [],
    stop_reason: null,
    ...(usage && { usage: { ...anthropicUsage(usage), output_tokens: 1 } }),
  };
  const frames = [event('message_start', { type: 'message_start', message: start })];
  if (has('FAKE_TOOL')) {
    frames.push(
      event('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_fake_1', name: 'get_weather', input: {} },
      }),
    );
    frames.push(
      event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city": "Lisbon"}' } }),
    );
  } else {
    frames.push(
      event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      event('ping', { type: 'ping' }),
    );
    for (const [i, part] of pieces(words).entries()) {
      frames.push(event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: part } }));
      if (has('FAKE_MIDSTREAM_ERROR') && i === 0)
        return streamOut(res, [...frames, event('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })], false);
    }
  }
  frames.push(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
  frames.push(
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: has('FAKE_TOOL') ? 'tool_use' : 'end_turn', stop_sequence: null },
      ...(usage && { usage: { output_tokens: usage.output } }),
    }),
  );
  frames.push(event('message_stop', { type: 'message_stop' }));
  return streamOut(res, frames, has('FAKE_SLOW'));
}
