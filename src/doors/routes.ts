// The one route table: every HTTP door, the door it is, how it authenticates and who records it.
// app.ts derives routing, authentication and capture from it; no other code matches request paths.
import type { Door } from '../context/door.ts';
import type { Services } from '../services.ts';
import type { RouteAuth } from './authenticate.ts';
import { consolePath } from './console.ts';
import { dispatchPath, dispatchRoute, hookRoute, hooksPath, toolRoute, toolsPath } from './dispatch-routes.ts';
import { listDirectory } from './directory-routes.ts';
import { graphqlDoorOf, graphqlPath, isGraphiqlPage } from './graphql-http.ts';
import { ledgerReadPath, ledgerReadRoute } from './ledger-read-routes.ts';
import { ingestBatch, serveBlob } from './ledger-routes.ts';
import { mcpPath, mcpRoute } from './mcp-routes.ts';
import { otlpRefusal, otlpTracesPath, receiveTraces } from './otlp-routes.ts';
import { endpointOf, listModels, modelPath, modelRoute, modelsListPath } from './model-routes.ts';
import { resolveRoute } from './resolver-routes.ts';
import { resourceMetadata, wellKnownRoute } from './resource-metadata.ts';
import { json } from './respond.ts';
import { sseDispatch, wantsEventStream } from './sse-door.ts';

/**
 * Who records the exchange on the ledger: `boundary` the app, around the handler; `door` the handler
 * itself (it reads the body and names the tool); `operation` the GraphQL door, for each operation that
 * touches more than the Ledger's own records; `no` nobody (health, the ledger's own ingest and blobs).
 */
export type Recorded = 'boundary' | 'door' | 'operation' | 'no';

/** `match`: the path's regex match (groups from 1), or the path alone for a route with a fixed path. */
export type RouteRequest = { request: Request; url: URL; match: readonly string[]; services: Services };

export type Route = {
  path: string | RegExp;
  /** The methods answered; another gets 405 naming the first. Absent: the handler answers every method. */
  methods?: readonly string[];
  /** Only when this holds too (a second route for one path, chosen by Accept). */
  when?: (request: Request, url: URL) => boolean;
  /** Absent only for `open` routes. */
  door?: Door | ((request: Request) => Door);
  recorded: Recorded;
  auth: RouteAuth;
  handler: (r: RouteRequest) => Promise<Response> | Response;
  /** The door's own shape for a refusal at admission (401/403/429), where its protocol names one (OTLP's Status). */
  refusal?: (request: Request, refused: Response) => Promise<Response>;
};

/** What the table needs from the app: its health report and its GraphQL door (yoga). */
export type RouteDeps = {
  health(): Promise<unknown>;
  graphql(request: Request, url: URL): Promise<Response>;
  /** GraphiQL's page; absent when GRAPHIQL is off. */
  graphiql?: (request: Request) => Promise<Response> | Response;
  /** The console's files; absent when CONSOLE is off. */
  console?: (request: Request, url: URL) => Promise<Response>;
};

