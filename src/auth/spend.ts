// Authority over model spend: `models = …` (which model rows), `tokens <= N` and `cost <= X` (USD).
// A budget is counted in the database like `uses` (token_spend, one row per caveat, keyed by the
// chain signature after it, so narrowed tokens share it), exact under any concurrency: before a call
// is sent it holds its worst case (every byte of its body as an input token, its output bound in
// full, nothing cached) with a conditional upsert that admits it only if spent + held + worst fits;
// when the answer is in, the hold is settled to what the provider counted. A crash between the two
// leaves the hold counted (never less than was spent).
import { currentInvocation } from '../context/request.ts';
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
  /** Holds the worst case under every budget caveat, all or none; null when the token has none. */
  hold(worst: Worst): Promise<Refusal | SpendHold | null>;
};

const SCALE = 10n ** 10n;
/** Units of 10^-10 USD as decimal text. */
const usd = (units: bigint) => `${units / SCALE}.${(units % SCALE).toString().padStart(10, '0')}`;

const holdSql = `INSERT INTO token_spend (counter, token_id, unit, max, spent, reserved)
  SELECT $1, $2, $3, $4::numeric, 0, $5::numeric WHERE $5::numeric <= $4::numeric
  ON CONFLICT (counter) DO UPDATE SET reserved = token_spend.reserved + EXCLUDED.reserved, updated_at = now()
  WHERE token_spend.spent + token_spend.reserved + EXCLUDED.reserved <= token_spend.max
  RETURNING spent`;
const settleSql = `UPDATE token_spend SET reserved = reserved - $2::numeric, spent = spent + $3::numeric, updated_at = now() WHERE counter = $1`;
const spentSql = 'SELECT counter, spent::text AS spent, reserved::text AS reserved FROM token_spend WHERE counter = ANY($1::bpchar[])';

class OverBudget extends Error {
  readonly budget: Budget;
  constructor(budget: Budget) {
    super('over budget');
    this.budget = budget;
  }
}

export function modelAuthorizer(authority: Authority, sql: SqlExecutor): ModelAuthorizer {
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
    async hold(worst) {
      const at = current();
      if (!at || at.grant.budgets.length === 0) return null;
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
      const take = async (db: SqlQueryable, b: Budget) => {
        const rows = await db.query(holdSql, [b.key, at.grant.tokenId, b.unit, b.max, amount(b)]);
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
            for (const b of budgets) await tx.query(settleSql, [b.key, amount(b), spent(b)]);
          });
        },
      };
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
