// GraphiQL's page, served from npm (@graphql-yoga/render-graphiql) so it works with no network beyond
// this server. Its subscriptions run over SSE on /graphql, as plain HTTP requests carrying the Headers
// tab's Authorization, so a token set there reaches them and a refusal is one HTTP answer, not a
// WebSocket that reconnects forever. The 9 MB page module loads on the first page request, never at start.
import { gzipSync } from 'node:zlib';
import { graphqlPath } from './graphql-http.ts';

const defaultQuery = `# dirledger: set your token in the Headers tab below, e.g.
#   {"Authorization": "Bearer dl_…"}
# Queries, mutations and subscriptions (over SSE) all send it.
query FirstLook {
  directoryStats { rows }
  resolve(query: "echo the text back") { message matches { row { name type } score layer reason } }
}
`;

export const graphiqlOptions = {
  title: 'dirledger',
  endpoint: graphqlPath,
  subscriptionsProtocol: 'SSE',
  defaultQuery,
  defaultEditorToolsVisibility: 'headers',
  isHeadersEditorEnabled: true,
  // Headers stay in the tab's memory only: a token is never written to the browser's local storage.
  shouldPersistHeaders: false,
} as const;

type Page = { html: Buffer; gzipped: Buffer };
let page: Promise<Page> | undefined;

async function renderPage(): Promise<Page> {
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  const html = Buffer.from(renderGraphiQL({ ...graphiqlOptions }), 'utf8');
  return { html, gzipped: gzipSync(html) };
}

/** The page, rendered once per process; gzipped when the browser takes it (9 MB → about 2.5 MB). */
export async function graphiqlPage(request: Request): Promise<Response> {
  page ??= renderPage();
  const { html, gzipped } = await page;
  const gzip = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '');
  const headers: Record<string, string> = {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-cache',
    // The page's scripts are inline and its editor workers are blob: URLs; nothing loads from elsewhere.
    'content-security-policy':
      "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'",
    vary: 'accept-encoding',
  };
  if (gzip) headers['content-encoding'] = 'gzip';
  return new Response(new Uint8Array(gzip ? gzipped : html), { status: 200, headers });
}
