// The limits both MCP doors (HTTP at /mcp, stdio as `dirledger mcp`) apply to one JSON-RPC message
// before the SDK sees it, each answered as a JSON-RPC error that names the limit: size, UTF-8, JSON
// depth, JSON syntax, the message's shape, and params the SDK's schema refuses.
import { isUtf8 } from 'node:buffer';
import { CallToolRequestSchema, JSONRPCMessageSchema, ListToolsRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { JSON_MAX_DEPTH, jsonTextTooDeep, tooDeep } from '../limits.ts';
import { describeIssues } from '../validation.ts';

/** JSON-RPC's error codes, and the server-error code the doors use for a refusal (rate). */
export const RpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Implementation-defined: the door refused the message or its credential (rate, a refused token). */
  REFUSED: -32000,
  /** MCP's own: resources/read of a URI the server does not have. */
  RESOURCE_NOT_FOUND: -32002,
} as const;

/**
 * An error a request handler throws to be answered as a JSON-RPC error with exactly this message
 * (the SDK's McpError prefixes "MCP error <code>: ", which its client prefixes again).
 */
export class RpcError extends Error {
  readonly code: number;
  readonly data?: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

export type RpcErrorAnswer = { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data?: unknown } };

export const rpcErrorAnswer = (id: string | number | null, code: number, message: string, data?: unknown): RpcErrorAnswer => ({
  jsonrpc: '2.0',
  id,
  error: { code, message, ...(data !== undefined && { data }) },
});

/** Which limit a message broke: in the error's `data.limit`. */
export type MessageLimit = 'size' | 'utf8' | 'depth' | 'json' | 'shape' | 'params' | 'rate';

export type RpcProblem = {
  id: string | number | null;
  code: number;
  message: string;
  data: { limit: MessageLimit } & Record<string, unknown>;
};

/** The JSON-RPC error answer for a problem. */
export const rpcErrorMessage = (p: RpcProblem): JSONRPCMessage =>
  ({ jsonrpc: '2.0', id: p.id, error: { code: p.code, message: p.message, data: p.data } }) as unknown as JSONRPCMessage;

export const tooLarge = (size: number, max: number): RpcProblem => ({
  id: null,
  code: RpcCode.INVALID_REQUEST,
  message: `Request too large: expected a JSON-RPC message of at most ${max} bytes, got ${size === Number.POSITIVE_INFINITY ? 'more' : size} bytes.`,
  data: { limit: 'size', max },
});

const idOf = (m: unknown): string | number | null => {
  const id = (m as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

const paramSchemas: Record<string, z.ZodType> = { 'tools/call': CallToolRequestSchema, 'tools/list': ListToolsRequestSchema };

/**
 * A tools/call or tools/list whose params break the SDK's own schema, answered -32602 naming the
 * field (the SDK answers such a request -32603, an internal error). `parsed` is one message or a batch.
 */
export function invalidParams(parsed: unknown): RpcProblem | undefined {
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const m = message as { method?: unknown } | null;
    const schema = m && typeof m === 'object' && typeof m.method === 'string' ? paramSchemas[m.method] : undefined;
    const checked = schema?.safeParse(m);
    if (!checked || checked.success) continue;
    return {
      id: idOf(m),
      code: RpcCode.INVALID_PARAMS,
      message: `Invalid params of ${String(m!.method)}: ${describeIssues(checked.error, m).join('; ')}.`,
      data: { limit: 'params' },
    };
  }
  return undefined;
}

/** One message as read from stdio (one line): checked against every limit, in the order they are cheap. */
export function checkMessage(line: Buffer, maxBytes: number): { message: JSONRPCMessage } | { problem: RpcProblem } {
  if (line.length > maxBytes) return { problem: tooLarge(line.length, maxBytes) };
  if (!isUtf8(line)) {
    return {
      problem: {
        id: null,
        code: RpcCode.PARSE_ERROR,
        message: 'Parse error: expected JSON in UTF-8, got bytes that are not valid UTF-8.',
        data: { limit: 'utf8' },
      },
    };
  }
  if (jsonTextTooDeep(line)) {
    return {
      problem: { id: null, code: RpcCode.INVALID_REQUEST, message: tooDeep('the JSON-RPC message').message, data: { limit: 'depth', max: JSON_MAX_DEPTH } },
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.toString('utf8'));
  } catch (error) {
    return {
      problem: {
        id: null,
        code: RpcCode.PARSE_ERROR,
        message: `Parse error: expected JSON, got invalid JSON (${(error as Error).message}).`,
        data: { limit: 'json' },
      },
    };
  }
  const shape = JSONRPCMessageSchema.safeParse(parsed);
  if (!shape.success) return { problem: notAMessage(parsed, Array.isArray(parsed) ? 'a batch (not supported over stdio)' : notOne(parsed, shape.error)) };
  const params = invalidParams(parsed);
  return params ? { problem: params } : { message: shape.data };
}

/** Valid JSON that is not a JSON-RPC message: -32600 Invalid Request (the SDK answers -32700, a parse error). */
function notAMessage(parsed: unknown, got: string): RpcProblem {
  return {
    id: idOf(parsed),
    code: RpcCode.INVALID_REQUEST,
    message: `Invalid Request: expected one JSON-RPC 2.0 request, notification or response, got ${got}.`,
    data: { limit: 'shape' },
  };
}

const notOne = (parsed: unknown, error: z.ZodError) => `a message that is not one (${describeIssues(error, parsed).slice(0, 3).join('; ')})`;

/** An HTTP body's parsed JSON (one message or a batch) whose message is not a JSON-RPC message. */
export function invalidShape(parsed: unknown): RpcProblem | undefined {
  if (Array.isArray(parsed) && parsed.length === 0) return notAMessage(parsed, 'an empty batch');
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const shape = JSONRPCMessageSchema.safeParse(message);
    if (!shape.success) return notAMessage(message, notOne(message, shape.error));
  }
  return undefined;
}
