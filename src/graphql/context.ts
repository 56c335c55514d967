import type { Caller } from '../live/caller.ts';
import type { Services } from '../services.ts';

/** Built once per operation by every GraphQL transport (HTTP, SSE, WebSocket). */
export type Context = {
  services: Services;
  /** Who asked (anonymous until authority lands); live subscriptions keep it. */
  caller: Caller;
};
