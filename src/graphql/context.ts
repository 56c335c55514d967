import type { Services } from '../services.ts';

/** Built once per operation by every GraphQL transport (HTTP, SSE, WebSocket). */
export type Context = {
  services: Services;
};
