// A model's price, versioned like a contract: the exact row an event was charged with is stored once
// under the SHA-256 of its canonical JSON (model_price, append-only) and named by the event.
// Money is exact: decimals as bigints of 10^-10 USD (the ledger's numeric(20,10)), never floats.
import { createHash } from 'node:crypto';
import type { SqlExecutor } from '../db/sql.ts';
import { canonicalJson } from '../directory/contracts.ts';

/** Units of 10^-10: the scale of `cost_usd` and of every price column. */
export const SCALE = 10;
const ONE = 10n ** BigInt(SCALE);

/** USD per million tokens, as decimal text; `date` the day the price was taken. */
export type Price = { sha256: string; model: string; provider: string; input: string; output: string; cached: string; date: string };

/** A non-negative decimal (at most 10 places) → units of 10^-10; null when the text is not one. */
export function parseDecimal(text: string): bigint | null {
  const m = /^(\d{1,20})(?:\.(\d{1,10}))?$/.exec(text.trim());
  if (!m) return null;
  return BigInt(m[1]!) * ONE + BigInt((m[2] ?? '').padEnd(SCALE, '0'));
}

/** Units of 10^-10 → decimal text with its 10 places (as numeric(20,10) prints it). */
export function formatDecimal(units: bigint): string {
  const sign = units < 0n ? '-' : '';
  const abs = units < 0n ? -units : units;
  return `${sign}${abs / ONE}.${(abs % ONE).toString().padStart(SCALE, '0')}`;
}

/** Rounds a / b half up (a, b ≥ 0). */
const divRound = (a: bigint, b: bigint) => (a + b / 2n) / b;

export type TokenCount = { input: number; output: number; cached: number };

/**
 * The cost in units of 10^-10 USD: uncached input at the input price, cached input at the cached
 * price, output at the output price, each per million, rounded half up once at the end.
 */
export function costUnits(price: Price, tokens: TokenCount): bigint {
  const cached = BigInt(Math.min(tokens.cached, tokens.input));
  const uncached = BigInt(tokens.input) - cached;
  const sum = uncached * parseDecimal(price.input)! + cached * parseDecimal(price.cached)! + BigInt(tokens.output) * parseDecimal(price.output)!;
  return divRound(sum, 1_000_000n);
}

export function priceSha256(fields: Omit<Price, 'sha256'>): string {
  return createHash('sha256')
    .update(canonicalJson({ ...fields, currency: 'USD', per: 'million tokens' }))
    .digest('hex');
}

/** Stores each price once (the first call per process per price writes; INSERT … ON CONFLICT DO NOTHING). */
export class PriceBook {
  private readonly stored = new Set<string>();
  private readonly sql: SqlExecutor;
  constructor(sql: SqlExecutor) {
    this.sql = sql;
  }

  async remember(price: Price): Promise<void> {
    if (this.stored.has(price.sha256)) return;
    await this.sql.query(
      `INSERT INTO model_price (sha256, model, provider, input_per_mtok, output_per_mtok, cached_per_mtok, price_date)
       VALUES ($1, $2, $3, $4::numeric, $5::numeric, $6::numeric, $7) ON CONFLICT (sha256) DO NOTHING`,
      [price.sha256, price.model, price.provider, price.input, price.output, price.cached, price.date],
    );
    this.stored.add(price.sha256);
  }
}
