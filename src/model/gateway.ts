// The model door's core: a provider-shaped request → the Directory's model row → the upstream, with
// the call OUT recorded before it is sent and the answer IN (tokens, cost at the exact price row)
// before it is returned, a streamed answer teed as it arrives. Transport-free: a door hands it the
// body bytes and header record inside its invocation and gets a Response in the provider's shape.
import { isUtf8 } from 'node:buffer';
// The server adapter's Response over a buffer: the boundary reads its bytes back at once, where the global one copies
// them in and streams them out (src/doors/respond.ts).
import { Response as BufferedResponse } from '@whatwg-node/server';
import type { Refusal } from '../auth/verdict.ts';
import type { ModelAuthorizer, Worst } from '../auth/spend.ts';
import type { HeaderRecord } from '../capture/boundary.ts';
import { bytesPayload } from '../capture/payload.ts';
import { teeStream } from '../capture/tee.ts';
import { currentInvocation } from '../context/request.ts';
import type { EventRecord } from '../dispatch/record.ts';
import { jsonTextTooDeep, plainTextProblem } from '../limits.ts';
import type { ModelCatalog, ModelRow, Routed, Unrouted } from './catalog.ts';
import { costUnits, formatDecimal, worstCostUnits, type PriceBook } from './price.ts';
import { ModelRecorder } from './record.ts';
import { usageAsked, withoutUsageChunks } from './stream-usage.ts';
import { answerHeaders, isEventStream, sendUpstream, upstreamRequest } from './upstream.ts';
import { estimateUsage, factsOfStream, usageOfJson, type Usage } from './usage.ts';
import { wireErrorBody, type Endpoint, type WireError } from './wire.ts';

export type GatewayOptions = EventRecord & {
  catalog: ModelCatalog;
  prices: PriceBook;
  secrets: Record<string, string>;
  timeoutMs: number;
  payloadMaxBytes: number;
  cutoffMs: number;
  authorize?: ModelAuthorizer;
  /** A streamed answer's recording, still to come: shutdown waits for it (LedgerWriter.track). */
  track?: (recording: Promise<unknown>) => void;
};

const MODEL_NAME_MAX = 512;

type ParsedBody = Record<string, unknown> & { model: string };

/** A call read and routed (`model`: the row it means), or the provider-shaped error to answer. */
export type Prepared = { body: Buffer; parsed: ParsedBody; routed: Routed; model: string } | { failure: WireError; model?: string };

class WireFailure extends Error {
  readonly error: WireError;
  constructor(error: WireError) {
    super(error.message);
    this.error = error;
  }
}

export class ModelGateway {
  private readonly options: GatewayOptions;
  constructor(options: GatewayOptions) {
    this.options = options;
  }

  /**
   * Reads a call's body and routes its model, before the exchange is recorded (so the boundary's
   * events carry the row's name too); `model` is that name whenever the request means a row.
   */
  async prepare(endpoint: Endpoint, body: Buffer): Promise<Prepared> {
    let parsed: ParsedBody;
    try {
      parsed = parseBody(body);
    } catch (error) {
      if (error instanceof WireFailure) return { failure: error.error };
      throw error;
    }
    const routed = await this.options.catalog.route(parsed.model);
    const model = 'row' in routed ? routed.row.name : undefined;
    try {
      const callable = this.callable(endpoint, routed, parsed.model);
      return { body, parsed, routed: callable, model: callable.row.name };
    } catch (error) {
      if (error instanceof WireFailure) return { failure: error.error, ...(model && { model }) };
      throw error;
    }
  }

  /** One prepared model call; `clientSignal` aborts when the client goes away (a stream is then read on up to the cut-off). */
  async call(endpoint: Endpoint, prepared: Prepared, headers: HeaderRecord, clientSignal?: AbortSignal): Promise<Response> {
    if ('failure' in prepared) return errorAnswer(endpoint, prepared.failure);
    try {
      return await this.send(endpoint, prepared.routed, prepared.body, prepared.parsed, headers, clientSignal);
    } catch (error) {
      if (error instanceof WireFailure) return errorAnswer(endpoint, error.error);
      throw error;
    }
  }

