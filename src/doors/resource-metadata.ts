// OAuth 2.0 Protected Resource Metadata (RFC 9728), which MCP clients probe after a 401: every 401
// names its document in `WWW-Authenticate: Bearer resource_metadata="…"`. dirledger has no
// authorization server (tokens are macaroons minted by `dirledger token`), so the document lists none.
import { json } from './respond.ts';

export const wellKnownPath = '/.well-known/oauth-protected-resource';
export const wellKnownRoute = new RegExp(`^${wellKnownPath}(/.*)?$`);

/** The metadata document's path for the resource a request path is part of: `/mcp` its own, else the server's. */
export const metadataPathFor = (pathname: string): string => (pathname === '/mcp' ? `${wellKnownPath}/mcp` : wellKnownPath);

/** The challenge a 401 carries (RFC 6750 with RFC 9728's resource_metadata). */
export const bearerChallenge = (publicUrl: string, pathname: string): string =>
  `Bearer realm="dirledger", resource_metadata="${publicUrl}${metadataPathFor(pathname)}"`;

/** GET /.well-known/oauth-protected-resource[/mcp]: the resource's metadata; any other suffix names no resource. */
export function resourceMetadata(publicUrl: string, suffix: string | undefined): Response {
  if (suffix && suffix !== '/mcp')
    return json({ error: { code: 'NOT_FOUND', message: `No protected resource at ${suffix}: expected ${wellKnownPath} or ${wellKnownPath}/mcp.` } }, 404);
  return json(
    {
      resource: `${publicUrl}${suffix ?? ''}`,
      resource_name: suffix ? 'dirledger MCP' : 'dirledger',
      authorization_servers: [],
      bearer_methods_supported: ['header'],
      resource_documentation: `${publicUrl}/graphql`,
    },
    200,
    { 'cache-control': 'max-age=3600' },
  );
}
