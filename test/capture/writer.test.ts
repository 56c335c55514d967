import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerWriter, type AppendTarget } from '../../src/capture/writer.ts';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import { databaseKinds, databaseOutage } from '../helpers/database.ts';
import { createTestLedger, type TestLedger } from '../helpers/ledger.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';
import { parsedEvent, until } from './helpers.ts';

const events = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => parsedEvent(`${prefix}-${i}`));

describe.each(databaseKinds)('LedgerWriter on %s', (kind) => {
  let t: TestLedger;
  let sql: RawSql;
  const writers: LedgerWriter[] = [];
  const writer = (target: AppendTarget, options: ConstructorParameters<typeof LedgerWriter>[1] = {}) => {
    const w = new LedgerWriter(target, { retryBaseMs: 5, retryMaxMs: 50, ...options });
    writers.push(w);
    return w;
  };
  const count = async (prefix: string) =>
    (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_event WHERE id LIKE $1`, [`${prefix}-%`]))[0]!.n;

  beforeEach(async () => {
    t = await createTestLedger(kind);
    sql = await rawSql(t.db);
  });
  afterEach(async () => {
    for (const w of writers.splice(0)) await w.stop(1_000);
    await sql.close();
    await t.stop();
  });

  it('cuts batches by size under one collector with increasing positions, the rest on flush', async () => {
    const w = writer(t.ledger, { collector: 'size', batchMaxEvents: 10, batchMaxDelayMs: 600_000 });
    await w.enqueue(events('size', 25));
    await until(() => w.stats().batches === 2, 'two full batches');
    expect(w.stats()).toMatchObject({ written: 20, queued: 5, position: 20 });
    await w.flush();
    expect(w.stats()).toMatchObject({ batches: 3, written: 25, queued: 0, position: 25, failedBatches: 0, dropped: 0 });
    expect(await count('size')).toBe(25);
    const batches = await sql.query<{ position: string; inserted: number }>(
      `SELECT position::text, inserted FROM ledger_batch WHERE collector = 'size' ORDER BY position`,
    );
    expect(batches).toEqual([
      { position: '10', inserted: 10 },
      { position: '20', inserted: 10 },
      { position: '25', inserted: 5 },
    ]);
    expect(await sql.query(`SELECT delivered_position::text AS p FROM collector WHERE id = 'size'`)).toEqual([{ p: '25' }]);
    // Events commit in the order they were queued.
    const order = await sql.query<{ id: string }>(`SELECT id FROM ledger_event WHERE id LIKE 'size-%' ORDER BY position`);
    expect(order.map((r) => r.id)).toEqual(events('size', 25).map((e) => e.id));
  });

  it('cuts a partial batch by time without anyone flushing', async () => {
    const w = writer(t.ledger, { batchMaxEvents: 1_000, batchMaxDelayMs: 20 });
    await w.enqueue(events('timed', 3));
    await until(() => w.stats().written === 3, 'the timed batch');
    expect(await count('timed')).toBe(3);
    expect(w.stats().batches).toBe(1);
  });

  it('slows callers when the queue is full and loses nothing', async () => {
    const w = writer(t.ledger, { queueMaxEvents: 3, batchMaxEvents: 2, batchMaxDelayMs: 1 });
    const all = events('bounded', 200);
    let resolvedBeforeRoom = 0;
    await Promise.all(
      all.map((e) =>
        w.enqueue(e).then(() => {
          if (w.stats().queued > 3) resolvedBeforeRoom++;
        }),
      ),
    );
    await w.flush();
    const stats = w.stats();
    expect(resolvedBeforeRoom).toBe(0);
    expect(stats.maxQueued).toBeLessThanOrEqual(3);
    expect(stats.slowedCallers).toBeGreaterThan(100);
    expect(stats).toMatchObject({ written: 200, queued: 0, waiting: 0, dropped: 0 });
    expect(await count('bounded')).toBe(200);
  });

  it('flushes everything on stop, then refuses more', async () => {
    const w = writer(t.ledger, { batchMaxEvents: 1_000, batchMaxDelayMs: 600_000 });
    await w.enqueue(events('stop', 40));
    expect(w.stats().queued).toBe(40);
    expect(await w.stop()).toBe(0);
    expect(await count('stop')).toBe(40);
    await expect(w.enqueue(parsedEvent('stop-late'))).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
  });

  it('refuses an invalid event at enqueue with BAD_INPUT', async () => {
    const w = writer(t.ledger);
    const bad = { ...parsedEvent('bad'), kind: '' };
    await expect(w.enqueue(bad)).rejects.toMatchObject({ code: 'BAD_INPUT' });
    expect(w.stats().queued).toBe(0);
  });

  it('retries a failed append with the same ids until the database answers, counting failures', async () => {
    let failuresLeft = 3;
    const flaky: AppendTarget = {
      append: async (batch) => {
        if (failuresLeft-- > 0) throw new DomainError(ErrorCode.DATABASE_UNAVAILABLE, 'down');
        return t.ledger.append(batch);
      },
    };
    const w = writer(flaky, { batchMaxEvents: 100, batchMaxDelayMs: 1 });
    await w.enqueue(events('flaky', 7));
    await w.flush();
    expect(w.stats()).toMatchObject({ failedBatches: 3, retried: 3, batches: 1, written: 7, dropped: 0 });
    expect(await count('flaky')).toBe(7);
  });

  it('isolates an event the ledger keeps refusing, writes the rest and counts the one dropped', async () => {
    const picky: AppendTarget = {
      append: async (batch) => {
        if (batch.events.some((e) => e.id === 'picky-5')) throw new Error('refused for another reason');
        return t.ledger.append(batch);
      },
    };
    const w = writer(picky, { batchMaxEvents: 8, batchMaxDelayMs: 1, maxAttemptsOnError: 2 });
    await w.enqueue(events('picky', 8));
    await w.flush();
    expect(await count('picky')).toBe(7);
    expect(w.stats()).toMatchObject({ dropped: 1, written: 7, queued: 0 });
  });

  it('abandons what it cannot write within the stop grace and says how much', async () => {
    const down: AppendTarget = { append: async () => Promise.reject(new DomainError(ErrorCode.DATABASE_UNAVAILABLE, 'down')) };
    const w = writer(down, { batchMaxEvents: 4, batchMaxDelayMs: 1, queueMaxEvents: 6 });
    await w.enqueue(events('lost', 6));
    const waiting = w.enqueue(events('lost-more', 2));
    await until(() => w.stats().failedBatches >= 2, 'failing appends');
    expect(await w.stop(50)).toBe(8);
    await expect(waiting).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    expect(w.stats()).toMatchObject({ dropped: 8, written: 0 });
  });

  it('writeNow commits before it returns', async () => {
    const w = writer(t.ledger);
    const result = await w.writeNow(events('now', 2));
    expect(result.inserted).toBe(2);
    expect(await count('now')).toBe(2);
    expect((await w.writeNow(events('now', 2))).duplicates).toBe(2);
    expect(w.stats()).toMatchObject({ syncWritten: 4, syncFailed: 0, queued: 0 });
  });

  if (kind === 'pglite') {
    it('writeNow fails fast with DATABASE_UNAVAILABLE once the database is gone', async () => {
      const w = writer(t.ledger);
      await t.db.close();
      const error = await w.writeNow(events('gone', 1)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'DATABASE_UNAVAILABLE', details: { retryAfterSeconds: 1 } });
      expect(w.stats().syncFailed).toBe(1);
    });
    return;
  }

  const { begin: refuse, end: allowConnections } = databaseOutage(() => t.db.url!);

  it('keeps retrying through a real outage and writes everything once the database is back', async () => {
    const w = writer(t.ledger, { collector: 'outage', batchMaxEvents: 5, batchMaxDelayMs: 1 });
    await w.enqueue(events('before', 5));
    await w.flush();
    await sql.close();
    await refuse();
    try {
      await w.enqueue(events('during', 12));
      await until(() => w.stats().failedBatches >= 2, 'failed appends during the outage');
      expect(w.stats().written).toBe(5);
      // While the database is away, writeNow fails fast for the webhook door to answer 503.
      await expect(w.writeNow(events('hook', 1))).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE', details: { retryAfterSeconds: 1 } });
    } finally {
      await allowConnections();
    }
    await w.flush();
    sql = await rawSql(t.db);
    expect(await count('during')).toBe(12);
    expect(await count('before')).toBe(5);
    expect(w.stats()).toMatchObject({ written: 17, queued: 0, dropped: 0, position: 17 });
    expect(w.stats().retried).toBeGreaterThanOrEqual(2);
    // The sender's retry of the webhook now succeeds.
    expect((await w.writeNow(events('hook', 1))).inserted).toBe(1);
  });
});
