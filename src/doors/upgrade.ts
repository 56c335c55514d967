// WebSocket upgrades, routed by path: graphql-ws on /graphql, the raw JSON door on /api/ws. Each refuses
// a browser page of another site and a `?token=` (both recorded), and checks the token it is given
// before the socket opens.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type { Checked, Refusal } from '../auth/verdict.ts';
import type { Door } from '../context/door.ts';
import { TokenParam } from '../directory/forms.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import type { Cors } from './cors.ts';
import { admit, credentialOf, credentialOfParams, credentialOfProtocols, recordRefusal, tokenInUrl } from './authenticate.ts';
import { graphqlPath } from './graphql-http.ts';
import { wsDoorPath, type WsDoor } from './ws-door.ts';

const headersOf = (request: IncomingMessage) => {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value);
  return headers;
};

/** A WebSocket upgrade's token: connection params, else the Authorization header, else a `dirledger.token.` subprotocol. Null when authority is off. */
export async function admitUpgrade(
  services: Services,
  request: IncomingMessage,
  url: URL,
  door: Door,
  params?: Readonly<Record<string, unknown>>,
  token?: string,
): Promise<Checked | null> {
  if (!services.authRequired) return null;
  const headers = headersOf(request);
  const presented = token ?? credentialOfParams(params) ?? credentialOf(headers) ?? credentialOfProtocols(request.headers['sec-websocket-protocol']);
  return admit(services, door, presented, { method: 'GET', url: url.href, headers });
}

/** Records the refusal, then answers the upgrade with its status and `{error: {code, message}}`; the socket never opens. */
function refuseUpgrade(services: Services, logger: Logger, request: IncomingMessage, url: URL, socket: Duplex, refusal: Refusal, code: string): void {
  const body = JSON.stringify({ error: { code, ...(code === 'FORBIDDEN' && { limit: refusal.limit }), message: refusal.message } });
  const status = refusal.status === 400 ? '400 Bad Request' : '403 Forbidden';
  // Recorded before it is answered, like every refusal.
  void recordRefusal(services, refusal, undefined, { method: 'GET', url: url.href, headers: headersOf(request) })
    .catch((error: unknown) => logger.error({ err: error }, `could not record a ${code} refusal`))
    .finally(() =>
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`),
    );
}

/** A browser page of another site (doors/cors.ts allowsSocket). */
function originRefusal(door: Door, origin: string): Refusal {
  const shown = JSON.stringify(origin.slice(0, 200));
  return {
    limit: 'origin',
    door,
    reason: `a WebSocket upgrade from the browser origin ${shown}, which is not this server and CORS_ORIGINS does not name`,
    message: `A page at ${shown} may not open a WebSocket here: it is not this server's own origin and CORS_ORIGINS does not name it.`,
    status: 403,
  };
}

/** Refuses (recorded) an upgrade from a foreign browser origin or one that carried ?token=; false when it may go on. */
function refused(services: Services, logger: Logger, cors: Cors, request: IncomingMessage, url: URL, door: Door, socket: Duplex): boolean {
  const origin = request.headers.origin;
  if (!cors.allowsSocket(origin, request.headers.host, services.publicUrl)) {
    refuseUpgrade(services, logger, request, url, socket, originRefusal(door, origin!), 'FORBIDDEN');
    return true;
  }
  if (!url.searchParams.has(TokenParam)) return false;
  refuseUpgrade(services, logger, request, url, socket, tokenInUrl(door), 'TOKEN_IN_URL');
  return true;
}

/** The server's `upgrade` listener. graphql-ws checks its token in connection_init (or the upgrade's Authorization header). */
export function upgradeListener(services: Services, logger: Logger, graphqlWs: WebSocketServer, wsDoor: WsDoor, cors: Cors) {
  return (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const upgradeUrl = new URL(request.url ?? '/', 'http://localhost');
    if (upgradeUrl.pathname === graphqlPath) {
      if (!refused(services, logger, cors, request, upgradeUrl, 'GRAPHQL_WS', socket))
        graphqlWs.handleUpgrade(request, socket, head, (ws) => graphqlWs.emit('connection', ws, request));
    } else if (upgradeUrl.pathname === wsDoorPath) {
      if (refused(services, logger, cors, request, upgradeUrl, 'WEBSOCKET', socket)) return;
      // No token at the upgrade (a browser): the first message must carry it.
      if (services.authRequired && !credentialOf(headersOf(request)) && !credentialOfProtocols(request.headers['sec-websocket-protocol'])) {
        wsDoor.handleUpgrade(
          request,
          socket,
          head,
          undefined,
          (token) => admitUpgrade(services, request, upgradeUrl, 'WEBSOCKET', undefined, token ?? '') as Promise<Checked>,
        );
        return;
      }
      void admitUpgrade(services, request, upgradeUrl, 'WEBSOCKET').then(
        (checked) => {
          if (checked === null || checked.ok) return wsDoor.handleUpgrade(request, socket, head, checked?.grant);
          const status = checked.refusal.status === 429 ? '429 Too Many Requests' : checked.refusal.status === 403 ? '403 Forbidden' : '401 Unauthorized';
          socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
        },
        (error) => {
          logger.error({ err: error }, 'checking a WebSocket upgrade failed');
          socket.destroy();
        },
      );
    } else socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  };
}