  /** GET /v1/models: every model row the caller may call, in OpenAI's list shape or Anthropic's. */
  async list(anthropic: boolean): Promise<Response> {
    // Only what this caller may call: bound rows its token's `models` caveats (and call power) allow.
    const rows = (await this.options.catalog.rows()).filter((r) => r.unbound.length === 0 && !this.options.authorize?.model(r.name));
    const created = (r: ModelRow) => r.price.date || '1970-01-01';
    const body = anthropic
      ? {
          data: rows.map((r) => ({ type: 'model', id: r.name, display_name: r.name, created_at: `${created(r)}T00:00:00Z` })),
          has_more: false,
          first_id: rows[0]?.name ?? null,
          last_id: rows.at(-1)?.name ?? null,
        }
      : {
          object: 'list',
          data: rows.map((r) => ({ id: r.name, object: 'model', created: Math.floor(Date.parse(created(r)) / 1000) || 0, owned_by: r.provider })),
        };
    return Response.json(body);
  }

  /** The routed row when this endpoint can call it; else why not, in the provider's words. */
  private callable(endpoint: Endpoint, routed: Routed | Unrouted, model: string): Routed {
    if ('nearest' in routed) {
      const listed = routed.nearest.map((n) => n.name);
      throw new WireFailure({
        kind: 'not_found',
        code: 'model_not_found',
        param: 'model',
        message:
          routed.problem ??
          `No model row of the Directory is called, or clearly means, ${JSON.stringify(model)}.${listed.length ? ` Nearest: ${listed.join(', ')}.` : ' The Directory has no model rows.'}`,
        details: { nearest: routed.nearest },
      });
    }
    const { row } = routed;
    if (row.wire !== endpoint.wire) {
      throw new WireFailure({
        kind: 'invalid_request',
        code: 'wrong_wire',
        param: 'model',
        message: `The model ${row.name} is served by ${row.provider} over the ${row.wire === 'anthropic' ? 'Anthropic wire (POST /v1/messages)' : 'OpenAI wire (POST /v1/chat/completions, /v1/responses, /v1/embeddings)'}, not ${endpoint.path}.`,
      });
    }
    if (row.unbound.length) {
      throw new WireFailure({
        kind: 'invalid_request',
        code: 'secret_unbound',
        param: 'model',
        message: `The model ${row.name} cannot be called here: its upstream needs ${row.unbound.map((n) => `[${n}]`).join(', ')}, not bound on this server.`,
      });
    }
    return routed;
  }

  private async send(endpoint: Endpoint, routed: Routed, body: Buffer, parsed: Record<string, unknown>, headers: HeaderRecord, clientSignal?: AbortSignal) {
    const { row } = routed;
    const invocation = currentInvocation();
    if (!invocation) throw new Error('a model call runs inside an invocation');
    const recorder = new ModelRecorder(this.options, invocation, endpoint, routed);
    const refused = async (refusal: Refusal) => {
      await recorder.refused(refusal);
      return errorAnswer(endpoint, {
        kind: 'permission',
        code: refusal.limit === 'models' ? 'model_not_allowed' : 'budget_exceeded',
        message: refusal.message,
        details: { limit: refusal.limit, ...(refusal.caveat && { caveat: refusal.caveat }) },
      });
    };
    const power = this.options.authorize?.model(row.name);
    if (power) return refused(power);
    const askedUsage = usageAsked(endpoint, parsed);
    const sent = upstreamRequest(row, endpoint, headers, body, parsed, this.options.secrets, askedUsage);
    const hold = endpoint.charged ? await this.options.authorize?.hold(() => worstOf(endpoint, row, sent.body.length, parsed)) : null;
    if (hold && 'limit' in hold) return refused(hold);
    const settle = (usage: Usage | null) =>
      hold?.settle(usage ? { tokens: usage.input + usage.output, costUnits: costUnits(row.price, usage) } : { tokens: 0, costUnits: 0n });
    try {
      await this.options.prices.remember(row.price);
      await recorder.callOut(sent, hold ? { tokens: hold.tokens, costUsd: formatDecimal(hold.costUnits) } : undefined);
    } catch (error) {
      await settle(null);
      throw error;
    }
    let answer: Awaited<ReturnType<typeof sendUpstream>>;
    try {
      answer = await sendUpstream(sent, AbortSignal.timeout(this.options.timeoutMs));
    } catch (error) {
      await settle(null);
      const message = `The upstream of ${row.name} could not be reached: ${(error as Error).message}`;
      await recorder.answerIn({ status: 'ERROR', payload: { state: 'NONE' }, usage: null, meta: { code: 'UPSTREAM_ERROR', message } }, 'beforeAnswer');
      return errorAnswer(endpoint, { kind: 'api', code: 'upstream_error', message });
    }
    const shown = answerHeaders(answer.headers);
    const out = { ...shown, 'x-dirledger-action': invocation.actionId };
    if (isEventStream(answer.headers) && answer.status < 300) {
      let recording: Promise<void> | undefined;
      const tee = teeStream(answer.body, {
        cutoffMs: this.options.cutoffMs,
        payloadMaxBytes: this.options.payloadMaxBytes,
        ...(clientSignal && { clientSignal }),
        // The answer IN is staged before the stream ends for the door, whose answer OUT makes both durable before the client's end.
        beforeClose: () => recording!,
      });
      recording = tee.recorded
        .then(async (r) => {
          const facts = r.bytes ? factsOfStream(endpoint.wire, r.bytes) : { usage: null, error: undefined };
          const usage = endpoint.charged ? (facts.usage ?? estimateUsage(sent.body.length, r.size, { output: endpoint.outputBound.length > 0 })) : null;
          await settle(usage);
          const meta = {
            stream: true,
            clientDisconnected: r.clientDisconnected,
            ...(r.cut && { cut: r.cut }),
            ...(facts.error !== undefined && { streamError: facts.error }),
          };
          await recorder.answerIn({ status: String(answer.status), headers: shown, payload: r.payload, usage, meta }, 'beforeAnswer');
        })
        .catch((error) => this.options.logger?.error({ err: error, actionId: invocation.actionId }, 'recording a streamed model answer failed'));
      this.options.track?.(recording);
      return new Response(askedUsage ? tee.client.pipeThrough(withoutUsageChunks()) : tee.client, { status: answer.status, headers: out });
    }
    const bytes = await readAll(answer.body, this.options.payloadMaxBytes).catch(async (error: Error) => {
      await settle(null);
      const message = `The answer of ${row.name} could not be read: ${error.message}`;
      await recorder.answerIn({ status: 'ERROR', payload: { state: 'NONE' }, usage: null, meta: { code: 'UPSTREAM_ERROR', message } }, 'beforeAnswer');
      throw new WireFailure({ kind: 'api', code: 'upstream_error', message });
    });
    const usage = answer.status < 300 && endpoint.charged ? usageOf(endpoint, bytes, sent.body.length) : null;
    await settle(usage);
    await recorder.answerIn(
      { status: String(answer.status), headers: shown, payload: bytes.length ? bytesPayload(bytes) : { state: 'NONE' }, usage },
      'beforeAnswer',
    );
    return new BufferedResponse(bytes.length ? (bytes as unknown as Uint8Array<ArrayBuffer>) : null, { status: answer.status, headers: out });
  }
}

