// WebSocket upgrades, routed by path: graphql-ws on /graphql, the raw JSON door on /api/ws. Each
// refuses a `?token=` (recorded) and checks the token it is given before the socket opens.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type { Checked } from '../auth/verdict.ts';
import type { Door } from '../context/door.ts';
import { TokenParam } from '../directory/forms.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
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

/** Answers an upgrade that carried ?token= with 400 TOKEN_IN_URL (recorded) and true; false when it did not. */
function refuseUrlToken(services: Services, logger: Logger, request: IncomingMessage, url: URL, door: Door, socket: Duplex): boolean {
  if (!url.searchParams.has(TokenParam)) return false;
  const refusal = tokenInUrl(door);
  const body = JSON.stringify({ error: { code: 'TOKEN_IN_URL', message: refusal.message } });
  // Recorded before it is answered, like every refusal.
  void recordRefusal(services, refusal, undefined, { method: 'GET', url: url.href, headers: headersOf(request) })
    .catch((error: unknown) => logger.error({ err: error }, 'could not record a TOKEN_IN_URL refusal'))
    .finally(() =>
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    );
  return true;
}

/** The server's `upgrade` listener. graphql-ws checks its token in connection_init (or the upgrade's Authorization header). */
export function upgradeListener(services: Services, logger: Logger, graphqlWs: WebSocketServer, wsDoor: WsDoor) {
  return (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const upgradeUrl = new URL(request.url ?? '/', 'http://localhost');
    if (upgradeUrl.pathname === graphqlPath) {
      if (!refuseUrlToken(services, logger, request, upgradeUrl, 'GRAPHQL_WS', socket))
        graphqlWs.handleUpgrade(request, socket, head, (ws) => graphqlWs.emit('connection', ws, request));
    } else if (upgradeUrl.pathname === wsDoorPath) {
      if (refuseUrlToken(services, logger, request, upgradeUrl, 'WEBSOCKET', socket)) return;
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
