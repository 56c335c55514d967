// The one vocabulary for the way a request came in: capture records it, authority checks `doors`
// caveats against it, live subscriptions and GraphQL carry it. A string-literal union with its values.

export const Door = {
  REST: 'REST',
  URL: 'URL',
  DISPATCH: 'DISPATCH',
  GRAPHQL: 'GRAPHQL',
  GRAPHQL_WS: 'GRAPHQL_WS',
  GRAPHQL_SSE: 'GRAPHQL_SSE',
  MCP: 'MCP',
  MCP_STDIO: 'MCP_STDIO',
  CLI: 'CLI',
  WEBHOOK: 'WEBHOOK',
  WEBSOCKET: 'WEBSOCKET',
  SSE: 'SSE',
  INGEST: 'INGEST',
  /** OpenTelemetry traces in (OTLP/HTTP `POST /v1/traces`). */
  OTLP: 'OTLP',
  BLOB: 'BLOB',
  /** The model door: OpenAI- and Anthropic-compatible /v1/… (src/doors/model-routes.ts). */
  MODEL: 'MODEL',
  /** Work the server starts itself; no token is presented there. */
  INTERNAL: 'INTERNAL',
} as const;
export type Door = (typeof Door)[keyof typeof Door];

/** Every door, in declaration order. */
export const Doors = Object.values(Door) as [Door, ...Door[]];

/** The doors a token is presented at (all but INTERNAL): what a `doors` caveat may name. */
export const TokenDoors = Doors.filter((door) => door !== Door.INTERNAL) as [Exclude<Door, 'INTERNAL'>, ...Exclude<Door, 'INTERNAL'>[]];
