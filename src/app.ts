// buildApp(): the doors (HTTP routes, GraphQL over HTTP/SSE, graphql-ws) around the cores.
import { isUtf8 } from 'node:buffer';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { createServerAdapter } from '@whatwg-node/server';
import { GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Context as WsContext, SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { createYoga, type Plugin } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { Context } from './graphql/context.ts';
import { maskError } from './graphql/errors.ts';
import { documentTooDeep, tooDeepDocument, useInputLimits } from './graphql/input-limits.ts';
import { jsonTextTooDeep, tooDeep, valueTooDeep } from './limits.ts';
import { schema } from './graphql/schema.ts';
import { listDirectory } from './doors/directory-routes.ts';
import { ingestBatch, serveBlob } from './doors/ledger-routes.ts';
import { resolveRoute } from './doors/resolver-routes.ts';
import { mcpPath, mcpRoute } from './doors/mcp-routes.ts';
import { sseDispatch, wantsEventStream } from './doors/sse-door.ts';
import { createWsDoor, wsDoorPath, type WsDoor } from './doors/ws-door.ts';
import { dispatchPath, dispatchRoute, hookRoute, hooksPath, toolRoute, toolsPath } from './doors/dispatch-routes.ts';
import { errorResponse, json } from './doors/respond.ts';
import { captureExchange, invocationFromHeaders, useOutboundCapture } from './capture/boundary.ts';
import type { Door } from './context/door.ts';
import { currentCaller, runAsCaller, type Caller } from './context/request.ts';
import { graphqlDocumentRecorded, graphqlRequestRecorded } from './capture/recording.ts';
import { DomainError } from './errors.ts';
import { createLogger, type Logger } from './logger.ts';
import { createServices, type ServiceOptions, type Services } from './services.ts';
import type { Checked, Grant } from './auth/authority.ts';
import { lapseCode } from './live/lease.ts';
import { admit, credentialOf, credentialOfParams, credentialOfProtocols, noQueryTokenDoors, recordRefusal, refusalResponse, tokenInUrl } from './doors/authenticate.ts';
import { TokenParam } from './directory/forms.ts';
import { hookSignature, verifyHookSignature } from './doors/hook-signature.ts';
import { healthReporter } from './health.ts';

export type App = {
  services: Services;
  /** Answers one request, exactly as the HTTP server would. */
  fetch(request: Request): Promise<Response>;
  /** Listens; resolves with the URL of the GraphQL endpoint. */
  start(port?: number, host?: string): Promise<{ url: string; port: number }>;
  /** Stops accepting, finishes in-flight work, flushes and closes the database. */
  stop(): Promise<void>;
};

export type BuildOptions = { logger?: Logger; db?: Database } & ServiceOptions;

const graphqlPath = '/graphql';

/** GRAPHQL_INTROSPECTION=false: __schema and __type are refused at validation, with their own code. */
const noIntrospection: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(NoSchemaIntrospectionCustomRule);
    return ({ result, setResult }) => {
      if (result.length) setResult(result.map((e) => (/introspection/i.test(e.message) ? Object.assign(e, { extensions: { ...e.extensions, code: 'INTROSPECTION_DISABLED' } }) : e)));
    };
  },
};

