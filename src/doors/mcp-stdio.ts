// `dirledger mcp`: MCP over stdio, two ways.
// - Proxy (with --url or DIRLEDGER_URL): every JSON-RPC message is relayed to a running server's
//   /mcp, so that server's runner makes the call and its ledger records each request and answer.
// - In process (otherwise): the app's cores on the configured database (DATABASE_URL, else PGlite in
//   DATA_DIR, which only one process may hold), no HTTP listener; each tools/list and tools/call is
//   recorded at the boundary as door MCP_STDIO, and the writer is flushed when stdin closes.
// Either way the token (--token, DIRLEDGER_TOKEN or the config file) is the credential: relayed as
// Authorization, or verified here at start and every call runs under its grant.
// stdout carries only the protocol; logs go to stderr. A message is one line, held to the limits of the
// HTTP door (mcp-limits.ts: PAYLOAD_MAX_BYTES, JSON depth, UTF-8, the message's shape and params) and,
// in process, the token's rate: what breaks one is answered with a JSON-RPC error naming the limit
// (`error.data.limit`), a rate refusal is recorded, and the session goes on.
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import type { Grant } from '../auth/verdict.ts';
import type { Refusal } from '../auth/verdict.ts';
import { runAsCaller } from '../context/request.ts';
import type { Config } from '../config.ts';
import { createLogger } from '../logger.ts';
import { isPlainName } from '../limits.ts';
import type { McpCatalog } from './mcp-catalog.ts';
import { RpcCode, rpcErrorAnswer } from './mcp-limits.ts';
import type { McpHandlerWrap } from './mcp-server.ts';
import { LimitedStdioTransport } from './mcp-stdio-transport.ts';

/** The server's refusal of the relayed token (its 401 or 403): the session ends, and the CLI exits 4. */
export type RelayRefusal = { status: number; error?: { code?: string; message?: string } };

/** The refusal a relayed request's failure is, when the server refused its credential. */
function refusalOf(error: unknown): RelayRefusal | undefined {
  if (!(error instanceof StreamableHTTPError) || (error.code !== 401 && error.code !== 403)) return undefined;
  const body = /Error POSTing to endpoint: (.*)$/s.exec(error.message)?.[1];
  try {
    return { status: error.code, error: (JSON.parse(body ?? '') as { error?: RelayRefusal['error'] }).error };
  } catch {
    return { status: error.code };
  }
}

/** A transport's or the protocol's error, on stderr (stdout carries only the protocol). */
const printError = (error: Error): void => void process.stderr.write(`dirledger mcp: ${error.message}\n`);

/** Counts requests in flight, so closing stdin (`echo … | dirledger mcp`) still gets every answer out. */
class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];
  start(): void {
    this.count++;
  }
  end(): void {
    if (--this.count === 0) for (const w of this.waiters.splice(0)) w();
  }
  idle(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** Closes once stdin has ended (or SIGTERM/SIGINT arrived), every line read is handled, and nothing is in flight. */
function onInputEnd(transport: LimitedStdioTransport, inFlight: InFlight, close: () => Promise<void>): void {
  let closing = false;
  const finish = () => {
    if (closing) return;
    closing = true;
    // A message passed on starts its handler a turn later: wait that turn before counting what is in flight.
    void transport
      .settled()
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => inFlight.idle())
      .then(close);
  };
  process.stdin.once('end', finish);
  process.once('SIGTERM', finish);
  process.once('SIGINT', finish);
}

/**
 * Relays stdio to `<url>/mcp` until stdin closes, sending the token as `authorization: Bearer …`.
 * When the server refuses the token (401, 403) the request is answered with its message, the
 * session ends and the refusal is returned (for the CLI to print and exit 4), as in process.
 */
