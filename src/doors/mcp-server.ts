// The MCP server both MCP doors run (streamable HTTP at /mcp, stdio as `dirledger mcp`): tools/list
// lists every runnable Directory tool the caller's token may call, tools/call dispatches through the
// runner (which checks the token's limits), and `find` is answered by the resolver.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode as RpcErrorCode, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Authority } from '../auth/authority.ts';
import { currentGrant } from '../context/request.ts';
import type { DispatchRequest, DispatchResult } from '../dispatch/result.ts';
import type { Directory } from '../directory/directory.ts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { resolutionJson } from './resolver-routes.ts';
import type { DirectoryResolver } from '../resolver/directory-source.ts';
import { describeIssues } from '../validation.ts';
import { decodeCursor, FindTool, FindToolName, listRunnableTools } from './mcp-catalog.ts';

/** What the MCP server needs of an app's services. */
export type McpServices = {
  db: { prisma: PrismaClient };
  directory: Pick<Directory, 'rowMeant'>;
  resolver: Pick<DirectoryResolver, 'resolve'>;
  dispatcher: { dispatch(request: DispatchRequest): Promise<DispatchResult> };
  /** With it, tools/list lists only the tools the caller's token may call. */
  authority?: Pick<Authority, 'allowsTool'>;
};

/** The contract form a tools/call through this door corresponds to. */
export type McpForm = 'MCP_HTTP' | 'MCP_STDIO';

/**
 * Wraps one request handler; the stdio door records each request here (the HTTP door records the
 * whole HTTP exchange instead and passes none).
 */
export type McpHandlerWrap = <T>(request: { method: string; params?: unknown; tool?: string }, run: () => Promise<T>) => Promise<T>;

const FindArgs = z.strictObject({
  query: z.string(),
  minScore: z.number().int().optional(),
  limit: z.number().int().optional(),
  types: z.array(z.string()).optional(),
});

export const serverInfo = { name: 'dirledger', version: '0.1.0' };

/** A fresh MCP server over the app's services (one per stateless HTTP request; one per stdio process). */
export function createMcpServer(services: McpServices, form: McpForm, wrap: McpHandlerWrap = (_r, run) => run()): Server {
  const server = new Server(serverInfo, {
    capabilities: { tools: { listChanged: false } },
    instructions: `Every runnable tool of the Directory is listed; call "${FindToolName}" with any words to find a row by what it does.`,
  });

  server.setRequestHandler(ListToolsRequestSchema, (request) =>
    wrap({ method: request.method, params: request.params }, async () => {
      const cursor = request.params?.cursor;
      const offset = cursor === undefined ? 0 : decodeCursor(cursor);
      if (offset === undefined)
        throw new McpError(RpcErrorCode.InvalidParams, `Invalid cursor: expected a nextCursor from tools/list, got ${JSON.stringify(cursor)}.`);
      const grant = currentGrant();
      const { authority } = services;
      const door = form === 'MCP_HTTP' ? 'MCP' : 'MCP_STDIO';
      const allowed = grant && authority ? (name: string) => authority.allowsTool(grant, door, name) === null : undefined;
      const page = await listRunnableTools(services.db.prisma, services.directory, offset, allowed);
      return { ...page, tools: offset === 0 ? [FindTool, ...page.tools] : page.tools };
    }),
  );

  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const { name, arguments: args = {} } = request.params;
    return wrap({ method: request.method, params: request.params, tool: name }, async (): Promise<CallToolResult> => {
      if (name === FindToolName) return find(services, args);
      const result = await services.dispatcher.dispatch({ tool: name, args, form });
      return toolResult(result);
    });
  });
  return server;
}

function find(services: McpServices, args: Record<string, unknown>): CallToolResult {
  const parsed = FindArgs.safeParse(args);
  if (!parsed.success) {
    return { isError: true, content: [{ type: 'text', text: `BAD_INPUT: Invalid find arguments: ${describeIssues(parsed.error, args).join('; ')}.` }] };
  }
  const { query, ...options } = parsed.data;
  const answer = resolutionJson(services.resolver.resolve(query, options));
  return { content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: answer };
}

/**
 * The text content is the tool's own answer (or the refusal's code and message); structuredContent
 * is the whole DispatchResult, with the action id that names its ledger events.
 */
export function toolResult(result: DispatchResult): CallToolResult {
  const failed = result.outcome === 'ERROR' || result.outcome === 'REFUSED';
  const text = failed
    ? `${result.error?.code ?? result.outcome}: ${result.error?.message ?? 'the call failed'}`
    : result.outcome === 'DRY_RUN'
      ? JSON.stringify(result.requests ?? [])
      : (result.outputText ?? (result.output === undefined ? (result.outputBase64 ?? '') : JSON.stringify(result.output)));
  return {
    content: [{ type: 'text', text }],
    structuredContent: result as unknown as Record<string, unknown>,
    ...(failed ? { isError: true } : {}),
  };
}
