// What a model call reported from elsewhere (an OpenTelemetry span) costs at its model row's price:
// routed as the model door routes a name (exact, else the resolver at ALIAS or better), charged with the
// same exact money, and the price row kept once, as for the door's own calls.
import type { ModelCatalog } from './catalog.ts';
import { costUnits, formatDecimal, type PriceBook } from './price.ts';

/** `price.id`: the SHA-256 of the exact price row charged (model_price); `row`: the model row it came from. */
export type ModelCharge = { costUsd: string; price: { id: string; date: string }; row: string };

export type ReportedUsage = { input?: number | undefined; output?: number | undefined; cached?: number | undefined; cacheWrite?: number | undefined };

/** The charge for `usage` at the price of the row `model` means; none without counts or without such a row. */
export async function chargeOf(catalog: ModelCatalog, prices: PriceBook, model: string, usage: ReportedUsage): Promise<ModelCharge | undefined> {
  if (usage.input === undefined && usage.output === undefined) return undefined;
  const routed = await catalog.route(model);
  if (!('row' in routed)) return undefined;
  const { price } = routed.row;
  await prices.remember(price);
  const units = costUnits(price, { input: usage.input ?? 0, output: usage.output ?? 0, cached: usage.cached ?? 0, cacheWrite: usage.cacheWrite ?? 0 });
  return { costUsd: formatDecimal(units), price: { id: price.sha256, date: price.date }, row: routed.row.name };
}
