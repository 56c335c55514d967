// Every door's first step: find the credential, verify it for this door, and answer a refusal
// (recorded as a REFUSAL event) before anything else runs. Only /healthz, GraphiQL's page and the console's static assets are open.
import { randomUUID } from 'node:crypto';
import type { Checked, Grant } from '../auth/verdict.ts';
import type { Refusal } from '../auth/verdict.ts';
import type { Door } from '../context/door.ts';
import { InvocationHeaders } from '../capture/boundary.ts';
import type { Caller } from '../context/request.ts';
import { TokenParam } from '../directory/forms.ts';
import type { Services } from '../services.ts';
import { hookSignature, verifyHookSignature } from './hook-signature.ts';
import { bearerChallenge } from './resource-metadata.ts';
import { json } from './respond.ts';

/**
 * How a route checks its caller when AUTHORITY is on: `open` not at all; `token` a bearer token
 * verified for its door; `token-or-signature` that, or a webhook body signed with the hook's secret;
 * `ingest` a token with the ingest power.
 */
export type RouteAuth = 'open' | 'token' | 'token-or-signature' | 'ingest';

/**
 * Admits a request at `door` the way its route authenticates: the caller to run it as, and the request
 * to go on with (a signed webhook's body has been read), or the refusal to answer, recorded.
 */
export async function admitRequest(
  services: Services,
  auth: Exclude<RouteAuth, 'open'>,
  door: Door,
  request: Request,
  url: URL,
): Promise<{ caller: Caller; request: Request } | { refused: Response }> {
  const challenge = bearerChallenge(services.publicUrl, url.pathname);
  const refuse = async (refusal: Refusal, grant?: Grant) => {
    await recordRefusal(services, refusal, grant, request);
    return { refused: refusalResponse(refusal, challenge) };
  };
  if (noQueryTokenDoors.has(door) && url.searchParams.has(TokenParam)) return refuse(tokenInUrl(door));
  if (!services.authRequired) return { caller: { door }, request };
  let grant: Grant;
  if (auth === 'token-or-signature' && !credentialOf(request.headers, url) && hookSignature(request.headers)) {
    const signed = await verifyHookSignature(request, services, url.pathname);
    if ('refusal' in signed) return refuse(signed.refusal);
    ({ grant, request } = signed);
  } else {
    // The model door also takes Anthropic's x-api-key, where its SDK sends the key.
    const token = credentialOf(request.headers, url) ?? (door === 'MODEL' ? (request.headers.get('x-api-key') ?? undefined) : undefined);
    const checked = await admit(services, door, token, request);
    if (!checked.ok) return { refused: refusalResponse(checked.refusal, challenge) };
    grant = checked.grant;
  }
  const powerless = auth === 'ingest' && services.authority.requirePower(grant, 'ingest', door);
  if (powerless) return refuse(powerless, grant);
  return { caller: { door, grant }, request };
}

/**
 * Doors that take their token in a header, a subprotocol, connection_init or a first message, and
 * answer a `?token=` with 400 TOKEN_IN_URL (proxies and browser history keep URLs). The query token
 * stays on the doors the seed's one-line URL and credential-free links need: GET/POST
 * /api/tools/:name (LINK_URL, LINK_REST), /mcp (LINK_MCP), webhooks (/hooks/:name, whose senders
 * often cannot set a header) and the rest of the plain HTTP doors.
 */
export const noQueryTokenDoors: ReadonlySet<Door> = new Set(['GRAPHQL', 'GRAPHQL_SSE', 'GRAPHQL_WS', 'WEBSOCKET', 'OTLP']);

/** The refusal of a token sent in the URL of a door that does not take it there (recorded; the ledger redacts the token). */
export function tokenInUrl(door: Door): Refusal {
  return {
    limit: 'credential',
    door,
    reason: 'a token was sent as ?token= in the URL, which this door does not take',
    message: `The ${door} door does not take a token in the URL (?token=), where proxies and browser history keep it: send it as \`Authorization: Bearer …\`${door === 'GRAPHQL_WS' ? ' or in the connection_init payload' : door === 'WEBSOCKET' ? ', a `dirledger.token.<token>` subprotocol, or a first message {"type":"auth","token":…}' : ''}.`,
    status: 400,
  };
}

