// The tail reads nothing while no subscription is open (appends, signals and polls included), and the
// next subscription after an idle spell starts at the present, with nothing missed from a cursor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { batch, event } from '../helpers/ledger.ts';
import { eventsQuery, waitFor, wsClient, wsSubscribe } from './helpers.ts';

let seq = 0;
const events = (n: number) => Array.from({ length: n }, () => event(`idle-${++seq}`, { tool: 'idle' }));

describe.each(databaseKinds)('the live tail when nobody subscribes, on %s', (kind) => {
  let t: TestApp;
  // A short safety poll: an idle tail that still polled would read many times during the test.
  beforeAll(async () => {
    t = await startTestApp(kind, { LIVE_POLL_MS: '20' });
  });
  afterAll(() => t.stop());

  const live = () => t.app.services.live;
  const append = (n: number) => t.app.services.ledger.append(batch('idle', events(n)));
  /** Lets the tail react to the wakes just sent and to several polls, then waits for any read it began. */
  const settle = async () => {
    await new Promise((r) => setTimeout(r, 200));
    await live().idle();
  };

  it('reads nothing before the first subscription, nor after the last one leaves, and resumes with no gap', async () => {
    await append(5);
    await settle();
    expect(live().stats()).toMatchObject({ reads: 0, active: false });

    const client = wsClient(t.url, t.token);
    const first = wsSubscribe(client, eventsQuery, { filter: { tool: ['idle'] } }, 'ledgerEvents');
    await waitFor(() => live().stats().following === 1, 'the first subscription live');
    const before = await append(3);
    await waitFor(() => first.events.length === 3, 'live deliveries');
    expect(first.events.map((e) => BigInt(e.position))).toEqual(before.appended.map((a) => a.position));
    const lastCursor = first.events.at(-1).cursor;
    first.stop();
    await waitFor(() => live().stats().subscribers === 0, 'the subscription released');
    await live().idle();
    expect(live().stats().active).toBe(false);

    const readsWhenIdle = live().stats().reads;
    const wakesWhenIdle = live().stats().wakes;
    const gap = [...(await append(4)).appended, ...(await append(4)).appended];
    await settle();
    expect(live().stats().wakes).toBeGreaterThan(wakesWhenIdle);
    expect(live().stats().reads).toBe(readsWhenIdle);

    // Without a cursor: from the present on, so none of the gap's events.
    const fresh = wsSubscribe(client, eventsQuery, { filter: { tool: ['idle'] } }, 'ledgerEvents');
    await waitFor(() => live().stats().following === 1, 'the fresh subscription live');
    expect(live().stats().active).toBe(true);
    // From the cursor taken before the idle spell: the gap, replayed, then live.
    const resumed = wsSubscribe(client, eventsQuery, { filter: { tool: ['idle'] }, after: lastCursor }, 'ledgerEvents');
    await waitFor(() => live().stats().following === 2, 'the resumed subscription live');
    const after = await append(3);
    await waitFor(() => fresh.events.length >= 3 && resumed.events.length >= gap.length + 3, 'deliveries after the idle spell');
    expect(fresh.events.map((e) => BigInt(e.position))).toEqual(after.appended.map((a) => a.position));
    expect(resumed.events.map((e) => BigInt(e.position))).toEqual([...gap, ...after.appended].map((a) => a.position));
    expect(live().stats().reads).toBeGreaterThan(readsWhenIdle);
    expect([...first.errors, ...fresh.errors, ...resumed.errors]).toEqual([]);

    fresh.stop();
    resumed.stop();
    await waitFor(() => live().stats().subscribers === 0, 'both released');
    await client.dispose();
  });
});
