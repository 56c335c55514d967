// `dirledger token admin|narrow --url`: the new token's grant recorded on that server (recordGrant)
// before the token is printed, so no token made against a server is missing from its ledger.
import { EXIT_REFUSED, isRefusalStatus, refusalLine, refusalOf } from './token.ts';

const RECORD_GRANT = /* GraphQL */ `mutation RecordGrant($token: String!, $via: GrantVia!) { recordGrant(token: $token, via: $via) { tokenId caveats } }`;

/** 0 recorded; 2 the server refused it as bad input; 3 unreachable or failing; 4 refused for the bearer. */
export async function recordGrantAt(url: string, bearer: string, token: string, via: 'NARROW' | 'ADMIN', err = process.stderr): Promise<number> {
  let response: Response;
  try {
    response = await fetch(new URL('/graphql', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ query: RECORD_GRANT, variables: { token, via } }),
    });
  } catch (error) {
    err.write(`Cannot reach the server at ${url} to record the grant (${(error as Error).message}); no token was printed.\n`);
    return 3;
  }
  const body = (await response.json().catch(() => null)) as {
    data?: unknown;
    errors?: { message: string; extensions?: { code?: string } }[];
    error?: { code: string; message: string };
  } | null;
  if (isRefusalStatus(response.status)) {
    err.write(`${refusalLine(response.status, refusalOf(body), true)}\n`);
    return EXIT_REFUSED;
  }
  const error = body?.errors?.[0];
  if (!response.ok || !body || error) {
    const code = error?.extensions?.code;
    err.write(`The server did not record the grant (${code ? `${code}: ${error!.message}` : `HTTP ${response.status}`}); no token was printed.\n`);
    return code === 'BAD_INPUT' ? 2 : code === 'FORBIDDEN' || code === 'UNAUTHENTICATED' ? EXIT_REFUSED : 3;
  }
  return 0;
}
