// How the server's node process is started.

/**
 * Flags the server's node is started with (`npm start`, the `dirledger` bin's shebang, the benchmarks;
 * a test keeps them in step). V8 sizes its young generation when the process starts, so this cannot be
 * set from inside. 16 MB semi-spaces: 32 let a 1 MB
 * ingest batch's short-lived objects mostly die before a scavenge copies them (server 78 → 75 µs per
 * event on PostgreSQL), but the semi-spaces grown during start-up stay committed, ~30 MB more idle RSS
 * (242 → 272 MB on PGlite), which the embedded default's 250 MB target cannot pay.
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=16'] as const;
