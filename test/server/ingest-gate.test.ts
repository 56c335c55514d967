// The ingest door's admission: batches and body bytes at once are bounded, callers wait in order,
// and one that waits too long (or finds the queue full) is refused with SERVER_BUSY, never dropped.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IngestGate } from '../../src/ledger/ingest-gate.ts';
import { DomainError, ErrorCode } from '../../src/errors.ts';

const limits = { slots: 3, maxBytes: 1000, maxWaiting: 100, maxWaitMs: 60_000 };

/** Work that runs until released, recording what the gate had admitted when it began. */
function held(gate: IngestGate, bytes: number, log: { started: number[]; peakBytes: number; peakActive: number }, id: number) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  const result = gate.run(bytes, async () => {
    log.started.push(id);
    log.peakBytes = Math.max(log.peakBytes, gate.load.bytes);
    log.peakActive = Math.max(log.peakActive, gate.load.active);
    await done;
    return id;
  });
  return { result, release };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('IngestGate', () => {
  it('admits by bytes and by slots, in arrival order, and a body over the budget alone', async () => {
    const gate = new IngestGate(limits);
    const log = { started: [] as number[], peakBytes: 0, peakActive: 0 };
    const a = held(gate, 600, log, 1);
    const b = held(gate, 600, log, 2); // 1,200 > 1,000: waits for a
    const c = held(gate, 10, log, 3); // would fit, but does not overtake b
    await tick();
    expect(log.started).toEqual([1]);
    expect(gate.load).toEqual({ active: 1, bytes: 600, waiting: 2 });
    a.release();
    await tick();
    expect(log.started).toEqual([1, 2, 3]);
    const big = held(gate, 5000, log, 4); // counted as the whole budget: waits until nothing else runs
    await tick();
    expect(log.started).toEqual([1, 2, 3]);
    b.release();
    c.release();
    await tick();
    expect(log.started).toEqual([1, 2, 3, 4]);
    expect(gate.load).toEqual({ active: 1, bytes: 1000, waiting: 0 });
    big.release();
    expect(await Promise.all([a.result, b.result, c.result, big.result])).toEqual([1, 2, 3, 4]);
    expect(gate.load).toEqual({ active: 0, bytes: 0, waiting: 0 });
    expect(log.peakBytes).toBeLessThanOrEqual(limits.maxBytes);
  });

  it('frees its room when the work throws', async () => {
    const gate = new IngestGate(limits);
    await expect(gate.run(900, async () => Promise.reject(new Error('parse failed')))).rejects.toThrow('parse failed');
    expect(gate.load).toEqual({ active: 0, bytes: 0, waiting: 0 });
    expect(await gate.run(900, async () => 'next')).toBe('next');
  });

  it('refuses with SERVER_BUSY and a Retry-After after waiting maxWaitMs, and admits those behind it', async () => {
    const gate = new IngestGate({ ...limits, maxWaitMs: 50 });
    const log = { started: [] as number[], peakBytes: 0, peakActive: 0 };
    const a = held(gate, 900, log, 1);
    const refused = gate.run(900, async () => 'never').catch((error: unknown) => error);
    const error = await refused;
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: ErrorCode.SERVER_BUSY, details: { retryAfterSeconds: 1 } });
    expect((error as DomainError).message).toMatch(/nothing was read or written/);
    expect(gate.load).toEqual({ active: 1, bytes: 900, waiting: 0 });
    a.release();
    expect(await a.result).toBe(1);
  });

  it('refuses at once when maxWaiting requests already wait', async () => {
    const gate = new IngestGate({ ...limits, maxWaiting: 1 });
    const log = { started: [] as number[], peakBytes: 0, peakActive: 0 };
    const a = held(gate, 1000, log, 1);
    const b = held(gate, 1, log, 2);
    await expect(gate.run(1, async () => 'never')).rejects.toMatchObject({ code: ErrorCode.SERVER_BUSY });
    a.release();
    await tick();
    b.release();
    expect(await Promise.all([a.result, b.result])).toEqual([1, 2]);
  });

  it('never holds more than its budget or slots, and runs every request (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 1500 }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 4 }), async (sizes, slots) => {
        const gate = new IngestGate({ ...limits, slots });
        let bytes = 0;
        let active = 0;
        const ran: number[] = [];
        await Promise.all(
          sizes.map((size, i) =>
            gate.run(size, async () => {
              active++;
              bytes += Math.min(size, limits.maxBytes);
              expect(active).toBeLessThanOrEqual(slots);
              expect(active === 1 || bytes <= limits.maxBytes).toBe(true);
              await tick();
              ran.push(i);
              active--;
              bytes -= Math.min(size, limits.maxBytes);
            }),
          ),
        );
        expect(ran.sort((x, y) => x - y)).toEqual(sizes.map((_, i) => i));
        expect(gate.load).toEqual({ active: 0, bytes: 0, waiting: 0 });
      }),
      { numRuns: 100 },
    );
  });
});
