// A model's price, versioned like a contract: the exact row an event was charged with is stored once
// under the SHA-256 of its canonical JSON (model_price, append-only) and named by the event.
// Money is exact: decimals as bigints of 10^-10 USD (the ledger's numeric(20,10)), never floats.
import { createHash } from 'node:crypto';
import type { SqlExecutor } from '../db/sql.ts';
import { canonicalJson } from '../directory/contracts.ts';

/** Units of 10^-10: the scale of `cost_usd` and of every price column. */
export const SCALE = 10;
const ONE = 10n ** BigInt(SCALE);

/**
 * USD per million tokens, as decimal text; `date` the day the price was taken. `cacheWrite` and
 * `cacheWrite1h`: input written to the provider's prompt cache for 5 minutes or for 1 hour (Anthropic
 * charges 1.25× and 2× the input price); `cached`: input read from it.
 */
export type Price = {
  sha256: string;
  model: string;
  provider: string;
  input: string;
  output: string;
  cached: string;
  cacheWrite: string;
  cacheWrite1h: string;
  date: string;
};

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

/** `input` counts every input token: plain, read from the cache (`cached`) and written to it (`cacheWrite` 5-minute, `cacheWrite1h`). */
export type TokenCount = { input: number; output: number; cached: number; cacheWrite?: number; cacheWrite1h?: number };

/**
 * The cost in units of 10^-10 USD: plain input at the input price, cache reads at the cached price,
 * cache writes at their write price (5-minute or 1-hour), output at the output price, each per
 * million, rounded half up once at the end. The parts never exceed the input count.
 */
export function costUnits(price: Price, tokens: TokenCount): bigint {
  const per = perMillionUnits(price);
  let left = tokens.input;
  const take = (n: number | undefined) => {
    const part = Math.min(n ?? 0, left);
    left -= part;
    return BigInt(part);
  };
  const cached = take(tokens.cached);
  const write1h = take(tokens.cacheWrite1h);
  const write = take(tokens.cacheWrite);
  const sum = BigInt(left) * per.input + cached * per.cached + write * per.cacheWrite + write1h * per.cacheWrite1h + BigInt(tokens.output) * per.output;
  return divRound(sum, 1_000_000n);
}

type PriceUnits = Record<'input' | 'output' | 'cached' | 'cacheWrite' | 'cacheWrite1h', bigint>;
const parsedPrices = new WeakMap<Price, PriceUnits>();

/** A price row's decimals in units, parsed once per row object (a row's price is never changed; every call is charged with it). */
function perMillionUnits(price: Price): PriceUnits {
  let units = parsedPrices.get(price);
  if (!units) {
    units = {
      input: parseDecimal(price.input)!,
      output: parseDecimal(price.output)!,
      cached: parseDecimal(price.cached)!,
      cacheWrite: parseDecimal(price.cacheWrite)!,
      cacheWrite1h: parseDecimal(price.cacheWrite1h)!,
    };
    parsedPrices.set(price, units);
  }
  return units;
}

/** The most `input` + `output` tokens can cost: every input token at the dearest input-side price. */
export function worstCostUnits(price: Price, input: number, output: number): bigint {
  const dearest = [price.input, price.cached, price.cacheWrite, price.cacheWrite1h].map((p) => parseDecimal(p)!).reduce((a, b) => (a > b ? a : b));
  return divRound(BigInt(input) * dearest + BigInt(output) * parseDecimal(price.output)!, 1_000_000n);
}

/** The decimal `text` × `percent` / 100, rounded half up to 10 places, as the shortest decimal text. */
export function scaledDecimal(text: string, percent: bigint): string {
  return formatDecimal(divRound(parseDecimal(text)! * percent, 100n))
    .replace(/0+$/, '')
    .replace(/\.$/, '');
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
      `INSERT INTO model_price (sha256, model, provider, input_per_mtok, output_per_mtok, cached_per_mtok, cache_write_per_mtok, cache_write_1h_per_mtok, price_date)
       VALUES ($1, $2, $3, $4::numeric, $5::numeric, $6::numeric, $7::numeric, $8::numeric, $9) ON CONFLICT (sha256) DO NOTHING`,
      [price.sha256, price.model, price.provider, price.input, price.output, price.cached, price.cacheWrite, price.cacheWrite1h, price.date],
    );
    this.stored.add(price.sha256);
  }
}
