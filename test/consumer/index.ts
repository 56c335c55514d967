// A consumer of dirledger/client, type-checked with `tsc --strict` (NodeNext, and Bundler) and run
// with plain Node against a live server: DIRLEDGER_URL and DIRLEDGER_TOKEN from the environment.
import { ConsoleCountsDocument, type ConsoleCountsQuery, createClient, type DispatchResult, DirledgerClientError } from 'dirledger/client';

declare const process: { env: Record<string, string | undefined>; stdout: { write(text: string): void } };

const client = createClient({ baseUrl: process.env.DIRLEDGER_URL ?? 'http://127.0.0.1:4000' });
const echoed: DispatchResult = await client.tools.ECHO!({ text: 'from a consumer' });
// The answer waits for the call's record to be durable in the spool; the Ledger's tables have both of its events
// (TOOL_CALL, TOOL_RESULT) a moment later.
const echoCounts = async () => (await client.ledger.counts('TOOL', { tool: ['ECHO'] })) as { key: string | null; events: number }[];
let counts = await echoCounts();
for (let tries = 0; (counts[0]?.events ?? 0) < 2 && tries < 100; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  counts = await echoCounts();
}
const typed = await client.graphql<{ directoryStats: { rows: number } }>('{ directoryStats { rows } }');
const rows: number | undefined = typed.data?.directoryStats.rows;
// A typed document: its variables checked ({ by: LedgerGrouping }) and its result typed, without a type argument.
const counted = await client.graphql(ConsoleCountsDocument, { by: 'TOOL' });
const typedCounts: ConsoleCountsQuery['ledgerCounts'] | undefined = counted.data?.ledgerCounts;
const names = await client.names('tool');
const row = (await client.ledger.row(echoed.actionId).catch((error: unknown) => (error instanceof DirledgerClientError ? error.code : 'other'))) as unknown;
let refused = '';
try {
  await createClient({ baseUrl: process.env.DIRLEDGER_URL ?? '', token: 'not-a-token' }).dispatch({ tool: 'ECHO' });
} catch (error) {
  if (error instanceof DirledgerClientError) refused = `${error.status} ${error.code}`;
}
process.stdout.write(
  `${JSON.stringify({ outcome: echoed.outcome, output: echoed.output, rows, names: names.slice(0, 2), row, counts, typedCounts, refused })}\n`,
);
