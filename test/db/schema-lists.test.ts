// Lists in the code that must name every column or table of the schema: a column added to
// ledger_event without a place in the chain, or a table the server role was never granted, fails here
// rather than in production (an event column the chain skips is a column history could change unseen).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverGrants } from '../../src/db/roles.ts';
import { BATCH_FIELDS, EVENT_FIELDS } from '../../src/ledger/chain.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/database.ts';

describe.each(databaseKinds)('the schema against the lists that must cover it, on %s', (kind) => {
  let db: TestDatabase;
  const columnsOf = async (table: string) =>
    (
      await db.sql.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY column_name`,
        [table],
      )
    ).map((r) => r.column_name);
  const sorted = (names: Iterable<string>) => [...names].sort();

  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('EVENT_FIELDS, the columns the chain hashes, are every column of ledger_event, each once', async () => {
    const columns = await columnsOf('ledger_event');
    expect(columns.length).toBeGreaterThan(0);
    const hashed = EVENT_FIELDS.map((f) => f.column);
    expect(new Set(hashed).size).toBe(hashed.length);
    // A new column means a new chain version (docs/ARCHITECTURE.md, Tamper evidence): add it to EVENT_FIELDS there.
    expect(sorted(hashed)).toEqual(columns);
  });

  it('BATCH_FIELDS and the chain columns are every column of ledger_batch', async () => {
    // chain_link is the link itself, event_digests is hashed into it, column_sums only names changed columns.
    const chainColumns = ['chain_link', 'column_sums', 'event_digests'];
    expect(sorted([...BATCH_FIELDS, ...chainColumns])).toEqual(await columnsOf('ledger_batch'));
  });

  it('serverGrants names every table, so the least-privilege server role is granted what each needs', async () => {
    const tables = (
      await db.sql.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
      )
    ).map((r) => r.table_name);
    expect(tables).toContain('ledger_event');
    const granted = serverGrants.map((g) => g.table);
    expect(new Set(granted).size).toBe(granted.length);
    expect(sorted(granted)).toEqual(tables);
  });
});
