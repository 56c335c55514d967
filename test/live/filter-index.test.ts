// The filter index gives exactly the subscriptions whose filter matches, as testing every filter
// would, while testing only the candidates filed under the event's own values.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesFilter, type LedgerFilter } from '../../src/ledger/filter.ts';
import { FilterIndex } from '../../src/live/filter-index.ts';

const value = (prefix: string) => fc.constantFrom(`${prefix}0`, `${prefix}1`, `${prefix}2`);
const list = (prefix: string) => fc.option(fc.uniqueArray(value(prefix), { minLength: 1, maxLength: 2 }), { nil: undefined });
const filterArb: fc.Arbitrary<LedgerFilter> = fc
  .record({ tool: list('t'), session: list('s'), kind: list('k'), status: list('x'), direction: fc.option(fc.constant(['IN' as const]), { nil: undefined }) })
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as LedgerFilter);
const eventArb = fc.record({
  tool: fc.option(value('t'), { nil: null }),
  session: fc.option(value('s'), { nil: null }),
  kind: value('k'),
  status: fc.option(value('x'), { nil: null }),
  direction: fc.constantFrom('IN', 'OUT'),
  occurredAt: fc.constant(new Date('2026-11-30T00:00:00Z')),
});

describe('FilterIndex', () => {
  it('matches exactly what testing every filter matches, each subscription once', () => {
    fc.assert(
      fc.property(fc.array(filterArb, { maxLength: 30 }), fc.array(eventArb, { minLength: 1, maxLength: 10 }), (filters, events) => {
        const subs = filters.map((filter, i) => ({ filter, i }));
        const index = new FilterIndex<(typeof subs)[number]>();
        for (const s of subs) index.add(s);
        for (const e of events) {
          const got: number[] = [];
          index.match(e, (s) => got.push(s.i));
          expect(got.sort((a, b) => a - b)).toEqual(subs.filter((s) => matchesFilter(s.filter, e)).map((s) => s.i));
        }
        for (const s of subs) index.delete(s);
        expect(index.size).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('tests only the candidates filed under the event’s values, not every subscription', () => {
    let tested = 0;
    const index = new FilterIndex<{ filter: LedgerFilter }>();
    for (let i = 0; i < 1000; i++) {
      const filter = { tool: [`tool-${i % 100}`] };
      index.add({
        get filter() {
          tested++;
          return filter;
        },
      });
    }
    tested = 0;
    let delivered = 0;
    index.match({ tool: 'tool-7', kind: 'K', direction: 'IN', occurredAt: new Date() }, () => delivered++);
    expect(delivered).toBe(10);
    expect(tested).toBeLessThanOrEqual(10);
  });
});
