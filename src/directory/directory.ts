// The derived index: built from the section folder into PostgreSQL, rebuilt only for sections whose
// content hash changed (each section's build: section-build.ts). A section that fails validation keeps
// its previous version live.
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';
import type { Logger } from '../logger.ts';
import { checkContract, contractSha256 } from './contracts.ts';
import type { RetiredTarget } from './retired.ts';
import { rowMeant, RunnableRows, type NamedRow, type RowMeaning, type RunnableRow, type StoredWay } from './row-meant.ts';
import { buildSection } from './section-build.ts';
import { parseSection, sectionFileType, versionTagOf } from './sections.ts';

export type DirectoryOptions = {
  dir: string;
  /** Names bound in the secret registry (values never reach the Directory). */
  boundSecrets: ReadonlySet<string>;
  retired: RetiredTarget[];
  /** Debounce of the folder watcher; 0 disables watching. */
  watchDebounceMs: number;
};

/** A way cell as stored on the row: the contract itself lives in contract_version. */
export type { StoredWay };

export type BuildReport = {
  startedAt: Date;
  ms: number;
  /** Sections whose content changed and were built (successfully or not). */
  rebuilt: string[];
  failed: string[];
  unchanged: number;
  removed: string[];
  /** Section type → headers nobody recognises, for the sections built in this pass. */
  unknownHeaders: Record<string, string[]>;
};

export type ListingEntry = { name: string; type: string; kind: string | null; description?: string };

const contractCacheMax = 50_000;

export class Directory {
  /** Build passes run (at start, on a folder change, on demand). */
  passes = 0;
  /** Section builds run, over all passes: only sections whose content hash changed count. */
  sectionBuilds = 0;
  lastBuild: BuildReport | null = null;
  /** Bumped whenever the live index changes; listings are cached per generation. */
  generation = 0;

  private seen: Map<string, string> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private listings = new Map<string, { generation: number; body: string; count: number }>();
  private closed = false;
  // Bounded by count through maxSize, not max: lru-cache allocates arrays for `max` entries up front.
  private contractCache = new LRUCache<string, { shape: string; contract: unknown }>({ maxSize: contractCacheMax, sizeCalculation: () => 1 });
  private readonly runnable: RunnableRows;

  private readonly prisma: PrismaClient;
  private readonly logger: Logger;
  readonly options: DirectoryOptions;
  constructor(prisma: PrismaClient, logger: Logger, options: DirectoryOptions) {
    this.prisma = prisma;
    this.logger = logger;
    this.options = options;
    this.runnable = new RunnableRows(prisma, () => this.generation);
  }

  /** Which of `rows` the name means (see row-meant.ts): the one decision every name lookup makes. */
  rowMeant<R extends NamedRow>(rows: readonly R[], name: string, among: RowMeaning): R | null {
    return rowMeant(rows, name, among);
  }

  /** The row the runner runs for a name, or null (cached until the index changes). */
  runnableRow(name: string): Promise<RunnableRow | null> {
    return this.runnable.get(name);
  }

  /** Builds every changed section; passes run one at a time. */
  build(): Promise<BuildReport> {
    const run = this.queue.then(() => this.buildOnce());
    this.queue = run.catch(() => {});
    return run;
  }

  /** Watches the folder and rebuilds (debounced) when a section file changes. */
  watch(): void {
    if (this.watcher || this.options.watchDebounceMs <= 0 || this.closed) return;
    try {
      this.watcher = watch(this.options.dir, { persistent: false }, () => this.schedule());
      this.watcher.on('error', (error) => this.logger.warn({ err: error }, 'directory watcher failed'));
    } catch (error) {
      this.logger.warn({ err: error, dir: this.options.dir }, 'cannot watch the directory folder');
    }
  }

