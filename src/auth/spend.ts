// Authority over model spend: `models = …` (which model rows), `tokens <= N` and `cost <= X` (USD).
// A budget is counted in the database like `uses` (token_spend, one row per caveat, keyed by the
// chain signature after it, so narrowed tokens share it), exact under any concurrency: before a call
// is sent it holds its worst case (every byte of its body as an input token, its output bound in
// full, at the dearest input-side price) with a conditional upsert that admits it only if spent +
// held + worst fits, and writes the hold down (token_spend_hold) with the time the call must be over
// by; when the answer is in, the hold is settled to what the provider counted. A hold a crash left
// (never settled) is given back by the sweep once that time has passed, and the ledger says so.
import { randomUUID } from 'node:crypto';
import { currentInvocation } from '../context/request.ts';
import type { EventInput } from '../ledger/input.ts';
import type { Door } from '../context/door.ts';
import type { SqlExecutor, SqlQueryable } from '../db/sql.ts';
import type { Authority } from './authority.ts';
import type { Budget, Grant } from './verdict.ts';
import type { Refusal } from './verdict.ts';
import { toolAllowed } from './caveats.ts';

/** A call's worst case; `output` null when nothing bounds it. Cost in units of 10^-10 USD. */
export type Worst = { model: string; input: number; output: number | null; costUnits: bigint | null };
export type SpendHold = { tokens: number; costUnits: bigint; settle(actual: { tokens: number; costUnits: bigint }): Promise<void> };

/** The token's say on a model call; absent: every call allowed. */
export type ModelAuthorizer = {
  /** The call power and `models` caveats. */
  model(name: string): Refusal | null;
  /** Holds the worst case under every budget caveat, all or none; null when the token has none (then `worstOf` is never called). */
  hold(worstOf: () => Worst): Promise<Refusal | SpendHold | null>;
};

const SCALE = 10n ** 10n;
/** Units of 10^-10 USD as decimal text. */
const usd = (units: bigint) => `${units / SCALE}.${(units % SCALE).toString().padStart(10, '0')}`;

const holdSql = `WITH held AS (
    INSERT INTO token_spend (counter, token_id, unit, max, spent, reserved)
    SELECT $1, $2, $3, $4::numeric, 0, $5::numeric WHERE $5::numeric <= $4::numeric
    ON CONFLICT (counter) DO UPDATE SET reserved = token_spend.reserved + EXCLUDED.reserved, updated_at = now()
    WHERE token_spend.spent + token_spend.reserved + EXCLUDED.reserved <= token_spend.max
    RETURNING counter)
  INSERT INTO token_spend_hold (hold_id, counter, token_id, unit, amount, action_id, model, expires_at)
  SELECT $6, counter, $2, $3, $5::numeric, $7, $8, now() + make_interval(secs => $9::float8 / 1000) FROM held
  RETURNING counter`;
// The hold's amount comes back only while it is still written down: a hold the sweep gave back is not given back twice.
const settleSql = `WITH released AS (DELETE FROM token_spend_hold WHERE hold_id = $1 AND counter = $2 RETURNING amount)
  UPDATE token_spend SET reserved = reserved - COALESCE((SELECT amount FROM released), 0), spent = spent + $3::numeric, updated_at = now()
  WHERE counter = $2`;
const sweepSql = `WITH gone AS (DELETE FROM token_spend_hold WHERE expires_at < now() RETURNING *),
  per AS (SELECT counter, sum(amount) AS amount FROM gone GROUP BY counter),
  given AS (UPDATE token_spend s SET reserved = GREATEST(s.reserved - per.amount, 0), updated_at = now() FROM per WHERE s.counter = per.counter RETURNING s.counter)
  SELECT hold_id, token_id, unit, amount::text AS amount, action_id, model, created_at, expires_at, (SELECT count(*) FROM given)::int AS counters
  FROM gone ORDER BY created_at, hold_id, unit`;
