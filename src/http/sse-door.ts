// The SSE door: POST /api/dispatch with `accept: text/event-stream` and the canonical call as the
// body. The answer is an event stream: `accepted` at once (the action id), then one `result` (the
// DispatchResult), then the stream ends. Bad input is answered before any stream, as JSON with its
// HTTP status, like POST /api/dispatch.
import { captureExchange, invocationFromHeaders, type BoundaryRequest } from '../capture/boundary.ts';
import { currentInvocation } from '../capture/context.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { Services } from '../services.ts';
import { CallMessage } from './call-message.ts';
import { errorResponse, readBody } from './respond.ts';
import { parseInput } from '../validation.ts';

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
  try {
    return await captureExchange(
      services,
      {
        door: 'SSE',
        request: { method: request.method, url: request.url, headers: request.headers, body },
        invocation: invocationFromHeaders(request.headers),
        ...(call ? { tool: call.tool } : {}),
      },
      async () => {
        if (failure || !call) return errorResponse(failure!);
        const { tool, args, dryRun, form } = call;
        const actionId = currentInvocation()!.actionId;
        const encoder = new TextEncoder();
        const stream = new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(encoder.encode(sseEvent('accepted', { actionId, tool }, actionId)));
            try {
              const result = await services.dispatcher.dispatch({ tool, args: args ?? {}, ...(dryRun !== undefined && { dryRun }), form: form ?? 'SSE' });
              controller.enqueue(encoder.encode(sseEvent('result', result, actionId)));
            } catch (error) {
              services.logger.error({ err: error, actionId }, 'unexpected error in the SSE door');
              controller.enqueue(encoder.encode(sseEvent('error', { code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.' }, actionId)));
            }
            controller.close();
          },
        });
        return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-dirledger-action': actionId } });
      },
    );
  } catch (error) {
    if (error instanceof DomainError) return errorResponse(error);
    throw error;
  }
}

function parseCall(bytes: Uint8Array, contentType: string | null): CallMessage {
  if (!/^application\/(.+\+)?json\b/i.test(contentType ?? '')) {
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected content-type application/json, got ${JSON.stringify(contentType || 'nothing')}.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw new DomainError(ErrorCode.BAD_INPUT, `Expected a JSON body in UTF-8, got ${(error as Error).message}.`);
  }
  return parseInput(CallMessage, value, 'call');
}