  private schedule() {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.build().catch((error) => this.logger.error({ err: error }, 'directory rebuild failed'));
    }, this.options.watchDebounceMs);
    this.timer.unref();
  }

  /** Stops watching and waits for a running build. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
    await this.queue;
  }

  private async buildOnce(): Promise<BuildReport> {
    const startedAt = new Date();
    const t0 = performance.now();
    this.passes++;
    if (!this.seen) {
      const rows = await this.prisma.directorySection.findMany({ select: { type: true, seenTag: true } });
      this.seen = new Map(rows.map((r) => [r.type, r.seenTag]));
    }
    const report: BuildReport = { startedAt, ms: 0, rebuilt: [], failed: [], unchanged: 0, removed: [], unknownHeaders: {} };
    let files: string[];
    try {
      files = (await readdir(this.options.dir)).sort();
    } catch (error) {
      this.logger.error({ err: error, dir: this.options.dir }, 'cannot read the directory folder; the index is unchanged');
      report.ms = performance.now() - t0;
      this.lastBuild = report;
      return report;
    }
    const present = new Set<string>();
    for (const file of files) {
      const kind = sectionFileType(file);
      if (!kind) continue;
      if (present.has(kind.type)) {
        this.logger.warn({ file }, 'a second file for the same section type is ignored');
        continue;
      }
      present.add(kind.type);
      let bytes: Buffer;
      try {
        bytes = await readFile(path.join(this.options.dir, file));
      } catch {
        continue; // removed while listing; the next pass sees it gone
      }
      if (this.seen.get(kind.type) === versionTagOf(bytes)) {
        report.unchanged++;
        continue;
      }
      const parsed = parseSection(file, bytes);
      this.sectionBuilds++;
      report.rebuilt.push(parsed.type);
      if (parsed.unknownHeaders.length) {
        report.unknownHeaders[parsed.type] = parsed.unknownHeaders;
        this.logger.warn(
          { section: parsed.type, unknownHeaders: parsed.unknownHeaders },
          'directory section has headers nobody recognises; their cells are ignored',
        );
      }
      const ok = await buildSection(this.prisma, this.logger, this.options, parsed);
      if (!ok) report.failed.push(parsed.type);
      this.seen.set(parsed.type, parsed.versionTag);
    }
    for (const type of [...this.seen.keys()]) {
      if (present.has(type)) continue;
      await this.prisma.directorySection.deleteMany({ where: { type } });
      this.seen.delete(type);
      report.removed.push(type);
    }
    if (report.rebuilt.length || report.removed.length) this.generation++;
    report.ms = performance.now() - t0;
    if (report.rebuilt.length || report.removed.length) {
      this.logger.info({ rebuilt: report.rebuilt, failed: report.failed, removed: report.removed, ms: Math.round(report.ms) }, 'directory built');
    }
    this.lastBuild = report;
    return report;
  }

  /** Contract versions by hash: immutable once stored, so a cache that never needs invalidating. */
  /** A contract version already in memory (versions never change), or undefined: then read it with contractsByHash. */
  contractInMemory(hash: string): { shape: string; contract: unknown } | undefined {
    return this.contractCache.get(hash);
  }

  async contractsByHash(hashes: string[]): Promise<Map<string, { shape: string; contract: unknown }>> {
    const out = new Map<string, { shape: string; contract: unknown }>();
    const missing: string[] = [];
    for (const h of hashes) {
      const hit = this.contractCache.get(h);
      if (hit) out.set(h, hit);
      else missing.push(h);
    }
    if (missing.length) {
      const rows = await this.prisma.contractVersion.findMany({ where: { sha256: { in: missing } } });
      for (const r of rows) {
        const v = { shape: r.shape, contract: r.contract };
        this.contractCache.set(r.sha256, v);
        out.set(r.sha256, v);
      }
    }
    return out;
  }

  /** Stores a contract under its hash (once) and returns the hash: what an event names when it runs one. */
  async rememberContract(contract: unknown): Promise<string> {
    const check = checkContract(contract);
    if (!check.ok) throw new Error(`not a contract: ${check.message}`);
    const sha256 = contractSha256(check.contract);
    await this.prisma.contractVersion.createMany({
      data: [{ sha256, shape: check.shape, contract: check.contract as Prisma.InputJsonValue }],
      skipDuplicates: true,
    });
    return sha256;
  }

  /** The JSON body of GET /api/directory: names only, or with descriptions. Cached until the index changes. */
  /** The seed's names-only projection: names alone, one a line, in section order (GET /api/directory?names=1). */
  async namesAlone(type: string | null): Promise<{ body: string; count: number }> {
    const key = `alone:${type ?? ''}`;
    const cached = this.listings.get(key);
    if (cached && cached.generation === this.generation) return cached;
    const generation = this.generation;
    const rows = await this.prisma.directoryRow.findMany({
      where: type === null ? {} : { type },
      select: { name: true },
      orderBy: [{ type: 'asc' }, { ordinal: 'asc' }],
    });
    const out = { generation, body: rows.map((r) => `${r.name}\n`).join(''), count: rows.length };
    this.listings.set(key, out);
    return out;
  }

  async listing(type: string | null, full: boolean): Promise<{ body: string; count: number }> {
    const key = `${full ? 'full' : 'names'}:${type ?? ''}`;
    const cached = this.listings.get(key);
    if (cached && cached.generation === this.generation) return cached;
    const generation = this.generation;
    const rows = await this.prisma.directoryRow.findMany({
      where: type === null ? {} : { type },
      select: { name: true, type: true, kind: true, ...(full ? { description: true } : {}) },
      orderBy: [{ type: 'asc' }, { ordinal: 'asc' }],
    });
    const entries: ListingEntry[] = rows.map((r) =>
      full
        ? { name: r.name, type: r.type, kind: r.kind, description: (r as { description: string }).description }
        : { name: r.name, type: r.type, kind: r.kind },
    );
    const out = { generation, body: JSON.stringify(entries), count: entries.length };
    this.listings.set(key, out);
    return out;
  }
}
