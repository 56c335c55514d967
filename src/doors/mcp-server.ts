// The MCP server both MCP doors run (streamable HTTP at /mcp, stdio as `dirledger mcp`): tools/list
// lists every runnable Directory tool the caller's token may call, tools/call dispatches through the
// runner (which checks the token's limits), and `find` is answered by the resolver.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Authority } from '../auth/authority.ts';
import { currentGrant } from '../context/request.ts';
import type { DispatchRequest, DispatchResult } from '../dispatch/result.ts';
import type { Directory } from '../directory/directory.ts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { resolutionJson } from './resolver-routes.ts';
import type { DirectoryResolver } from '../resolver/directory-source.ts';
import { describeIssues } from '../validation.ts';
import {
  CallTool,
  CallToolName,
  decodeCursor,
  FindTool,
  FindToolName,
  listRunnableTools,
  NamesResource,
  runnableToolNames,
  type McpCatalog,
} from './mcp-catalog.ts';
import { RpcCode, RpcError } from './mcp-limits.ts';

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

const CallArgs = z.strictObject({
  name: z.string(),
  args: z.record(z.string(), z.unknown()).optional(),
  dryRun: z.boolean().optional(),
});

const FindArgs = z.strictObject({
  query: z.string(),
  minScore: z.number().int().optional(),
  limit: z.number().int().optional(),
  types: z.array(z.string()).optional(),
});

export const serverInfo = { name: 'dirledger', version: '0.1.0' };

const instructions: Record<McpCatalog, string> = {
  tools: `Every runnable tool of the Directory is listed; call "${FindToolName}" with any words to find a row by what it does.`,
  names: `Two tools: "${FindToolName}" finds Directory rows from any words, "${CallToolName}" runs one by name. Every runnable name is in the resource ${NamesResource.uri}.`,
};

/**
 * A fresh MCP server over the app's services (one per stateless HTTP request; one per stdio process).
 * `catalog`: `tools` lists every runnable tool with its schema; `names` lists only find and call,
 * with the runnable names (names alone) as a resource.
 */
export function createMcpServer(services: McpServices, form: McpForm, wrap: McpHandlerWrap = (_r, run) => run(), catalog: McpCatalog = 'tools'): Server {
  const server = new Server(serverInfo, {
    capabilities: { tools: { listChanged: false }, ...(catalog === 'names' && { resources: { listChanged: false } }) },
    instructions: instructions[catalog],
  });
  const allowed = () => {
    const grant = currentGrant();
    const { authority } = services;
    const door = form === 'MCP_HTTP' ? 'MCP' : 'MCP_STDIO';
    return grant && authority ? (name: string) => authority.allowsTool(grant, door, name) === null : undefined;
  };

  server.setRequestHandler(ListToolsRequestSchema, (request) =>
    wrap({ method: request.method, params: request.params }, async () => {
      const cursor = request.params?.cursor;
      const offset = cursor === undefined ? 0 : decodeCursor(cursor);
      if (offset === undefined)
        throw new RpcError(RpcCode.INVALID_PARAMS, `Invalid cursor: expected a nextCursor from tools/list, got ${JSON.stringify(cursor)}.`);
      if (catalog === 'names') return { tools: offset === 0 ? [FindTool, CallTool] : [] };
      const page = await listRunnableTools(services.db.prisma, services.directory, offset, allowed());
      return { ...page, tools: offset === 0 ? [FindTool, ...page.tools] : page.tools };
    }),
  );

  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const { name, arguments: args = {} } = request.params;
    const called = catalog === 'names' && name === CallToolName ? CallArgs.safeParse(args) : undefined;
    const tool = called?.success ? called.data.name : name;
    return wrap({ method: request.method, params: request.params, tool }, async (): Promise<CallToolResult> => {
      if (name === FindToolName) return find(services, args);
      if (called && !called.success)
        return { isError: true, content: [{ type: 'text', text: `BAD_INPUT: Invalid call arguments: ${describeIssues(called.error, args).join('; ')}.` }] };
      const call = called?.success ? { tool, args: called.data.args ?? {}, ...(called.data.dryRun && { dryRun: true }) } : { tool, args };
      const result = await services.dispatcher.dispatch({ ...call, form });
      // An unknown tool is a protocol error (MCP spec, tools: error handling), not a tool result.
      if (result.outcome === 'REFUSED' && result.error?.code === 'TOOL_NOT_FOUND')
        throw new RpcError(RpcCode.INVALID_PARAMS, `Unknown tool: ${result.error.message}`);
      return toolResult(result);
    });
  });

  if (catalog === 'names') {
    server.setRequestHandler(ListResourcesRequestSchema, (request) =>
      wrap({ method: request.method, params: request.params }, async () => ({ resources: [NamesResource] })),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (request) =>
      wrap({ method: request.method, params: request.params }, async () => {
        if (request.params.uri !== NamesResource.uri)
          throw new RpcError(RpcCode.RESOURCE_NOT_FOUND, `Resource not found: expected ${NamesResource.uri}, got ${JSON.stringify(request.params.uri)}.`, {
            uri: request.params.uri,
          });
        const names = await runnableToolNames(services.db.prisma, services.directory, allowed());
        return { contents: [{ uri: NamesResource.uri, mimeType: NamesResource.mimeType, text: names.map((n) => `${n}\n`).join('') }] };
      }),
    );
  }
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
