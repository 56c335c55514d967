// The two wire formats the model door speaks, as data: each endpoint, what it is charged for, where
// its output bound is written, and the provider's own error shape (so an unchanged client reads ours
// as it reads the provider's).
import type { Wire } from './catalog.ts';

export type EndpointName = 'CHAT_COMPLETIONS' | 'RESPONSES' | 'EMBEDDINGS' | 'MESSAGES' | 'COUNT_TOKENS';

export type Endpoint = {
  name: EndpointName;
  wire: Wire;
  /** The path under the upstream's base URL (and under this server's /v1). */
  path: string;
  /** Whether a call is charged (count_tokens is free); a free call needs no budget. */
  charged: boolean;
  /** The request fields that bound the output tokens, first found wins; none: the answer has no output tokens. */
  outputBound: readonly string[];
};

export const Endpoints: Record<EndpointName, Endpoint> = {
  CHAT_COMPLETIONS: { name: 'CHAT_COMPLETIONS', wire: 'openai', path: 'chat/completions', charged: true, outputBound: ['max_completion_tokens', 'max_tokens'] },
  RESPONSES: { name: 'RESPONSES', wire: 'openai', path: 'responses', charged: true, outputBound: ['max_output_tokens'] },
  EMBEDDINGS: { name: 'EMBEDDINGS', wire: 'openai', path: 'embeddings', charged: true, outputBound: [] },
  MESSAGES: { name: 'MESSAGES', wire: 'anthropic', path: 'messages', charged: true, outputBound: ['max_tokens'] },
  COUNT_TOKENS: { name: 'COUNT_TOKENS', wire: 'anthropic', path: 'messages/count_tokens', charged: false, outputBound: [] },
};

/** What went wrong, in the words both providers share. */
export type ErrorKind = 'invalid_request' | 'authentication' | 'permission' | 'not_found' | 'too_large' | 'rate_limit' | 'api' | 'overloaded';

const status: Record<ErrorKind, number> = {
  invalid_request: 400,
  authentication: 401,
  permission: 403,
  not_found: 404,
  too_large: 413,
  rate_limit: 429,
  api: 502,
  overloaded: 503,
};

const anthropicType: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  too_large: 'request_too_large',
  rate_limit: 'rate_limit_error',
  api: 'api_error',
  overloaded: 'overloaded_error',
};

const openaiType: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'invalid_request_error',
  too_large: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  api: 'api_error',
  overloaded: 'api_error',
};

/** A door error as the provider would word it: OpenAI `{error: {message, type, param, code}}`, Anthropic `{type: "error", error: {type, message}}`. */
export type WireError = { kind: ErrorKind; code: string; message: string; param?: string | null; details?: Record<string, unknown> };

export function wireErrorBody(wire: Wire, error: WireError): { status: number; body: unknown } {
  const details = error.details ?? {};
  if (wire === 'anthropic') {
    return {
      status: status[error.kind],
      body: { type: 'error', error: { type: anthropicType[error.kind], message: error.message, code: error.code, ...details } },
    };
  }
  return {
    status: status[error.kind],
    body: { error: { message: error.message, type: openaiType[error.kind], param: error.param ?? null, code: error.code, ...details } },
  };
}
