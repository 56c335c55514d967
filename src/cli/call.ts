// `dirledger call NAME --args '{…}'`: sends the canonical call to a running server's POST /api/dispatch,
// so its runner makes the call and its ledger records it. Prints the DispatchResult as JSON.
import { EXIT_REFUSED, isRefusalStatus, refusalLine } from './token.ts';

export type CallOptions = { url: string; args?: string; dryRun?: boolean; token?: string; form?: string };

/**
 * Exit codes: 0 OK or DRY_RUN; 1 the call ran and failed (ERROR) or was refused (REFUSED); 2 bad input;
 * 3 server unreachable or failing; 4 refused for its credential: none or invalid (401), the token's
 * limits (403, also a REFUSED result with code FORBIDDEN) or its rate (429), with the server's message on stderr.
 */
export async function call(tool: string, opts: CallOptions, out = process.stdout, err = process.stderr): Promise<number> {
  let args: unknown = {};
  if (opts.args !== undefined) {
    try {
      args = JSON.parse(opts.args);
    } catch (error) {
      err.write(`--args: expected a JSON object, got text that is not JSON (${(error as Error).message})\n`);
      return 2;
    }
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) {
    err.write(`--args: expected a JSON object, got ${JSON.stringify(args)}\n`);
    return 2;
  }
  const url = new URL('/api/dispatch', opts.url);
  const body = { tool, args, ...(opts.dryRun ? { dryRun: true } : {}), form: opts.form ?? 'CLI' };
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-dirledger-caller': 'dirledger call',
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      },
      body: JSON.stringify(body),
    });
  } catch (error) {
    err.write(`Cannot reach the server at ${opts.url} (${(error as Error).message}). Start one with \`dirledger serve\` or pass --url.\n`);
    return 3;
  }
  const text = await response.text();
  type Answer = { outcome?: string; error?: { code?: string; message?: string } };
  let answer = null as Answer | null;
  try {
    answer = JSON.parse(text) as Answer;
  } catch {
    // Not JSON: reported below with the status.
  }
  if (!answer || typeof answer.outcome !== 'string') {
    if (isRefusalStatus(response.status)) {
      err.write(`${refusalLine(response.status, answer?.error, Boolean(opts.token))}\n`);
      return EXIT_REFUSED;
    }
    err.write(`${answer?.error ? `${answer.error.code}: ${answer.error.message}` : `HTTP ${response.status}: ${text.slice(0, 500)}`}\n`);
    return response.status === 400 || response.status === 404 ? 2 : 3;
  }
  out.write(`${JSON.stringify(answer, null, 2)}\n`);
  if (answer.outcome === 'REFUSED' && answer.error?.code === 'FORBIDDEN') {
    err.write(`FORBIDDEN: ${answer.error.message}\n`);
    return EXIT_REFUSED;
  }
  return answer.outcome === 'OK' || answer.outcome === 'DRY_RUN' ? 0 : 1;
}
