// How the server's node process is started.

/**
 * Flags the server's node is started with (`npm start`, the `dirledger` bin's shebang, the benchmarks;
 * a test keeps them in step). V8 sizes its young generation when the process starts, so this cannot be
 * set from inside: with 32 MB semi-spaces instead of 16, a 1 MB ingest batch's short-lived objects mostly
 * die before a scavenge copies them (A/B over 3 pairs of 200,000-event ingests: median 9,571 → 10,115
 * events/s, server 78 → 75 µs per event). The cost is memory: over the session's runs the ingest's max
 * RSS went from 236-266 to 245-290 MB (the target is under 300).
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=32'] as const;
