// buildApp(): the doors of src/doors/ around the cores. Routing, authentication and capture come from
// the one route table (src/doors/routes.ts); upgrades go to graphql-ws and the raw WebSocket door.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { WebSocketServer } from 'ws';
import { captureExchange, headerRecord, invocationFromHeaders, useOutboundCapture } from './capture/boundary.ts';
import type { Config } from './config.ts';
import type { Door } from './context/door.ts';
import { runAsCaller } from './context/request.ts';
import type { Database } from './db/client.ts';
import { admitRequest, graphqlDoors } from './doors/authenticate.ts';
import { corsPolicy } from './doors/cors.ts';
import { serveConsole } from './doors/console.ts';
import { graphiqlPage } from './doors/graphiql.ts';
import { createGraphqlYoga, graphqlHttpDoor, graphqlPath } from './doors/graphql-http.ts';
import { useGraphqlWs } from './doors/graphql-ws.ts';
import { errorResponse, graphqlErrorResponse, json } from './doors/respond.ts';
import { doorOfRoute, findRoute, methodNotAllowed, notFound, routeTable, type Route, type RouteRequest } from './doors/routes.ts';
import { upgradeListener } from './doors/upgrade.ts';
import { createWsDoor, type WsDoor } from './doors/ws-door.ts';
import { DomainError } from './errors.ts';
import { healthReporter } from './health.ts';
import { createLogger, type Logger } from './logger.ts';
import { createServices, type ServiceOptions, type Services } from './services.ts';

export type App = {
  services: Services;
  /** Answers one request, exactly as the HTTP server would. */
  fetch(request: Request): Promise<Response>;
  /** Listens; resolves with the URL of the GraphQL endpoint. */
  start(port?: number, host?: string): Promise<{ url: string; port: number }>;
  /** Stops accepting, finishes in-flight work, flushes and closes the database. */
  stop(): Promise<void>;
  /** Requests begun so far (HTTP and WebSocket upgrades) and HTTP requests being answered: what src/idle-trim.ts watches. */
  activity(): { started: number; inFlight: number };
};

export type BuildOptions = { logger?: Logger; db?: Database } & ServiceOptions;

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.LOG_LEVEL, config.secrets);
  const services = await createServices(config, logger, options.db, options.spoolIo ? { spoolIo: options.spoolIo } : {});
  // Every outbound fetch inside an invocation is recorded (the runner switches it off for its own calls).
  const releaseCapture = useOutboundCapture(services, config.S3_ENDPOINT ? [config.S3_ENDPOINT] : []);
  const yoga = createGraphqlYoga(config, services, logger);
  const health = healthReporter(services);
  const cors = corsPolicy(config.CORS_ORIGINS ?? []);
  const table = routeTable({
    health,
    graphql: graphqlHttpDoor(yoga, recordExchange),
    ...(config.GRAPHIQL && { graphiql: graphiqlPage }),
    ...(config.CONSOLE && { console: serveConsole }),
  });
  let inFlight = 0;
  let started = 0;
  // One caller at a time: no request was answered earlier in this turn of the event loop. In-flight requests
  // alone do not tell: callers answered without I/O (the resolver, a Directory listing, a refusal) are each
  // served whole before the next one waiting is read, so 32 of them looked like one and every answer got a
  // blocking durable write of its own (the resolver, 32 callers in another process: before, a write a call,
  // 1,082–1,342 calls/s; now a write per ~10 calls, 801 for 8,000, 30 of them in place, 2,617 calls/s).
  // A lone caller's next request comes in a later turn.
  let answeredThisTurn = false;
  let oneCaller = false;
  const turnEnded = () => {
    answeredThisTurn = false;
  };
  services.spool?.writeInPlaceWhen(() => inFlight <= 1 && oneCaller);
  let idle: (() => void) | undefined;
  let stopping = false;

  /** Finds the request's route, admits its caller, and answers it as that caller. */
  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const found = findRoute(table, request, url);
    if (!found) return notFound(request, url.pathname);
    const { route, match } = found;
    const door = doorOfRoute(route, request);
    if (route.auth === 'open' || !door) return route.handler({ request, url, match, services });
    const admitted = await admitRequest(services, route.auth, door, request, url);
    if ('refused' in admitted) return route.refusal ? route.refusal(request, admitted.refused) : admitted.refused;
    return runAsCaller(admitted.caller, () => answer(route, door, { request: admitted.request, url, match, services }));
  }

  /** Runs a route's handler: its methods checked, its exchange recorded when the route says the app records it. */
  function answer(route: Route, door: Door, at: RouteRequest): Promise<Response> | Response {
    if (route.methods && !route.methods.includes(at.request.method)) return methodNotAllowed(route.methods[0]!);
    return route.recorded === 'boundary' ? recordExchange(door, at.request, null, async () => route.handler(at)) : route.handler(at);
  }

  /** Records one door exchange at the boundary (src/capture/recording.ts decides which GraphQL ones are). */
  async function recordExchange(door: Door, request: Request, body: Buffer | null, handler: () => Promise<Response>): Promise<Response> {
    try {
      // Read once into the record the request IN stores, and the invocation fields from it (Headers.get is not free).
      const headers = headerRecord(request.headers);
      const exchange = {
        door,
        request: { method: request.method, url: request.url, headers, body },
        invocation: invocationFromHeaders(headers),
        clientSignal: request.signal,
      };
      return await captureExchange(services, exchange, handler);
    } catch (error) {
      if (error instanceof DomainError) return graphqlDoors.has(door) ? graphqlErrorResponse(error) : errorResponse(error);
      throw error;
    }
  }

  async function fetch(request: Request): Promise<Response> {
    return cors.preflight(request) ?? cors.apply(request, await answerRequest(request));
  }

  async function answerRequest(request: Request): Promise<Response> {
    if (stopping) return json({ error: { code: 'SHUTTING_DOWN', message: 'The server is stopping.' } }, 503, { 'retry-after': '1', connection: 'close' });
    inFlight++;
    started++;
    oneCaller = !answeredThisTurn;
    try {
      return await withoutSecrets(await route(request), services);
    } catch (error) {
      logger.error({ err: error }, 'unexpected error in an HTTP door');
      return json({ error: { code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.' } }, 500);
    } finally {
      if (!answeredThisTurn) {
        answeredThisTurn = true;
        setImmediate(turnEnded);
      }
      if (--inFlight === 0) idle?.();
    }
  }

  let server: Server | undefined;
  let wsServer: WebSocketServer | undefined;
  let wsDoor: WsDoor | undefined;
  let disposeWs: (() => Promise<void> | void) | undefined;

  async function start(port = config.PORT, host = config.HOST) {
    server = createServer(createServerAdapter((request: Request) => fetch(request)));
    wsServer = new WebSocketServer({ noServer: true, maxPayload: Math.max(config.PAYLOAD_MAX_BYTES, config.BATCH_MAX_BYTES) });
    wsDoor = createWsDoor(services);
    server.on('upgrade', () => started++);
    server.on('upgrade', upgradeListener(services, logger, wsServer, wsDoor, cors));
    disposeWs = useGraphqlWs(services, logger, yoga, wsServer);
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

  return { services, fetch, start, stop, activity: () => ({ started, inFlight }) };
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
