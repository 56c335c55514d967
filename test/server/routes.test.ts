// The route table: each request finds one route, and its door is the one capture and authority see.
import { describe, expect, it } from 'vitest';
import { doorOfRoute, findRoute, routeTable } from '../../src/doors/routes.ts';

const table = routeTable({ health: async () => ({}), graphql: async () => new Response(), graphiql: () => new Response() });

function routeOf(method: string, path: string, headers: Record<string, string> = {}) {
  const request = new Request(`http://localhost${path}`, { method, headers });
  const found = findRoute(table, request, new URL(request.url));
  return found && { auth: found.route.auth, recorded: found.route.recorded, door: doorOfRoute(found.route, request) ?? null, match: found.match };
}

describe('route table', () => {
  it.each([
    ['POST', '/ledger/batches', {}, 'INGEST', 'ingest', 'no'],
    ['GET', '/ledger/blob/ab12', {}, 'BLOB', 'token', 'no'],
    ['GET', '/api/directory', {}, 'REST', 'token', 'boundary'],
    ['GET', '/api/directory/resolve?q=x', {}, 'REST', 'token', 'boundary'],
    ['POST', '/mcp', {}, 'MCP', 'token', 'door'],
    ['POST', '/api/dispatch', {}, 'DISPATCH', 'token', 'door'],
    ['POST', '/api/dispatch', { accept: 'text/event-stream' }, 'SSE', 'token', 'door'],
    ['GET', '/api/dispatch', { accept: 'text/event-stream' }, 'DISPATCH', 'token', 'door'],
    ['GET', '/api/tools/ECHO?text=hi', {}, 'URL', 'token', 'door'],
    ['POST', '/api/tools/ECHO', {}, 'REST', 'token', 'door'],
    ['PUT', '/api/tools/', {}, 'REST', 'token', 'door'],
    ['POST', '/hooks/ECHO', {}, 'WEBHOOK', 'token-or-signature', 'door'],
    ['POST', '/graphql', {}, 'GRAPHQL', 'token', 'operation'],
    ['POST', '/graphql/stream', { accept: 'text/event-stream' }, 'GRAPHQL_SSE', 'token', 'operation'],
    ['GET', '/graphql?query={x}', { accept: 'text/html' }, 'GRAPHQL', 'token', 'operation'],
  ] as const)('%s %s %o is door %s, auth %s, recorded by %s', (method, path, headers, door, auth, recorded) => {
    expect(routeOf(method, path, headers)).toMatchObject({ door, auth, recorded });
  });

  it('the open routes: health, the redirect to /graphql, GraphiQL’s page (an HTML GET without a query) and the RFC 9728 resource metadata', () => {
    for (const [path, headers] of [
      ['/healthz', {}],
      ['/', {}],
      ['/graphql', { accept: 'text/html' }],
      ['/.well-known/oauth-protected-resource', {}],
      ['/.well-known/oauth-protected-resource/mcp', {}],
    ] as const) {
      expect(routeOf('GET', path, headers), path).toMatchObject({ auth: 'open', door: null });
    }
  });

  it('a path no route takes has no route (answered 404 before any token is asked for)', () => {
    for (const path of ['/nope', '/ledger/blob/a/b', '/api/tools/a/b', '/hooks/', '/graphqlx', '/api/directory/'])
      expect(routeOf('GET', path), path).toBeUndefined();
  });

  it('a regex route hands its groups to the handler; every route but the open ones names a door', () => {
    expect(routeOf('GET', '/api/tools/WEATHER%20NOW')?.match[1]).toBe('WEATHER%20NOW');
    for (const route of table) if (route.auth !== 'open') expect(route.door, String(route.path)).toBeDefined();
  });
});
