#!/usr/bin/env -S node --max-semi-space-size=16
// The `dirledger` command. Plain JavaScript, so that any Node can start it: the CLI itself is
// TypeScript that Node runs natively (type stripping). npm scripts and npx put the pinned Node
// (the optional dependency node-<os>-<cpu>) first on PATH; started by another Node, this file
// hands over to the pinned one when it is installed, else it needs a Node that strips types.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const pinnedPackage = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
const pinnedVersion = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).optionalDependencies?.[pinnedPackage];

/** The pinned Node binary, if npm installed it on this platform. */
function pinnedNode() {
  try {
    const manifest = require.resolve(`${pinnedPackage}/package.json`);
    const binary = path.join(path.dirname(manifest), JSON.parse(readFileSync(manifest, 'utf8')).bin.node);
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

const installed = process.version === `v${pinnedVersion}` ? undefined : pinnedNode();
// Not when this is that binary already (an install older than package.json's pin).
const pinned = installed && realpathSync(installed) !== realpathSync(process.execPath) ? installed : undefined;

if (pinned) {
  const child = spawn(pinned, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  child.on('error', (error) => {
    process.stderr.write(`dirledger could not start the pinned Node (${pinned}): ${error.message}\n`);
    process.exit(1);
  });
  // A terminal's Ctrl-C reaches the child itself (same process group); other signals are passed on.
  const forward = (signal) => child.kill(signal);
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    if (!signal) process.exit(code ?? 1);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
} else if (process.features.typescript) {
  await import('../compile-cache.js'); // the compile cache and, on Linux, glibc's malloc settings
  await import('./main.ts');
} else {
  process.stderr.write(
    `dirledger runs its TypeScript natively, which needs Node.js 22.18 or newer; this is Node.js ${process.version}.\n` +
      `On Linux (x64, arm64), \`npm install\` brings Node.js ${pinnedVersion ?? '24'} and \`npx dirledger\` or \`npm run dirledger --\` use it; ` +
      `elsewhere, install Node.js 22.18 or newer (https://nodejs.org).\n`,
  );
  process.exit(1);
}
