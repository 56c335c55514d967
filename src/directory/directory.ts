// The derived index: built from the section folder into PostgreSQL, rebuilt only for sections whose
// content hash changed. A section that fails validation keeps its previous version live.
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';
import type { Logger } from '../logger.ts';
import { checkContract, checkContractCell, contractSha256, secretNamesIn, type Contract, type ContractShape } from './contracts.ts';
import { wayHeader } from './labels.ts';
import { describeRetiredHit, findRetired, type RetiredTarget } from './retired.ts';
import { describeProblem, parseSection, sectionFileType, type ParsedSection, type SectionProblem } from './sections.ts';

export type DirectoryOptions = {
  dir: string;
  /** Names bound in the secret registry (values never reach the Directory). */
  boundSecrets: ReadonlySet<string>;
  retired: RetiredTarget[];
  /** Debounce of the folder watcher; 0 disables watching. */
  watchDebounceMs: number;
};

/** A way cell as stored on the row: the contract itself lives in contract_version. */
export type StoredWay = { header: string; sha256: string; shape: ContractShape };
export type RowRefusal = { row: number; name: string; column: string; reason: string };

export type BuildReport = {
  startedAt: Date;
  ms: number;
  /** Sections whose content changed and were built (successfully or not). */
  rebuilt: string[];
  failed: string[];
  unchanged: number;
  removed: string[];
};

export type ListingEntry = { name: string; type: string; kind: string | null; description?: string };

