// buildApp(): the doors (HTTP routes, GraphQL over HTTP/SSE, graphql-ws) around the cores.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { createServerAdapter } from '@whatwg-node/server';
import type { GraphQLError } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { Context } from './graphql/context.ts';
import { maskError } from './graphql/errors.ts';
import { schema } from './graphql/schema.ts';
import { listDirectory } from './http/directory-routes.ts';
import { ingestBatch, serveBlob } from './http/ledger-routes.ts';
import { resolveRoute } from './http/resolver-routes.ts';
import { mcpPath, mcpRoute } from './http/mcp-routes.ts';
import { sseDispatch, wantsEventStream } from './http/sse-door.ts';
import { createWsDoor, wsDoorPath, type WsDoor } from './http/ws-door.ts';
import { dispatchPath, dispatchRoute, hookRoute, hooksPath, toolRoute, toolsPath } from './http/dispatch-routes.ts';
import { json } from './http/respond.ts';
import { useOutboundCapture } from './capture/boundary.ts';
import { createLogger, type Logger } from './logger.ts';
import { anonymousCaller, type CallerDoor } from './live/caller.ts';
import { createServices, type Services } from './services.ts';

export type App = {
  services: Services;
  /** Answers one request, exactly as the HTTP server would. */
  fetch(request: Request): Promise<Response>;
  /** Listens; resolves with the URL of the GraphQL endpoint. */
  start(port?: number, host?: string): Promise<{ url: string; port: number }>;
  /** Stops accepting, finishes in-flight work, flushes and closes the database. */
  stop(): Promise<void>;
};

export type BuildOptions = { logger?: Logger; db?: Database };

const graphqlPath = '/graphql';

