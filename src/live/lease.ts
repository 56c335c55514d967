// A live subscription lives no longer than its token: a timer at the token's expiry and the
// revocation feed end it with one TOKEN_EXPIRED or TOKEN_REVOKED item (the GraphQL resolver throws
// it, the transport sends it as an error and completes), recorded as a REFUSAL like any other.
import { randomUUID } from 'node:crypto';
import type { Authority } from '../auth/authority.ts';
import type { Grant } from '../auth/verdict.ts';
import type { Refusal } from '../auth/verdict.ts';
import type { Door } from '../context/door.ts';
import type { Revocations } from '../auth/revocations.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';

/** setTimeout's longest delay; a later expiry re-arms. */
const TIMER_MAX_MS = 2 ** 31 - 1;

export type LeaseServices = { authority: Authority; revocations: Revocations; logger: Logger };

/** The code of a token that lapsed while its connection stayed open (Authority.recheck). */
export const lapseCode = (refusal: Refusal) => (refusal.limit === 'revoked' ? ErrorCode.TOKEN_REVOKED : ErrorCode.TOKEN_EXPIRED);

/** The error a subscription ends with for a refusal of its token. */
export function endOf(refusal: Refusal): DomainError {
  const next = refusal.limit === 'revoked' ? 'The subscription has ended.' : 'The subscription has ended; subscribe again with a valid token.';
  return new DomainError(lapseCode(refusal), `${refusal.message} ${next}`);
}

/**
 * Calls `lapsed` once, with the refusal, when `grant` expires (a timer at its expiry) or it or a token
 * it was narrowed from is revoked (the revocation feed), checking at once too. Returns the stop.
 */
export function watchLapse(grant: Grant, door: Door, services: LeaseServices, lapsed: (refusal: Refusal) => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    unsubscribe?.();
  };
  const check = () => {
    if (stopped) return;
    clearTimeout(timer);
    const refusal = services.authority.recheck(grant, door);
    if (refusal) {
      stop();
      return lapsed(refusal);
    }
    const expiresAt = services.authority.expiryOf(grant);
    if (expiresAt === undefined) return;
    timer = setTimeout(check, Math.min(Math.max(0, expiresAt.getTime() - Date.now()), TIMER_MAX_MS));
    timer.unref();
  };
  if (grant.lineage.length) {
    unsubscribe = services.revocations.onRevoked((tokenId) => {
      if (grant.lineage.includes(tokenId)) check();
    });
  }
  check();
  return stop;
}

/**
 * Wraps a live iterator so it ends when `grant` expires or is revoked. `what` names the subscription
 * in the recorded refusal. Without a grant (AUTHORITY=off) the iterator is returned as it is.
 */
export function leased<T>(
  inner: AsyncIterableIterator<T>,
  grant: Grant | undefined,
  door: Door,
  what: string,
  services: LeaseServices,
): AsyncIterableIterator<T | { end: DomainError }> {
  if (!grant) return inner;
  let ended: DomainError | undefined;
  let recorded: Promise<unknown> | undefined;
  let finished = false;
  const end = (refusal: Refusal) => {
    if (ended || finished) return;
    const reason = `${refusal.reason}, ending a ${what} subscription`;
    ended = endOf(refusal);
    recorded = services.authority
      .record({ ...refusal, reason }, { actionId: randomUUID(), ...(grant.task && { task: grant.task }), ...(grant.agent && { agent: grant.agent }) })
      .catch((error) => services.logger.error({ err: error }, 'recording the end of a subscription failed'));
    // Wakes a consumer waiting on the inner iterator; it then receives the end.
    void inner.return?.()?.catch(() => {});
  };
  const stopWatching = watchLapse(grant, door, services, end);
  const cleanup = () => {
    finished = true;
    stopWatching();
  };
  const done = { value: undefined, done: true } as IteratorResult<T | { end: DomainError }>;
  return {
    async next() {
      if (finished) return done;
      if (!ended) {
        const result = await inner.next();
        if (!ended) {
          if (result.done) cleanup();
          return result;
        }
      }
      cleanup();
      // The end is recorded (durable) before the subscriber is told, like every refusal.
      await recorded;
      return { value: { end: ended! }, done: false };
    },
    async return(value?: unknown) {
      cleanup();
      await inner.return?.(value as T);
      return done;
    },
    async throw(error?: unknown) {
      cleanup();
      if (inner.throw) return inner.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
