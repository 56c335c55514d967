import type { Caller } from '../context/request.ts';
import type { Services } from '../services.ts';

/** Built once per operation by every GraphQL transport (HTTP, SSE, WebSocket). */
export type Context = {
  services: Services;
  /** Who asked, through which door, with the token the door verified (the request context's own caller). */
  caller: Caller;
};
