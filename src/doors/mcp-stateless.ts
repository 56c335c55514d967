// The stateless answer of the MCP door at /mcp (src/doors/mcp-routes.ts): a fresh MCP server and
// transport per POST. Its own module so the SDK loads with the first MCP request, not at start.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { isRetryable } from '../capture/boundary.ts';
import type { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { describeIssues } from '../validation.ts';
import { createMcpServer } from './mcp-server.ts';
import { errorResponse } from './respond.ts';

const paramSchemas: Record<string, z.ZodType> = { 'tools/call': CallToolRequestSchema, 'tools/list': ListToolsRequestSchema };

/**
 * A tools/call or tools/list whose params break the SDK's own schema, answered -32602 naming the
 * field (the SDK answers such a request -32603, an internal error).
 */
function invalidParams(body: Buffer): Response | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const m = message as { method?: unknown; id?: unknown } | null;
    const schema = m && typeof m === 'object' && typeof m.method === 'string' ? paramSchemas[m.method] : undefined;
    const checked = schema?.safeParse(m);
    if (!checked || checked.success) continue;
    const id = typeof m!.id === 'string' || typeof m!.id === 'number' ? m!.id : null;
    const text = `Invalid params of ${String(m!.method)}: ${describeIssues(checked.error, m).join('; ')}.`;
    return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32602, message: text } }), {
      status: 400,
      headers: { 'content-type': 'application/json' },
    });
  }
  return undefined;
}

/** Answers one MCP POST (its body read, checked as UTF-8 and for depth) with a fresh server and transport. */
export async function answerStateless(services: Services, request: Request, bytes: Buffer): Promise<Response> {
  const invalid = invalidParams(bytes);
  if (invalid) return invalid;
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  // The SDK turns a handler's throw into a JSON-RPC answer; a call the spool could not record is the HTTP 503 instead.
  let unrecorded: DomainError | undefined;
  const dispatcher = {
    dispatch: (call: Parameters<Services['dispatcher']['dispatch']>[0]) =>
      services.dispatcher.dispatch(call).catch((error: unknown) => {
        if (isRetryable(error)) unrecorded = error;
        throw error;
      }),
  };
  const server = createMcpServer({ ...services, dispatcher }, 'MCP_HTTP');
  await server.connect(transport);
  try {
    const answer = await transport.handleRequest(
      new Request(request.url, { method: 'POST', headers: request.headers, body: bytes.byteLength ? new Uint8Array(bytes) : null }),
    );
    if (unrecorded) return errorResponse(unrecorded);
    return answer;
  } finally {
    await server.close();
  }
}
