// `dirledger token revoke <id or token> --reason "…"`: the revokeToken mutation on a running server,
// sent with the caller's token (which needs the revoke power).
import { EXIT_REFUSED, isRefusalStatus, refusalLine, refusalOf } from './token.ts';

export type RevokeOptions = { url: string; token?: string; reason: string; json?: boolean };

const mutation = /* GraphQL */ `mutation Revoke($tokenId: String!, $reason: String!) {
  revokeToken(tokenId: $tokenId, reason: $reason) { tokenId reason revokedBy revokedAt actionId already }
}`;

/** Prints the revocation; returns the exit code (0 revoked, 2 bad input, 3 server unreachable or failing, 4 refused for the caller's credential). */
export async function revoke(tokenId: string, opts: RevokeOptions, out = process.stdout, err = process.stderr): Promise<number> {
  const url = new URL('/graphql', opts.url);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
      body: JSON.stringify({ query: mutation, variables: { tokenId, reason: opts.reason } }),
    });
  } catch (error) {
    err.write(`Cannot reach the server at ${opts.url} (${(error as Error).message}). Pass --url or set DIRLEDGER_URL.\n`);
    return 3;
  }
  const body = (await response.json().catch(() => null)) as {
    data?: { revokeToken: { tokenId: string; reason: string; revokedBy: string; revokedAt: string; actionId: string; already: boolean } | null };
    errors?: { message: string; extensions?: { code?: string } }[];
    error?: { code: string; message: string };
  } | null;
  if (isRefusalStatus(response.status)) {
    err.write(`${refusalLine(response.status, refusalOf(body), Boolean(opts.token))}\n`);
    return EXIT_REFUSED;
  }
  const error = body?.errors?.[0];
  if (error) {
    const code = error.extensions?.code ?? 'ERROR';
    err.write(`${code}: ${error.message}\n`);
    return code === 'FORBIDDEN' || code === 'UNAUTHENTICATED' ? EXIT_REFUSED : code === 'BAD_INPUT' ? 2 : 3;
  }
  const done = body?.data?.revokeToken;
  if (!response.ok || !done) {
    err.write(`HTTP ${response.status}\n`);
    return 3;
  }
  if (opts.json) out.write(`${JSON.stringify(done)}\n`);
  else out.write(`${done.already ? 'already revoked' : 'revoked'}: token ${done.tokenId} at ${done.revokedAt} by ${done.revokedBy} (${done.reason})\n`);
  return 0;
}
