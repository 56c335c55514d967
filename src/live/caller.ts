// Who is on the other end of a live subscription (or any GraphQL operation): the token's caller
// id and grant, so authority can filter what it delivers.
import type { Grant } from '../auth/authority.ts';

export type CallerDoor = 'HTTP' | 'SSE' | 'WS' | 'IN_PROCESS';

export type Caller = {
  /** The token's caller id (`token:<id>`); null with AUTHORITY=off. */
  id: string | null;
  door: CallerDoor;
  grant?: Grant;
};

export const callerOf = (door: CallerDoor, grant?: Grant): Caller => ({ id: grant?.caller ?? null, door, ...(grant && { grant }) });

export const anonymousCaller = (door: CallerDoor): Caller => callerOf(door);
