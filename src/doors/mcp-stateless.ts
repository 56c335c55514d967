// The stateless answer of the MCP door at /mcp (src/doors/mcp-routes.ts): a fresh MCP server and
// transport per POST. Its own module so the SDK loads with the first MCP request, not at start.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isRetryable } from '../capture/boundary.ts';
import type { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { invalidParams, invalidShape, rpcErrorMessage } from './mcp-limits.ts';
import type { McpCatalog } from './mcp-catalog.ts';
import { createMcpServer } from './mcp-server.ts';
import { errorResponse } from './respond.ts';

/** Valid JSON that is not a JSON-RPC message (-32600), or a tools/call or tools/list whose params break the SDK's own schema (-32602 naming the field): mcp-limits.ts. */
function invalidParamsAnswer(body: Buffer): Response | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const problem = invalidShape(parsed) ?? invalidParams(parsed);
  return problem && new Response(JSON.stringify(rpcErrorMessage(problem)), { status: 400, headers: { 'content-type': 'application/json' } });
}

/** Answers one MCP POST (its body read, checked as UTF-8 and for depth) with a fresh server and transport. */
export async function answerStateless(services: Services, request: Request, bytes: Buffer, catalog: McpCatalog): Promise<Response> {
  const invalid = invalidParamsAnswer(bytes);
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
  const server = createMcpServer({ ...services, dispatcher }, 'MCP_HTTP', undefined, catalog);
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