function parseBody(body: Buffer): ParsedBody {
  const bad = (message: string, param: string | null = null) => new WireFailure({ kind: 'invalid_request', code: 'invalid_body', message, param });
  if (!isUtf8(body)) throw bad('Expected a JSON body in UTF-8, got bytes that are not valid UTF-8.');
  const text = body.toString('utf8');
  if (jsonTextTooDeep(text)) throw bad('Expected a JSON body nested at most 512 levels deep.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw bad(`Expected a JSON body, got invalid JSON (${(error as Error).message}).`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw bad('Expected a JSON object as the body.');
  const model = (value as { model?: unknown }).model;
  if (typeof model !== 'string' || model.length === 0) throw bad(`Expected "model" to name a model, got ${JSON.stringify(model ?? null)}.`, 'model');
  const problem = plainTextProblem(model);
  if (problem || model.length > MODEL_NAME_MAX)
    throw bad(
      `Expected "model" as a name of at most ${MODEL_NAME_MAX} characters without NUL or unpaired surrogates${problem ? `; it holds ${problem}` : ''}.`,
      'model',
    );
  return value as ParsedBody;
}

/** The most a call can use: every byte of the body as a token (a token stands for at least one byte of its text) at the dearest input-side price, the output bound in full. */
function worstOf(endpoint: Endpoint, row: ModelRow, input: number, parsed: Record<string, unknown>): Worst {
  let output: number | null = endpoint.outputBound.length === 0 ? 0 : null;
  for (const field of endpoint.outputBound) {
    const v = parsed[field];
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) {
      output = v;
      break;
    }
  }
  output ??= row.maxOutput;
  return { model: row.name, input, output, costUnits: output === null ? null : worstCostUnits(row.price, input, output) };
}

function usageOf(endpoint: Endpoint, bytes: Buffer, requestBytes: number): Usage {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    value = undefined;
  }
  return usageOfJson(endpoint.wire, value) ?? estimateUsage(requestBytes, bytes.length, { output: endpoint.outputBound.length > 0 });
}

async function readAll(body: AsyncIterable<Uint8Array>, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) throw new Error(`the answer passed ${max} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

export function errorAnswer(endpoint: Pick<Endpoint, 'wire'>, error: WireError): Response {
  const { status, body } = wireErrorBody(endpoint.wire, error);
  return Response.json(body, { status });
}
