// The live page's subscription, run in a Web Worker: graphql-ws reads and checks each of hundreds of
// messages a second here, off the page's main thread, and the page receives one batch per FLUSH_MS.
// A subscription the server ends for slowness (SUBSCRIBER_TOO_SLOW) is started again from the cursor
// its error names, so nothing is missed and nothing is doubled.
import { graphql } from '../gql/index.ts';
import type { ConsoleLiveSubscription, LedgerFilter } from '../gql/graphql.ts';
import { type GraphqlError, socketOf, subscribe } from './client.ts';

const LiveEvents = graphql(`
  subscription ConsoleLive($filter: LedgerFilter, $after: String) {
    ledgerEvents(filter: $filter, after: $after) {
      id
      cursor
      position
      occurredAt
      kind
      direction
      toolName
      status
      session
      task
      actionId
    }
  }
`);

export type LiveRow = ConsoleLiveSubscription['ledgerEvents'];
/** From the page: one per worker, which lives as long as the subscription. */
export type LiveStart = { token: string | null; filter: LedgerFilter; after: string | null };
/** To the page. */
export type LiveReport = { type: 'rows'; rows: LiveRow[] } | { type: 'resumed' } | { type: 'error'; errors: GraphqlError[] };

/** Rows go to the page at most this often: fewer, cheaper frames under hundreds of events a second. */
const FLUSH_MS = 100;

function run({ token, filter, after }: LiveStart, report: (r: LiveReport) => void): void {
  const socket = socketOf(() => token);
  let cursor = after;
  let batch: LiveRow[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    timer = undefined;
    report({ type: 'rows', rows: batch });
    batch = [];
  };
  const start = () =>
    subscribe(
      LiveEvents,
      { filter, ...(cursor && { after: cursor }) },
      {
        next: ({ ledgerEvents }) => {
          batch.push(ledgerEvents);
          cursor = ledgerEvents.cursor;
          timer ??= setTimeout(flush, FLUSH_MS);
        },
        error: (caught) => {
          if (caught.code !== 'SUBSCRIBER_TOO_SLOW') return report({ type: 'error', errors: caught.errors });
          const resumeAt = caught.errors[0]?.extensions?.cursor;
          if (typeof resumeAt === 'string') cursor = resumeAt;
          report({ type: 'resumed' });
          start();
        },
        complete: () => {},
      },
      socket,
    );
  start();
}

// Only inside a worker: the page imports the types above.
if (typeof document === 'undefined') {
  let started = false;
  self.onmessage = (event: MessageEvent<LiveStart>) => {
    if (started) return;
    started = true;
    run(event.data, (report) => self.postMessage(report));
  };
}
