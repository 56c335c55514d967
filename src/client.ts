// `dirledger/client`: the SDK form's client. Every tool is a method, `client.tools.NAME(args)`, that
// posts the canonical call to POST /api/dispatch and resolves with the DispatchResult. The token is
// the `token` option, else DIRLEDGER_TOKEN from the environment (where there is one).
import type { DispatchResult } from './dispatch/result.ts';

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

export function createClient(options: ClientOptions): DirledgerClient {
  const send = options.fetch ?? fetch;
  const url = new URL('/api/dispatch', options.baseUrl);
  const token = options.token ?? (typeof process === 'undefined' ? undefined : process.env.DIRLEDGER_TOKEN);
  const dispatch: DirledgerClient['dispatch'] = async (call) => {
    const response = await send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
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
  return { tools, dispatch };
}
