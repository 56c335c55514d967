// The embedded database on a data folder: created and migrated in a child process, durable commits,
// small shared buffers, its SQL parser compiled by TurboFan before it opens, and its size on disk.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { embeddedStartParams, exportedFunctionIndex, PARSER_EXPORT } from '../../src/db/embedded.ts';
import { seedPgliteFolder } from '../helpers/database.ts';
import { cliBin, repoRoot } from '../helpers/process.ts';

const migrationFolders = fs
  .readdirSync(new URL('../../prisma/migrations', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe('embeddedStartParams', () => {
  it('turns fsync on and sets shared buffers, keeping the other defaults', () => {
    const params = embeddedStartParams(PGlite.defaultStartParams, {});
    expect(PGlite.defaultStartParams).toContain('-F');
    expect(params).not.toContain('-F');
    expect(params.join(' ')).toContain('-c fsync=on -c wal_sync_method=fsync -c shared_buffers=16MB');
    expect(params).toEqual(expect.arrayContaining(PGlite.defaultStartParams.filter((p) => p !== '-F')));
  });

  it('takes shared buffers from DIRLEDGER_PGLITE_SHARED_BUFFERS', () => {
    expect(embeddedStartParams(PGlite.defaultStartParams, { DIRLEDGER_PGLITE_SHARED_BUFFERS: '64MB' })).toContain('shared_buffers=64MB');
  });
});

describe("PGlite's SQL parser, compiled before the database opens", () => {
  const wasm = fs.readFileSync(path.join(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), 'pglite.wasm'));

  it('is found by its export name among the functions the module defines, not those it imports', () => {
    const index = exportedFunctionIndex(wasm, PARSER_EXPORT);
    const imported = WebAssembly.Module.imports(new WebAssembly.Module(wasm)).filter((i) => i.kind === 'function').length;
    expect(index).toBeGreaterThanOrEqual(imported);
    // A small module built by hand: one imported function, two defined, the second exported as "f".
    // biome-ignore format: one section a line
    const tiny = Uint8Array.from([
      0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
      1, 4, 1, 0x60, 0, 0, // type section: () -> ()
      2, 7, 1, 1, 0x6d, 1, 0x69, 0, 0, // import section: "m" "i", function of type 0
      3, 3, 2, 0, 0, // function section: two functions of type 0
      7, 5, 1, 1, 0x66, 0, 2, // export section: "f" = function 2
      10, 7, 2, 2, 0, 0x0b, 2, 0, 0x0b, // code section
    ]);
    new WebAssembly.Module(tiny);
    expect(exportedFunctionIndex(tiny, 'f')).toBe(2);
    expect(exportedFunctionIndex(tiny, 'g')).toBeUndefined();
  });

  it('is not found in what is not a module, nor in a module cut short', () => {
    expect(exportedFunctionIndex(new TextEncoder().encode('not a WebAssembly module'), PARSER_EXPORT)).toBeUndefined();
    expect(exportedFunctionIndex(wasm.subarray(0, 4096), PARSER_EXPORT)).toBeUndefined();
    expect(exportedFunctionIndex(new Uint8Array(0), PARSER_EXPORT)).toBeUndefined();
  });

  it('is compiled by TurboFan while the module compiles, not later while the server runs', async () => {
    const index = exportedFunctionIndex(wasm, PARSER_EXPORT);
    const { stdout } = await promisify(execFile)(process.execPath, ['--trace-wasm-compilation-times', 'test/db/fixtures/compile-pglite.ts'], {
      cwd: repoRoot,
      maxBuffer: 64 * 1024 * 1024,
    });
    const lines = stdout.split('\n');
    const parser = lines.findIndex((line) => line.includes(`#${index} using TurboFan`));
    expect(parser, 'the parser compiled by TurboFan').toBeGreaterThanOrEqual(0);
    expect(parser).toBeLessThan(lines.indexOf('compiled'));
    expect(lines.filter((line) => line.includes('using TurboFan'))).toHaveLength(1);
  }, 120_000);

  it('is left to Liftoff, with nothing compiled by TurboFan, in a process started with --liftoff-only', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--liftoff-only', '--trace-wasm-compilation-times', 'test/db/fixtures/compile-pglite.ts'], {
      cwd: repoRoot,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(stdout).toContain('compiled\n');
    expect(stdout).toMatch(/using Liftoff/);
    expect(stdout).not.toMatch(/using TurboFan/);
  }, 120_000);
});

