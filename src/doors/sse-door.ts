// The SSE door: POST /api/dispatch with `accept: text/event-stream` and the canonical call as the
// body. The answer is an event stream: `accepted` at once (the action id); when the upstream answers
// with a stream, `upstream` (its status and content type) and one `chunk` per piece as it arrives;
// then one `result` (the DispatchResult), then the stream ends. Bad input is answered before any
// stream, as JSON with its HTTP status, like POST /api/dispatch.
import { isUtf8 } from 'node:buffer';
import { captureExchange, invocationFromHeaders, isRetryable, type BoundaryRequest } from '../capture/boundary.ts';
import { unrecorded } from '../capture/unrecorded.ts';
import { currentInvocation } from '../context/request.ts';
import type { StreamChunk } from '../capture/tee.ts';
import type { DispatchResult } from '../dispatch/result.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { Services } from '../services.ts';
import { CallMessage } from './call-message.ts';
import { dispatchStreaming } from './dispatch-routes.ts';
import { errorResponse, readBody } from './respond.ts';
import { parseInput } from '../validation.ts';
import { isPlainName, jsonTextTooDeep, tooDeep } from '../limits.ts';

/** True when a POST /api/dispatch asks for the event stream rather than JSON. */
export function wantsEventStream(request: Request): boolean {
  return request.method === 'POST' && (request.headers.get('accept') ?? '').toLowerCase().includes('text/event-stream');
}

/** One server-sent event; data is JSON on one line, so no line of it can end the event early. */
export function sseEvent(event: string, data: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export async function sseDispatch(request: Request, services: Services): Promise<Response> {
  let body: BoundaryRequest['body'];
  let failure: DomainError | undefined;
  try {
    body = await readBody(request, services.config.PAYLOAD_MAX_BYTES);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    failure = error;
    body = { missing: Number(request.headers.get('content-length') ?? services.config.PAYLOAD_MAX_BYTES + 1) };
  }
  let call: CallMessage | undefined;
  if (!failure) {
    try {
      call = parseCall(body as Uint8Array, request.headers.get('content-type'));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      failure = error;
    }
  }
  // streamCapture(actionId) shows the upstream's stream when there is one, else this door's own:
  // the door's chunks are held until the dispatch tells which.
  const gate = new PublishGate(services);
  try {
    return await captureExchange(
      { writer: services.writer, logger: services.logger, config: services.config, streams: gate },
      {
        door: 'SSE',
        request: { method: request.method, url: request.url, headers: request.headers, body },
        invocation: invocationFromHeaders(request.headers),
        ...(call && isPlainName(call.tool) ? { tool: call.tool } : {}),
        clientSignal: request.signal,
      },
      async () => {
        if (failure || !call) return errorResponse(failure!);
        const { tool, args, dryRun, form } = call;
        const actionId = currentInvocation()!.actionId;
        const encoder = new TextEncoder();
        const send = (controller: ReadableStreamDefaultController<Uint8Array>, event: string, data: unknown) =>
          controller.enqueue(encoder.encode(sseEvent(event, data, actionId)));
        const answer = dispatchStreaming(services, { tool, args: args ?? {}, ...(dryRun !== undefined && { dryRun }), form: form ?? 'SSE' }, request.signal);
        let phase: 'accepted' | 'dispatched' | 'streaming' = 'accepted';
        let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
        let final: Promise<DispatchResult> | undefined;
        let sequence = 0;
        let offset = 0;
        const finish = async (controller: ReadableStreamDefaultController<Uint8Array>, result: Promise<DispatchResult>) => {
          try {
            const value = await result;
            // The call's result was staged to share the answer's disk write; this answer streams, so it is made durable here, before the caller reads it.
            await services.writer.durable().catch((error) => {
              throw isRetryable(error) ? unrecorded(error, true) : error;
            });
            send(controller, 'result', value);
          } catch (error) {
            if (error instanceof DomainError) send(controller, 'error', { code: error.code, message: error.message });
            else {
              services.logger.error({ err: error, actionId }, 'unexpected error in the SSE door');
              send(controller, 'error', { code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.' });
            }
          }
          controller.close();
        };
        // Pulled, not pushed: nothing piles up behind a client that reads slowly or has gone.
        const stream = new ReadableStream<Uint8Array>(
          {
            async pull(controller) {
              if (phase === 'accepted') {
                phase = 'dispatched';
                return send(controller, 'accepted', { actionId, tool });
              }
              if (phase === 'dispatched') {
                let first: Awaited<typeof answer>;
                try {
                  first = await answer;
                } catch (error) {
                  gate.open();
                  return finish(controller, Promise.reject(error));
                }
                if ('result' in first) {
                  gate.open();
                  return finish(controller, Promise.resolve(first.result));
                }
                gate.drop();
                phase = 'streaming';
                reader = first.streamed.body.getReader();
                final = first.streamed.result;
                return send(controller, 'upstream', { status: first.streamed.status, contentType: first.streamed.contentType });
              }
              let next: ReadableStreamReadResult<Uint8Array>;
              try {
                next = await reader!.read();
              } catch (error) {
                // The client has gone (the ledger reads on by itself); else the upstream broke or timed out.
                if (request.signal.aborted) return controller.error(error);
                return finish(controller, final!);
              }
              if (next.done) return finish(controller, final!);
              const bytes = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
              send(controller, 'chunk', {
                sequence: sequence++,
                offset,
                size: bytes.length,
                ...(isUtf8(bytes) ? { text: bytes.toString('utf8') } : { base64: bytes.toString('base64') }),
              });
              offset += bytes.length;
            },
            cancel(reason) {
              return reader?.cancel(reason);
            },
          },
          { highWaterMark: 0 },
        );
        return new Response(stream, {
          status: 200,
          headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-dirledger-action': actionId },
        });
      },
    );
  } catch (error) {
    if (error instanceof DomainError) return errorResponse(error);
    throw error;
  }
}

/** Holds the door's own chunks until the dispatch tells whether the upstream streams (then they are dropped). */
class PublishGate {
  /** Each held chunk with the task of the invocation that published it (open() runs outside it). */
  private held: [string, StreamChunk, string | undefined][] | undefined = [];
  private dropped = false;
  private readonly services: Services;
  constructor(services: Services) {
    this.services = services;
  }
  publish(actionId: string, chunk: StreamChunk): void {
    if (this.dropped) return;
    if (this.held) this.held.push([actionId, chunk, currentInvocation()?.task]);
    else this.services.streams.publish(actionId, chunk);
  }
  open(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const [actionId, chunk, task] of held) this.services.streams.publish(actionId, chunk, task);
  }
  drop(): void {
    this.dropped = true;
    this.held = undefined;
  }
}

function parseCall(bytes: Uint8Array, contentType: string | null): CallMessage {
  if (!/^application\/(.+\+)?json\b/i.test(contentType ?? '')) {
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected content-type application/json, got ${JSON.stringify(contentType || 'nothing')}.`);
  }
  if (jsonTextTooDeep(bytes)) throw tooDeep('the call');
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected a JSON body in UTF-8, got ${(error as Error).message}.`);
  }
  return parseInput(CallMessage, value, 'call');
}
