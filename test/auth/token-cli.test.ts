// `dirledger token`: an admin token from the root key, and any token read or narrowed offline.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authority } from '../../src/auth/authority.ts';
import { runCli } from '../helpers/process.ts';

async function run(args: string[], env: Record<string, string> = {}) {
  const child = runCli(args, env);
  const { code } = await child.exited;
  return { code, output: child.output().trim() };
}

describe('dirledger token', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-token-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('admin mints a token signed with the data folder root key; narrow adds caveats offline; inspect reads them', async () => {
    const admin = await run(['token', 'admin'], { DATA_DIR: dataDir });
    expect(admin.code).toBe(0);
    const token = admin.output.split('\n').at(-1)!;
    const rootKey = Buffer.from((await readFile(path.join(dataDir, 'root.key'), 'utf8')).trim(), 'hex');
    const authority = new Authority({ rootKey, audience: 'dirledger', sql: undefined as never, record: () => {}, ratePerSecond: 0, rateBurst: 1 });
    const checked = authority.authenticate(token, 'CLI');
    expect(checked.ok && checked.grant.admin).toBe(true);

    const narrowed = await run(['token', 'narrow', token, 'tools = ECHO', 'uses <= 2']);
    expect(narrowed.code).toBe(0);
    const narrow = narrowed.output.split('\n').at(-1)!;
    const grant = authority.authenticate(narrow, 'CLI');
    expect(grant.ok && grant.grant.texts).toEqual(['tools = ECHO', 'uses <= 2']);
    expect(grant.ok && authority.allowsTool(grant.grant, 'CLI', 'CLOCK')?.limit).toBe('tools');

    const read = await run(['token', 'inspect', '--json', narrow]);
    expect(JSON.parse(read.output.split('\n').at(-1)!)).toMatchObject({
      caveats: ['tools = ECHO', 'uses <= 2'],
      limits: ['Only the tool ECHO.', 'At most 2 calls, counted across every token narrowed from this one.'],
    });
    const words = await run(['token', 'inspect', token]);
    expect(words.output).toContain('No limits: an admin token.');
  });

  it('a caveat the server could not check, or something that is not a token, exits 2 with what was expected', async () => {
    const admin = (await run(['token', 'admin'], { DATA_DIR: dataDir })).output.split('\n').at(-1)!;
    const bad = await run(['token', 'narrow', admin, 'colour = blue']);
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(/expected a known caveat .* got "colour"/);
    const garbage = await run(['token', 'inspect', 'not a token']);
    expect(garbage.code).toBe(2);
    expect(garbage.output).toMatch(/expected base64url characters/);
  });
});
