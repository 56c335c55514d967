// `npm run fixtures`: --help prints the usage, a bad option is one line and the usage (exit 2), nothing written.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../helpers/process.ts';

const fixtures = (args: string[], cwd = repoRoot) =>
  spawnSync(process.execPath, [path.join(repoRoot, 'src/directory/fixtures-cli.ts'), ...args], { cwd, encoding: 'utf8' });

it('--help prints the usage; bad options say what was expected, exit 2 and write nothing', async () => {
  const cwd = await mkdtemp(path.join(os.tmpdir(), 'dirledger-fixtures-'));
  try {
    const help = fixtures(['--help'], cwd);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run fixtures -- \[--rows N\]/);
    for (const [args, message] of [
      [['--rows', 'abc'], '--rows: expected a positive whole number, got "abc"'],
      [['--format', 'xml'], '--format: expected csv or json, got "xml"'],
      [['--bogus'], "Unknown option '--bogus'"],
    ] as const) {
      const run = fixtures([...args], cwd);
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`fixtures: ${message}`);
      expect(run.stderr).toContain('Usage:');
      expect(run.stderr).not.toMatch(/^\s+at /m);
    }
    expect(existsSync(path.join(cwd, '.data'))).toBe(false);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
});
