// A local upstream for dispatch benchmarks: a bare node:http server in its own process that
// answers every POST with {"echo": <body>}, so the figures measure dirledger, not a remote API.
import { spawn } from 'node:child_process';
import { onCleanup } from './cleanup.ts';
import { freePort } from './server.ts';

const upstreamSource = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length + 9 });
    res.end('{"echo":' + (body.length ? body : 'null') + '}');
  });
});
server.keepAliveTimeout = 60000;
server.listen(Number(process.argv[1]), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

/** Starts the echo upstream on a free port; stop() (or the bench cleanup) ends it. */
export async function startUpstream(): Promise<{ origin: string; pid: number; stop(): Promise<void> }> {
  return startNodeServer(upstreamSource, [], 'upstream');
}

async function startNodeServer(source: string, args: string[], name: string): Promise<{ origin: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', source, String(port), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  const stop = onCleanup(`stop ${name} pid ${child.pid}`, async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  });
  return { origin: `http://127.0.0.1:${port}`, pid: child.pid!, stop };
}

// The least any Node proxy adds here: node:http in, the body forwarded over a keep-alive agent,
// the answer streamed back; no parsing, no capture, no record.
const bareProxySource = `
const http = require('node:http');
const upstream = new URL(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 60000, maxSockets: 256 });
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const out = http.request(
      { agent, host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (answer) => {
        res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] });
        answer.pipe(res);
      },
    );
    out.on('error', (error) => { res.writeHead(502); res.end(String(error)); });
    out.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(Number(process.argv[1]), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

/** Starts a bare Node proxy to `upstreamUrl` on a free port, in its own process: the floor of any proxy's added latency here. */
export async function startBareProxy(upstreamUrl: string): Promise<{ origin: string; pid: number; stop(): Promise<void> }> {
  return startNodeServer(bareProxySource, [upstreamUrl], 'bare proxy');
}

/** The directory section of one HTTP tool, BENCH_UP, that posts {"q": …} to the upstream's /echo. */
export function benchUpstreamSection(origin: string): string {
  return JSON.stringify([
    {
      name: 'BENCH_UP',
      description: 'the benchmark upstream',
      'way: http': JSON.stringify({ method: 'POST', url: `${origin}/echo`, headers: { 'content-type': 'application/json' }, body: { q: '{{q}}' } }),
      'args schema': JSON.stringify({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }),
    },
  ]);
}
