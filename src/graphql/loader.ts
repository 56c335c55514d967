// A per-operation batch loader: keys asked for in one tick are loaded by one call, so a list of
// rows resolving the same field issues one statement, not one per row.
const loaders = new WeakMap<object, Map<string, Batch<unknown, unknown>>>();

type Batch<K, V> = { keys: K[]; waiters: { key: K; resolve: (v: V | undefined) => void; reject: (e: unknown) => void }[] };

/** Loads `key` together with every other key asked for under the same `name` in this tick. */
export function loadBatched<K, V>(ctx: object, name: string, key: K, load: (keys: K[]) => Promise<Map<K, V>>): Promise<V | undefined> {
  let byName = loaders.get(ctx);
  if (!byName) loaders.set(ctx, (byName = new Map()));
  let batch = byName.get(name) as Batch<K, V> | undefined;
  if (!batch) {
    const fresh: Batch<K, V> = { keys: [], waiters: [] };
    batch = fresh;
    byName.set(name, fresh as Batch<unknown, unknown>);
    setImmediate(() => {
      byName.delete(name);
      const keys = [...new Set(fresh.keys)];
      load(keys).then(
        (found) => fresh.waiters.forEach((w) => w.resolve(found.get(w.key))),
        (error) => fresh.waiters.forEach((w) => w.reject(error)),
      );
    });
  }
  const b = batch;
  return new Promise<V | undefined>((resolve, reject) => {
    b.keys.push(key);
    b.waiters.push({ key, resolve, reject });
  });
}
