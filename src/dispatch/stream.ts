// A streamed upstream answer (its call OUT already recorded): the upstream is teed, the ledger's branch
// reads on its own (after a client disconnect, up to the cut-off) and the response IN is recorded when
// it ends. The timeout still bounds the whole call: past it the upstream is aborted (PARTIAL).
import { createHash } from 'node:crypto';
import { teeStream } from '../capture/tee.ts';
import type { SecretRedactor } from '../secrets/redact.ts';
import type { CallRecorder, ContractRef, StepExtra } from './record.ts';
import type { DispatchResult, ResultBase, StreamOptions } from './result.ts';
import type { StepAnswer } from './runners.ts';
import type { StepClock } from './send.ts';

export type StreamedCall = {
  base: ResultBase;
  answer: StepAnswer & { body: ReadableStream<Uint8Array> };
  extra: StepExtra;
  contract: ContractRef | undefined;
  clock: StepClock;
  clientSignal?: AbortSignal;
};

export function streamAnswer(
  call: StreamedCall,
  stream: StreamOptions,
  events: CallRecorder,
  redactor: SecretRedactor,
  responseMaxBytes: number,
): Promise<DispatchResult> {
  const { base, answer, clock, clientSignal } = call;
  const tee = teeStream(answer.body, {
    cutoffMs: stream.cutoffMs,
    payloadMaxBytes: Math.min(stream.payloadMaxBytes, responseMaxBytes),
    ...(stream.publish && { publish: stream.publish }),
    ...(clientSignal && { clientSignal }),
  });
  const result = tee.recorded.then(async (r): Promise<DispatchResult> => {
    clock.stop();
    const timedOut = clock.timedOut && r.state !== 'COMPLETE';
    const error = timedOut
      ? {
          code: 'TIMEOUT' as const,
          message: `${JSON.stringify(base.tool)} was still streaming after ${clock.timeoutMs} ms; the call was abandoned and what arrived kept as PARTIAL.`,
        }
      : r.cut === 'CUTOFF'
        ? {
            code: 'CANCELLED' as const,
            message: `The caller went away; the stream was read for up to ${stream.cutoffMs} ms more and what arrived kept as PARTIAL.`,
          }
        : r.cut === 'SOURCE_ERROR'
          ? { code: 'UPSTREAM_ERROR' as const, message: redactor.text(`The stream broke: ${r.error ?? 'unknown error'}`, new Set()) }
          : undefined;
    await events.streamEnded(answer, r, error, call.extra, call.contract);
    const stored = r.bytes === null ? null : redactor.bytes(r.bytes, new Set());
    // The hash of the bytes as stored: re-hashed only when a secret was replaced.
    const sha256 = stored === null ? null : stored === r.bytes ? r.sha256 : createHash('sha256').update(stored).digest('hex');
    const summary = { state: r.state, size: r.size, sha256, clientDisconnected: r.clientDisconnected, ...(r.cut && { cut: r.cut }) };
    return { ...base, outcome: error ? 'ERROR' : 'OK', status: answer.status, stream: summary, ...(error && { error }) };
  });
  const body = clientBody(tee.client, redactor, result);
  if (clientSignal?.aborted) void body.cancel(clientSignal.reason).catch(() => {});
  stream.onStream({ status: answer.status, contentType: answer.contentType ?? '', headers: answer.headers ?? {}, body, result });
  return result;
}

/** The client's branch, redacted across chunk edges (a secret split between two chunks is caught as in one buffer). */
function clientBody(client: ReadableStream<Uint8Array>, redactor: SecretRedactor, result: Promise<DispatchResult>): ReadableStream<Uint8Array> {
  const reader = client.getReader();
  const redacting = redactor.stream();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          let next: ReadableStreamReadResult<Uint8Array>;
          try {
            next = await reader.read();
          } catch (error) {
            controller.error(error);
            return;
          }
          if (next.done) {
            const rest = redacting.end();
            if (rest.length) controller.enqueue(rest);
            // The response IN is queued before the client's stream (and so the door's answer OUT) ends.
            await result.catch(() => {});
            controller.close();
            return;
          }
          const out = redacting.push(next.value);
          if (out.length) {
            controller.enqueue(out);
            return;
          }
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
