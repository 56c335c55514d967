// Models are Directory rows of type `model`: provider, upstream contract (its secrets as [NAMES]),
// context window, prices. Which row a request's `model` names: the row of that exact name, else the
// resolver's best model row when it is clear (ALIAS or better, no tie), with the layer recorded; an
// unknown name is an error listing the nearest rows. Read once per Directory generation.
import type { Directory } from '../directory/directory.ts';
import type { HttpContract } from '../directory/contracts.ts';
import type { DirectoryResolver } from '../resolver/directory-source.ts';
import { layerScore, type ResolverLayer } from '../resolver/types.ts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { parseDecimal, priceSha256, scaledDecimal, type Price } from './price.ts';

export const MODEL_TYPE = 'model';

/** The wire format a row's upstream speaks: `anthropic` for provider anthropic, else OpenAI's (most providers serve it). */
export type Wire = 'openai' | 'anthropic';

export type ModelRow = {
  name: string;
  provider: string;
  wire: Wire;
  /** The name the upstream knows the model by (`upstream model`, else the row's name). */
  upstreamModel: string;
  upstream: HttpContract;
  upstreamSha256: string;
  contextWindow: number | null;
  maxOutput: number | null;
  price: Price;
  /** Secret names its upstream uses that are not bound: the row cannot be called. */
  unbound: string[];
};

export type Routed = { row: ModelRow; via: { layer: ResolverLayer; score: number; query: string } };
export type Nearest = { name: string; score: number; layer: ResolverLayer | null };
export type Unrouted = { nearest: Nearest[]; problem?: string };

/** The clearest layer a resolved name may come from (ALIAS and better): looser matches are listed, not taken. */
const ROUTE_MIN_SCORE = layerScore.ALIAS;

type Stored = { rows: Map<string, ModelRow>; problems: Map<string, string> };

export class ModelCatalog {
  private cache: { generation: number; stored: Promise<Stored> } | undefined;
  private readonly prisma: PrismaClient;
  private readonly directory: Directory;
  private readonly resolver: DirectoryResolver;
  constructor(prisma: PrismaClient, directory: Directory, resolver: DirectoryResolver) {
    this.prisma = prisma;
    this.directory = directory;
    this.resolver = resolver;
  }

  /** Every usable model row, in Directory order. */
  async rows(): Promise<ModelRow[]> {
    return [...(await this.load()).rows.values()];
  }

  /** The row a requested name means, or the nearest rows when none is meant clearly. */
  async route(name: string): Promise<Routed | Unrouted> {
    const { rows, problems } = await this.load();
    const exact = rows.get(name);
    if (exact) return { row: exact, via: { layer: 'EXACT_NAME', score: layerScore.EXACT_NAME, query: name } };
    if (problems.has(name)) return { nearest: [], problem: problems.get(name)! };
    const matches = this.resolver.resolve(name.slice(0, 500), { types: [MODEL_TYPE], limit: 5 }).matches;
    const [top, second] = matches;
    const row = top && rows.get(top.row.name);
    if (top && row && top.score >= ROUTE_MIN_SCORE && second?.score !== top.score) {
      return { row, via: { layer: top.layer, score: top.score, query: name } };
    }
    const nearest: Nearest[] = matches.map((m) => ({ name: m.row.name, score: m.score, layer: m.layer }));
    // Nothing near: every model row, so the caller sees what exists.
    if (nearest.length === 0) for (const r of [...rows.keys()].slice(0, 20)) nearest.push({ name: r, score: 0, layer: null });
    return { nearest };
  }

  private load(): Promise<Stored> {
    const generation = this.directory.generation;
    if (this.cache?.generation !== generation) {
      const stored = this.read();
      this.cache = { generation, stored };
      stored.catch(() => {
        if (this.cache?.stored === stored) this.cache = undefined;
      });
    }
    return this.cache.stored;
  }

  private async read(): Promise<Stored> {
    const found = await this.prisma.directoryRow.findMany({
      where: { type: MODEL_TYPE },
      select: { name: true, text: true, upstreamSha256: true, unboundSecrets: true },
      orderBy: { ordinal: 'asc' },
    });
    const contracts = await this.directory.contractsByHash(found.flatMap((r) => (r.upstreamSha256 ? [r.upstreamSha256] : [])));
    const rows = new Map<string, ModelRow>();
    const problems = new Map<string, string>();
    for (const r of found) {
      const text = (r.text ?? {}) as Record<string, string>;
      const contract = r.upstreamSha256 ? (contracts.get(r.upstreamSha256)?.contract as HttpContract | undefined) : undefined;
      const row = modelRowOf(r.name, text, contract, r.upstreamSha256, r.unboundSecrets);
      if (typeof row === 'string') problems.set(r.name, `The model row ${JSON.stringify(r.name)} cannot be used: ${row}.`);
      else rows.set(r.name, row);
    }
    return { rows, problems };
  }
}

const count = (text: string | undefined) => (text && /^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : null);

/** One stored row → a usable model, or what is wrong with it. */
export function modelRowOf(
  name: string,
  text: Record<string, string>,
  upstream: HttpContract | undefined,
  upstreamSha256: string | null,
  unbound: string[],
): ModelRow | string {
  const provider = (text.provider ?? '').trim().toLowerCase();
  if (!provider) return 'it names no provider';
  if (!upstream || !upstreamSha256 || Array.isArray(upstream) || (upstream as { method?: string }).method === undefined || !('url' in upstream))
    return 'its upstream is not an HTTP contract (the base URL of the provider, e.g. {"method":"POST","url":"https://api.openai.com/v1"})';
  const input = text['input price'] ?? '';
  const prices = { input, output: text['output price'] ?? '', cached: text['cached price'] || input };
  for (const [which, value] of Object.entries(prices)) {
    if (parseDecimal(value) === null) return `its ${which} price is not a decimal of USD per million tokens (got ${JSON.stringify(value)})`;
  }
  const writes = cacheWritePrices(provider, input.trim(), text);
  if (typeof writes === 'string') return writes;
  const fields = {
    model: name,
    provider,
    input: prices.input.trim(),
    output: prices.output.trim(),
    cached: prices.cached.trim(),
    ...writes,
    date: (text['price date'] ?? '').trim(),
  };
  return {
    name,
    provider,
    wire: provider === 'anthropic' ? 'anthropic' : 'openai',
    upstreamModel: (text['upstream model'] ?? '').trim() || name,
    upstream,
    upstreamSha256,
    contextWindow: count(text['context window']),
    maxOutput: count(text['max output']),
    price: { sha256: priceSha256(fields), ...fields },
    unbound,
  };
}

/**
 * Cache-write prices: the row's `cache write price` / `cache write 1h price` when given, else the
 * provider's rule, Anthropic's 1.25× (5-minute) and 2× (1-hour) the input price; other providers
 * charge no premium for writing their cache, so the input price.
 */
function cacheWritePrices(provider: string, input: string, text: Record<string, string>): { cacheWrite: string; cacheWrite1h: string } | string {
  const anthropic = provider === 'anthropic';
  const out = {
    cacheWrite: text['cache write price']?.trim() || (anthropic ? scaledDecimal(input, 125n) : input),
    cacheWrite1h: text['cache write 1h price']?.trim() || (anthropic ? scaledDecimal(input, 200n) : input),
  };
  for (const [which, value] of [
    ['cache write', out.cacheWrite],
    ['cache write 1h', out.cacheWrite1h],
  ] as const) {
    if (parseDecimal(value) === null) return `its ${which} price is not a decimal of USD per million tokens (got ${JSON.stringify(value)})`;
  }
  return out;
}