export function routeTable(deps: RouteDeps): Route[] {
  return [
    { path: '/healthz', auth: 'open', recorded: 'no', handler: async () => json(await deps.health()) },
    { path: '/', auth: 'open', recorded: 'no', handler: () => new Response(null, { status: 302, headers: { location: graphqlPath } }) },
    {
      path: wellKnownRoute,
      methods: ['GET', 'HEAD'],
      auth: 'open',
      recorded: 'no',
      handler: ({ match, services }) => resourceMetadata(services.publicUrl, match[1]),
    },
    ...(deps.graphiql
      ? [{ path: graphqlPath, when: isGraphiqlPage, auth: 'open', recorded: 'no', handler: ({ request }) => deps.graphiql!(request) } satisfies Route]
      : []),
    ...(deps.console
      ? [
          {
            path: consolePath,
            methods: ['GET', 'HEAD'],
            auth: 'open',
            recorded: 'no',
            handler: ({ request, url }) => deps.console!(request, url),
          } satisfies Route,
        ]
      : []),
    {
      path: '/ledger/batches',
      methods: ['POST'],
      door: 'INGEST',
      auth: 'ingest',
      recorded: 'no',
      handler: ({ request, services }) => ingestBatch(request, services),
    },
    {
      path: otlpTracesPath,
      methods: ['POST'],
      door: 'OTLP',
      auth: 'ingest',
      recorded: 'no',
      handler: ({ request, services }) => receiveTraces(request, services),
      refusal: otlpRefusal,
    },
    {
      path: /^\/ledger\/blob\/([^/]+)$/,
      methods: ['GET', 'HEAD'],
      door: 'BLOB',
      auth: 'token',
      recorded: 'no',
      handler: ({ request, match, services }) => serveBlob(request, match[1]!, services),
    },
    {
      path: ledgerReadPath,
      methods: ['GET', 'HEAD'],
      door: 'REST',
      auth: 'token',
      recorded: 'no',
      handler: ({ url, match, services }) => ledgerReadRoute(url, match, services),
    },
    {
      path: '/api/directory/resolve',
      methods: ['GET'],
      door: 'REST',
      auth: 'token',
      recorded: 'boundary',
      handler: async ({ request, services }) => resolveRoute(request, services),
    },
    {
      path: '/api/directory',
      methods: ['GET', 'HEAD'],
      door: 'REST',
      auth: 'token',
      recorded: 'boundary',
      handler: ({ request, services }) => listDirectory(request, services),
    },
    { path: mcpPath, door: 'MCP', auth: 'token', recorded: 'door', handler: ({ request, services }) => mcpRoute(request, services) },
    {
      path: dispatchPath,
      when: wantsEventStream,
      door: 'SSE',
      auth: 'token',
      recorded: 'door',
      handler: ({ request, services }) => sseDispatch(request, services),
    },
    { path: dispatchPath, door: 'DISPATCH', auth: 'token', recorded: 'door', handler: ({ request, services }) => dispatchRoute(request, services) },
    {
      path: toolsPath,
      door: (request) => (request.method === 'GET' ? 'URL' : 'REST'),
      auth: 'token',
      recorded: 'door',
      handler: ({ request, match, services }) => toolRoute(request, services, match[1]!),
    },
    {
      path: hooksPath,
      door: 'WEBHOOK',
      auth: 'token-or-signature',
      recorded: 'door',
      handler: ({ request, match, services }) => hookRoute(request, services, match[1]!),
    },
    {
      path: modelPath,
      methods: ['POST'],
      door: 'MODEL',
      auth: 'token',
      recorded: 'door',
      handler: ({ request, match, services }) => modelRoute(request, services, endpointOf(match[1]!)),
    },
    {
      path: modelsListPath,
      methods: ['GET'],
      door: 'MODEL',
      auth: 'token',
      recorded: 'boundary',
      handler: ({ request, services }) => listModels(request, services),
    },
    {
      path: new RegExp(`^${graphqlPath}(/.*)?$`),
      door: graphqlDoorOf,
      auth: 'token',
      recorded: 'operation',
      handler: ({ request, url }) => deps.graphql(request, url),
    },
  ];
}

/** The first route whose path (and `when`) matches, with the path's match; methods are checked by the caller. */
export function findRoute(table: readonly Route[], request: Request, url: URL): { route: Route; match: readonly string[] } | undefined {
  for (const route of table) {
    const { path } = route;
    const match = typeof path === 'string' ? (url.pathname === path ? [path] : null) : path.exec(url.pathname);
    if (match && (!route.when || route.when(request, url))) return { route, match };
  }
  return undefined;
}

export const doorOfRoute = (route: Route, request: Request): Door | undefined => (typeof route.door === 'function' ? route.door(request) : route.door);

export function notFound(request: Request, path: string): Response {
  return json({ error: { code: 'NOT_FOUND', message: `No route for ${request.method} ${path}.` } }, 404);
}

export function methodNotAllowed(allowed: string): Response {
  return json({ error: { code: 'METHOD_NOT_ALLOWED', message: `Expected ${allowed}.` } }, 405, { allow: allowed });
}
