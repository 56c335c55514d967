// Starts the real dirledger server in a separate child process on a free port, so a
// benchmark measures it from outside (its own event loop, its own memory) and kills it after.
// BENCH_SERVER_STDOUT=file appends everything the server prints there (e.g. --trace-gc-nvp lines).
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { onCleanup } from './cleanup.ts';
import { MALLOC_TUNABLES } from '../../src/malloc-tunables.js';
import { SERVER_NODE_FLAGS } from '../../src/node-flags.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A port that was free a moment ago (bind to 0, read it, release it). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export type ServerProcess = {
  pid: number;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** The last 20,000 characters the child wrote to stderr (for error messages). */
  stderr(): string;
  /** The last 20,000 characters the child wrote to stdout (e.g. --trace-gc lines). */
  stdout(): string;
  /** SIGTERM (graceful stop), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
};

/**
 * Runs `node SERVER_NODE_FLAGS --import src/compile-cache.js src/server.ts` as npm start does, or node on a prebuilt `entry` (one process, so its pid is the server's own), with
 * `env` on top of the parent's environment, and waits until it prints its URL.
 */
export async function startServer(
  env: Record<string, string>,
  options: {
    timeoutMs?: number;
    nodeArgs?: string[];
    /** Another checkout to run (A/B comparisons); default this one. */
    root?: string;
    /** A prebuilt server file (bench/lib/build.ts) run instead of src/server.ts. */
    entry?: string;
  } = {},
): Promise<ServerProcess> {
  const root = options.root ?? repoRoot;
  const host = '127.0.0.1';
  const port = await freePort(host);
  const compileCache = path.join(root, 'src/compile-cache.js'); // as npm start preloads it
  const source = [...(existsSync(compileCache) ? ['--import', pathToFileURL(compileCache).href] : []), path.join(root, 'src/server.ts')];
  const entry = options.entry ? [options.entry] : source;
  // A bundle runs without the preload that sets glibc's malloc settings; a deployment sets them in its environment, so does this.
  const bundleMalloc = options.entry && process.platform === 'linux' && !process.env.GLIBC_TUNABLES ? { GLIBC_TUNABLES: MALLOC_TUNABLES } : {};
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...(options.nodeArgs ?? []), ...entry], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', GRAPHIQL: 'false', ...bundleMalloc, ...env, PORT: String(port), HOST: host },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errText = '';
  let outText = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    errText = (errText + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopGrace = 10_000;
  const stop = onCleanup(`stop server pid ${child.pid}`, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), stopGrace);
    await exited;
    clearTimeout(killer);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`server did not start within ${options.timeoutMs ?? 60_000} ms\n${errText}`)),
        options.timeoutMs ?? 60_000,
      );
      child.stdout!.on('data', (chunk: Buffer) => {
        outText = (outText + chunk.toString()).slice(-20_000);
        if (process.env.BENCH_SERVER_STDOUT) appendFileSync(process.env.BENCH_SERVER_STDOUT, chunk);
        if (/ at http:\/\//.test(outText)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`server exited before listening (code ${code}, signal ${signal})\n${errText}`));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    pid: child.pid!,
    origin: `http://${host}:${port}`,
    stderr: () => errText,
    stdout: () => outText,
    stop: (graceMs = 10_000) => {
      stopGrace = graceMs;
      return stop();
    },
  };
}