function limitCode(code: string) {
  return [(_ctx: unknown, error: GraphQLError) => void Object.assign(error.extensions as object, { code })];
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.LOG_LEVEL, config.secrets);
  const services = await createServices(config, logger, options.db, options.spoolIo ? { spoolIo: options.spoolIo } : {});
  // Every outbound fetch inside an invocation is recorded (the runner switches it off for its own calls).
  const releaseCapture = useOutboundCapture(services, config.S3_ENDPOINT ? [config.S3_ENDPOINT] : []);

  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: graphqlPath,
    logging: false,
    landingPage: false,
    graphiql: config.GRAPHIQL ? { subscriptionsProtocol: 'WS', title: 'dirledger' } : false,
    context: (init: Record<string, unknown>): Context => {
      // graphql-ws keeps its caller on the socket (`extra`); every other operation runs inside its door's.
      const caller = init.extra ? ((init.extra as { caller?: Caller }).caller ?? { door: 'GRAPHQL_WS' }) : (currentCaller() ?? { door: 'GRAPHQL' });
      return { services, caller };
    },
    maskedErrors: { maskError: maskError(logger, (text) => services.redactor.text(text, new Set())) },
    batching: { limit: config.GRAPHQL_MAX_BATCH },
    plugins: [
      useInputLimits(Math.max(config.PAYLOAD_MAX_BYTES, config.BATCH_MAX_BYTES)),
      ...(config.GRAPHQL_INTROSPECTION ? [] : [noIntrospection]),
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

  const health = healthReporter(services);
  let inFlight = 0;
  let idle: (() => void) | undefined;
  let stopping = false;

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === '/healthz') {
      return json(await health());
    }
    if (path === '/') return new Response(null, { status: 302, headers: { location: graphqlPath } });
    if (isGraphiqlPage(request, path)) return yoga.fetch(request, {});
    const door = doorOfRequest(request, path);
    if (!door) return notFound(request, path);
    if (noQueryTokenDoors.has(door) && url.searchParams.has(TokenParam)) {
      const refusal = tokenInUrl(door);
      await recordRefusal(services, refusal, undefined, request);
      return refusalResponse(refusal);
    }
    if (!services.authRequired) return runAsCaller({ door }, () => doors(request, url, path));
    let grant: Grant;
    if (door === 'WEBHOOK' && !credentialOf(request.headers, url) && hookSignature(request.headers)) {
      const signed = await verifyHookSignature(request, services, path);
      if ('refusal' in signed) {
        await recordRefusal(services, signed.refusal, undefined, request);
        return refusalResponse(signed.refusal);
      }
      ({ grant, request } = signed);
    } else {
      const checked = await admit(services, door, credentialOf(request.headers, url), request);
      if (!checked.ok) return refusalResponse(checked.refusal);
      grant = checked.grant;
    }
    if (door === 'INGEST') {
      const refusal = services.authority.requirePower(grant, 'ingest', door);
      if (refusal) {
        await recordRefusal(services, refusal, grant, request);
        return refusalResponse(refusal);
      }
    }
    return runAsCaller({ door, grant }, () => doors(request, url, path));
  }

  /** The doors behind authority, by path. */
  async function doors(request: Request, url: URL, path: string): Promise<Response> {
    if (path === '/ledger/batches') {
      return request.method === 'POST' ? ingestBatch(request, services) : methodNotAllowed('POST');
    }
    const blob = /^\/ledger\/blob\/([^/]+)$/.exec(path);
    if (blob) {
      return request.method === 'GET' || request.method === 'HEAD' ? serveBlob(request, blob[1]!, services) : methodNotAllowed('GET');
    }
    if (path === '/api/directory/resolve') {
      return request.method === 'GET' ? recordExchange('REST', request, null, async () => resolveRoute(request, services)) : methodNotAllowed('GET');
    }
    if (path === '/api/directory') {
      return request.method === 'GET' || request.method === 'HEAD' ? recordExchange('REST', request, null, () => listDirectory(request, services)) : methodNotAllowed('GET');
    }
    if (path === mcpPath) return mcpRoute(request, services);
    if (path === '/api/dispatch' && wantsEventStream(request)) return sseDispatch(request, services);
    if (path === dispatchPath) return dispatchRoute(request, services);
    const tool = toolsPath.exec(path);
    if (tool) return toolRoute(request, services, tool[1]!);
    const hook = hooksPath.exec(path);
    if (hook) return hookRoute(request, services, hook[1]!);
    if (path === graphqlPath || path.startsWith(`${graphqlPath}/`)) return graphqlDoor(request, url);
    return notFound(request, path);
  }

  /** A graphql-ws query or mutation; one that touches more than the Ledger is recorded (door GRAPHQL_WS). */
  async function executeOverWs(args: any): Promise<any> {
    if (!graphqlDocumentRecorded(args.document, args.operationName)) return args.rootValue.execute(args);
    let result: unknown;
    const body = Buffer.from(JSON.stringify({ query: args.query, variables: args.variableValues ?? undefined, operationName: args.operationName ?? undefined }));
    await captureExchange(services, { door: 'GRAPHQL_WS', request: { method: 'EXECUTE', url: 'graphql-ws:execute', headers: {}, body } }, async () => {
      result = await args.rootValue.execute(args);
      return new Response(JSON.stringify(result), { status: 200, headers: { 'content-type': 'application/json' } });
    });
    return result;
  }

  /** Records one door exchange at the boundary (src/capture/recording.ts decides which are). */
  async function recordExchange(door: Door, request: Request, body: Buffer | null, handler: () => Promise<Response>): Promise<Response> {
    try {
      const exchange = { door, request: { method: request.method, url: request.url, headers: request.headers, body }, invocation: invocationFromHeaders(request.headers), clientSignal: request.signal };
      return await captureExchange(services, exchange, handler);
    } catch (error) {
      if (error instanceof DomainError) return errorResponse(error);
      throw error;
    }
  }

  /**
   * GraphQL over HTTP and SSE: an operation that touches more than the Ledger's own records is
   * recorded whole (request IN, answer OUT); a reviewer's Ledger read goes straight to yoga.
   */
  async function graphqlDoor(request: Request, url: URL): Promise<Response> {
    const door: Door = request.headers.get('accept')?.includes('text/event-stream') ? 'GRAPHQL_SSE' : 'GRAPHQL';
    if (request.method !== 'POST') {
      const params = { query: url.searchParams.get('query') ?? undefined, operationName: url.searchParams.get('operationName') ?? undefined };
      return request.method === 'GET' && graphqlRequestRecorded(params) ? recordExchange(door, request, null, async () => whole(await yoga.fetch(request, {}))) : yoga.fetch(request, {});
    }
    const body = Buffer.from(await request.arrayBuffer());
    const forward = async () => yoga.fetch(new Request(request.url, { method: 'POST', headers: request.headers, body: new Uint8Array(body), signal: request.signal }), {});
    // Never decoded with U+FFFD in place of what was sent: refused, the exact bytes on the request IN.
    if (!isUtf8(body)) {
      return recordExchange(door, request, body, async () =>
        json({ errors: [{ message: 'Expected a JSON body in UTF-8, got bytes that are not valid UTF-8.', extensions: { code: 'BAD_INPUT' } }] }, 400),
      );
    }
    if (jsonTextTooDeep(body)) {
      return recordExchange(door, request, body, async () => json({ errors: [{ message: tooDeep('the GraphQL request body').message, extensions: { code: 'BAD_USER_INPUT' } }] }, 400));
    }
    let params: unknown;
    try {
      params = JSON.parse(body.toString('utf8'));
    } catch {
      params = undefined; // yoga answers it (or it is not JSON): recorded, as anything not known to be a Ledger read
    }
    return graphqlRequestRecorded(params) ? recordExchange(door, request, body, async () => whole(await forward())) : forward();
  }

  /**
   * A recorded operation's answer, read whole: it is a query or a mutation (every subscription field reads
   * the Ledger and is not recorded), so over SSE it ends after its result. Yoga's event stream does not
   * pass through the boundary's tee (it never flowed), so the tee gets the same bytes as one body.
   */
  async function whole(answer: Response): Promise<Response> {
    return new Response(answer.body ? await answer.arrayBuffer() : null, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
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

  const headersOf = (request: IncomingMessage) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value);
    return headers;
  };

  /** A WebSocket upgrade's token: connection params, else the Authorization header, else a `dirledger.token.` subprotocol. Null when authority is off. */
  async function admitUpgrade(request: IncomingMessage, url: URL, door: Door, params?: Readonly<Record<string, unknown>>, token?: string): Promise<Checked | null> {
    if (!services.authRequired) return null;
    const headers = headersOf(request);
    const presented = token ?? credentialOfParams(params) ?? credentialOf(headers) ?? credentialOfProtocols(request.headers['sec-websocket-protocol']);
    return admit(services, door, presented, { method: 'GET', url: url.href, headers });
  }

  /** Answers an upgrade that carried ?token= with 400 TOKEN_IN_URL (recorded) and true; false when it did not. */
  function refuseUrlToken(request: IncomingMessage, url: URL, door: Door, socket: import('node:stream').Duplex): boolean {
    if (!url.searchParams.has(TokenParam)) return false;
    const refusal = tokenInUrl(door);
    const body = JSON.stringify({ error: { code: 'TOKEN_IN_URL', message: refusal.message } });
    // Recorded before it is answered, like every refusal.
    void recordRefusal(services, refusal, undefined, { method: 'GET', url: url.href, headers: headersOf(request) })
      .catch((error: unknown) => logger.error({ err: error }, 'could not record a TOKEN_IN_URL refusal'))
      .finally(() => socket.end(`HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`));
    return true;
  }

  let server: Server | undefined;
  let wsServer: WebSocketServer | undefined;
  let wsDoor: WsDoor | undefined;
  let disposeWs: (() => Promise<void> | void) | undefined;

  async function start(port = config.PORT, host = config.HOST) {
    const adapter = createServerAdapter((request: Request) => fetch(request));
    server = createServer(adapter);
    // One upgrade listener routes by path: graphql-ws on /graphql, the raw JSON door on /api/ws.
    wsServer = new WebSocketServer({ noServer: true, maxPayload: Math.max(config.PAYLOAD_MAX_BYTES, config.BATCH_MAX_BYTES) });
    wsDoor = createWsDoor(services);
    server.on('upgrade', (request, socket, head) => {
      const upgradeUrl = new URL(request.url ?? '/', 'http://localhost');
      // graphql-ws checks its token in connection_init (or the upgrade's Authorization header), below.
      if (upgradeUrl.pathname === graphqlPath) {
        if (!refuseUrlToken(request, upgradeUrl, 'GRAPHQL_WS', socket)) wsServer!.handleUpgrade(request, socket, head, (ws) => wsServer!.emit('connection', ws, request));
      } else if (upgradeUrl.pathname === wsDoorPath) {
        if (refuseUrlToken(request, upgradeUrl, 'WEBSOCKET', socket)) return;
        // No token at the upgrade (a browser): the first message must carry it.
        if (services.authRequired && !credentialOf(headersOf(request)) && !credentialOfProtocols(request.headers['sec-websocket-protocol'])) {
          return wsDoor!.handleUpgrade(request, socket, head, undefined, (token) => admitUpgrade(request, upgradeUrl, 'WEBSOCKET', undefined, token ?? '') as Promise<Checked>);
        }
        void admitUpgrade(request, upgradeUrl, 'WEBSOCKET').then(
          (checked) => {
            if (checked === null || checked.ok) return wsDoor!.handleUpgrade(request, socket, head, checked?.grant);
            const status = checked.refusal.status === 429 ? '429 Too Many Requests' : checked.refusal.status === 403 ? '403 Forbidden' : '401 Unauthorized';
            socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
          },
          (error) => {
            logger.error({ err: error }, 'checking a WebSocket upgrade failed');
            socket.destroy();
          },
        );
      } else socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    });
    const ws = useServer(
      {
        execute: (args: any) => runAsCaller(args.contextValue.caller, () => executeOverWs(args)),
        subscribe: (args: any) => runAsCaller(args.contextValue.caller, () => args.rootValue.subscribe(args)),
        onConnect: async (ctx) => {
          const checked = await admitUpgrade(ctx.extra.request, new URL(ctx.extra.request.url ?? '/', 'http://localhost'), 'GRAPHQL_WS', ctx.connectionParams);
          if (checked === null) return true;
          if (!checked.ok) return false;
          (ctx.extra as { caller?: Caller }).caller = { door: 'GRAPHQL_WS', grant: checked.grant };
          return true;
        },
        // Whatever goes wrong with one subscribe is an `error` message for its id; the socket stays open.
        onSubscribe: (ctx, _id, params) => subscribeOne(ctx, params).catch((error: unknown) => [subscribeError(error)]),
      },
      wsServer,
    );
    async function subscribeOne(ctx: WsContext<Record<string, unknown>, Extra>, params: SubscribePayload) {
      const grant = (ctx.extra as { caller?: Caller }).caller?.grant;
      // The socket's token was checked at connection_init; it may have expired or been revoked since.
      const lapsed = grant && services.authority.recheck(grant, 'GRAPHQL_WS');
      if (lapsed) {
        await recordRefusal(services, lapsed, grant);
        return [new GraphQLError(lapsed.message, { extensions: { code: lapseCode(lapsed) } })];
      }
      const limited = grant && (await services.authority.rate(grant, 'GRAPHQL_WS'));
      if (limited) {
        await recordRefusal(services, limited, grant);
        return [new GraphQLError(limited.message, { extensions: { code: 'RATE_LIMITED', retryAfterSeconds: limited.retryAfterSeconds } })];
      }
      if (documentTooDeep(params.query)) return [new GraphQLError(tooDeepDocument, { extensions: { code: 'BAD_USER_INPUT' } })];
      if (valueTooDeep(params.variables)) return [new GraphQLError(tooDeep('the variables').message, { extensions: { code: 'BAD_USER_INPUT' } })];
      const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
        ...ctx,
        req: ctx.extra.request,
        socket: ctx.extra.socket,
        params,
      });
      const args = {
        schema,
        query: params.query,
        operationName: params.operationName,
        document: parse(params.query),
        variableValues: params.variables,
        contextValue: await contextFactory(),
        rootValue: { execute, subscribe },
      };
      const errors = validate(args.schema, args.document);
      if (errors.length) return errors.map((e: GraphQLError) => subscribeError(e, 'GRAPHQL_VALIDATION_FAILED'));
      return args;
    }
    function subscribeError(error: unknown, code = 'BAD_USER_INPUT'): GraphQLError {
      if (error instanceof GraphQLError && !error.originalError) {
        // A syntax error, a validation error, or a limit refused at parse (its code set by the limit).
        const named = (error.extensions?.code as string | undefined) ?? (/^Syntax Error/.test(error.message) ? 'GRAPHQL_PARSE_FAILED' : code);
        return new GraphQLError(error.message, { ...(error.nodes && { nodes: error.nodes }), extensions: { ...error.extensions, code: named } });
      }
      logger.error({ err: error }, 'unexpected error subscribing over graphql-ws');
      return new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    }
    disposeWs = () => ws.dispose();
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    const shownHost = host.includes(':') ? `[${host}]` : host;
    if (!config.PUBLIC_URL) services.publicUrl = `http://${shownHost}:${address.port}`;
    // The CLI on this data folder uses this server instead of opening the database a second time.
    services.db.folderLock?.setUrl(`http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : shownHost}:${address.port}`);
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
  if (response.status < 400 || !response.headers.get('content-type')?.includes('json')) return response;
  const text = await response.text();
  const redacted = services.redactor.text(text, new Set());
  if (redacted === text) return new Response(text, { status: response.status, headers: response.headers });
  // The body changed length: the old content-length (the adapter's Response sets one) must not go with it.
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(redacted, { status: response.status, headers });
}

