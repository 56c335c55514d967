// glibc's malloc settings for the server's process (see compile-cache.js, which sets them on Linux).
// Plain JavaScript without side effects, so the preload, the benchmarks and the tests can all import it.
export const MALLOC_TUNABLES = 'glibc.malloc.trim_threshold=1048576';

/**
 * GLIBC_TUNABLES with MALLOC_TUNABLES added to `current` (a process's value, or none), or undefined when it
 * already names a malloc setting, which is then left as it is.
 */
export function withMallocTunables(current = '') {
  if (current.includes('glibc.malloc.')) return undefined;
  return current ? `${current}:${MALLOC_TUNABLES}` : MALLOC_TUNABLES;
}
