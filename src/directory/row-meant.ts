// Which row a name means. A name may be used by several sections (types); every reader that goes
// from a name to one row asks Directory.rowMeant, so the runner, the MCP catalog and the GraphQL
// reads always agree: the `tool` row first, else the first type alphabetically among those that count.
import { LRUCache } from 'lru-cache';
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { ContractShape } from './contracts.ts';

/**
 * Which rows count. `any`: every row (DirectoryRow reads); `tool`: the tool row, or a row with a way
 * (Tool reads, the MCP catalog); `runnable`: only rows with a way (the runner).
 */
export type RowMeaning = 'any' | 'tool' | 'runnable';

export type NamedRow = { name: string; type: string; ways: unknown };

const hasWay = (row: NamedRow) => Object.keys((row.ways as object | null) ?? {}).length > 0;

export function rowMeant<R extends NamedRow>(rows: readonly R[], name: string, among: RowMeaning): R | null {
  const counted = rows.filter((r) => r.name === name && (among === 'any' || hasWay(r) || (among === 'tool' && r.type === 'tool')));
  return counted.find((r) => r.type === 'tool') ?? counted.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))[0] ?? null;
}

/** One way of a row as stored: its header (the form), its contract's hash and shape. */
export type StoredWay = { header: string; sha256: string; shape: ContractShape };

/** What the runner needs of the row a name means. */
export type RunnableRow = { type: string; name: string; kind: string | null; ways: Record<string, StoredWay>; argsSchema: unknown; reasons: string[] };

/** The runnable row of each name, read once per index generation (least recently used names dropped first). */
export class RunnableRows {
  private rows = new LRUCache<string, { row: RunnableRow | null }>({ max: 10_000 });
  private generation = -1;

  private readonly prisma: PrismaClient;
  private readonly currentGeneration: () => number;
  constructor(prisma: PrismaClient, currentGeneration: () => number) {
    this.prisma = prisma;
    this.currentGeneration = currentGeneration;
  }

  async get(name: string): Promise<RunnableRow | null> {
    const generation = this.currentGeneration();
    if (this.generation !== generation) {
      this.rows.clear(); // the index changed: every cached answer may be stale
      this.generation = generation;
    }
    const hit = this.rows.get(name);
    if (hit) return hit.row;
    const found = await this.prisma.directoryRow.findMany({
      where: { name },
      select: { type: true, name: true, kind: true, ways: true, argsSchema: true, reasons: true },
    });
    const pick = rowMeant(found, name, 'runnable');
    const row = pick && {
      type: pick.type,
      name: pick.name,
      kind: pick.kind,
      ways: pick.ways as Record<string, StoredWay>,
      argsSchema: pick.argsSchema,
      reasons: pick.reasons,
    };
    if (generation === this.currentGeneration()) this.rows.set(name, { row });
    return row;
  }
}
