// The reviewer console's static assets (console/dist, built by `npm install` from console/src): an open
// route that serves files only. Every data request the page makes goes through the GraphQL door with
// its token. index.html answers every /console path (the page routes itself); assets are named by hash.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Response } from '@whatwg-node/server';

export const consolePath = /^\/console(\/.*)?$/;
const distDir = path.join(import.meta.dirname, '..', '..', 'console', 'dist');

/** Nothing but this server: no inline script or style, no frames, no other origin. */
export const consoleCsp =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

type Asset = { body: Buffer; gzipped: Buffer; type: string };
type Assets = Map<string, Asset>;
let loaded: Promise<Assets | undefined> | undefined;

async function loadAssets(): Promise<Assets | undefined> {
  const assets: Assets = new Map();
  try {
    const names = ['index.html', ...(await readdir(path.join(distDir, 'assets'))).map((name) => `assets/${name}`)];
    for (const name of names) {
      const body = await readFile(path.join(distDir, name));
      assets.set(name, { body, gzipped: gzipSync(body), type: types[path.extname(name)] ?? 'application/octet-stream' });
    }
  } catch {
    return undefined;
  }
  return assets;
}

/** Serves one console path: an asset by name, else the page. Read once per process. */
export async function serveConsole(request: Request, url: URL): Promise<Response> {
  const security = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };
  // An open route is answered before the table's method check: check here.
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return new Response('{"error":{"code":"METHOD_NOT_ALLOWED","message":"Expected GET or HEAD."}}', {
      status: 405,
      headers: { 'content-type': 'application/json; charset=utf-8', allow: 'GET, HEAD', ...security },
    });
  loaded ??= loadAssets();
  const assets = await loaded;
  if (!assets) {
    loaded = undefined;
    return new Response('The console is not built: run `npm run console:build` (npm install runs it).\n', {
      status: 503,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5', ...security },
    });
  }
  const rest = url.pathname.replace(/^\/console\/?/, '');
  const isAsset = rest.startsWith('assets/');
  const asset = assets.get(isAsset ? rest : 'index.html');
  if (!asset) return new Response('No such console asset.\n', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', ...security } });
  const gzip = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '');
  const headers: Record<string, string> = {
    'content-type': asset.type,
    'cache-control': isAsset ? 'public, max-age=31536000, immutable' : 'no-cache',
    'content-security-policy': consoleCsp,
    vary: 'accept-encoding',
    ...security,
  };
  if (gzip) headers['content-encoding'] = 'gzip';
  const body = gzip ? asset.gzipped : asset.body;
  headers['content-length'] = String(body.length);
  return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), { status: 200, headers });
}
