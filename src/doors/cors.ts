// CORS for browser apps: only the origins CORS_ORIGINS names (none by default) may read answers,
// with credentials. A preflight (OPTIONS with Access-Control-Request-Method) carries no token, so it
// is answered here, before any route or authentication, and never recorded; an origin not allowed
// gets no Access-Control-* header at all (the browser refuses the answer to the page).
import { InvocationHeaders } from '../capture/boundary.ts';

/** The request headers a browser app may send (the doors' own and MCP's streamable HTTP ones). */
const allowedHeaders = [
  'authorization',
  'content-type',
  'accept',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-session-id',
  ...Object.values(InvocationHeaders),
];

/** Answer headers a page may read beyond the CORS-safelisted ones. */
const exposedHeaders = ['www-authenticate', 'retry-after', 'allow', 'content-length', 'mcp-session-id', 'x-dirledger-action'];

export type Cors = {
  /** The answer to a preflight, or undefined when the request is not one. */
  preflight(request: Request): Response | undefined;
  /** The answer with the Access-Control-* headers its request's origin may have, and none otherwise. */
  apply(request: Request, response: Response): Response;
  /**
   * Whether a WebSocket upgrade may open. A browser sends Origin and no preflight guards a socket, so a
   * page of any site could otherwise open one with the user's cookies or subprotocol token: only this
   * server's own pages (Origin's host is the upgrade's Host, or PUBLIC_URL's origin) and the origins
   * CORS_ORIGINS names may. No Origin at all is not a browser, and opens.
   */
  allowsSocket(origin: string | undefined, host: string | undefined, publicUrl: string): boolean;
};

/** `*` is refused by config: credentials are never shared with any origin. */
export function corsPolicy(origins: readonly string[]): Cors {
  const allowed = new Set(origins);
  const allows = (origin: string | null): origin is string => origin !== null && allowed.has(origin);
  return {
    preflight(request) {
      if (request.method !== 'OPTIONS' || !request.headers.has('access-control-request-method')) return undefined;
      const origin = request.headers.get('origin');
      const headers = new Headers({ vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' });
      if (allows(origin)) {
        headers.set('access-control-allow-origin', origin);
        headers.set('access-control-allow-credentials', 'true');
        headers.set('access-control-allow-methods', 'GET, POST, HEAD, OPTIONS');
        headers.set('access-control-allow-headers', allowedHeaders.join(', '));
        headers.set('access-control-max-age', '600');
      }
      return new Response(null, { status: 204, headers });
    },
    apply(request, response) {
      const origin = request.headers.get('origin');
      const allowedOrigin = allows(origin);
      if (!allowedOrigin && !response.headers.has('access-control-allow-origin')) return response;
      const headers = new Headers(response.headers);
      for (const name of [...headers.keys()]) if (name.startsWith('access-control-')) headers.delete(name);
      headers.append('vary', 'Origin');
      if (allowedOrigin) {
        headers.set('access-control-allow-origin', origin);
        headers.set('access-control-allow-credentials', 'true');
        headers.set('access-control-expose-headers', exposedHeaders.join(', '));
      }
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    },
    allowsSocket(origin, host, publicUrl) {
      if (origin === undefined || allows(origin)) return true;
      const own = URL.parse(origin);
      return own !== null && own.origin === origin && (own.host === host || own.origin === URL.parse(publicUrl)?.origin);
    },
  };
}
