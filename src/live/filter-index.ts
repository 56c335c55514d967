// Subscriptions indexed by filter, so an event is tested only against the subscriptions that could
// match it: each one is filed under one dimension of its filter (the most selective it names) and
// each of that dimension's values, or under "unfiltered" when it names none.
import { matchesFilter, type FilterableEvent, type FilterDimension, type LedgerFilter } from '../ledger/filter.ts';

/** The dimension a filter is filed under: the first of these it names. */
const indexOrder: FilterDimension[] = ['tool', 'session', 'task', 'turn', 'agent', 'model', 'kind', 'status'];

export type Indexed = { readonly filter: LedgerFilter };

export class FilterIndex<S extends Indexed> {
  private readonly byDimension = new Map<FilterDimension, Map<string, Set<S>>>();
  private readonly unfiltered = new Set<S>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(sub: S): void {
    const dimension = indexOrder.find((d) => sub.filter[d]);
    this.count++;
    if (!dimension) {
      this.unfiltered.add(sub);
      return;
    }
    let values = this.byDimension.get(dimension);
    if (!values) {
      values = new Map();
      this.byDimension.set(dimension, values);
    }
    for (const value of sub.filter[dimension]!) {
      let set = values.get(value);
      if (!set) {
        set = new Set();
        values.set(value, set);
      }
      set.add(sub);
    }
  }

  delete(sub: S): void {
    const dimension = indexOrder.find((d) => sub.filter[d]);
    if (!dimension) {
      if (this.unfiltered.delete(sub)) this.count--;
      return;
    }
    const values = this.byDimension.get(dimension);
    let removed = false;
    for (const value of sub.filter[dimension]!) {
      const set = values?.get(value);
      if (set?.delete(sub)) removed = true;
      if (set?.size === 0) values!.delete(value);
    }
    if (values?.size === 0) this.byDimension.delete(dimension);
    if (removed) this.count--;
  }

  /** Calls `deliver` once for each subscription whose whole filter matches the event. */
  match(event: FilterableEvent, deliver: (sub: S) => void): void {
    for (const sub of this.unfiltered) if (matchesFilter(sub.filter, event)) deliver(sub);
    for (const [dimension, values] of this.byDimension) {
      const value = event[dimension];
      if (value === null || value === undefined) continue;
      const set = values.get(value);
      if (set) for (const sub of set) if (matchesFilter(sub.filter, event)) deliver(sub);
    }
  }
}
