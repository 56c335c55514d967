// The grant a door verified, carried to everything the request runs (the boundary folds it into
// the invocation; GraphQL puts it on the context), so no feature has to pass it along.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Grant } from './authority.ts';

const storage = new AsyncLocalStorage<Grant | undefined>();

export function runWithGrant<T>(grant: Grant | undefined, fn: () => T): T {
  return storage.run(grant, fn);
}

/** The grant of the door request the calling code runs under, if any. */
export function currentGrant(): Grant | undefined {
  return storage.getStore();
}
