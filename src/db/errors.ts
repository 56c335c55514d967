// Recognises "the database is not there" across both drivers, so doors can answer 503.

const unavailableSqlStates = /^(08\d{3}|57P0[1-3]|53300|55000|3D000)$/;
const unavailableKinds = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'DatabaseDoesNotExist']);
const unavailableMessages =
  /ECONNREFUSED|ECONNRESET|EPIPE|Connection terminated|not currently accepting connections|PGlite is closed|terminating connection|Can't reach database|Client has encountered a connection error|connection is closed|timeout exceeded when trying to connect/i;

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; kind?: unknown; originalCode?: unknown };
  if (typeof e.code === 'string' && (unavailableSqlStates.test(e.code) || e.code === 'P1001' || e.code === 'P1017')) return true;
  if (typeof e.originalCode === 'string' && unavailableSqlStates.test(e.originalCode)) return true;
  if (typeof e.kind === 'string' && unavailableKinds.has(e.kind)) return true;
  if (typeof e.message === 'string' && unavailableMessages.test(e.message)) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}
