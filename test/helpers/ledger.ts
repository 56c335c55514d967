// A Ledger core on a fresh test database, without the HTTP doors, and event builders.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BatchInput } from '../../src/ledger/input.ts';
import { Ledger, type LedgerLimits } from '../../src/ledger/ledger.ts';
import { FolderObjectStore, type ObjectStore } from '../../src/ledger/object-store.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './database.ts';

export const defaultLimits: LedgerLimits = { inlineMaxBytes: 262_144, payloadMaxBytes: 8_388_608 };

export type TestLedger = {
  db: TestDatabase;
  ledger: Ledger;
  objects: ObjectStore;
  blobDir: string;
  stop(): Promise<void>;
};

export async function createTestLedger(
  kind: DatabaseKind,
  options: { secrets?: Record<string, string>; limits?: Partial<LedgerLimits>; poolSize?: number } = {},
): Promise<TestLedger> {
  const db = await createTestDatabase(kind, { poolSize: options.poolSize });
  const blobDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-blobs-'));
  const objects = new FolderObjectStore(blobDir);
  const ledger = new Ledger(db.prisma, objects, new SecretRedactor(options.secrets ?? {}), { ...defaultLimits, ...options.limits });
  return {
    db,
    ledger,
    objects,
    blobDir,
    async stop() {
      await db.drop();
      await rm(blobDir, { recursive: true, force: true });
    },
  };
}

/** A valid event as a collector would send it (JSON shape, before zod). */
export function event(id: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    kind: 'TOOL_CALL',
    direction: 'IN',
    actionId: `act-${id}`,
    occurredAt: '2026-11-30T12:00:00.000Z',
    payload: { state: 'COMPLETE', text: `{"event":${JSON.stringify(id)}}` },
    ...overrides,
  };
}

/** Parses a batch as the doors do, so tests append exactly what a door would. */
export function batch(collector: string, events: Record<string, unknown>[], position?: number | string): BatchInput {
  return BatchInput.parse({ collector, events, ...(position === undefined ? {} : { position }) });
}
