// verifyLedger, ledgerCheckpoint and verifyLedgerCheckpoint through GraphQL over HTTP, and
// `dirledger verify` / `dirledger checkpoint export | verify` as child processes (PostgreSQL, which a
// second process can reach): intact first, then after a superuser rewrites history behind the triggers.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspect } from '../../src/auth/tokens.ts';
import { checkpointKey } from '../../src/ledger/checkpoint.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { runCli } from '../helpers/process.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const verifyQuery = `query($from: BigInt, $to: BigInt) { verifyLedger(from: $from, to: $to) {
  ok batches events lastSeq lastLink headSeq problemCount problems { kind message position eventId columns collector chainSeq } } }`;
const checkQuery = `query($c: String!) { verifyLedgerCheckpoint(checkpoint: $c) { ok message verification { ok problems { kind eventId } } } }`;

describe.each(databaseKinds)('verifying the ledger through its doors on %s', (kind) => {
  let t: TestApp;
  let sql: RawSql;
  let dir: string;
  beforeAll(async () => {
    t = await startTestApp(kind);
    sql = await rawSql(t.db);
    dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-checkpoint-'));
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const ingest = async (collector: string, position: number, ids: string[]) => {
    const events = ids.map((id) => ({
      id,
      kind: 'TOOL_CALL',
      direction: 'IN',
      actionId: `act-${id}`,
      tool: 'ECHO',
      occurredAt: '2026-11-30T12:00:00.000Z',
      payload: { state: 'COMPLETE', text: id },
    }));
    const response = await fetch(`${t.origin}/ledger/batches`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ collector, position, events }),
    });
    expect(response.status).toBe(200);
  };
  const cli = async (args: string[]) => {
    const child = runCli(args, { DATABASE_URL: t.db.url, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' });
    const { code } = await child.exited;
    return { code, output: child.output() };
  };

  it('checks a checkpoint of the chain before its first batch', async () => {
    const { data } = await t.gql(`query { ledgerCheckpoint { seq json } }`);
    expect(data.ledgerCheckpoint.seq).toBe('0');
    expect((await t.gql(checkQuery, { c: data.ledgerCheckpoint.json })).data.verifyLedgerCheckpoint).toMatchObject({ ok: true });
  });

  it('answers intact for a ledger written through the doors, and refuses a token with caveats (recorded)', async () => {
    await ingest('col', 2, ['e1', 'e2']);
    const call = await fetch(`${t.origin}/api/dispatch`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'ECHO', args: { text: 'hi' } }),
    });
    expect(call.status).toBe(200);
    await ingest('col', 4, ['e3', 'e4']);
    await t.app.services.writer.flush();

    const { data, errors } = await t.gql(verifyQuery);
    expect(errors).toBeUndefined();
    expect(data.verifyLedger).toMatchObject({ ok: true, problemCount: 0, problems: [] });
    expect(data.verifyLedger.events).toBeGreaterThanOrEqual(8);
    expect(data.verifyLedger.headSeq).toBe(data.verifyLedger.lastSeq);

    const narrow = t.mint('tools = ECHO');
    const response = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${narrow}` },
      body: JSON.stringify({ query: verifyQuery }),
    });
    const refused = (await response.json()) as any;
    expect(refused.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'operator' });
    expect(refused.errors[0].message).toMatch(/operator \(admin\) token/);
    await t.app.services.writer.flush();
    const refusals = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' } });
    expect(refusals.some((r) => (r.metadata as any)?.tokenId === inspect(narrow).tokenId)).toBe(true);

    const bad = await t.gql(`query { verifyLedger(from: "-1") { ok } }`);
    expect(bad.errors?.[0]?.extensions?.code).toMatch(/BAD_USER_INPUT|BAD_INPUT/);
  });

  it('a checkpoint exported before a superuser rewrites history fails to verify after; verifyLedger names the change', async () => {
    const { data } = await t.gql(`query { ledgerCheckpoint { seq position link publicKey signature json } }`);
    const checkpoint = data.ledgerCheckpoint;
    expect(checkpoint.publicKey).toBe(checkpointKey(Buffer.from((await readFile(path.join(t.dataDir, 'root.key'), 'utf8')).trim(), 'hex')).publicRaw);
    expect((await t.gql(checkQuery, { c: checkpoint.json })).data.verifyLedgerCheckpoint).toMatchObject({ ok: true });

    // A forged copy: another link under the same signature, and a checkpoint signed by some other key.
    const forged = JSON.stringify({ ...JSON.parse(checkpoint.json), link: 'f'.repeat(64) });
    expect((await t.gql(checkQuery, { c: forged })).data.verifyLedgerCheckpoint).toMatchObject({
      ok: false,
      message: expect.stringMatching(/signature does not verify/),
    });
    const other = checkpointKey(Buffer.alloc(32, 7)).publicRaw;
    const foreign = JSON.stringify({ ...JSON.parse(checkpoint.json), publicKey: other });
    expect((await t.gql(checkQuery, { c: foreign })).data.verifyLedgerCheckpoint.message).toMatch(/not by the trusted key/);
    expect((await t.gql(checkQuery, { c: '{"version":1}' })).data.verifyLedgerCheckpoint).toMatchObject({
      ok: false,
      message: expect.stringMatching(/Not a dirledger checkpoint/),
    });

    const file = path.join(dir, 'before.json');
    await writeFile(file, checkpoint.json);
    if (kind === 'postgres') {
      const intact = await cli(['verify']);
      expect(intact.code, intact.output).toBe(0);
      expect(intact.output).toMatch(/^intact: \d+ batches, \d+ events recomputed/m);
      expect(intact.output).toMatch(/events\/s/);
      const holds = await cli(['checkpoint', 'verify', file]);
      expect(holds.code, holds.output).toBe(0);
      expect(holds.output).toMatch(/^holds: /);
    }

    await sql.exec(`SET session_replication_role = replica;
      UPDATE ledger_event SET status = 'tampered' WHERE id = 'e3';
      SET session_replication_role = origin;`);
    const after = (await t.gql(verifyQuery)).data.verifyLedger;
    expect(after.ok).toBe(false);
    expect(after.problems).toEqual([expect.objectContaining({ kind: 'EVENT_CHANGED', eventId: 'e3', columns: ['status'] })]);
    const check = (await t.gql(checkQuery, { c: checkpoint.json })).data.verifyLedgerCheckpoint;
    expect(check.ok).toBe(false);
    expect(check.message).toMatch(/no longer recomputes from the rows/);
    expect(check.verification.problems).toEqual([{ kind: 'EVENT_CHANGED', eventId: 'e3' }]);

    if (kind === 'postgres') {
      const changed = await cli(['verify']);
      expect(changed.code).toBe(1);
      expect(changed.output).toMatch(/EVENT_CHANGED: Event e3 at position \d+ no longer matches .*: changed status/);
      const fails = await cli(['checkpoint', 'verify', file]);
      expect(fails.code).toBe(1);
      expect(fails.output).toMatch(/^FAILS: /);
      const unreadable = await cli(['checkpoint', 'verify', path.join(dir, 'absent.json')]);
      expect(unreadable.code).toBe(2);
    }
  }, 240_000); // five CLI processes on PostgreSQL
});