/** The token in a `Sec-WebSocket-Protocol` entry `dirledger.token.<token>` (browsers cannot set headers on a WebSocket). */
export const tokenSubprotocolPrefix = 'dirledger.token.';
export function credentialOfProtocols(header: string | undefined): string | undefined {
  for (const entry of (header ?? '').split(',')) {
    const protocol = entry.trim();
    if (protocol.startsWith(tokenSubprotocolPrefix)) return protocol.slice(tokenSubprotocolPrefix.length) || undefined;
  }
  return undefined;
}

/** `Authorization: Bearer …`, else the `token` query parameter (links, webhooks). */
export function credentialOf(headers: Headers, url?: URL): string | undefined {
  const value = headers.get('authorization');
  const bearer = value ? /^Bearer\s+(\S+)\s*$/i.exec(value)?.[1] : undefined;
  return bearer ?? url?.searchParams.get(TokenParam) ?? undefined;
}

/** The token in graphql-ws connection params: `{ authorization: "Bearer …" }` or `{ token }`. */
export function credentialOfParams(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (!params) return undefined;
  const auth = params.authorization ?? params.Authorization;
  if (typeof auth === 'string') return /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
  return typeof params.token === 'string' ? params.token : undefined;
}

/** Authenticates a door request and applies the per-token rate limit; refusals are recorded. */
export async function admit(
  services: Services,
  door: Door,
  token: string | undefined,
  request?: { method: string; url: string; headers: Headers },
): Promise<Checked> {
  const checked = services.authority.authenticate(token, door);
  const refusal = checked.ok ? await services.authority.rate(checked.grant, door) : checked.refusal;
  if (!refusal) return checked;
  await recordRefusal(services, refusal, checked.ok ? checked.grant : undefined, request);
  return { ok: false, refusal };
}

export async function recordRefusal(
  services: Services,
  refusal: Refusal,
  grant: Grant | undefined,
  request?: { method: string; url: string; headers: Headers },
): Promise<void> {
  const header = (name: string) => request?.headers.get(name) ?? undefined;
  const actionId = header(InvocationHeaders.actionId)?.slice(0, 256) || randomUUID();
  const task = grant?.task ?? header(InvocationHeaders.task)?.slice(0, 512);
  const agent = grant?.agent ?? header(InvocationHeaders.agent)?.slice(0, 512);
  const session = header(InvocationHeaders.session)?.slice(0, 512);
  try {
    await services.authority.record(refusal, {
      actionId,
      ...(session && { session }),
      ...(task && { task }),
      ...(agent && { agent }),
      ...(request && { method: request.method, url: request.url }),
    });
  } catch (error) {
    services.logger.error({ err: error }, 'recording a refusal failed');
  }
}

/** The doors that answer in GraphQL's response shape. */
export const graphqlDoors: ReadonlySet<Door> = new Set(['GRAPHQL', 'GRAPHQL_SSE']);

/** The HTTP answer to a refusal: 401 with its Bearer challenge, 403 naming the limit, 429 with Retry-After. */
export function refusalResponse(refusal: Refusal, challenge = 'Bearer realm="dirledger"'): Response {
  const code =
    refusal.status === 400
      ? 'TOKEN_IN_URL'
      : refusal.limit === 'revoked'
        ? 'TOKEN_REVOKED'
        : refusal.status === 401
          ? 'UNAUTHENTICATED'
          : refusal.status === 429
            ? 'RATE_LIMITED'
            : 'FORBIDDEN';
  const headers: Record<string, string> = {};
  if (refusal.status === 401) headers['www-authenticate'] = challenge;
  if (refusal.retryAfterSeconds) headers['retry-after'] = String(refusal.retryAfterSeconds);
  const limit = refusal.status === 403 ? { limit: refusal.limit, ...(refusal.caveat && { caveat: refusal.caveat }) } : {};
  // A GraphQL client (GraphiQL among them) reads `errors`: the same refusal, in the GraphQL response's shape.
  if (graphqlDoors.has(refusal.door)) return json({ errors: [{ message: refusal.message, extensions: { code, ...limit } }] }, refusal.status, headers);
  return json({ error: { code, message: refusal.message, ...limit } }, refusal.status, headers);
}
