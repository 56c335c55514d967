// The server's node flags (src/node-flags.ts) are set when node starts, so they live in three
// start lines that must agree: npm start, npm run dirledger and the dirledger bin's shebang.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MALLOC_TUNABLES } from '../../src/malloc-tunables.js';
import { SERVER_NODE_FLAGS } from '../../src/node-flags.ts';
import { repoRoot } from '../helpers/process.ts';

describe('node flags of the server process', () => {
  it.each(['start', 'dirledger'])('npm run %s starts node with every server flag', async (script) => {
    const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const words = pkg.scripts[script]!.split(/\s+/);
    expect(words[0]).toBe('node');
    for (const flag of SERVER_NODE_FLAGS) expect(words, `package.json scripts.${script}: ${pkg.scripts[script]}`).toContain(flag);
  });

  it("the dirledger bin's shebang passes every server flag to node", async () => {
    const shebang = (await readFile(path.join(repoRoot, 'src/cli/bin.js'), 'utf8')).split('\n')[0]!;
    expect(shebang.startsWith('#!/usr/bin/env -S node ')).toBe(true);
    for (const flag of SERVER_NODE_FLAGS) expect(shebang.split(/\s+/)).toContain(flag);
  });
});

describe.runIf(process.platform === 'linux')("glibc's malloc settings (src/compile-cache.js)", () => {
  const start = async (tunables: string | undefined) => {
    const env: Record<string, string | undefined> = { ...process.env, GLIBC_TUNABLES: tunables };
    if (tunables === undefined) delete env.GLIBC_TUNABLES;
    const script = path.join(repoRoot, 'test/server/fixtures/report-process.ts');
    const run = promisify(execFile)(process.execPath, ['--max-semi-space-size=16', '--import', './src/compile-cache.js', script, 'a b', '--c'], {
      cwd: repoRoot,
      env,
    });
    const { stdout } = await run;
    return { childPid: run.child.pid, ...(JSON.parse(stdout) as { pid: number; tunables: string | null; execArgv: string[]; argv: string[] }) };
  };

  it('a process started with the preload runs again in place with the trim threshold, its flags and arguments kept', async () => {
    const seen = await start(undefined);
    expect(seen.pid).toBe(seen.childPid);
    expect(seen.tunables).toBe(MALLOC_TUNABLES);
    expect(seen.execArgv).toEqual(['--max-semi-space-size=16', '--import', './src/compile-cache.js']);
    expect(seen.argv).toEqual(['a b', '--c']);
  });

  it('other tunables are kept beside it; a malloc setting already given is left alone', async () => {
    expect((await start('glibc.rtld.optional_static_tls=512')).tunables).toBe(`glibc.rtld.optional_static_tls=512:${MALLOC_TUNABLES}`);
    expect((await start('glibc.malloc.arena_max=1')).tunables).toBe('glibc.malloc.arena_max=1');
  });
});
