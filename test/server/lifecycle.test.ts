// The server as a user runs it: a real process, started on a bare data folder, stopped by a signal.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onAdmin, withDatabase } from '../helpers/database.ts';
import { runCli } from '../helpers/process.ts';

// A new folder's first start runs initdb and every migration (~20 s of CPU): minutes at nice 19 on a loaded machine.
const FIRST_START_MS = 240_000;

describe('dirledger serve', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-serve-'));
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  let adminToken: string;

  it(
    'starts on embedded PGlite in a fresh folder, prints an admin token once, serves GraphiQL, and stops cleanly on SIGTERM',
    async () => {
      // The start a user gets: V8's default compilers.
      const server = runCli(['serve'], { DATA_DIR: dataDir, PORT: '0' }, { nodeFlags: [] });
      try {
        const [, url] = await server.waitFor(/GraphiQL at (http:\/\/\S+)/, FIRST_START_MS);
        [, adminToken] = (await server.waitFor(/Admin token \(shown once\):\s+(\S+)/)) as [string, string];
        const page = await fetch(url!, { headers: { accept: 'text/html' } });
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('YogaGraphiQL');
        const query = JSON.stringify({ query: '{ event(id: "nothing") { id } }' });
        const anonymous = await fetch(url!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: query });
        expect(anonymous.status).toBe(401);
        expect(await anonymous.json()).toEqual({ errors: [{ message: 'Missing or invalid credential.', extensions: { code: 'UNAUTHENTICATED' } }] });
        const answer = await fetch(url!, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
          body: query,
        });
        expect(await answer.json()).toEqual({ data: { event: null } });
        expect(await readdir(dataDir)).toContain('pglite');
        const key = await stat(path.join(dataDir, 'root.key'));
        expect(key.mode & 0o777).toBe(0o600);
        const rootKey = (await readFile(path.join(dataDir, 'root.key'), 'utf8')).trim();
        expect(rootKey).toMatch(/^[0-9a-f]{64}$/);
        expect(server.output()).not.toContain(rootKey);
      } finally {
        server.child.kill('SIGTERM');
      }
      expect(await server.exited).toEqual({ code: 0, signal: null });
    },
    FIRST_START_MS + 60_000,
  );

  it('finishes an in-flight request before stopping', async () => {
    const server = runCli(['serve'], { DATA_DIR: dataDir, PORT: '0' });
    const [, url] = await server.waitFor(/GraphiQL at (http:\/\/\S+)/, 120_000);
    const origin = new URL(url!).origin;
    const events = Array.from({ length: 200 }, (_, i) => ({
      id: `inflight-${i}`,
      kind: 'TEST',
      direction: 'IN',
      actionId: 'inflight',
      occurredAt: '2026-11-30T00:00:00Z',
      payload: { state: 'COMPLETE', text: `payload ${i} `.repeat(200) },
    }));
    // The request is under way when the signal comes: its headers are in (the server has taken it) and
    // half its body is still to arrive. A fixed pause after fetch() raced the signal on a loaded machine.
    const body = Buffer.from(JSON.stringify({ collector: 'inflight', events }));
    const half = Math.floor(body.length / 2);
    const request = http.request(`${origin}/ledger/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), authorization: `Bearer ${adminToken}` },
    });
    const pending = new Promise<{ status: number; text: string }>((resolve, reject) => {
      request.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      });
      request.on('error', reject);
    });
    request.write(body.subarray(0, half));
    await new Promise((r) => setTimeout(r, 500));
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 50));
    request.end(body.subarray(half));
    const response = await pending;
    expect(response.status, response.text).toBe(200);
    expect(JSON.parse(response.text)).toMatchObject({ received: 200, inserted: 200 });
    expect(await server.exited).toEqual({ code: 0, signal: null });
    // The key already existed: no second admin token was printed.
    expect(server.output()).not.toMatch(/Admin token/);
  }, 180_000);

  it('refuses a bad setting before starting, naming the variable, what was expected and what arrived', async () => {
    const server = runCli(['serve'], { DATA_DIR: dataDir, PORT: 'http' });
    const { code } = await server.exited;
    expect(code).toBe(2);
    expect(server.output()).toMatch(/PORT: expected .*number.*, got "http"/);
  });

  it(
    'applies migrations on their own with `dirledger migrate`, and a second run applies nothing',
    async () => {
      // On an empty PostgreSQL database when the suite has one: a new PGlite folder's initdb and migrations (~20 s
      // of CPU) are the first test's already, and `migrate` on a PGlite folder is test/db/folder-lock.test.ts's too.
      const fresh = await mkdtemp(path.join(os.tmpdir(), 'dirledger-migrate-'));
      const database = process.env.TEST_DATABASE_URL ? await emptyPostgres(process.env.TEST_DATABASE_URL) : undefined;
      const env = { DATA_DIR: fresh, ...(database && { DATABASE_URL: database.url }) };
      try {
        const first = runCli(['migrate'], env);
        expect((await first.exited).code).toBe(0);
        expect(first.output()).toMatch(/applied: \d{14}_ledger_core/);
        const second = runCli(['migrate'], env);
        expect((await second.exited).code).toBe(0);
        expect(second.output()).toContain('no pending migrations');
      } finally {
        await database?.drop();
        await rm(fresh, { recursive: true, force: true });
      }
    },
    FIRST_START_MS + 60_000,
  );
});

/** A new, empty database on the suite's PostgreSQL (no template: nothing migrated). */
async function emptyPostgres(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `dirledger_test_${randomBytes(6).toString('hex')}`;
  const admin = (sql: string) => onAdmin(base, sql);
  await admin(`CREATE DATABASE "${name}"`);
  return { url: withDatabase(base, name), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
