// `uses <= N` counted in the database (token_uses, one row per caveat keyed by the chain signature
// after it, so narrowed tokens share it).
import type { Door } from '../context/door.ts';
import type { SqlExecutor, SqlQueryable } from '../db/sql.ts';
import type { Grant } from './verdict.ts';
import type { Refusal } from './verdict.ts';

/** Uses taken under each counter; bpchar[] so the char(64) primary key is used (text[] would scan the table). */
export const usesOfSql = 'SELECT counter, uses FROM token_uses WHERE counter = ANY($1::bpchar[])';

/**
 * Takes one use from every `uses` counter of the token, all or none, in the database: exact under
 * any concurrency (a conditional upsert per counter, in one transaction, counters in a fixed order).
 */
export async function consumeUse(sql: SqlExecutor, grant: Grant, door: Door, tool?: string): Promise<Refusal | null> {
  if (grant.counters.length === 0) return null;
  const counters = [...grant.counters].sort((a, b) => (a.key < b.key ? -1 : 1));
  const take = async (db: SqlQueryable, counter: (typeof counters)[number]) => {
    const rows = await db.query(
      `INSERT INTO token_uses (counter, token_id, uses, max_uses) VALUES ($1, $2, 1, $3)
         ON CONFLICT (counter) DO UPDATE SET uses = token_uses.uses + 1, last_used_at = now()
         WHERE token_uses.uses < token_uses.max_uses
         RETURNING uses`,
      [counter.key, grant.tokenId, counter.max],
    );
    if (rows.length === 0) throw new Exhausted(counter);
  };
  // One counter: one statement (its row lock makes it exact); several: all or none, in one transaction.
  const work =
    counters.length === 1
      ? take(sql, counters[0]!)
      : sql.transaction(async (tx) => {
          for (const counter of counters) await take(tx, counter);
        });
  const spent = await work.then(
    () => null,
    (error) => {
      if (error instanceof Exhausted) return error.counter;
      throw error;
    },
  );
  if (!spent) return null;
  return {
    limit: 'uses',
    caveat: spent.caveat,
    door,
    ...(tool && { tool }),
    reason: `all ${spent.max} uses are spent`,
    message: `This token's ${spent.max} use${spent.max === 1 ? ' is' : 's are'} spent.`,
    status: 403,
    tokenId: grant.tokenId,
  };
}

/** Uses taken so far under each counter of the token. */
export async function usesOf(sql: SqlExecutor, grant: Grant): Promise<{ caveat: string; used: number; max: number }[]> {
  if (grant.counters.length === 0) return [];
  const rows = await sql.query<{ counter: string; uses: number }>(usesOfSql, [grant.counters.map((c) => c.key)]);
  const used = new Map(rows.map((r) => [r.counter, Number(r.uses)]));
  return grant.counters.map((c) => ({ caveat: c.caveat, used: used.get(c.key) ?? 0, max: c.max }));
}

class Exhausted extends Error {
  readonly counter: { key: string; max: number; caveat: string };
  constructor(counter: { key: string; max: number; caveat: string }) {
    super('uses spent');
    this.counter = counter;
  }
}
