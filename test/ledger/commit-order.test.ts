// Commit-ordered positions: a reader paging by "position > cursor" while several
// writers commit concurrently sees every event exactly once, in increasing order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { databaseKinds } from '../helpers/database.ts';
import { batch, createTestLedger, defaultLimits, event, type TestLedger } from '../helpers/ledger.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const WRITERS = 4;
const BATCHES_PER_WRITER = 50;

describe.each(databaseKinds)('commit-ordered positions on %s', (kind) => {
  let t: TestLedger;
  let reader: RawSql;
  const extra: Database[] = [];
  beforeAll(async () => {
    t = await createTestLedger(kind);
    reader = await rawSql(t.db);
    // Widen the race: each batch waits a little after taking its positions and before committing.
    // A plain sequence would let a later, faster writer commit a larger position first.
    await reader.exec(`
      CREATE FUNCTION test_linger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(random() * 0.004); RETURN NEW; END; $$;
      CREATE TRIGGER test_linger BEFORE INSERT ON ledger_batch FOR EACH ROW EXECUTE FUNCTION test_linger();
    `);
  });
  afterAll(async () => {
    for (const db of extra) await db.close();
    await reader?.close();
    await t?.stop();
  });

  it(`${WRITERS} concurrent writers, one reader paging throughout: every event seen exactly once, positions strictly increasing`, async () => {
    // Each writer has its own connections on PostgreSQL; PGlite has one connection and is serial by nature.
    const writers: Ledger[] = [];
    for (let w = 0; w < WRITERS; w++) {
      if (kind === 'postgres') {
        const db = await openDatabase({ url: t.db.url! }, { poolSize: 2 });
        extra.push(db);
        writers.push(new Ledger(db.prisma, t.objects, new SecretRedactor({}), defaultLimits));
      } else writers.push(t.ledger);
    }
    const expected = new Set<string>();
    const work = writers.map(async (ledger, w) => {
      for (let b = 0; b < BATCHES_PER_WRITER; b++) {
        const size = 1 + ((w * 7 + b * 3) % 5);
        const events = Array.from({ length: size }, (_, i) => {
          const id = `w${w}-b${b}-e${i}`;
          expected.add(id);
          return event(id, { payload: { state: 'COMPLETE', text: `{"writer":${w},"batch":${b},"event":${i}}` } });
        });
        await ledger.append(batch(`writer-${w}`, events, b + 1));
      }
    });
    let writing = true;
    const written = Promise.all(work).finally(() => (writing = false));

    const seen = new Set<string>();
    let cursor = 0n;
    let pages = 0;
    for (;;) {
      const finished = !writing; // decided before the read: an empty page after the last commit ends the scan
      const rows = await reader.query<{ id: string; position: string }>(
        `SELECT id, position::text AS position FROM ledger_event e WHERE e.position > $1 ORDER BY e.position LIMIT 25`,
        [cursor.toString()],
      );
      for (const row of rows) {
        expect(seen.has(row.id), `event ${row.id} seen twice`).toBe(false);
        seen.add(row.id);
        const position = BigInt(row.position);
        expect(position > cursor, `position ${position} after cursor ${cursor}`).toBe(true);
        cursor = position;
      }
      pages++;
      if (rows.length === 0 && finished) break;
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await written;
    expect(pages).toBeGreaterThan(1);
    expect(seen.size).toBe(expected.size);
    expect([...expected].filter((id) => !seen.has(id))).toEqual([]);
    const [stored] = await reader.query<{ n: number; positions: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT position)::int AS positions FROM ledger_event`,
    );
    expect(stored).toEqual({ n: expected.size, positions: expected.size });
  });
});
