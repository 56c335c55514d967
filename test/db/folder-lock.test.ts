// Issue 15 part 4: one process per data folder. The second opener (a server, an in-process
// `dirledger mcp`, a migrate) fails at once naming the holder and writes nothing; the client
// commands find the server holding the folder; a lock left by kill -9 is taken over.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireFolderLock, folderHolder, FolderLockedError, lockPathOf, type LockHolder } from '../../src/db/folder-lock.ts';
import { seedPgliteFolder } from '../helpers/database.ts';
import { childFlags, cliBin, dirledgerEnv, repoRoot, runCli, type Child } from '../helpers/process.ts';

const dirs: string[] = [];
const children: Child[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-lock-'));
  dirs.push(dir);
  return dir;
}

/** Every file under `dir` with its size and modification time: what "nothing written" is checked against. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const s = await stat(file);
    out[path.relative(dir, file)] = `${s.size}@${s.mtimeMs}`;
  }
  return out;
}

/** A pid that no process has any more. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('the folder lock', () => {
  it('a second opener fails at once naming the holder (pid, command, start); after release it can take it', async () => {
    const folder = path.join(await tempDir(), 'pglite');
    const lock = acquireFolderLock(folder);
    try {
      let error: unknown;
      try {
        acquireFolderLock(folder);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(FolderLockedError);
      const holder = (error as FolderLockedError).holder;
      expect(holder).toMatchObject({ pid: process.pid, hostname: os.hostname() });
      expect((error as Error).message).toContain(`pid ${process.pid}`);
      expect((error as Error).message).toContain(holder.command);
      expect((error as Error).message).toContain(holder.startedAt);
      expect(folderHolder(folder)).toMatchObject({ pid: process.pid });
      lock.setUrl('http://127.0.0.1:1234');
      expect(folderHolder(folder)?.url).toBe('http://127.0.0.1:1234');
    } finally {
      lock.release();
    }
    expect(folderHolder(folder)).toBeNull();
    acquireFolderLock(folder).release();
  });

  it('takes over a lock whose process is gone, or whose pid now runs another process', async () => {
    const folder = path.join(await tempDir(), 'pglite');
    const stale = (holder: Partial<LockHolder>) =>
      writeFile(
        lockPathOf(folder),
        JSON.stringify({ pid: 1, command: 'node gone.ts', startedAt: '2026-01-01T00:00:00.000Z', hostname: os.hostname(), ...holder }),
      );
    await stale({ pid: await deadPid() });
    expect(folderHolder(folder)).toBeNull();
    const first = acquireFolderLock(folder);
    expect(JSON.parse(await readFile(lockPathOf(folder), 'utf8')).pid).toBe(process.pid);
    first.release();
    // Our own pid, but another process start time: the pid was reused after a crash.
    await stale({ pid: process.pid, processStart: '1' });
    expect(folderHolder(folder)).toBeNull();
    acquireFolderLock(folder).release();
    // A torn lock (a crash mid-write) is taken over too.
    await writeFile(lockPathOf(folder), '{"pid":');
    acquireFolderLock(folder).release();
  });
});

describe('one process per data folder, as a user runs it', () => {
  const env = (dataDir: string) => ({ DATA_DIR: dataDir, PORT: '0', AUTHORITY: 'off', LOG_LEVEL: 'warn', DIRLEDGER_URL: undefined });
  const childEnv = (dataDir: string): Record<string, string> => {
    const e: Record<string, string | undefined> = { ...process.env, ...dirledgerEnv(), ...env(dataDir) };
    delete e.DIRLEDGER_URL;
    return e as Record<string, string>;
  };
  /** An MCP client's stdio transport to an in-process `dirledger mcp` on `dataDir`. */
  const mcpOn = (dataDir: string) =>
    new StdioClientTransport({ command: process.execPath, args: [...childFlags, cliBin, 'mcp'], cwd: repoRoot, env: childEnv(dataDir), stderr: 'pipe' });

  it('a second server and a migrate fail at once naming the holder and write nothing; find, call and mcp use the running server; after kill -9 the lock is taken over', async () => {
    const dataDir = await tempDir();
    // A migrated folder (the suite's template): a new folder's first start is test/server/lifecycle.test.ts's.
    await seedPgliteFolder(path.join(dataDir, 'pglite'));
    const server = runCli(['serve'], env(dataDir));
    children.push(server);
    const [, origin] = await server.waitFor(/GraphQL and GraphiQL at (http:\/\/[^/\s]+)\/graphql/, 120_000);
    const pid = server.child.pid!;
    const before = await snapshot(dataDir);

    for (const args of [['serve'], ['migrate']]) {
      const second = runCli(args, env(dataDir));
      children.push(second);
      const { code } = await second.exited;
      expect(code, second.output()).toBe(3);
      expect(second.output()).toContain(`in use by another dirledger process: pid ${pid}`);
      expect(second.output()).toContain(`It serves ${origin}`);
      expect(second.output()).not.toMatch(/listening|GraphiQL at/);
    }
    // The pglite folder is the server's to write; what the refused processes could have touched is checked whole.
    const after = await snapshot(dataDir);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    expect(after[path.basename(lockPathOf(path.join(dataDir, 'pglite')))]).toBe(before[path.basename(lockPathOf(path.join(dataDir, 'pglite')))]);
    expect(after['root.key']).toBe(before['root.key']);

    // find and call without --url reach the server on its random port through the lock file.
    const find = runCli(['find', 'echo', '--json'], env(dataDir));
    children.push(find);
    expect((await find.exited).code, find.output()).toBe(0);
    expect(find.output()).toContain('ECHO');
    const call = runCli(['call', 'ECHO', '--args', '{"text":"via the lock"}'], env(dataDir));
    children.push(call);
    expect((await call.exited).code, call.output()).toBe(0);
    const actionId = JSON.parse(call.output().slice(call.output().indexOf('{'))).actionId;

    // An in-process `dirledger mcp` on the held folder relays to the server instead.
    const transport = mcpOn(dataDir);
    let stderr = '';
    transport.stderr?.on('data', (chunk) => (stderr += chunk));
    const client = new Client({ name: 'lock-test', version: '1.0.0' });
    await client.connect(transport);
    const viaMcp = (await client.callTool({ name: 'ECHO', arguments: { text: 'mcp via the lock' } })).structuredContent as any;
    await client.close();
    expect(stderr).toContain(`relaying to the server on this data folder, ${origin} (pid ${pid})`);
    expect(viaMcp).toMatchObject({ outcome: 'OK' });

    // Both calls are in the server's own ledger.
    for (const id of [actionId, viaMcp.actionId]) {
      const r = await fetch(`${origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ action(id: "${id}") { events { kind } } }` }),
      });
      const kinds = ((await r.json()) as any).data.action.events.map((e: any) => e.kind);
      expect(kinds).toEqual(expect.arrayContaining(['REQUEST', 'TOOL_CALL', 'TOOL_RESULT']));
    }

    server.child.kill('SIGKILL');
    await server.exited;
    expect(folderHolder(path.join(dataDir, 'pglite'))).toBeNull();
    const migrate = runCli(['migrate'], env(dataDir));
    children.push(migrate);
    expect((await migrate.exited).code, migrate.output()).toBe(0);
    expect(migrate.output()).toContain('no pending migrations');
  }, 400_000);

  it('a second in-process `dirledger mcp` on a folder another in-process one holds fails at once naming it', async () => {
    const dataDir = await tempDir();
    await seedPgliteFolder(path.join(dataDir, 'pglite'));
    const transport = mcpOn(dataDir);
    const client = new Client({ name: 'lock-test', version: '1.0.0' });
    await client.connect(transport, { timeout: 240_000 });
    try {
      await client.listTools(undefined, { timeout: 240_000 });
      const holder = folderHolder(path.join(dataDir, 'pglite'));
      expect(holder?.pid).toBe(transport.pid);
      const before = await snapshot(dataDir);
      const second = runCli(['mcp'], env(dataDir));
      children.push(second);
      expect((await second.exited).code, second.output()).toBe(3);
      expect(second.output()).toContain(`in use by another dirledger process: pid ${transport.pid}`);
      expect(second.output()).toContain('Stop it first');
      expect(Object.keys(await snapshot(dataDir)).sort()).toEqual(Object.keys(before).sort());
    } finally {
      await client.close();
    }
  }, 300_000);
});
