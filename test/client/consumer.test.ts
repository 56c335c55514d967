// dirledger/client from a separate project (test/consumer), installed by path as `npm install
// file:../..` does (a symlink): built JavaScript + .d.ts, type-checked with tsc --strict under NodeNext
// and Bundler resolution without any server file in its type graph, and run with plain Node against a live server.
import { execFile, spawnSync } from 'node:child_process';
import { cp, mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { repoRoot } from '../helpers/process.ts';

const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
let t: TestApp;
let consumer: string;

beforeAll(async () => {
  // What `npm run build:client` (run by postinstall) does.
  const { build } = await import('esbuild');
  await build({
    entryPoints: [path.join(repoRoot, 'src/client.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    outfile: path.join(repoRoot, 'dist/client.js'),
    logLevel: 'warning',
  });
  const declared = spawnSync(process.execPath, [tsc, '-p', path.join(repoRoot, 'tsconfig.client.json')], { encoding: 'utf8', timeout: 60_000 });
  expect(declared.status, declared.stdout).toBe(0);
  consumer = await mkdtemp(path.join(os.tmpdir(), 'dirledger-consumer-'));
  await cp(path.join(repoRoot, 'test/consumer'), consumer, { recursive: true });
  await mkdir(path.join(consumer, 'node_modules'));
  await symlink(repoRoot, path.join(consumer, 'node_modules/dirledger'), 'dir');
  t = await startTestApp('pglite');
}, 120_000);
afterAll(async () => {
  await t?.stop();
  if (consumer) await rm(consumer, { recursive: true, force: true });
});

it('type-checks under tsc --strict with NodeNext, with only the client declaration from dirledger', () => {
  // One compile: the files it read (--listFiles), then whether it passed.
  const checked = spawnSync(process.execPath, [tsc, '-p', consumer, '--listFiles'], { encoding: 'utf8', timeout: 60_000 });
  expect(checked.status, checked.stdout).toBe(0);
  const fromDirledger = checked.stdout.split('\n').filter((f) => f.includes(repoRoot) && !f.includes('node_modules/'));
  // The client's declarations and its typed operations' (which name only the typed-document-node types, not graphql's server).
  expect(fromDirledger.map((f) => path.relative(repoRoot, f)).sort()).toEqual(['dist/client-operations.d.ts', 'dist/client.d.ts']);
}, 60_000);

it('type-checks under Bundler resolution too', async () => {
  await writeFile(
    path.join(consumer, 'tsconfig.bundler.json'),
    JSON.stringify({ extends: './tsconfig.json', compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', noEmit: true } }),
  );
  const checked = spawnSync(process.execPath, [tsc, '-p', path.join(consumer, 'tsconfig.bundler.json')], { encoding: 'utf8', timeout: 60_000 });
  expect(checked.status, checked.stdout).toBe(0);
}, 60_000);

it('runs with plain Node against a live server: a tool call, a GraphQL read, the names, the read routes, a refusal', async () => {
  // Not spawnSync: the server answers from this process's event loop. `node` is the machine's, not the pinned one.
  const run = await promisify(execFile)('node', [path.join(consumer, 'out/index.js')], {
    cwd: consumer,
    env: { PATH: process.env.PATH ?? '', DIRLEDGER_URL: t.origin, DIRLEDGER_TOKEN: t.token },
    timeout: 60_000,
  });
  const out = JSON.parse(run.stdout);
  expect(out).toMatchObject({ outcome: 'OK', output: { text: 'from a consumer' }, names: ['ECHO', 'CLOCK'], refused: '401 UNAUTHENTICATED' });
  expect(out.rows).toBeGreaterThan(10);
  expect(out.row).toBe('NOT_FOUND'); // an action id names no event: the route's 404, as a typed error
  expect(out.counts).toEqual([expect.objectContaining({ key: 'ECHO', events: 2 })]);
  // The typed document's answer is GraphQL's ledgerCounts for the same grouping, over every tool (the recorded Directory read has none).
  expect(out.typedCounts).toContainEqual(expect.objectContaining({ key: 'ECHO', events: out.counts[0].events }));
}, 60_000);
