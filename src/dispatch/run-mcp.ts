// The runner's MCP client: one call over streamable HTTP or a child's stdio. Its own module, loaded
// on the first MCP step (src/dispatch/send.ts), so the SDK (with zod v3, ajv and cross-spawn under
// it) is not in memory for a server that never calls an MCP tool.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RecordingStdioTransport } from './mcp-stdio.ts';
import { TooLarge, type Limits, type Sent, type StepAnswer } from './runners.ts';

/** An MCP server is an http(s) URL (streamable HTTP), or a command line rendered into `argv` like a CLI contract (stdio). */
export async function runMcp(sent: Extract<Sent, { server: string }>, { signal, maxBytes, onStdout }: Limits): Promise<StepAnswer> {
  const client = new Client({ name: 'dirledger-dispatch', version: '0.1.0' });
  const stdio = sent.argv && new RecordingStdioTransport(sent.argv, maxBytes, onStdout);
  const transport = stdio ?? new StreamableHTTPClientTransport(new URL(sent.server), { requestInit: { headers: sent.headers } });
  const abort = () => void client.close().catch(() => {});
  signal.addEventListener('abort', abort, { once: true });
  try {
    await client.connect(transport, { signal });
    const result = await client.callTool({ name: sent.tool, arguments: sent.arguments }, undefined, { signal, timeout: 2_147_483_647 });
    const text = JSON.stringify(result);
    const bytes = Buffer.from(text);
    if (bytes.length > maxBytes) throw new TooLarge(bytes.length);
    const value = answerOf(result);
    const valueBytes = Buffer.from(JSON.stringify(value ?? null));
    await client.close().catch(() => {}); // the process exits: its wire is whole
    return {
      status: 0,
      ok: !result.isError,
      bytes: valueBytes,
      value,
      contentType: 'application/json',
      meta: { mcpResult: text.length > 65_536 ? '(large)' : result },
      ...(stdio && { wire: stdio.wire }),
    };
  } catch (error) {
    await client.close().catch(() => {});
    if (stdio && error !== null && typeof error === 'object') Object.assign(error, { wire: stdio.wire });
    throw error;
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

/** What an MCP tool answered: its structured content, else the JSON of a single text part, else the parts. */
function answerOf(result: Record<string, unknown>): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content as { type: string; text?: string }[] | undefined;
  if (content?.length === 1 && content[0]!.type === 'text') {
    try {
      return JSON.parse(content[0]!.text!);
    } catch {
      return content[0]!.text;
    }
  }
  return content ?? result;
}
