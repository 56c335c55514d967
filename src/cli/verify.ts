// `dirledger verify` and `dirledger checkpoint export | verify`: in process on the configured database.
import { readFile, writeFile } from 'node:fs/promises';
import type { Config } from '../config.ts';
import { withRootKey } from '../auth/root-key.ts';
import { checkCheckpoint, checkpointKey, exportCheckpoint } from '../ledger/checkpoint.ts';
import { verifyLedger, type LedgerVerification } from '../ledger/verify.ts';
import { openConfiguredDatabase } from '../services.ts';

type Out = { write(text: string): unknown };

const json = (value: unknown) => `${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : Buffer.isBuffer(v) ? v.toString('hex') : v), 2)}\n`;

function describe(v: LedgerVerification): string {
  const lines = [
    `${v.ok ? 'intact' : 'CHANGED'}: ${v.batches} batches, ${v.events} events recomputed` +
      (v.lastSeq === null ? '' : ` (batches ${v.firstSeq}..${v.lastSeq}, up to position ${v.lastPosition ?? 0})`),
  ];
  if (v.genesisPosition > 0n) lines.push(`events at or below position ${v.genesisPosition} predate the chain and are not covered`);
  if (v.lastLink) lines.push(`last link ${v.lastLink.toString('hex')}`);
  for (const p of v.problems) lines.push(`  ${p.kind}: ${p.message}`);
  if (v.problemCount > v.problems.length) lines.push(`  … and ${v.problemCount - v.problems.length} more`);
  return `${lines.join('\n')}\n`;
}

async function withDatabase<T>(config: Config, work: (db: Awaited<ReturnType<typeof openConfiguredDatabase>>) => Promise<T>): Promise<T> {
  const db = await openConfiguredDatabase(config);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

export async function runVerify(config: Config, opts: { from?: bigint; to?: bigint; limit?: bigint; json?: boolean }, out: Out): Promise<number> {
  const started = performance.now();
  const v = await withDatabase(config, (db) =>
    verifyLedger(db.sql, { from: opts.from, to: opts.to, limit: opts.limit === undefined ? 100 : Number(opts.limit) }),
  );
  const seconds = (performance.now() - started) / 1000;
  out.write(opts.json ? json({ ...v, seconds }) : `${describe(v)}${Math.round(v.events / seconds).toLocaleString('en')} events/s\n`);
  return v.ok ? 0 : 1;
}

export async function runCheckpointExport(config: Config, opts: { out?: string }, out: Out): Promise<number> {
  const key = checkpointKey(withRootKey(config).rootKey);
  const checkpoint = await withDatabase(config, (db) => exportCheckpoint(db.sql, key));
  const text = `${JSON.stringify(checkpoint, null, 2)}\n`;
  if (opts.out) {
    await writeFile(opts.out, text, { flag: 'wx' });
    out.write(`checkpoint of batch ${checkpoint.seq} (position ${checkpoint.position}) written to ${opts.out}\n`);
  } else out.write(text);
  return 0;
}

export async function runCheckpointVerify(config: Config, file: string, opts: { publicKey?: string; json?: boolean }, out: Out): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    out.write(`cannot read ${file}: ${(error as Error).message}\n`);
    return 2;
  }
  const trusted = opts.publicKey ?? checkpointKey(withRootKey(config).rootKey).publicRaw;
  const check = await withDatabase(config, (db) => checkCheckpoint(db.sql, text, trusted));
  if (opts.json) out.write(json(check));
  else out.write(`${check.ok ? 'holds' : 'FAILS'}: ${check.message}\n${check.verification && !check.verification.ok ? describe(check.verification) : ''}`);
  return check.ok ? 0 : check.checkpoint ? 1 : 2;
}
