// Every door's first step: find the credential, verify it for this door, and answer a refusal
// (recorded as a REFUSAL event) before anything else runs. Only /healthz and GraphiQL's page are open.
import { randomUUID } from 'node:crypto';
import type { Checked, Grant, Refusal } from '../auth/authority.ts';
import type { AuthDoor } from '../auth/caveats.ts';
import { InvocationHeaders } from '../capture/boundary.ts';
import { TokenParam } from '../directory/forms.ts';
import type { Services } from '../services.ts';
import { json } from './respond.ts';

/** `Authorization: Bearer …`, else the `token` query parameter (links, webhooks, browser WebSockets). */
export function credentialOf(headers: Headers, url?: URL): string | undefined {
  const value = headers.get('authorization');
  const bearer = value ? /^Bearer\s+(\S+)\s*$/i.exec(value)?.[1] : undefined;
  return bearer ?? url?.searchParams.get(TokenParam) ?? undefined;
}

/** The token in graphql-ws connection params: `{ authorization: "Bearer …" }` or `{ token }`. */
export function credentialOfParams(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (!params) return undefined;
  const auth = params.authorization ?? params.Authorization;
  if (typeof auth === 'string') return /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
  return typeof params.token === 'string' ? params.token : undefined;
}

/** Authenticates a door request and applies the per-token rate limit; refusals are recorded. */
export async function admit(services: Services, door: AuthDoor, token: string | undefined, request?: { method: string; url: string; headers: Headers }): Promise<Checked> {
  const checked = services.authority.authenticate(token, door);
  const refusal = checked.ok ? await services.authority.rate(checked.grant, door) : checked.refusal;
  if (!refusal) return checked;
  await recordRefusal(services, refusal, checked.ok ? checked.grant : undefined, request);
  return { ok: false, refusal };
}

export async function recordRefusal(services: Services, refusal: Refusal, grant: Grant | undefined, request?: { method: string; url: string; headers: Headers }): Promise<void> {
  const header = (name: string) => request?.headers.get(name) ?? undefined;
  const actionId = header(InvocationHeaders.actionId)?.slice(0, 256) || randomUUID();
  const task = grant?.task ?? header(InvocationHeaders.task)?.slice(0, 512);
  const agent = grant?.agent ?? header(InvocationHeaders.agent)?.slice(0, 512);
  const session = header(InvocationHeaders.session)?.slice(0, 512);
  try {
    await services.authority.record(refusal, {
      actionId,
      ...(session && { session }),
      ...(task && { task }),
      ...(agent && { agent }),
      ...(request && { method: request.method, url: request.url }),
    });
  } catch (error) {
    services.logger.error({ err: error }, 'recording a refusal failed');
  }
}

/** The HTTP answer to a refusal: 401 plain, 403 naming the limit, 429 with Retry-After. */
export function refusalResponse(refusal: Refusal): Response {
  const code = refusal.limit === 'revoked' ? 'TOKEN_REVOKED' : refusal.status === 401 ? 'UNAUTHENTICATED' : refusal.status === 429 ? 'RATE_LIMITED' : 'FORBIDDEN';
  const headers: Record<string, string> = {};
  if (refusal.status === 401) headers['www-authenticate'] = 'Bearer realm="dirledger"';
  if (refusal.retryAfterSeconds) headers['retry-after'] = String(refusal.retryAfterSeconds);
  const limit = refusal.status === 403 ? { limit: refusal.limit, ...(refusal.caveat && { caveat: refusal.caveat }) } : {};
  return json({ error: { code, message: refusal.message, ...limit } }, refusal.status, headers);
}
