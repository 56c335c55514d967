// The model door's own events, beside the boundary's request IN and answer OUT: the call OUT as sent
// upstream (exact bytes; secrets as names) and the answer IN as it came, with the model, the tokens
// the provider counted and the cost at the exact price row. Durability as the runner's: the call
// `now` (before its first byte leaves), the answer `beforeAnswer` (a streamed one at its end, before
// the stream ends for the door, whose answer OUT makes it durable before the client's end).
import { randomUUID } from 'node:crypto';
import type { Refusal } from '../auth/verdict.ts';
import { refusalEvent } from '../auth/verdict.ts';
import { bytesPayload } from '../capture/payload.ts';
import { eventFields, type Invocation } from '../context/request.ts';
import type { StreamCut } from '../context/stream.ts';
import type { EventRecord } from '../dispatch/record.ts';
import type { EventInput, PayloadInput } from '../ledger/input.ts';
import type { ModelRow, Routed } from './catalog.ts';
import { costUnits, formatDecimal } from './price.ts';
import type { UpstreamRequest } from './upstream.ts';
import type { Usage } from './usage.ts';
import type { Endpoint } from './wire.ts';

export type AnswerIn = {
  status: string;
  headers?: Record<string, string>;
  payload: PayloadInput;
  usage: Usage | null;
  meta?: Record<string, unknown>;
};

export type StreamEnd = { clientDisconnected: boolean; cut?: StreamCut; streamError?: unknown };

export class ModelRecorder {
  private readonly sink: EventRecord;
  private readonly invocation: Invocation;
  private readonly endpoint: Endpoint;
  private readonly routed: Routed;
  constructor(sink: EventRecord, invocation: Invocation, endpoint: Endpoint, routed: Routed) {
    this.sink = sink;
    this.invocation = invocation;
    this.endpoint = endpoint;
    this.routed = routed;
  }

  private get row(): ModelRow {
    return this.routed.row;
  }

  private base(kind: string, direction: 'IN' | 'OUT', extra: Record<string, unknown>): EventInput {
    const { row, via } = this.routed;
    return {
      ...eventFields(this.invocation),
      id: `${this.invocation.actionId}:model:${randomUUID()}`,
      kind,
      direction,
      model: row.name,
      occurredAt: new Date(),
      payload: { state: 'NONE' },
      contract: { form: 'UPSTREAM', sha256: row.upstreamSha256 },
      metadata: {
        capture: 'model',
        door: this.invocation.door,
        wire: this.endpoint.wire,
        endpoint: this.endpoint.name,
        provider: row.provider,
        route: { query: via.query, layer: via.layer, score: via.score },
        price: { id: row.price.sha256, date: row.price.date },
        ...extra,
      },
    };
  }

  /** The call OUT, durable before it is sent. */
  callOut(sent: UpstreamRequest, hold: { tokens: number; costUsd: string } | undefined): Promise<void> {
    const event: EventInput = {
      ...this.base('MODEL_CALL', 'OUT', hold ? { hold } : {}),
      method: 'POST',
      url: sent.url,
      headers: sent.shownHeaders,
      payload: bytesPayload(sent.body),
    };
    return this.sink.record([event], 'now');
  }

  /** The answer IN, with tokens and cost when the provider counted them (or an estimate, said so). */
  answerIn(answer: AnswerIn, when: 'now' | 'beforeAnswer'): Promise<void> {
    const usage = answer.usage;
    const counted = usage && this.endpoint.charged;
    const event: EventInput = {
      ...this.base('MODEL_RESULT', 'IN', {
        ...(counted && {
          usage: usage.source,
          cachedTokens: usage.cached,
          ...(usage.cacheWrite + usage.cacheWrite1h > 0 && { cacheWriteTokens: usage.cacheWrite, cacheWrite1hTokens: usage.cacheWrite1h }),
        }),
        ...answer.meta,
      }),
      status: answer.status,
      ...(answer.headers && { headers: answer.headers }),
      payload: answer.payload,
      ...(counted && {
        inputTokens: usage.input,
        outputTokens: usage.output,
        costUsd: formatDecimal(costUnits(this.row.price, usage)),
      }),
    };
    return this.sink.record([event], when);
  }

  /** A refusal by the token's limits: nothing was sent. */
  refused(refusal: Refusal): Promise<void> {
    const event = refusalEvent(refusal, eventFields(this.invocation));
    event.model = this.row.name;
    event.metadata = { ...event.metadata, wire: this.endpoint.wire, endpoint: this.endpoint.name };
    return this.sink.record([event], 'beforeAnswer');
  }
}