/** Which door a request comes through, or null for no route. */
function doorOfRequest(request: Request, path: string): Door | null {
  if (path === '/ledger/batches') return 'INGEST';
  if (path.startsWith('/ledger/blob/')) return 'BLOB';
  if (path === '/api/directory' || path === '/api/directory/resolve') return 'REST';
  if (path === mcpPath) return 'MCP';
  if (path === dispatchPath) return wantsEventStream(request) ? 'SSE' : 'DISPATCH';
  if (toolsPath.test(path)) return request.method === 'GET' ? 'URL' : 'REST';
  if (hooksPath.test(path)) return 'WEBHOOK';
  if (path === graphqlPath || path.startsWith(`${graphqlPath}/`)) return request.headers.get('accept')?.includes('text/event-stream') ? 'GRAPHQL_SSE' : 'GRAPHQL';
  return null;
}

/** GraphiQL's page (a browser GET asking for HTML, with no query) is open; its operations are not. */
function isGraphiqlPage(request: Request, path: string): boolean {
  return path === graphqlPath && request.method === 'GET' && Boolean(request.headers.get('accept')?.includes('text/html')) && !new URL(request.url).searchParams.has('query');
}

function notFound(request: Request, path: string): Response {
  return json({ error: { code: 'NOT_FOUND', message: `No route for ${request.method} ${path}.` } }, 404);
}

function methodNotAllowed(allowed: string): Response {
  return json({ error: { code: 'METHOD_NOT_ALLOWED', message: `Expected ${allowed}.` } }, 405, { allow: allowed });
}
