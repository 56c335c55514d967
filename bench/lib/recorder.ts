// The product's recording pipeline and nothing else, with the server's defaults: the durable Spool
// (redaction, frames, group commit), the LedgerWriter and Ledger.append on a PostgreSQL database.
// The benches' peers that keep the server's record (the recording floor, PostGraphile recording its
// answers) open it here, so what they pay for the record is what the server pays.
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { openDatabase } from '../../src/db/client.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { FolderObjectStore } from '../../src/ledger/object-store.ts';
import { Spool } from '../../src/ledger/spool.ts';
import { LedgerWriter } from '../../src/capture/writer.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import type { EventInput } from '../../src/ledger/input.ts';

export type Recorder = {
  spool: Spool;
  writer: LedgerWriter;
  /** Counts a request as being served until its response closes: a lone one's records are written in place, as the server's are. */
  serving(res: ServerResponse): void;
  close(): Promise<void>;
};

/** Opens the pipeline on the database at `url`, its spool and blobs under `folder`; close() flushes the writer first. */
export async function openRecorder(url: string, folder: string): Promise<Recorder> {
  const database = await openDatabase({ url });
  await database.migrate();
  const redactor = new SecretRedactor({});
  const ledger = new Ledger(database.prisma, new FolderObjectStore(path.join(folder, 'blobs')), redactor, {
    inlineMaxBytes: 262_144,
    payloadMaxBytes: 8_388_608,
  });
  // The server's defaults: SPOOL_MAX_BYTES, CAPTURE_QUEUE_MAX_EVENTS, SPOOL_LINGER_MS, CAPTURE_BATCH_MAX_EVENTS and _DELAY_MS.
  const { spool } = await Spool.open({ dir: path.join(folder, 'spool'), maxBytes: 268_435_456, maxEvents: 20_000, lingerMs: 50, redactor });
  const writer = new LedgerWriter(ledger, { spool, batchMaxEvents: 500, batchMaxDelayMs: 50 });
  let inFlight = 0;
  spool.writeInPlaceWhen(() => inFlight <= 1);
  return {
    spool,
    writer,
    serving(res) {
      inFlight++;
      res.on('close', () => inFlight--);
    },
    async close() {
      await writer.stop(30_000);
      await spool.close();
      await database.close();
    },
  };
}

/** One event of an action, its id `<action>:<suffix>`, stamped now. */
export const eventOf = (actionId: string, suffix: string, fields: Partial<EventInput>): EventInput =>
  ({ id: `${actionId}:${suffix}`, actionId, occurredAt: new Date(), payload: { state: 'NONE' }, ...fields }) as EventInput;
