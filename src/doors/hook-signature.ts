// A webhook's own credential: senders that cannot carry a token (GitHub, Stripe-style) sign the
// body with a per-hook secret registered as HOOK_<TOOL> (DIRLEDGER_SECRET_HOOK_<TOOL> or the
// secrets file). `X-Dirledger-Signature: sha256=<hex HMAC of the exact body>`; X-Hub-Signature-256 works too.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Grant } from '../auth/verdict.ts';
import type { Refusal } from '../auth/verdict.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { readBody } from './respond.ts';

const HEADERS = ['x-dirledger-signature', 'x-hub-signature-256'];

export function hookSignature(headers: Headers): string | undefined {
  for (const name of HEADERS) {
    const value = headers.get(name);
    if (value) return value;
  }
  return undefined;
}

/** The secret name a hook's signatures are checked with. */
export const hookSecretName = (tool: string) => `HOOK_${tool.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`;

/**
 * Checks the signature over the exact body; on success gives a grant for this one tool through the
 * WEBHOOK door and the request rebuilt around the bytes already read.
 */
export async function verifyHookSignature(
  request: Request,
  services: Services,
  path: string,
): Promise<{ grant: Grant; request: Request } | { refusal: Refusal }> {
  let tool: string;
  try {
    tool = decodeURIComponent(path.slice('/hooks/'.length));
  } catch {
    tool = path.slice('/hooks/'.length);
  }
  const plain = (reason: string): { refusal: Refusal } => ({
    refusal: { limit: 'credential', door: 'WEBHOOK', tool, reason, message: 'Missing or invalid credential.', status: 401 },
  });
  const secretName = hookSecretName(tool);
  const secret = services.config.secrets[secretName];
  if (secret === undefined) return plain(`the hook is signed but no ${secretName} secret is registered`);
  let body: Buffer;
  try {
    body = await readBody(request, services.config.PAYLOAD_MAX_BYTES);
  } catch (error) {
    if (error instanceof DomainError) return plain(`the signed body could not be read: ${error.message}`);
    throw error;
  }
  const presented = /^sha256=([0-9a-f]{64})$/i.exec(hookSignature(request.headers)!.trim())?.[1];
  const expected = createHmac('sha256', secret).update(body).digest();
  if (!presented || !timingSafeEqual(Buffer.from(presented, 'hex'), expected)) return plain(`the ${secretName} signature does not match the body`);
  let grant: Grant;
  try {
    grant = services.authority.hookGrant(tool);
  } catch {
    return plain(`${JSON.stringify(tool)} cannot be named in a tools caveat`);
  }
  const rebuilt = new Request(request.url, { method: request.method, headers: request.headers, body: new Uint8Array(body), signal: request.signal });
  return { grant, request: rebuilt };
}