const spentSql = 'SELECT counter, spent::text AS spent, reserved::text AS reserved FROM token_spend WHERE counter = ANY($1::bpchar[])';

class OverBudget extends Error {
  readonly budget: Budget;
  constructor(budget: Budget) {
    super('over budget');
    this.budget = budget;
  }
}

/** `holdLimitMs`: how long after its hold a call is surely over (its upstream timeout and spool wait, and a margin). */
export function modelAuthorizer(authority: Authority, sql: SqlExecutor, holdLimitMs: number): ModelAuthorizer {
  const current = () => {
    const invocation = currentInvocation();
    return invocation?.grant ? { grant: invocation.grant, door: invocation.door } : undefined;
  };
  return {
    model(name) {
      const at = current();
      if (!at) return null;
      const power = authority.requirePower(at.grant, 'call', at.door);
      if (power) return power;
      for (const [i, caveat] of at.grant.caveats.entries()) {
        if (caveat.kind === 'models' && !toolAllowed(caveat.names, name)) {
          return refusal(
            at.grant,
            at.door,
            'models',
            at.grant.texts[i],
            `model ${name} is not among ${caveat.names.join(', ')}`,
            `This token may not call the model ${JSON.stringify(name)}.`,
          );
        }
      }
      return null;
    },
    async hold(worstOf) {
      const at = current();
      if (!at || at.grant.budgets.length === 0) return null;
      const worst = worstOf();
      const budgets = [...at.grant.budgets].sort((a, b) => (a.key < b.key ? -1 : 1));
      if (worst.output === null || worst.costUnits === null) {
        const b = budgets[0]!;
        return refusal(
          at.grant,
          at.door,
          b.unit,
          b.caveat,
          `the call to ${worst.model} names no output bound and its row no max output`,
          `This token has a model budget: the call must bound its output (max_tokens) so its cost is known before it is sent.`,
        );
      }
      const tokens = worst.input + worst.output;
      const amount = (b: Budget) => (b.unit === 'tokens' ? String(tokens) : usd(worst.costUnits!));
      const holdId = randomUUID();
      const actionId = currentInvocation()?.actionId ?? holdId;
      const take = async (db: SqlQueryable, b: Budget) => {
        const rows = await db.query(holdSql, [b.key, at.grant.tokenId, b.unit, b.max, amount(b), holdId, actionId, worst.model, holdLimitMs]);
        if (rows.length === 0) throw new OverBudget(b);
      };
      try {
        if (budgets.length === 1) await take(sql, budgets[0]!);
        else
          await sql.transaction(async (tx) => {
            for (const b of budgets) await take(tx, b);
          });
      } catch (error) {
        if (!(error instanceof OverBudget)) throw error;
        const b = error.budget;
        const [left] = await spentOf(sql, [b]);
        const what = b.unit === 'tokens' ? `${tokens} tokens` : `${usd(worst.costUnits)} USD`;
        return refusal(
          at.grant,
          at.door,
          b.unit,
          b.caveat,
          `the call could use up to ${what}; ${left!.left} ${b.unit === 'tokens' ? 'tokens' : 'USD'} left of ${b.max}`,
          `This token's budget (${b.caveat}) has ${left!.left} left; this call to ${worst.model} could use up to ${what}.`,
        );
      }
      let settled = false;
      return {
        tokens,
        costUnits: worst.costUnits,
        async settle(actual) {
          if (settled) return;
          settled = true;
          const spent = (b: Budget) => (b.unit === 'tokens' ? String(actual.tokens) : usd(actual.costUnits));
          await sql.transaction(async (tx) => {
            for (const b of budgets) await tx.query(settleSql, [holdId, b.key, spent(b)]);
          });
        },
      };
    },
  };
}

type SweptRow = { hold_id: string; token_id: string; unit: string; amount: string; action_id: string; model: string; created_at: Date; expires_at: Date };

/**
 * Gives back every hold whose call should be over by now (its process stopped between hold and
 * settle) and returns one BUDGET_RELEASE event per hold, linked to the call's action, saying so.
 */
