// The resolver's adapter to the Directory: reads the live rows from the index tables and
// the alias file from the section folder, and keeps the ResolverService in step with them.
// The ranking core (build.ts, resolve.ts) never sees Prisma; only this file does.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DirectoryRow as DbRow, PrismaClient } from '../generated/prisma/client.ts';
import type { Logger } from '../logger.ts';
import { ALIAS_FILE, loadAliasFile } from './aliases.ts';
import { ResolverService, type ResolverSource } from './service.ts';
import { osaDistance } from './text.ts';
import { MAX_QUERY_LENGTH, type Resolution, type ResolveOptions, type ResolverRow } from './types.ts';

/** A Directory row as the resolver holds it: the stored row itself (so doors can return it whole) plus what is searched. */
export type IndexedDirectoryRow = ResolverRow & { stored: DbRow };

/** What the adapter needs of the Directory: where its folder is, and a value that changes after every build pass. */
export type DirectoryHandle = { readonly options: { dir: string }; readonly lastBuild: object | null };

export function toResolverRow(stored: DbRow): IndexedDirectoryRow {
  const text =
    stored.text && typeof stored.text === 'object' && !Array.isArray(stored.text)
      ? Object.values(stored.text as Record<string, unknown>).filter((v): v is string => typeof v === 'string')
      : [];
  return { name: stored.name, type: stored.type, kind: stored.kind, description: stored.description, text, stored };
}

/**
 * Keeps a ResolverService in step with the Directory. The version of a build is every section's
 * version tag plus the alias file's SHA-256. After each Directory build pass (seen as a new
 * `lastBuild`), the next query schedules `sync()` and is answered from the version still live;
 * `sync()` rebuilds only when that version changed.
 */
export class DirectoryResolver {
  readonly service = new ResolverService<IndexedDirectoryRow>();
  #seenPass: object | null = null;

  private readonly prisma: PrismaClient;
  private readonly directory: DirectoryHandle;
  private readonly logger: Logger;
  constructor(prisma: PrismaClient, directory: DirectoryHandle, logger: Logger) {
    this.prisma = prisma;
    this.directory = directory;
    this.logger = logger;
  }

  /** Answers from the live index; never waits for a rebuild. */
  resolve(query: string, options?: ResolveOptions): Resolution<IndexedDirectoryRow> {
    if (this.directory.lastBuild !== this.#seenPass) {
      this.sync().catch((error) => this.logger.error({ err: error }, 'resolver rebuild failed; the previous index stays live'));
    }
    return this.service.resolve(query, options);
  }

  /**
   * The runnable row a name that names none probably meant ("did you mean"): the resolver's best
   * runnable match, else the runnable name closest in spelling (at most 2 edits, case aside: ECH0 → ECHO).
   */
  meant(name: string): string | undefined {
    // Nothing to read (blank, or too long to be a name): no suggestion, never the resolver's refusal.
    if (name.length > MAX_QUERY_LENGTH || !/[\p{L}\p{N}]/u.test(name)) return undefined;
    const resolved = this.resolve(name, { limit: 5 }).matches.find((m) => m.row.stored.runnable)?.row.name;
    if (resolved) return resolved;
    const asked = name.toLowerCase();
    let best: { name: string; distance: number } | undefined;
    for (const row of this.service.current.index.rows) {
      if (!row.stored.runnable) continue;
      const distance = osaDistance(asked, row.name.toLowerCase(), best ? best.distance - 1 : 2);
      if (distance <= (best ? best.distance - 1 : 2)) best = { name: row.name, distance };
    }
    return best?.name;
  }

  /** Brings the index up to the Directory's current version (no-op when unchanged). */
  async sync(): Promise<void> {
    this.#seenPass = this.directory.lastBuild;
    const [sections, aliasBytes] = await Promise.all([
      this.prisma.directorySection.findMany({ select: { type: true, versionTag: true }, orderBy: { type: 'asc' } }),
      readFile(path.join(this.directory.options.dir, ALIAS_FILE)).catch(() => Buffer.alloc(0)),
    ]);
    const version = [...sections.map((s) => `${s.type}:${s.versionTag ?? '-'}`), `${ALIAS_FILE}:${createHash('sha256').update(aliasBytes).digest('hex')}`].join(
      ',',
    );
    const built = await this.service.refresh(version, () => this.load());
    if (built.index.aliasProblems.length) {
      this.logger.warn({ problems: built.index.aliasProblems.map((p) => p.message) }, 'aliases not loaded');
    }
  }

  private async load(): Promise<ResolverSource<IndexedDirectoryRow>> {
    const [rows, aliases] = await Promise.all([
      this.prisma.directoryRow.findMany({ orderBy: [{ type: 'asc' }, { ordinal: 'asc' }] }),
      loadAliasFile(this.directory.options.dir),
    ]);
    return { rows: rows.map(toResolverRow), aliases };
  }
}
