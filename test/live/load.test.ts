// Under load: 4 writers append concurrently while 3 subscribers read (one unfiltered from the head,
// one filtered by tool, one replaying from a cursor in the middle while the writers go on). Each
// sees every matching event exactly once, in position order; the replay/live seam holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { batch, event } from '../helpers/ledger.ts';
import { encodeCursor } from '../../src/ledger/cursor.ts';
import { eventsQuery, waitFor, wsClient, wsSubscribe } from './helpers.ts';

const tools = ['t0', 't1', 't2', 't3', 't4'];

describe.each(databaseKinds)('4 writers and 3 subscribers on %s', (kind) => {
  // PostgreSQL gives real concurrency (one connection per writer); PGlite runs the same shape, smaller.
  const perWriter = kind === 'postgres' ? 5_000 : 500;
  const batchSize = kind === 'postgres' ? 50 : 25;
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { LIVE_POLL_MS: '1000' });
  });
  afterAll(() => t.stop());

  it('delivers every matching event exactly once, in position order, across the seam', { timeout: 120_000 }, async () => {
    const client = wsClient(t.url, t.token);
    const all = wsSubscribe(client, eventsQuery, {}, 'ledgerEvents');
    const filtered = wsSubscribe(client, eventsQuery, { filter: { tool: ['t1'] } }, 'ledgerEvents');
    await waitFor(() => t.app.services.live.stats().following === 2, 'two live subscribers');
    const start = (await t.app.services.ledger.append(batch('marker', [event('marker-start', { tool: 'marker' })]))).appended[0]!.position;
    await waitFor(() => all.events.length === 1, 'the marker');

    let appended = 0;
    let middle: bigint | undefined;
    let resolveMiddle!: () => void;
    const reachedMiddle = new Promise<void>((r) => (resolveMiddle = r));
    const writer = async (w: number) => {
      for (let b = 0; b < perWriter / batchSize; b++) {
        const evs = Array.from({ length: batchSize }, (_, i) => event(`w${w}-${b}-${i}`, { tool: tools[(b * batchSize + i) % tools.length] }));
        const result = await t.app.services.ledger.append(batch(`writer-${w}`, evs));
        appended += result.inserted;
        if (middle === undefined && appended >= perWriter) {
          middle = result.appended[0]!.position;
          resolveMiddle();
        }
      }
    };
    const writing = Promise.all([0, 1, 2, 3].map(writer));
    await reachedMiddle;
    const fromMiddle = wsSubscribe(client, eventsQuery, { after: encodeCursor(middle!) }, 'ledgerEvents');
    await writing;

    const rows = await t.app.services.db.prisma.ledgerEvent.findMany({
      where: { position: { gt: start } },
      orderBy: { position: 'asc' },
      select: { position: true, tool: true },
    });
    expect(rows.length).toBe(4 * perWriter);
    const expectAll = rows.map((r) => r.position);
    const expectT1 = rows.filter((r) => r.tool === 't1').map((r) => r.position);
    const expectMiddle = rows.filter((r) => r.position > middle!).map((r) => r.position);
    const last = expectAll.at(-1)!.toString();
    await waitFor(
      () => all.events.at(-1)?.position === last && fromMiddle.events.at(-1)?.position === last && filtered.events.length >= expectT1.length,
      'every subscriber to reach the last event',
      60_000,
    ).catch((error) => {
      const state = [all, filtered, fromMiddle].map((s) => ({ n: s.events.length, last: s.events.at(-1)?.position, errors: s.errors }));
      throw new Error(
        `${error.message}: expected ${expectAll.length}/${expectT1.length}/${expectMiddle.length} up to ${last}, got ${JSON.stringify(state)} ${JSON.stringify(t.app.services.live.stats())}`,
      );
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(all.events.slice(1).map((e) => BigInt(e.position))).toEqual(expectAll);
    expect(filtered.events.map((e) => BigInt(e.position))).toEqual(expectT1);
    expect(fromMiddle.events.map((e) => BigInt(e.position))).toEqual(expectMiddle);
    expect([all, filtered, fromMiddle].flatMap((s) => s.errors)).toEqual([]);
    const stats = t.app.services.live.stats();
    // One shared reader: its reads are far fewer than events × subscribers.
    expect(stats.rowsRead).toBeGreaterThanOrEqual(expectAll.length);
    expect(stats.reads).toBeLessThan(expectAll.length);
    for (const s of [all, filtered, fromMiddle]) s.stop();
    await client.dispose();
  });
});
