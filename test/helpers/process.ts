// Runs the real `dirledger` entry points as child processes.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withMallocTunables } from '../../src/malloc-tunables.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const cliBin = path.join(repoRoot, 'src/cli/bin.js');

export type Child = {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Resolves with the first match of the pattern in stdout+stderr. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/**
 * Node flags for the suite's `dirledger` children: WebAssembly on V8's baseline compiler only, so a server's
 * embedded database skips the TurboFan compiles (docs/ARCHITECTURE.md, "The embedded database"): ~3.5 s less
 * CPU a start, and no child here lives long enough to win it back. A test of memory or of the start a user
 * gets passes `nodeFlags: []`.
 */
export const childFlags = ['--liftoff-only'];

/**
 * The environment a `dirledger` child of the suite starts in: GLIBC_TUNABLES already naming the malloc setting
 * that the bin (src/compile-cache.js) would otherwise restart the process in place to add, so Node starts once,
 * not twice, and runs on as after the restart: ~0.13 s less CPU a start (0.41 against 0.55 s for `dirledger call`,
 * medians of ten). The restart itself is test/server/node-flags.test.ts's; a test of the start a user gets
 * (`nodeFlags: []`) keeps it.
 */
export function dirledgerEnv(env: NodeJS.ProcessEnv = process.env): { GLIBC_TUNABLES?: string } {
  if (process.platform !== 'linux') return {};
  const tunables = env.GLIBC_TUNABLES ?? '';
  return { GLIBC_TUNABLES: withMallocTunables(tunables) ?? tunables };
}

/**
 * NODE_COMPILE_CACHE for a plain `node` child of the suite (a fixture script, a form's snippet): Node keeps what it
 * stripped and compiled of each module in the folder the bin's own processes use (src/compile-cache.js: Node's
 * default folder), so a later start of the same modules skips both (a child importing the spool: 0.33 s of CPU
 * against 0.58 s, medians of fourteen). What the child runs is unchanged.
 */
export function compileCacheEnv(env: NodeJS.ProcessEnv = process.env): { NODE_COMPILE_CACHE: string } {
  return { NODE_COMPILE_CACHE: env.NODE_COMPILE_CACHE ?? path.join(os.tmpdir(), 'node-compile-cache') };
}

export function runCli(args: string[], env: Record<string, string | undefined> = {}, { nodeFlags = childFlags } = {}): Child {
  const child = spawn(process.execPath, [...nodeFlags, cliBin, ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...(nodeFlags.length > 0 && dirledgerEnv()), ...env },
  });
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of waiters) w();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      resolve({ code, signal });
      for (const w of waiters) w();
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern);
          if (m) {
            cleanup();
            resolve(m);
          } else if (child.exitCode !== null) {
            cleanup();
            reject(new Error(`process exited (${child.exitCode}) before printing ${pattern}:\n${out}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern}:\n${out}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