describe('a server started with --liftoff-only', () => {
  it('stays on Liftoff through its start and its requests, and answers as any other', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'dirledger-baseline-'));
    try {
      await seedPgliteFolder(path.join(dataDir, 'pglite'));
      const child = spawn(process.execPath, ['--liftoff-only', '--trace-wasm-compilation-times', cliBin, 'serve'], {
        cwd: repoRoot,
        env: { ...process.env, LOG_LEVEL: 'warn', DATA_DIR: dataDir, PORT: '0', AUTHORITY: 'off' },
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk));
      const exited = new Promise((resolve) => child.on('exit', resolve));
      try {
        await vi.waitFor(() => expect(output).toMatch(/GraphiQL at http:\/\/\S+/), { timeout: 60_000, interval: 50 });
        const url = /GraphiQL at (http:\/\/\S+)/.exec(output)![1]!;
        for (let i = 0; i < 20; i++) {
          const answer = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: `{ event(id: "none-${i}") { id } }` }),
          });
          expect(await answer.json()).toEqual({ data: { event: null } });
        }
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
      expect(output).toMatch(/using Liftoff/);
      expect(output).not.toMatch(/using TurboFan/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('a data folder', () => {
  let folder: string;
  let db: Database;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'dirledger-embedded-'));
    db = await openDatabase({ dataDir: path.join(folder, 'pglite') });
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('is created and migrated on first open, and reports every migration once', async () => {
    expect(fs.existsSync(path.join(folder, 'pglite', 'PG_VERSION'))).toBe(true);
    expect(await db.migrate()).toEqual(migrationFolders);
    expect(await db.migrate()).toEqual([]);
    const tables = await db.sql.query<{ name: string }>(`select tablename as name from pg_tables where tablename = 'ledger_event'`);
    expect(tables).toHaveLength(1);
  });

  it('runs with fsync on and 16 MB of shared buffers', async () => {
    const settings = await db.sql.query<{ name: string; setting: string }>(
      `select name, current_setting(name) as setting from unnest(array['fsync', 'wal_sync_method', 'shared_buffers']) as name`,
    );
    expect(Object.fromEntries(settings.map((s) => [s.name, s.setting]))).toEqual({ fsync: 'on', wal_sync_method: 'fsync', shared_buffers: '16MB' });
  });

  it('flushes a commit to the disk before it returns', async () => {
    const sync = vi.spyOn(fs, 'fdatasyncSync');
    try {
      await db.sql.query(`create table if not exists durable_probe (n int)`);
      sync.mockClear();
      await db.sql.query(`insert into durable_probe values (1)`);
      expect(sync).toHaveBeenCalled();
    } finally {
      sync.mockRestore();
    }
  });

  it('reports its size on disk, and it grows with what is written', async () => {
    const before = await db.sizeBytes();
    expect(before).toBeGreaterThan(5_000_000);
    await db.sql.query(`create table if not exists filler (t text)`);
    await db.sql.query(`insert into filler select repeat(md5(g::text), 64) from generate_series(1, 4000) g`);
    await db.sql.query('checkpoint');
    expect(await db.sizeBytes()).toBeGreaterThan(before);
  });

  it('opens again with nothing left to migrate and the data kept', async () => {
    await db.close();
    db = await openDatabase({ dataDir: path.join(folder, 'pglite') });
    expect(await db.migrate()).toEqual([]);
    expect(await db.sql.query(`select n from durable_probe`)).toEqual([{ n: 1 }]);
  });

  it('refuses a folder it cannot initialise, naming why, and leaves nothing running', async () => {
    const blocked = path.join(folder, 'not-a-folder');
    fs.writeFileSync(blocked, 'a file where the data folder should be');
    await expect(openDatabase({ dataDir: blocked })).rejects.toThrow(/EEXIST|ENOTDIR|not a directory|exists/i);
    expect(await readdir(folder)).toEqual(expect.arrayContaining(['pglite', 'not-a-folder']));
  });
});
