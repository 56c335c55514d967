// A real MCP server (the official SDK over streamable HTTP) for the runner's MCP contracts: `add`
// answers at once; `slow` says it started (a notification on the call's event stream), then answers
// {slept: ms} after `ms`; `fail` answers with isError; with `secret`, the notification carries it
// (for redaction tests). `arrived` is called the moment a request's head arrives (it may look at the
// world then), and what it returns gets the request's body once read, before the request is handled.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export type McpUpstream = { url: string; close(): Promise<void> };

export type Arrival = (method: string) => (body: string) => Promise<void> | void;

export async function startMcpUpstream(secret = '', arrived?: Arrival): Promise<McpUpstream> {
  const server = createServer(async (req, res) => {
    const withBody = arrived?.(req.method!);
    const mcp = new McpServer({ name: 'test-upstream', version: '1.0.0' }, { capabilities: { logging: {} } });
    mcp.registerTool('slow', { inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', data: `started, sleeping ${ms} ms${secret && ` with ${secret}`}` },
      });
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text: JSON.stringify({ slept: ms }) }] };
    });
    mcp.registerTool('fail', { inputSchema: {} }, async () => ({ isError: true, content: [{ type: 'text', text: 'the tool could not do it' }] }));
    mcp.registerTool('add', { inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } }, async ({ a, b }) => ({
      content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }],
      structuredContent: { sum: a + b },
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    await withBody?.(Buffer.concat(chunks).toString());
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
