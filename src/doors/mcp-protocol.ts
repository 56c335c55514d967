// JSON-RPC as both MCP doors answer it, to the letter of the MCP 2025-11-25 spec: one place that
// reads a message (parse error -32700, not a JSON-RPC message -32600, params the SDK's schema
// refuses -32602 naming the field) and the errors a handler throws (unknown tool, bad cursor: -32602).
import { isUtf8 } from 'node:buffer';
import { CallToolRequestSchema, JSONRPCMessageSchema, ListToolsRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { jsonTextTooDeep, tooDeep } from '../limits.ts';
import { describeIssues } from '../validation.ts';

/** The JSON-RPC 2.0 error codes MCP uses. */
export const RpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** MCP's own: resources/read of a URI the server does not have. */
  RESOURCE_NOT_FOUND: -32002,
  /** Implementation-defined (-32000…-32099): the door refused the credential. */
  UNAUTHORIZED: -32001,
} as const;

export type RpcErrorAnswer = { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data?: unknown } };

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

export const rpcErrorAnswer = (id: string | number | null, code: number, message: string, data?: unknown): RpcErrorAnswer => ({
  jsonrpc: '2.0',
  id,
  error: { code, message, ...(data !== undefined && { data }) },
});

const paramSchemas: Record<string, z.ZodType> = { 'tools/call': CallToolRequestSchema, 'tools/list': ListToolsRequestSchema };

const idOf = (message: unknown): string | number | null => {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

/**
 * The -32602 answer to a tools/call or tools/list whose params break the SDK's own schema, naming
 * the field (the SDK would answer -32603 with the schema library's dump).
 */
export function paramsRefusal(message: unknown): RpcErrorAnswer | undefined {
  const m = message as { method?: unknown } | null;
  const schema = m && typeof m === 'object' && typeof m.method === 'string' ? paramSchemas[m.method] : undefined;
  const checked = schema?.safeParse(m);
  if (!checked || checked.success) return undefined;
  return rpcErrorAnswer(idOf(m), RpcCode.INVALID_PARAMS, `Invalid params of ${String(m!.method)}: ${describeIssues(checked.error, m).join('; ')}.`);
}

const preview = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
};

/** One line (or body) of JSON-RPC: the messages it holds, or the one error answer it gets. */
export function readRpc(bytes: Uint8Array): { messages: JSONRPCMessage[] } | { refused: RpcErrorAnswer } {
  if (!isUtf8(bytes)) return { refused: rpcErrorAnswer(null, RpcCode.PARSE_ERROR, 'Parse error: expected JSON in UTF-8, got bytes that are not valid UTF-8.') };
  if (jsonTextTooDeep(bytes)) return { refused: rpcErrorAnswer(null, RpcCode.INVALID_REQUEST, tooDeep('the JSON-RPC message').message) };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (error) {
    return {
      refused: rpcErrorAnswer(
        null,
        RpcCode.PARSE_ERROR,
        `Parse error: expected one JSON-RPC message as JSON, got text that is not JSON (${(error as Error).message}).`,
      ),
    };
  }
  const messages: JSONRPCMessage[] = [];
  for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
    const checked = JSONRPCMessageSchema.safeParse(item);
    if (!checked.success)
      return {
        refused: rpcErrorAnswer(
          idOf(item),
          RpcCode.INVALID_REQUEST,
          `Invalid request: expected a JSON-RPC 2.0 message ({"jsonrpc":"2.0","id":…,"method":…}), got ${preview(item)}.`,
        ),
      };
    const refused = paramsRefusal(checked.data);
    if (refused) return { refused };
    messages.push(checked.data);
  }
  return { messages };
}