export async function sweepHolds(sql: SqlQueryable): Promise<EventInput[]> {
  const rows = await sql.query<SweptRow>(sweepSql);
  const byHold = new Map<string, SweptRow[]>();
  for (const r of rows) byHold.set(r.hold_id, [...(byHold.get(r.hold_id) ?? []), r]);
  return [...byHold.values()].map((held) => {
    const first = held[0]!;
    return {
      id: `${first.action_id}:hold:${first.hold_id}:released`,
      actionId: first.action_id,
      kind: 'BUDGET_RELEASE',
      direction: 'IN',
      status: 'RELEASED',
      model: first.model,
      occurredAt: new Date(),
      payload: { state: 'NONE' },
      metadata: {
        capture: 'authority',
        tokenId: first.token_id,
        holdId: first.hold_id,
        heldAt: new Date(first.created_at).toISOString(),
        overBy: new Date(first.expires_at).toISOString(),
        released: held.map((h) => ({ unit: h.unit, amount: h.unit === 'tokens' ? h.amount.replace(/\.0+$/, '') : h.amount })),
        reason: 'the call never settled its hold (its process stopped between hold and settle); given back once the call was surely over',
      },
    };
  });
}

/** A call's hold is surely over this long after its upstream timeout and spool wait (its answer recorded, its hold settled). */
export const HOLD_MARGIN_MS = 5_000;

/**
 * Sweeps now (at start: holds a crash left behind) and then every `everyMs`; each release is
 * recorded before the next sweep. A sweep that fails is logged and tried again next time.
 */
export function startHoldSweep(options: {
  sql: SqlQueryable;
  record: (events: EventInput[]) => Promise<unknown>;
  logger: { info(o: object, m: string): void; error(o: object, m: string): void };
  everyMs: number;
}): { first: Promise<void>; stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const sweep = () => {
    running = running.then(async () => {
      try {
        const events = await sweepHolds(options.sql);
        if (events.length === 0) return;
        await options.record(events);
        options.logger.info({ holds: events.length }, 'gave back budget holds of calls that never settled');
      } catch (error) {
        options.logger.error({ err: error }, 'the budget hold sweep failed');
      }
    });
    return running;
  };
  const first = sweep();
  const timer = setInterval(sweep, options.everyMs);
  timer.unref();
  return {
    first,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export type BudgetState = { caveat: string; unit: 'tokens' | 'cost'; max: string; spent: string; held: string; left: string };

/** What each budget of a token has spent, holds for calls in flight, and has left (decimal text). */
export async function spentOf(sql: SqlQueryable, budgets: readonly Budget[]): Promise<BudgetState[]> {
  if (budgets.length === 0) return [];
  const rows = await sql.query<{ counter: string; spent: string; reserved: string }>(spentSql, [budgets.map((b) => b.key)]);
  const by = new Map(rows.map((r) => [r.counter, r]));
  return budgets.map((b) => {
    const row = by.get(b.key);
    const units = (text: string) => {
      const [whole, frac = ''] = text.split('.');
      return BigInt(whole!) * SCALE + BigInt(frac.padEnd(10, '0').slice(0, 10));
    };
    const spent = row ? units(row.spent) : 0n;
    const held = row ? units(row.reserved) : 0n;
    const left = units(b.max) - spent - held;
    const show = (v: bigint) => (b.unit === 'tokens' ? String(v / SCALE) : usd(v < 0n ? 0n : v));
    return { caveat: b.caveat, unit: b.unit, max: b.max, spent: show(spent), held: show(held), left: show(left < 0n ? 0n : left) };
  });
}

function refusal(grant: Grant, door: Door, limit: 'models' | 'tokens' | 'cost', caveat: string | undefined, reason: string, message: string): Refusal {
  return { limit, ...(caveat && { caveat }), door, reason, message, status: 403, tokenId: grant.tokenId };
}
