// Preloaded by the npm scripts (`node --import ./src/compile-cache.js …`) and called by the bin: Node
// keeps the JavaScript it strips from each .ts file, compiled, in a cache folder (NODE_COMPILE_CACHE,
// else the system's temporary folder), so a later start skips the type stripper (17 MB of RSS for
// as long as the process lives) and the compile. A changed file is stripped again.
//
// On Linux it first restarts the process in place (same pid, same arguments) with MALLOC_TUNABLES
// added to GLIBC_TUNABLES, which glibc reads only when a process starts. Its default keeps what the
// start-up freed (module loading, WebAssembly compiles on worker threads) for reuse, ~60 MB of an
// idle server's RSS; with a fixed trim threshold it gives it back (docs/ARCHITECTURE.md, "The
// embedded database"). GLIBC_TUNABLES already naming a malloc setting is left as it is.
import module from 'node:module';
import { isMainThread } from 'node:worker_threads';
import { withMallocTunables } from './malloc-tunables.js';

const tunables = withMallocTunables(process.env.GLIBC_TUNABLES);
if (process.platform === 'linux' && isMainThread && process.argv[1] && typeof process.execve === 'function' && tunables !== undefined) {
  const env = { ...process.env, GLIBC_TUNABLES: tunables };
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env);
}

module.enableCompileCache?.();
