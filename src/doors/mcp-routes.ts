// The MCP door at /mcp: MCP streamable HTTP, stateless. Each POST gets a fresh server and transport
// (the SDK's stateless pattern), so any instance can answer any request, a lone tools/call needs no
// initialize first, and no session is held in memory. Answers are JSON (enableJsonResponse), so the
// answer OUT event holds the whole JSON-RPC response. GET (a standalone SSE stream) and DELETE
// (ending a session) have nothing to do without sessions: 405.
import { isUtf8 } from 'node:buffer';
import { captureExchange, invocationFromHeaders, type BoundaryRequest } from '../capture/boundary.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { selfMcpPath } from '../dispatch/plan.ts';
import { isPlainName, jsonTextTooDeep, tooDeep } from '../limits.ts';
import type { Services } from '../services.ts';
import { errorResponse, readBody } from './respond.ts';
import { McpCatalogs, type McpCatalog } from './mcp-catalog.ts';

/** `?catalog=names` (or `tools`) on the endpoint's URL, else the MCP_CATALOG setting. */
function catalogOf(request: Request, configured: McpCatalog): McpCatalog {
  const asked = new URL(request.url).searchParams.get('catalog');
  return McpCatalogs.find((c) => c === asked) ?? configured;
}

/** The MCP SDK (and zod v3, ajv and zod-to-json-schema under it) loads with the first MCP request, not at start. */
let stateless: Promise<typeof import('./mcp-stateless.ts')> | undefined;
const loadStateless = () => (stateless ??= import('./mcp-stateless.ts'));

/** The path MCP contracts call this server by (`/mcp`, see isSelfMcp). */
export const mcpPath = selfMcpPath;

const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });

/** The tool a JSON-RPC tools/call body names (the first, in a batch), for the ledger events. */
function toolOf(body: Uint8Array): string | undefined {
  if (jsonTextTooDeep(body)) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(body).toString('utf8')) as unknown;
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
      const m = message as { method?: unknown; params?: { name?: unknown } };
      // A name no column can hold is left for the runner to refuse (BAD_INPUT), not recorded.
      if (m?.method === 'tools/call' && typeof m.params?.name === 'string') return isPlainName(m.params.name) ? m.params.name : undefined;
    }
  } catch {
    // Not JSON: the transport answers the parse error.
  }
  return undefined;
}

export async function mcpRoute(request: Request, services: Services): Promise<Response> {
  const limit = services.config.PAYLOAD_MAX_BYTES;
  let body: BoundaryRequest['body'] = null;
  let tooLarge: DomainError | undefined;
  if (request.method === 'POST') {
    try {
      body = await readBody(request, limit);
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== ErrorCode.PAYLOAD_TOO_LARGE) throw error;
      tooLarge = error;
      body = { missing: Number(request.headers.get('content-length') ?? limit + 1) };
    }
  }
  const tool = body && !('missing' in body) ? toolOf(body) : undefined;
  return captureExchange(
    services,
    {
      door: 'MCP',
      request: { method: request.method, url: request.url, headers: request.headers, body },
      invocation: invocationFromHeaders(request.headers),
      ...(tool ? { tool } : {}),
    },
    async () => {
      if (request.method !== 'POST')
        return rpcError(405, -32000, `Method not allowed: this MCP endpoint is stateless and answers POST only, got ${request.method}.`, { allow: 'POST' });
      if (tooLarge) return rpcError(413, -32000, tooLarge.message);
      // Never decoded with U+FFFD in place of what was sent: the exact bytes are on the request IN.
      if (body && !('missing' in body) && !isUtf8(body))
        return rpcError(400, -32700, 'Parse error: expected a JSON body in UTF-8, got bytes that are not valid UTF-8.');
      if (jsonTextTooDeep(body as Buffer)) return rpcError(400, -32600, tooDeep('the JSON-RPC message').message);
      const { answerStateless } = await loadStateless();
      return answerStateless(services, request, body as Buffer, catalogOf(request, services.config.MCP_CATALOG));
    },
  ).catch((error: unknown) => {
    // An invalid x-dirledger-* header refuses the request before anything runs.
    if (error instanceof DomainError) return errorResponse(error);
    throw error;
  });
}