const chunk = 2000;

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

  constructor(
    private readonly prisma: PrismaClient,
    private readonly logger: Logger,
    readonly options: DirectoryOptions,
  ) {}

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
    const report: BuildReport = { startedAt, ms: 0, rebuilt: [], failed: [], unchanged: 0, removed: [] };
    let files: string[];
    try {
      files = (await readdir(this.options.dir)).sort();
    } catch (error) {
      this.logger.error({ err: error, dir: this.options.dir }, 'cannot read the directory folder; the index is unchanged');
      report.ms = performance.now() - t0;
      return (this.lastBuild = report);
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
      const parsed = parseSection(file, bytes);
      if (this.seen.get(parsed.type) === parsed.versionTag) {
        report.unchanged++;
        continue;
      }
      this.sectionBuilds++;
      report.rebuilt.push(parsed.type);
      const ok = await this.buildSection(parsed);
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
    return (this.lastBuild = report);
  }

  /** Validates and stores one section; on failure keeps the live version and records why. */
  private async buildSection(parsed: ParsedSection): Promise<boolean> {
    const problems: SectionProblem[] = [...parsed.problems];
    const refusals: RowRefusal[] = [];
    const contracts = new Map<string, { shape: ContractShape; contract: Contract }>();
    const rows: Prisma.DirectoryRowCreateManyInput[] = [];
    const headerOf = new Map(parsed.columns.map((c) => [c.key, c.header]));
    for (const row of parsed.rows) {
      const ways: Record<string, StoredWay> = {};
      const rowContracts: { column: string; contract: Contract }[] = [];
      let bad = false;
      for (const [key, cell] of Object.entries(row.ways)) {
        const column = headerOf.get(key) ?? wayHeader(key);
        const check = checkContractCell(cell);
        if (!check.ok) {
          problems.push({ section: parsed.type, row: row.row, column, message: check.message });
          bad = true;
          continue;
        }
        const sha256 = contractSha256(check.contract);
        contracts.set(sha256, { shape: check.shape, contract: check.contract });
        ways[key] = { header: column, sha256, shape: check.shape };
        rowContracts.push({ column, contract: check.contract });
      }
      let upstreamSha256: string | null = null;
      if (row.upstream) {
        const column = headerOf.get('upstream')!;
        const check = checkContractCell(row.upstream);
        if (!check.ok) {
          problems.push({ section: parsed.type, row: row.row, column, message: check.message });
          bad = true;
        } else {
          upstreamSha256 = contractSha256(check.contract);
          contracts.set(upstreamSha256, { shape: check.shape, contract: check.contract });
          rowContracts.push({ column, contract: check.contract });
        }
      }
      let argsSchema: Prisma.InputJsonValue | undefined;
      if (row.argsSchema) {
        const column = headerOf.get('args schema')!;
        try {
          const value = JSON.parse(row.argsSchema) as unknown;
          if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
          argsSchema = value as Prisma.InputJsonValue;
        } catch {
          problems.push({ section: parsed.type, row: row.row, column, message: `expected a JSON Schema object for the arguments, got ${JSON.stringify(row.argsSchema.slice(0, 60))}` });
          bad = true;
        }
      }
      if (bad) continue;
      const retired = rowContracts
        .map(({ column, contract }) => ({ column, hit: findRetired(contract, this.options.retired) }))
        .find((r) => r.hit);
      if (retired) {
        refusals.push({ row: row.row, name: row.name, column: retired.column, reason: `refused: ${describeRetiredHit(retired.hit!)}` });
        continue;
      }
      const secretNames = secretNamesIn(rowContracts.map((c) => c.contract));
      const unbound = secretNames.filter((n) => !this.options.boundSecrets.has(n));
      const reasons: string[] = [];
      if (Object.keys(ways).length === 0) reasons.push('no way column holds a contract');
      for (const n of unbound) reasons.push(`secret [${n}] is not bound in the secret registry`);
      rows.push({
        type: parsed.type,
        name: row.name,
        ordinal: row.row,
        kind: row.kind || null,
        rowId: row.id || null,
        description: row.description,
        text: row.text,
        ways,
        ...(argsSchema !== undefined ? { argsSchema } : {}),
        upstreamSha256,
        secretNames,
        unboundSecrets: unbound,
        runnable: reasons.length === 0,
        reasons,
        versionTag: parsed.versionTag,
      });
    }
    const now = new Date();
    const existing = await this.prisma.directorySection.findUnique({ where: { type: parsed.type }, select: { versionTag: true } });
    if (problems.length) {
      const errors = problems.map((p) => ({ ...p, text: describeProblem(p) }));
      await this.prisma.directorySection.upsert({
        where: { type: parsed.type },
        create: {
          type: parsed.type,
          file: parsed.file,
          status: 'FAILED',
          seenTag: parsed.versionTag,
          seenAt: now,
          errors,
          unknownHeaders: parsed.unknownHeaders,
          headers: parsed.columns.map((c) => c.header),
          builds: 1,
        },
        update: {
          file: parsed.file,
          status: existing?.versionTag ? 'STALE' : 'FAILED',
          seenTag: parsed.versionTag,
          seenAt: now,
          errors,
          unknownHeaders: parsed.unknownHeaders,
          builds: { increment: 1 },
        },
      });
      this.logger.warn({ section: parsed.type, errors: errors.slice(0, 5).map((e) => e.text) }, 'directory section failed; its previous version stays live');
      return false;
    }
    await this.prisma.$transaction(
      async (tx) => {
        const versions = [...contracts].map(([sha256, c]) => ({ sha256, shape: c.shape, contract: c.contract as Prisma.InputJsonValue }));
        for (let i = 0; i < versions.length; i += chunk) {
          await tx.contractVersion.createMany({ data: versions.slice(i, i + chunk), skipDuplicates: true });
        }
        const section = {
          file: parsed.file,
          versionTag: parsed.versionTag,
          builtAt: now,
          status: 'OK' as const,
          seenTag: parsed.versionTag,
          seenAt: now,
          errors: [],
          refusals,
          unknownHeaders: parsed.unknownHeaders,
          headers: parsed.columns.map((c) => c.header),
          rowCount: rows.length,
        };
        await tx.directorySection.upsert({
          where: { type: parsed.type },
          create: { type: parsed.type, ...section, builds: 1 },
          update: { ...section, builds: { increment: 1 } },
        });
        await tx.directoryRow.deleteMany({ where: { type: parsed.type } });
        for (let i = 0; i < rows.length; i += chunk) await tx.directoryRow.createMany({ data: rows.slice(i, i + chunk) });
      },
      { timeout: 300_000, maxWait: 60_000 },
    );
    return true;
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
    const entries: ListingEntry[] = rows.map((r) => (full ? { name: r.name, type: r.type, kind: r.kind, description: (r as { description: string }).description } : { name: r.name, type: r.type, kind: r.kind }));
    const out = { generation, body: JSON.stringify(entries), count: entries.length };
    this.listings.set(key, out);
    return out;
  }
}
