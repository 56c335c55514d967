// glibc's malloc settings for the server's process (see compile-cache.js, which sets them on Linux).
// Plain JavaScript without side effects, so the preload, the benchmarks and the tests can all import it.
export const MALLOC_TUNABLES = 'glibc.malloc.trim_threshold=1048576';
