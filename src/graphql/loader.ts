// A per-operation batch loader (DataLoader): keys asked for under one name before the next
// setImmediate are loaded by one call, so a list of rows resolving the same field issues one
// statement, not one per row. Nothing is cached across batches: a long-lived context (a
// subscription) reads fresh rows each time.
import DataLoader from 'dataloader';

const loaders = new WeakMap<object, Map<string, DataLoader<unknown, unknown>>>();

/** Loads `key` together with every other key asked for under the same `name` in this tick. */
export function loadBatched<K, V>(ctx: object, name: string, key: K, load: (keys: K[]) => Promise<Map<K, V>>): Promise<V | undefined> {
  let byName = loaders.get(ctx);
  if (!byName) {
    byName = new Map();
    loaders.set(ctx, byName);
  }
  let loader = byName.get(name) as DataLoader<K, V | undefined> | undefined;
  if (!loader) {
    loader = new DataLoader<K, V | undefined>(
      async (keys) => {
        const found = await load([...new Set(keys)]);
        return keys.map((k) => found.get(k));
      },
      { cache: false, batchScheduleFn: (run) => setImmediate(run) },
    );
    byName.set(name, loader as DataLoader<unknown, unknown>);
  }
  return loader.load(key);
}
