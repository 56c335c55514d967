import type { Grant } from '../auth/authority.ts';
import type { Caller } from '../live/caller.ts';
import type { Services } from '../services.ts';

/** Built once per operation by every GraphQL transport (HTTP, SSE, WebSocket). */
export type Context = {
  services: Services;
  /** Who asked; live subscriptions keep it. */
  caller: Caller;
  /** The token the door verified; absent only with AUTHORITY=off. */
  grant?: Grant;
};
