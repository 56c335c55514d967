// `dirledger tail`: live ledger events in the terminal, over graphql-ws. A subscription closed for
// slowness (SUBSCRIBER_TOO_SLOW) is resumed from its cursor, so nothing printed is missed or repeated.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { EXIT_REFUSED, refusalLine } from './token.ts';

export type TailOptions = {
  /** The server's base URL (http://…) or its GraphQL endpoint. */
  url: string;
  /** Sent in connection_init as `authorization: Bearer <token>`. */
  token?: string;
  tool?: string[];
  kind?: string[];
  session?: string[];
  after?: string;
  json?: boolean;
  /** Stop after this many events (for scripts and tests). */
  limit?: number;
};

const query = /* GraphQL */ `subscription Tail($filter: LedgerFilter, $after: String) {
  ledgerEvents(filter: $filter, after: $after) {
    id position cursor kind direction toolName session status occurredAt payloadState payloadSize
  }
}`;

type TailEvent = {
  id: string;
  position: string;
  cursor: string;
  kind: string;
  direction: string;
  toolName: string | null;
  session: string | null;
  status: string | null;
  occurredAt: string;
  payloadState: string;
  payloadSize: string | null;
};

function endpoint(url: string): string {
  const u = new URL(url);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/graphql';
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.toString();
}

type Columns = {
  position: string;
  occurredAt: string;
  direction: string;
  kind: string;
  tool: string;
  status: string;
  id: string;
  payload: string;
  cursor: string;
};

function columns(c: Columns): string {
  return `${c.position.padStart(8)}  ${c.occurredAt.padEnd(24)}  ${c.direction.padEnd(3)} ${c.kind.padEnd(12)} ${c.tool.padEnd(20)} ${c.status.padEnd(6)} ${c.id}  ${c.payload}  ${c.cursor}`;
}

/** The table's header, printed once above the first event (not with --json). */
export const header = columns({
  position: 'POSITION',
  occurredAt: 'OCCURRED AT',
  direction: 'DIR',
  kind: 'KIND',
  tool: 'TOOL',
  status: 'STATUS',
  id: 'EVENT ID',
  payload: 'PAYLOAD',
  cursor: 'CURSOR',
});

function line(e: TailEvent): string {
  const size = e.payloadSize === null ? '' : ` ${e.payloadSize}B`;
  return columns({
    position: e.position,
    occurredAt: e.occurredAt,
    direction: e.direction,
    kind: e.kind,
    tool: e.toolName ?? '-',
    status: e.status ?? '-',
    id: e.id,
    payload: `${e.payloadState}${size}`,
    cursor: e.cursor,
  });
}

/** graphql-ws closes a connection whose connection_init it refuses with 4403 (or 4401 before one arrives). */
const refusedClose = (error: unknown) => [4401, 4403, 4429].includes((error as { code?: unknown } | null)?.code as number);
const refusalCodes = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED', 'TOKEN_EXPIRED', 'TOKEN_REVOKED']);

/** Prints events until interrupted (or `limit`); returns the exit code (0, 2 refused as bad input, 3 unreachable, 4 refused for its credential). */
export async function tail(opts: TailOptions, out = process.stdout, err = process.stderr, signal?: AbortSignal): Promise<number> {
  const filter = Object.fromEntries(Object.entries({ tool: opts.tool, kind: opts.kind, session: opts.session }).filter(([, v]) => v?.length));
  const client = createClient({
    url: endpoint(opts.url),
    webSocketImpl: WebSocket,
    connectionParams: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
    retryAttempts: 5,
    // A refused credential stays refused: no retry.
    shouldRetry: (error) => !refusedClose(error) && typeof (error as { code?: unknown } | null)?.code === 'number',
    lazy: true,
  });
  let after = opts.after;
  let printed = 0;
  let headed = false;
  try {
    for (;;) {
      const outcome = await new Promise<{ code: number } | { resume: string }>((resolve) => {
        let stop = () => {};
        const onAbort = () => {
          stop();
          resolve({ code: 0 });
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        stop = client.subscribe<{ ledgerEvents: TailEvent }>(
          { query, variables: { filter, ...(after && { after }) } },
          {
            next: (result) => {
              const error = result.errors?.[0];
              if (error?.extensions?.code === 'SUBSCRIBER_TOO_SLOW' && typeof error.extensions.cursor === 'string') {
                resolve({ resume: error.extensions.cursor });
                return;
              }
              if (error) {
                err.write(`${error.extensions?.code ?? 'ERROR'}: ${error.message}\n`);
                const code = String(error.extensions?.code ?? '');
                resolve({ code: code === 'BAD_INPUT' ? 2 : refusalCodes.has(code) ? EXIT_REFUSED : 1 });
                return;
              }
              const e = result.data!.ledgerEvents;
              after = e.cursor;
              if (!opts.json && printed === 0 && !headed) {
                headed = true;
                out.write(`${header}\n`);
              }
              out.write(opts.json ? `${JSON.stringify(e)}\n` : `${line(e)}\n`);
              if (opts.limit !== undefined && ++printed >= opts.limit) {
                stop();
                resolve({ code: 0 });
              }
            },
            error: (error) => {
              if (refusedClose(error)) {
                const { code, reason } = error as { code: number; reason?: string };
                err.write(
                  `${refusalLine(401, { code: 'UNAUTHENTICATED', message: `the server closed the connection (${code} ${reason || 'Forbidden'}): missing or invalid credential.` }, Boolean(opts.token))}\n`,
                );
                resolve({ code: EXIT_REFUSED });
                return;
              }
              const message = Array.isArray(error) ? error.map((e) => e.message).join('; ') : error instanceof Error ? error.message : 'the connection closed';
              err.write(`Cannot follow the ledger at ${opts.url}: ${message}\n`);
              resolve({ code: Array.isArray(error) ? 2 : 3 });
            },
            complete: () => resolve({ code: 0 }),
          },
        );
      });
      if ('code' in outcome) return outcome.code;
      after = outcome.resume;
    }
  } finally {
    await client.dispose();
  }
}
