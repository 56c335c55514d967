// One section's build: each row's contracts checked and hashed, retired targets refused, secrets
// named, then the section stored in one transaction (rows by one unnest statement per chunk). A
// section with any problem is recorded as FAILED (or STALE) and its previous version stays live.
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { Logger } from '../logger.ts';
import { checkContractCell, contractSha256, secretNamesIn, type Contract, type ContractShape } from './contracts.ts';
import { wayHeader } from './labels.ts';
import { describeRetiredHit, findRetired, type RetiredTarget } from './retired.ts';
import type { StoredWay } from './row-meant.ts';
import { describeProblem, type ParsedSection, type SectionProblem } from './sections.ts';

const chunk = 5000;

export type RowRefusal = { row: number; name: string; column: string; reason: string };

/** What a section's build checks rows against. */
export type SectionChecks = {
  /** Names bound in the secret registry (values never reach the Directory). */
  boundSecrets: ReadonlySet<string>;
  retired: RetiredTarget[];
};

type RowInsert = {
  type: string;
  name: string;
  ordinal: number;
  kind: string | null;
  rowId: string | null;
  description: string;
  text: Record<string, string>;
  ways: Record<string, StoredWay>;
  argsSchema: unknown;
  upstreamSha256: string | null;
  secretNames: string[];
  unboundSecrets: string[];
  runnable: boolean;
  reasons: string[];
  versionTag: string;
};

// Prisma's createMany spends ~0.5 ms a row building parameters; one unnest statement per chunk does not.
async function insertRows(tx: PrismaClient, rows: RowInsert[]): Promise<void> {
  const col = <T>(f: (r: RowInsert) => T) => rows.map(f);
  const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
  await tx.$executeRawUnsafe(
    `INSERT INTO directory_row (type, name, ordinal, kind, row_id, description, text, ways, args_schema, upstream_sha256,
       secret_names, unbound_secrets, runnable, reasons, version_tag)
     SELECT type, name, ordinal, kind, row_id, description, text, ways, args_schema, upstream_sha256,
       ARRAY(SELECT jsonb_array_elements_text(secret_names)), ARRAY(SELECT jsonb_array_elements_text(unbound_secrets)),
       runnable, ARRAY(SELECT jsonb_array_elements_text(reasons)), version_tag
     FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::jsonb[], $8::jsonb[], $9::jsonb[],
       $10::text[], $11::jsonb[], $12::jsonb[], $13::bool[], $14::jsonb[], $15::text[])
       AS r(type, name, ordinal, kind, row_id, description, text, ways, args_schema, upstream_sha256, secret_names,
         unbound_secrets, runnable, reasons, version_tag)`,
    col((r) => r.type),
    col((r) => r.name),
    col((r) => r.ordinal),
    col((r) => r.kind),
    col((r) => r.rowId),
    col((r) => r.description),
    col((r) => json(r.text)),
    col((r) => json(r.ways)),
    col((r) => json(r.argsSchema)),
    col((r) => r.upstreamSha256),
    col((r) => json(r.secretNames)),
    col((r) => json(r.unboundSecrets)),
    col((r) => r.runnable),
    col((r) => json(r.reasons)),
    col((r) => r.versionTag),
  );
}

async function insertContracts(tx: PrismaClient, versions: [string, { shape: ContractShape; contract: Contract }][]): Promise<void> {
  await tx.$executeRawUnsafe(
    `INSERT INTO contract_version (sha256, shape, contract)
     SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[]) ON CONFLICT (sha256) DO NOTHING`,
    versions.map(([sha]) => sha),
    versions.map(([, v]) => v.shape),
    versions.map(([, v]) => JSON.stringify(v.contract)),
  );
}

/** Validates and stores one section; on failure keeps the live version and records why. */
export async function buildSection(prisma: PrismaClient, logger: Logger, options: SectionChecks, parsed: ParsedSection): Promise<boolean> {
  const problems: SectionProblem[] = [...parsed.problems];
  const refusals: RowRefusal[] = [];
  const contracts = new Map<string, { shape: ContractShape; contract: Contract }>();
  const rows: RowInsert[] = [];
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
    let argsSchema: unknown;
    if (row.argsSchema) {
      const column = headerOf.get('args schema')!;
      try {
        const value = JSON.parse(row.argsSchema) as unknown;
        if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
        argsSchema = value;
      } catch {
        problems.push({
          section: parsed.type,
          row: row.row,
          column,
          message: `expected a JSON Schema object for the arguments, got ${JSON.stringify(row.argsSchema.slice(0, 60))}`,
        });
        bad = true;
      }
    }
    if (bad) continue;
    const retired = rowContracts.map(({ column, contract }) => ({ column, hit: findRetired(contract, options.retired) })).find((r) => r.hit);
    if (retired) {
      refusals.push({ row: row.row, name: row.name, column: retired.column, reason: `refused: ${describeRetiredHit(retired.hit!)}` });
      continue;
    }
    const secretNames = secretNamesIn(rowContracts.map((c) => c.contract));
    const unbound = secretNames.filter((n) => !options.boundSecrets.has(n));
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
      argsSchema: argsSchema ?? null,
      upstreamSha256,
      secretNames,
      unboundSecrets: unbound,
      runnable: reasons.length === 0,
      reasons,
      versionTag: parsed.versionTag,
    });
  }
  const now = new Date();
  const existing = await prisma.directorySection.findUnique({ where: { type: parsed.type }, select: { versionTag: true } });
  if (problems.length) {
    const errors = problems.map((p) => ({ ...p, text: describeProblem(p) }));
    await prisma.directorySection.upsert({
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
    logger.warn({ section: parsed.type, errors: errors.slice(0, 5).map((e) => e.text) }, 'directory section failed; its previous version stays live');
    return false;
  }
  await prisma.$transaction(
    async (tx) => {
      const versions = [...contracts];
      for (let i = 0; i < versions.length; i += chunk) await insertContracts(tx as unknown as PrismaClient, versions.slice(i, i + chunk));
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
      for (let i = 0; i < rows.length; i += chunk) await insertRows(tx as unknown as PrismaClient, rows.slice(i, i + chunk));
    },
    { timeout: 300_000, maxWait: 60_000 },
  );
  return true;
}
