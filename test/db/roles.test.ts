// Least privilege on PostgreSQL: `dirledger db roles` SQL applied to a fresh database, then the server
// role is shown unable to rewrite history (UPDATE, DELETE, TRUNCATE, disabling a trigger, setting
// session_replication_role) and the whole app is run as it: dispatch, ingest, token uses, reads, verify.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.ts';
import { parseConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { privilegeWarnings, rolesSql } from '../../src/db/roles.ts';
import { poolExecutor } from '../../src/db/sql.ts';
import { createLogger } from '../../src/logger.ts';
import { adminUrl, createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const postgres = process.env.TEST_DATABASE_URL;

describe.skipIf(!postgres)('least privilege on postgres', () => {
  const suffix = randomBytes(4).toString('hex');
  const roles = { owner: `dl_owner_${suffix}`, server: `dl_server_${suffix}` };
  let db: TestDatabase;
  let urlAs: (role: string) => string;
  const clients: pg.Client[] = [];
  const connectAs = async (role: string) => {
    const client = new pg.Client({ connectionString: urlAs(role) });
    client.on('error', () => {});
    await client.connect();
    clients.push(client);
    return client;
  };
  const refused = async (client: pg.Client, sql: string) => {
    try {
      await client.query(sql);
    } catch (error) {
      return error as Error & { code?: string };
    }
    throw new Error(`expected ${sql} to be refused`);
  };

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    urlAs = (role) => {
      const u = new URL(db.url!);
      u.username = role;
      return u.toString();
    };
    await db.sql.query(rolesSql(roles));
  });
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => {});
    await db?.drop();
    const admin = new pg.Client({ connectionString: adminUrl(postgres!) });
    await admin.connect();
    await admin.query(`DROP ROLE IF EXISTS ${roles.server}`);
    await admin.query(`DROP ROLE IF EXISTS ${roles.owner}`);
    await admin.end();
  });

  it('the server role cannot update, delete, truncate, disable a trigger or set session_replication_role', async () => {
    const server = await connectAs(roles.server);
    for (const sql of [
      "UPDATE ledger_event SET tool = 'TAMPERED'",
      'DELETE FROM ledger_event',
      'TRUNCATE ledger_event',
      "UPDATE ledger_batch SET collector = 'x'",
      'DELETE FROM ledger_batch',
      "UPDATE blob SET codec = 'x'",
      'DELETE FROM collector',
      "UPDATE collector SET id = 'x'",
      'DELETE FROM ledger_chain',
      'UPDATE ledger_chain SET genesis_position = 0',
      'DELETE FROM token_uses',
      'UPDATE token_uses SET max_uses = 1000',
      'DELETE FROM contract_version',
      'INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ($$x$$, $$x$$, $$x$$)',
    ]) {
      expect((await refused(server, sql)).code, sql).toBe('42501');
    }
    expect((await refused(server, 'ALTER TABLE ledger_event DISABLE TRIGGER ledger_event_append_only')).message).toMatch(/must be owner/);
    expect((await refused(server, 'SET session_replication_role = replica')).code).toBe('42501');
    expect((await refused(server, 'CREATE TABLE sneaky (x int)')).code).toBe('42501');
  });

  it('warns for a superuser and for the owner, not for the server role', async () => {
    expect(await privilegeWarnings(db.sql)).toEqual([expect.stringMatching(/a superuser: it could disable the ledger's triggers/)]);
    const owner = new pg.Pool({ connectionString: urlAs(roles.owner), max: 1 });
    const server = new pg.Pool({ connectionString: urlAs(roles.server), max: 1 });
    try {
      expect(await privilegeWarnings(poolExecutor(owner))).toEqual([expect.stringMatching(/owns the ledger's tables/)]);
      expect(await privilegeWarnings(poolExecutor(server))).toEqual([]);
    } finally {
      await owner.end();
      await server.end();
    }
  });

  it('runs the whole app as the server role: directory build, dispatch, ingest, token uses, reads, verify and revocation', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-roles-'));
    const config = parseConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', AUTH_RATE_PER_SECOND: '0' });
    const database = await openDatabase({ url: urlAs(roles.server) });
    let app: App | undefined;
    try {
      app = await buildApp(config, { db: database, logger: createLogger('silent') });
      const { url, port } = await app.start(0, '127.0.0.1');
      const origin = `http://127.0.0.1:${port}`;
      const admin = { authorization: `Bearer ${app.services.authority.mintToken()}`, 'content-type': 'application/json' };
      const limitedToken = app.services.authority.mintToken(['uses <= 2']);
      const limited = { authorization: `Bearer ${limitedToken}`, 'content-type': 'application/json' };

      for (const headers of [admin, limited, limited]) {
        const call = await fetch(`${origin}/api/dispatch`, { method: 'POST', headers, body: JSON.stringify({ tool: 'ECHO', args: { text: 'as server' } }) });
        expect(call.status).toBe(200);
      }
      const spent = await fetch(`${origin}/api/dispatch`, {
        method: 'POST',
        headers: limited,
        body: JSON.stringify({ tool: 'ECHO', args: { text: 'third' } }),
      });
      expect(spent.status).toBe(403);
      for (const position of [2, 4]) {
        const events = [0, 1].map((i) => ({
          id: `r-${position}-${i}`,
          kind: 'TOOL_CALL',
          direction: 'IN',
          actionId: `a-${position}`,
          tool: 'ECHO',
          occurredAt: '2026-11-30T12:00:00.000Z',
          payload: { state: 'COMPLETE', text: `p${position}${i}` },
        }));
        const ingest = await fetch(`${origin}/ledger/batches`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ collector: 'roles', position, events }),
        });
        expect(ingest.status).toBe(200);
      }
      await app.services.writer.flush();

      const graphqlPost = async (query: string) =>
        (await (await fetch(url, { method: 'POST', headers: admin, body: JSON.stringify({ query }) })).json()) as any;
      const read = await graphqlPost(
        '{ events(filter: { tool: ["ECHO"] }, first: 50) { edges { node { id toolName } } } ledgerCounts(by: TOOL) { key events } tool(name: "ECHO") { name } }',
      );
      expect(read.errors).toBeUndefined();
      expect(read.data.events.edges.length).toBeGreaterThanOrEqual(4);
      const verified = await graphqlPost('{ verifyLedger { ok events problems { kind message } } }');
      expect(verified.errors).toBeUndefined();
      expect(verified.data.verifyLedger).toMatchObject({ ok: true, problems: [] });
      // Revocation appends to token_revocation (and reads it back): granted to the server role too.
      const revoked = await graphqlPost(`mutation { revokeToken(tokenId: ${JSON.stringify(limitedToken)}, reason: "roles test") { already } }`);
      expect(revoked.errors).toBeUndefined();
      expect(revoked.data.revokeToken.already).toBe(false);

      const [collector] = await db.sql.query<{ delivered_position: bigint }>("SELECT delivered_position FROM collector WHERE id = 'roles'");
      expect(collector!.delivered_position).toBe(4n);
      const [uses] = await db.sql.query<{ uses: number }>('SELECT max(uses) AS uses FROM token_uses');
      expect(uses!.uses).toBe(2);
    } finally {
      await app?.stop();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
