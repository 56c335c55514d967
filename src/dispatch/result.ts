// What a call to the runner is and what it answers: the request, the result, the refusal codes.
import { isUtf8 } from 'node:buffer';
import type { Refusal as AuthRefusal } from '../auth/verdict.ts';
import type { StreamChunk, StreamCut, StreamState } from '../capture/tee.ts';
import type { SecretRedactor } from '../secrets/redact.ts';
import type { StepAnswer } from './runners.ts';

export type DispatchRequest = { tool: string; args?: Record<string, unknown>; dryRun?: boolean; form?: string };
export type DispatchOutcome = 'OK' | 'ERROR' | 'REFUSED' | 'DRY_RUN';
export type DispatchResult = {
  tool: string;
  actionId: string;
  outcome: DispatchOutcome;
  dryRun: boolean;
  /** Upstream HTTP status / CLI exit code when there is one. */
  status?: number;
  /** Parsed JSON when the answer is JSON, else text (secret values replaced by their names). */
  output?: unknown;
  /** The answer as text when it is UTF-8. */
  outputText?: string;
  /** The exact answer bytes, base64 (secret values replaced by their names). */
  outputBase64?: string;
  /** Dry run: the rendered outgoing request(s), secrets still as [NAME]. */
  requests?: unknown[];
  /** A sequence: each step's own result. */
  steps?: DispatchResult[];
  /** REFUSED / ERROR: a SCREAMING_SNAKE code and a clear message. */
  error?: { code: string; message: string };
  /** A streamed answer (sent to the client as it arrived): how the ledger stored it. */
  stream?: { state: StreamState; size: number; sha256: string | null; clientDisconnected: boolean; cut?: StreamCut };
};

/** A streamed upstream answer handed to the door: its head, the client's bytes, and the result once it ends. */
export type StreamedAnswer = {
  status: number;
  contentType: string;
  headers: Record<string, string | string[]>;
  /** The client's branch, secret values replaced chunk by chunk. It closes after the response IN is recorded. */
  body: ReadableStream<Uint8Array>;
  /** Settles when the ledger's branch has finished (end, cut-off, error or timeout). */
  result: Promise<DispatchResult>;
};

export type StreamOptions = {
  /** How long the ledger keeps reading after the client has gone (STREAM_CUTOFF_MS). */
  cutoffMs: number;
  /** Bytes kept at most (with DISPATCH_RESPONSE_MAX_BYTES, the lower); a longer stream is MISSING. */
  payloadMaxBytes: number;
  /** Each chunk as it arrives, then the end (the stream registry). */
  publish?: (chunk: StreamChunk) => void;
  /** Called once, when the upstream answers with a stream; `dispatch` then resolves when it ends. */
  onStream(answer: StreamedAnswer): void;
};

/** Why a call was refused (nothing sent) or failed. */
export const DispatchErrorCode = {
  /** A field no name can hold (NUL, an unpaired surrogate, too long); `details.field` names it. */
  BAD_INPUT: 'BAD_INPUT',
  TOOL_NOT_FOUND: 'TOOL_NOT_FOUND',
  /** The caller's token does not allow this call (which limit: `details.limit`). */
  FORBIDDEN: 'FORBIDDEN',
  NOT_RUNNABLE: 'NOT_RUNNABLE',
  ARGS_INVALID: 'ARGS_INVALID',
  CODE_NOT_EXECUTED: 'CODE_NOT_EXECUTED',
  SECRET_UNBOUND: 'SECRET_UNBOUND',
  RETIRED_BUILD: 'RETIRED_BUILD',
  CLI_SYNTAX: 'CLI_SYNTAX',
  UPSTREAM_STATUS: 'UPSTREAM_STATUS',
  UPSTREAM_ERROR: 'UPSTREAM_ERROR',
  TOOL_ERROR: 'TOOL_ERROR',
  EXIT_STATUS: 'EXIT_STATUS',
  TIMEOUT: 'TIMEOUT',
  CANCELLED: 'CANCELLED',
  RESPONSE_TOO_LARGE: 'RESPONSE_TOO_LARGE',
} as const;
export type DispatchErrorCode = (typeof DispatchErrorCode)[keyof typeof DispatchErrorCode];

export type ResultBase = { tool: string; actionId: string; dryRun: boolean };

/** A call refused before anything was sent: its code, the caller's message and the REFUSAL event's detail. */
export class Refusal extends Error {
  readonly code: DispatchErrorCode;
  readonly details: Record<string, unknown>;
  constructor(code: DispatchErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

/** A token's refusal as the runner's own: the caller sees the message, the REFUSAL event the detail. */
export const forbidden = (r: AuthRefusal) =>
  new Refusal('FORBIDDEN', r.message, {
    limit: r.limit,
    door: r.door,
    reason: r.reason,
    ...(r.caveat && { caveat: r.caveat }),
    ...(r.tokenId && { tokenId: r.tokenId }),
  });

/** The answer for the caller: secret values replaced by names, JSON parsed when it is JSON. */
export function answerOutput(answer: StepAnswer, redactor: SecretRedactor): Pick<DispatchResult, 'output' | 'outputText' | 'outputBase64'> {
  if (!answer.bytes) return {};
  const bytes = redactor.bytes(answer.bytes, new Set());
  if (answer.value !== undefined) {
    const text = bytes.toString('utf8');
    return { output: JSON.parse(text), outputText: text };
  }
  if (!isUtf8(bytes)) return { outputBase64: bytes.toString('base64') };
  const text = bytes.toString('utf8');
  let output: unknown = text;
  if (/json/i.test(answer.contentType ?? '') || /^\s*[[{"]/.test(text)) {
    try {
      output = JSON.parse(text);
    } catch {
      output = text;
    }
  }
  return { output, outputText: text };
}
