// What a newcomer sees when a start goes wrong: one line naming the setting and what to do (no
// stack), the admin token's recovery command, `--version`, and a Directory that is missing or broken
// reported by /healthz as degraded instead of an empty server saying ok.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app.ts';
import { seedPgliteFolder } from '../helpers/database.ts';
import { repoRoot, runCli } from '../helpers/process.ts';

const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-start-'));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('`dirledger serve` failing to start', () => {
  it('a DATABASE_URL nothing answers: one line naming DATABASE_URL (password hidden) and what to do, exit 3', async () => {
    const run = runCli(['serve'], { DATABASE_URL: 'postgresql://me:hunter22@127.0.0.1:1/db', DATA_DIR: await tempDir(), PORT: '0' });
    const { code } = await run.exited;
    expect(code).toBe(3);
    const out = run.output();
    expect(out).toContain('dirledger: cannot open the database at DATABASE_URL=postgresql://me:****@127.0.0.1:1/db: connect ECONNREFUSED 127.0.0.1:1.');
    expect(out).toContain('unset DATABASE_URL to run on the embedded database');
    expect(out).not.toContain('hunter22');
    expect(out).not.toMatch(/^\s+at /m);
  }, 60_000);

  it('a busy port: names PORT, and the start that created the root key says how to get an admin token', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const dataDir = await tempDir();
      // A migrated folder (the suite's template): a new folder's first start is test/server/lifecycle.test.ts's.
      await seedPgliteFolder(path.join(dataDir, 'pglite'));
      const run = runCli(['serve'], { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: '' });
      const { code } = await run.exited;
      expect(code).toBe(3);
      const out = run.output();
      expect(out).toContain(`dirledger: cannot listen on 127.0.0.1:${port}: the port (PORT) is already in use.`);
      expect(out).toContain('`npx dirledger token admin` mints one');
      expect(out).not.toMatch(/^\s+at /m);
      expect((await readFile(path.join(dataDir, 'root.key'), 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      busy.close();
    }
  }, 120_000);
});

describe('--version', () => {
  it("prints package.json's version", async () => {
    const { version } = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const run = runCli([flag]);
      expect((await run.exited).code).toBe(0);
      expect(run.output().trim()).toBe(version);
    }
  });
});

describe('/healthz and the Directory', () => {
  it('a DIRECTORY_DIR that does not exist is degraded, named', async () => {
    const missing = path.join(os.tmpdir(), 'dirledger-no-such-folder');
    const t = await startTestApp('pglite', { DIRECTORY_DIR: missing });
    try {
      const health = (await (await fetch(`${t.origin}/healthz`)).json()) as any;
      expect(health.ok).toBe(false);
      expect(health.directory).toEqual({
        status: 'degraded',
        folder: missing,
        problems: [`the Directory folder ${missing} (DIRECTORY_DIR) does not exist or is not a folder: the Directory is empty`],
      });
    } finally {
      await t.stop();
    }
  }, 60_000);

  it('one broken line in a fresh section: degraded, naming the section and the line', async () => {
    const dir = await tempDir();
    const demo = path.join(repoRoot, 'src/directory/demo');
    await writeFile(path.join(dir, 'setting.csv'), await readFile(path.join(demo, 'setting.csv')));
    await writeFile(path.join(dir, 'tool.csv'), 'name,description,way,type,kind,id\nBROKEN,"a row whose way is not JSON","{not json",tool,local,t1\n');
    const t = await startTestApp('pglite', { DIRECTORY_DIR: dir });
    try {
      const health = (await (await fetch(`${t.origin}/healthz`)).json()) as any;
      expect(health.ok).toBe(false);
      expect(health.directory.status).toBe('degraded');
      expect(health.directory.problems).toEqual([expect.stringMatching(/^section tool \(tool\.csv\) failed to build and has no rows: .+/)]);
    } finally {
      await t.stop();
    }
  }, 60_000);
});
