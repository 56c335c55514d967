// A local upstream for dispatch benchmarks: a bare node:http server in its own process that
// answers every POST with {"echo": <body>}, so the figures measure dirledger, not a remote API.
import { spawn } from 'node:child_process';
import { onCleanup } from './cleanup.ts';
import { freePort, repoRoot } from './server.ts';

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
export async function startUpstream(): Promise<NodeServer> {
  return startNodeServer(['-e', upstreamSource], [], 'upstream');
}

type NodeServer = { origin: string; pid: number; stop(): Promise<void> };

/** Runs `node <argv before the port> <port> <argv after>` on a free port until it prints a line; stop() ends it and waits for it to exit. */
async function startNodeServer(before: string[], after: string[], name: string): Promise<NodeServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [...before, String(port), ...after], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = onCleanup(`stop ${name} pid ${child.pid}`, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  });
  return { origin: `http://127.0.0.1:${port}`, pid: child.pid!, stop };
}

// The least any Node proxy adds here: node:http in, the body forwarded over a keep-alive agent,
// the answer streamed back; no parsing, no capture, no record. Given a file (argv 3), it also keeps
// issue 15's rule at the disk's price and nothing more: the request's bytes are written durably
// before anything is sent, and the answer's before the caller gets it (each one O_DSYNC write in
// place over blocks zero-filled and synced beforehand, as the spool writes): a whole answer is held
// until then, a streamed one is forwarded as it comes and ended after. That proxy's added latency is the floor any recording proxy has here.
const bareProxySource = `
const http = require('node:http');
const fs = require('node:fs');
const upstream = new URL(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 60000, maxSockets: 256 });
const durableFile = process.argv[3];
const fileBytes = 64 * 1024 * 1024;
let fd;
let at = 0;
if (durableFile) {
  const filler = fs.openSync(durableFile, 'w');
  for (let i = 0; i < fileBytes / (1 << 20); i++) fs.writeSync(filler, Buffer.alloc(1 << 20));
  fs.fsyncSync(filler);
  fs.closeSync(filler);
  fd = fs.openSync(durableFile, fs.constants.O_WRONLY | fs.constants.O_DSYNC);
}
function durable(bytes) {
  if (fd === undefined) return;
  if (at + bytes.length > fileBytes) at = 0;
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done, at + done);
  at += bytes.length;
}
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    durable(body);
    const out = http.request(
      { agent, host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (answer) => {
        if (fd === undefined) {
          res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] });
          answer.pipe(res);
          return;
        }
        // A stream goes on to the caller as it comes; only its end waits for the answer's write.
        const streamed = String(answer.headers['content-type'] || '').startsWith('text/event-stream');
        const parts = [];
        if (streamed) res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'], 'cache-control': 'no-cache' });
        answer.on('data', (c) => {
          parts.push(c);
          if (streamed) res.write(c);
        });
        answer.on('end', () => {
          const bytes = Buffer.concat(parts);
          durable(bytes);
          if (streamed) return res.end();
          res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'], 'content-length': bytes.length });
          res.end(bytes);
        });
      },
    );
    out.on('error', (error) => { res.writeHead(502); res.end(String(error)); });
    out.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(Number(process.argv[1]), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

/**
 * Starts a bare Node proxy to `upstreamUrl` on a free port, in its own process: the floor of any
 * proxy's added latency here. With `durableFile`, it writes each request and answer there durably
 * first (two durable writes per call, the file made and zero-filled at start).
 */
export async function startBareProxy(upstreamUrl: string, durableFile?: string): Promise<NodeServer> {
  return startNodeServer(['-e', bareProxySource], durableFile ? [upstreamUrl, durableFile] : [upstreamUrl], durableFile ? 'durable bare proxy' : 'bare proxy');
}

/**
 * Starts the recording floor (recording-proxy.ts) to `upstreamUrl` on a free port, recording into
 * the PostgreSQL database at `databaseUrl` with its spool and blobs under `folder`; stop() ends it
 * gracefully, its background writer flushed.
 */
export async function startRecordingProxy(upstreamUrl: string, databaseUrl: string, folder: string): Promise<NodeServer> {
  // BENCH_FLOOR_NODE_ARGS (e.g. --cpu-prof) go to this process alone.
  const nodeArgs = process.env.BENCH_FLOOR_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  return startNodeServer([...nodeArgs, 'bench/lib/recording-proxy.ts'], [upstreamUrl, databaseUrl, folder], 'recording proxy');
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