function limitCode(code: string) {
  return [(_ctx: unknown, error: GraphQLError) => void Object.assign(error.extensions as object, { code })];
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.LOG_LEVEL, config.secrets);
  const services = await createServices(config, logger, options.db);
  // Every outbound fetch inside an invocation is recorded (the runner switches it off for its own calls).
  const releaseCapture = useOutboundCapture(services, config.S3_ENDPOINT ? [config.S3_ENDPOINT] : []);

  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: graphqlPath,
    logging: false,
    landingPage: false,
    graphiql: config.GRAPHIQL ? { subscriptionsProtocol: 'WS', title: 'dirledger' } : false,
    context: (init: Record<string, unknown>): Context => ({ services, caller: anonymousCaller(doorOf(init)) }),
    maskedErrors: { maskError: maskError(logger, (text) => services.redactor.text(text, new Set())) },
    plugins: [
      EnvelopArmorPlugin({
        maxDepth: { n: config.GRAPHQL_MAX_DEPTH, onReject: limitCode('DEPTH_LIMIT_EXCEEDED') },
        costLimit: { maxCost: config.GRAPHQL_MAX_COST, onReject: limitCode('COST_LIMIT_EXCEEDED') },
        maxAliases: { n: config.GRAPHQL_MAX_ALIASES, onReject: limitCode('ALIAS_LIMIT_EXCEEDED') },
        maxTokens: { n: config.GRAPHQL_MAX_TOKENS, onReject: limitCode('TOKEN_LIMIT_EXCEEDED') },
        maxDirectives: { n: 50, onReject: limitCode('DIRECTIVE_LIMIT_EXCEEDED') },
        blockFieldSuggestion: { enabled: false },
      }),
    ],
  });

  let inFlight = 0;
  let idle: (() => void) | undefined;
  let stopping = false;

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === '/healthz') {
      return json({ ok: true, database: services.db.kind });
    }
    if (path === '/ledger/batches') {
      return request.method === 'POST' ? ingestBatch(request, services) : methodNotAllowed('POST');
    }
    const blob = /^\/ledger\/blob\/([^/]+)$/.exec(path);
    if (blob) {
      return request.method === 'GET' || request.method === 'HEAD' ? serveBlob(request, blob[1]!, services) : methodNotAllowed('GET');
    }
    if (path === '/api/directory/resolve') {
      return request.method === 'GET' ? resolveRoute(request, services) : methodNotAllowed('GET');
    }
    if (path === '/api/directory') {
      return request.method === 'GET' || request.method === 'HEAD' ? listDirectory(request, services) : methodNotAllowed('GET');
    }
    if (path === mcpPath) return mcpRoute(request, services);
    if (path === '/api/dispatch' && wantsEventStream(request)) return sseDispatch(request, services);
    if (path === dispatchPath) return dispatchRoute(request, services);
    const tool = toolsPath.exec(path);
    if (tool) return toolRoute(request, services, tool[1]!);
    const hook = hooksPath.exec(path);
    if (hook) return hookRoute(request, services, hook[1]!);
    if (path === graphqlPath || path.startsWith(`${graphqlPath}/`)) return yoga.fetch(request, {});
    if (path === '/') return new Response(null, { status: 302, headers: { location: graphqlPath } });
    return json({ error: { code: 'NOT_FOUND', message: `No route for ${request.method} ${path}.` } }, 404);
  }

  async function fetch(request: Request): Promise<Response> {
    if (stopping) return json({ error: { code: 'SHUTTING_DOWN', message: 'The server is stopping.' } }, 503, { 'retry-after': '1', connection: 'close' });
    inFlight++;
    try {
      return await withoutSecrets(await route(request), services);
    } catch (error) {
      logger.error({ err: error }, 'unexpected error in an HTTP door');
      return json({ error: { code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.' } }, 500);
    } finally {
      if (--inFlight === 0) idle?.();
    }
  }

  let server: Server | undefined;
  let wsServer: WebSocketServer | undefined;
  let wsDoor: WsDoor | undefined;
  let disposeWs: (() => Promise<void> | void) | undefined;

  async function start(port = config.PORT, host = config.HOST) {
    const adapter = createServerAdapter((request: Request) => fetch(request));
    server = createServer(adapter);
    // One upgrade listener routes by path: graphql-ws on /graphql, the raw JSON door on /api/ws.
    wsServer = new WebSocketServer({ noServer: true });
    wsDoor = createWsDoor(services);
    server.on('upgrade', (request, socket, head) => {
      const upgradePath = new URL(request.url ?? '/', 'http://localhost').pathname;
      if (upgradePath === graphqlPath) wsServer!.handleUpgrade(request, socket, head, (ws) => wsServer!.emit('connection', ws, request));
      else if (upgradePath === wsDoorPath) wsDoor!.handleUpgrade(request, socket, head);
      else socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    });
    const ws = useServer(
      {
        execute: (args: any) => args.rootValue.execute(args),
        subscribe: (args: any) => args.rootValue.subscribe(args),
        onSubscribe: async (ctx, _id, params) => {
          const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
            ...ctx,
            req: ctx.extra.request,
            socket: ctx.extra.socket,
            params,
          });
          const args = {
            schema,
            operationName: params.operationName,
            document: parse(params.query),
            variableValues: params.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          };
          const errors = validate(args.schema, args.document);
          if (errors.length) return errors;
          return args;
        },
      },
      wsServer,
    );
    disposeWs = () => ws.dispose();
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    const shownHost = host.includes(':') ? `[${host}]` : host;
    if (!config.PUBLIC_URL) services.publicUrl = `http://${shownHost}:${address.port}`;
    return { url: `http://${shownHost}:${address.port}${graphqlPath}`, port: address.port };
  }

  async function stop() {
    if (stopping) return;
    stopping = true;
    const closed = server ? new Promise<void>((resolve) => server!.close(() => resolve())) : Promise.resolve();
    await disposeWs?.();
    wsServer?.close();
    await wsDoor?.close();
    // Connections finish their current exchange; each is closed as soon as it goes idle.
    const sweep = setInterval(() => server?.closeIdleConnections(), 25);
    server?.closeIdleConnections();
    await Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, config.SHUTDOWN_GRACE_MS).unref())]);
    clearInterval(sweep);
    server?.closeAllConnections();
    await closed;
    if (inFlight > 0) {
      await Promise.race([
        new Promise<void>((resolve) => (idle = resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, config.SHUTDOWN_GRACE_MS).unref()),
      ]);
    }
    // The background writer is flushed before the database closes; what it cannot write in the grace is counted.
    await services.writer.stop(config.SHUTDOWN_GRACE_MS);
    await releaseCapture();
    await services.close();
    await services.db.close();
  }

  return { services, fetch, start, stop };
}

/** An error body may quote what arrived; no registered secret value leaves in it. */
async function withoutSecrets(response: Response, services: Services): Promise<Response> {
  if (response.status < 400 || services.redactor.size === 0 || !response.headers.get('content-type')?.includes('json')) return response;
  const text = await response.text();
  return new Response(services.redactor.text(text, new Set()), { status: response.status, headers: response.headers });
}

/** Which GraphQL transport an operation came through: graphql-ws passes its socket context (`extra`). */
function doorOf(init: Record<string, unknown>): CallerDoor {
  if (init.extra) return 'WS';
  const request = init.request as Request | undefined;
  return request?.headers.get('accept')?.includes('text/event-stream') ? 'SSE' : 'HTTP';
}

function methodNotAllowed(allowed: string): Response {
  return json({ error: { code: 'METHOD_NOT_ALLOWED', message: `Expected ${allowed}.` } }, 405, { allow: allowed });
}