export async function proxyStdio(url: string, token: string | undefined, maxBytes: number, catalog?: McpCatalog): Promise<RelayRefusal | undefined> {
  const endpoint = new URL('/mcp', url);
  if (catalog) endpoint.searchParams.set('catalog', catalog);
  const local = new LimitedStdioTransport({ maxBytes });
  let refused: RelayRefusal | undefined;
  const headers = { 'x-dirledger-caller': 'dirledger mcp', ...(token && { authorization: `Bearer ${token}` }) };
  const remote = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } });
  const done = new Promise<void>((resolve) => {
    local.onclose = () => resolve();
  });
  const inFlight = new InFlight();
  const pending = new Set<string | number>();
  local.onmessage = (message: JSONRPCMessage) => {
    if ('id' in message && 'method' in message) {
      pending.add(message.id);
      inFlight.start();
    }
    remote.send(message).catch((error: Error) => {
      const refusal = refusalOf(error);
      const isRequest = 'id' in message && 'method' in message;
      if (refusal) {
        const told = `${refusal.error?.code ?? `HTTP ${refusal.status}`}: ${refusal.error?.message ?? 'the server refused the token'}`;
        if (isRequest) void answered(message.id, rpcErrorAnswer(message.id, RpcCode.REFUSED, told) as JSONRPCMessage);
        if (!refused) {
          refused = refusal;
          void inFlight.idle().then(() => local.close());
        }
        return;
      }
      process.stderr.write(`dirledger mcp: ${endpoint.href}: ${error.message}\n`);
      // A request that cannot be relayed is answered, so the client is not left waiting.
      if (isRequest)
        void answered(message.id, rpcErrorAnswer(message.id, RpcCode.INTERNAL_ERROR, `Cannot reach ${endpoint.href}: ${error.message}`) as JSONRPCMessage);
    });
  };
  const answered = async (id: string | number, message: JSONRPCMessage) => {
    await local.send(message);
    if (pending.delete(id)) inFlight.end();
  };
  remote.onmessage = (message: JSONRPCMessage) => {
    if ('id' in message && message.id !== undefined && !('method' in message)) void answered(message.id, message);
    else void local.send(message);
  };
  remote.onerror = printError;
  local.onerror = printError;
  await remote.start();
  await local.start();
  onInputEnd(local, inFlight, () => local.close());
  await done;
  await remote.close();
  return refused;
}

/**
 * Serves MCP over stdio from this process's own cores until stdin closes. The token is verified for
 * door MCP_STDIO first; a refusal is recorded and returned (for the CLI to print) before serving anything.
 */
export async function serveStdio(config: Config, token?: string, catalog: McpCatalog = config.MCP_CATALOG): Promise<Refusal | undefined> {
  const logger = createLogger(config.LOG_LEVEL, config.secrets, 2);
  // Loaded here, so relaying never loads the cores.
  const { buildApp } = await import('../app.ts');
  const { captureCall, jsonAnswer } = await import('../capture/boundary.ts');
  const { createMcpServer } = await import('./mcp-server.ts');
  const app = await buildApp(config, { logger });
  const { services } = app;
  let grant: Grant | undefined;
  if (services.authRequired) {
    const checked = services.authority.authenticate(token, 'MCP_STDIO');
    if (!checked.ok) {
      await services.authority.record(checked.refusal, { actionId: randomUUID(), method: 'MCP', url: 'stdio:dirledger mcp' });
      await app.stop();
      return checked.refusal;
    }
    grant = checked.grant;
  }
  const inFlight = new InFlight();
  // A tool name no column can hold is not put on the events: the runner refuses it (BAD_INPUT), as on the HTTP door.
  const wrap: McpHandlerWrap = (request, run) => {
    inFlight.start();
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: request.method, params: request.params ?? {} }));
    return runAsCaller({ door: 'MCP_STDIO', ...(grant && { grant }) }, () =>
      captureCall(
        services,
        {
          door: 'MCP_STDIO',
          request: { method: 'MCP', url: 'stdio:dirledger mcp', headers: {}, body },
          ...(request.tool && isPlainName(request.tool) ? { tool: request.tool } : {}),
        },
        run,
        jsonAnswer,
      ),
    ).finally(() => inFlight.end());
  };
  const server = createMcpServer(services, 'MCP_STDIO', wrap, catalog);
  server.onerror = printError;
  const { recordRefusal } = await import('./authenticate.ts');
  const transport = new LimitedStdioTransport({
    maxBytes: config.PAYLOAD_MAX_BYTES,
    // Every message counts against the token's rate, as every request does on the HTTP door.
    admit: async () => {
      const refusal = grant ? await services.authority.rate(grant, 'MCP_STDIO') : null;
      if (!refusal) return undefined;
      await recordRefusal(services, refusal, grant);
      return { id: null, code: RpcCode.REFUSED, message: refusal.message, data: { limit: 'rate', retryAfterSeconds: refusal.retryAfterSeconds } };
    },
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  // The answer is written when the handler returns; give it that turn before closing.
  onInputEnd(transport, inFlight, () => new Promise((resolve) => setImmediate(() => void server.close().then(resolve))));
  await closed;
  await app.stop();
  return undefined;
}
