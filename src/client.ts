// `dirledger/client`: the SDK form's client, built to dist/client.js + .d.ts (npm run build:client, run
// by postinstall) so plain Node and strict NodeNext/Bundler projects can use it. Every tool is a method,
// `client.tools.NAME(args)`, that posts the canonical call to POST /api/dispatch and resolves with the
// DispatchResult; `client.graphql` runs any operation; `client.ledger` reads the seed's HTTP read
// routes. It imports nothing: no server code in its type graph (test/client/types.test.ts holds its
// wire types to the server's). The token is the `token` option, else DIRLEDGER_TOKEN where there is one.

export type DispatchOutcome = 'OK' | 'ERROR' | 'REFUSED' | 'DRY_RUN';

/** What POST /api/dispatch answers (the server's DispatchResult, as JSON). */
export type DispatchResult = {
  tool: string;
  actionId: string;
  outcome: DispatchOutcome;
  dryRun: boolean;
  /** Upstream HTTP status / CLI exit code when there is one. */
  status?: number;
  /** Parsed JSON when the answer is JSON, else text (secret values replaced by their names). */
  output?: unknown;
  /** The answer as text when it is UTF-8. */
  outputText?: string;
  /** The exact answer bytes, base64 (secret values replaced by their names). */
  outputBase64?: string;
  /** Dry run: the rendered outgoing request(s), secrets still as [NAME]. */
  requests?: unknown[];
  /** A sequence: each step's own result. */
  steps?: DispatchResult[];
  /** REFUSED / ERROR: a SCREAMING_SNAKE code and a clear message. */
  error?: { code: string; message: string };
  /** A streamed answer: how the ledger stored it. */
  stream?: { state: 'COMPLETE' | 'PARTIAL' | 'MISSING'; size: number; sha256: string | null; clientDisconnected: boolean; cut?: unknown };
};

/** A GraphQL answer. */
export type GraphqlResult<R> = { data?: R | null; errors?: { message: string; extensions?: { code?: string; [key: string]: unknown } }[] };

/** The filter of the ledger's counted reads, as query parameters. */
export type LedgerQueryFilter = Partial<Record<'kind' | 'direction' | 'tool' | 'session' | 'turn' | 'task' | 'agent' | 'model' | 'status', string[]>> & {
  occurredFrom?: string;
  occurredTo?: string;
};

export type LedgerGrouping = 'HOUR' | 'DAY' | 'SESSION' | 'TURN' | 'KIND' | 'AGENT' | 'MODEL' | 'TOOL' | 'TASK' | 'STATUS';

export type ClientOptions = {
  baseUrl: string;
  /** Sent as `authorization: Bearer <token>`; default: the DIRLEDGER_TOKEN environment variable. */
  token?: string;
  fetch?: typeof fetch;
};

export type ToolCall = (args?: Record<string, unknown>, options?: { dryRun?: boolean }) => Promise<DispatchResult>;

export type DirledgerClient = {
  tools: Record<string, ToolCall>;
  dispatch(call: { tool: string; args?: Record<string, unknown>; dryRun?: boolean }): Promise<DispatchResult>;
  /** POST /graphql: any query or mutation, its variables typed by the caller. */
  graphql<R = Record<string, unknown>, V extends Record<string, unknown> = Record<string, unknown>>(query: string, variables?: V): Promise<GraphqlResult<R>>;
  /** The seed's read routes (GET /api/ledger/…): the same JSON as the GraphQL reads of the same name. */
  ledger: {
    row(id: string): Promise<unknown>;
    action(id: string): Promise<unknown>;
    counts(by: LedgerGrouping, filter?: LedgerQueryFilter): Promise<unknown>;
    snapshot(window?: string, filter?: LedgerQueryFilter): Promise<unknown>;
    ask(question: string): Promise<unknown>;
  };
  /** GET /api/directory?names=1: every row's name, alone. */
  names(type?: string): Promise<string[]>;
};

/** Thrown when the server answers without a DispatchResult (bad input, refused credential: 401 UNAUTHENTICATED / 403 / 429, failing). */
export class DirledgerClientError extends Error {
  override name = 'DirledgerClientError';
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

declare const process: { env: Record<string, string | undefined> } | undefined;

function query(filter: LedgerQueryFilter | undefined, extra: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) params.set(name, value);
  for (const [name, value] of Object.entries(filter ?? {})) {
    if (Array.isArray(value)) for (const v of value) params.append(name, v);
    else if (typeof value === 'string') params.set(name, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function createClient(options: ClientOptions): DirledgerClient {
  const send = options.fetch ?? fetch;
  const url = new URL('/api/dispatch', options.baseUrl);
  const token = options.token ?? (typeof process === 'undefined' ? undefined : process.env.DIRLEDGER_TOKEN);
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  /** GET a read route: its JSON, or DirledgerClientError with the server's code and message. */
  const read = async (path: string): Promise<unknown> => {
    const response = await send(new URL(path, options.baseUrl), { headers: { accept: 'application/json', ...auth } });
    const type = response.headers.get('content-type') ?? '';
    const body = type.includes('json') ? ((await response.json().catch(() => null)) as unknown) : await response.text();
    if (response.ok) return body;
    const error = (body as { error?: { code?: string; message?: string } } | null)?.error;
    throw new DirledgerClientError(response.status, error?.code ?? 'BAD_RESPONSE', error?.message ?? `HTTP ${response.status}`);
  };
  const segment = encodeURIComponent;
  const dispatch: DirledgerClient['dispatch'] = async (call) => {
    const response = await send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...auth },
      body: JSON.stringify({ tool: call.tool, args: call.args ?? {}, ...(call.dryRun ? { dryRun: true } : {}), form: 'SDK' }),
    });
    const body = (await response.json().catch(() => null)) as (DispatchResult & { error?: { code: string; message: string } }) | null;
    if (body && typeof body.outcome === 'string') return body;
    throw new DirledgerClientError(
      response.status,
      body?.error?.code ?? 'BAD_RESPONSE',
      body?.error?.message ?? `HTTP ${response.status} without a DispatchResult`,
    );
  };
  const tools = new Proxy({} as Record<string, ToolCall>, {
    get: (_target, name) =>
      typeof name === 'string'
        ? (args?: Record<string, unknown>, opts?: { dryRun?: boolean }) => dispatch({ tool: name, args, dryRun: opts?.dryRun })
        : undefined,
  });
  return {
    tools,
    dispatch,
    async graphql(text, variables) {
      const response = await send(new URL('/graphql', options.baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...auth },
        body: JSON.stringify({ query: text, ...(variables && { variables }) }),
      });
      return (await response.json()) as GraphqlResult<never>;
    },
    ledger: {
      row: (id) => read(`/api/ledger/row/${segment(id)}`),
      action: (id) => read(`/api/ledger/action/${segment(id)}`),
      counts: (by, filter) => read(`/api/ledger/counts${query(filter, { by })}`),
      snapshot: (window, filter) => read(`/api/ledger/snapshot${query(filter, { window })}`),
      ask: (question) => read(`/api/ledger/ask${query(undefined, { q: question })}`),
    },
    async names(type) {
      const text = (await read(`/api/directory${query(undefined, { names: '1', type })}`)) as string;
      return text.split('\n').filter(Boolean);
    },
  };
}
