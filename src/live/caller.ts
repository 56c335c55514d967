// Who is on the other end of a live subscription. Anonymous until the authority issue lands;
// every subscription keeps its caller so authority can filter what it delivers.

export type CallerDoor = 'HTTP' | 'SSE' | 'WS' | 'IN_PROCESS';

export type Caller = {
  /** A stable identity once callers authenticate; null for anonymous. */
  id: string | null;
  door: CallerDoor;
};

export const anonymousCaller = (door: CallerDoor): Caller => ({ id: null, door });
