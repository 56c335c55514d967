// The server's node flags (src/node-flags.ts) are set when node starts, so they live in three
// start lines that must agree: npm start, npm run dirledger and the dirledger bin's shebang.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
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
