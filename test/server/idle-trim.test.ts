// Memory given back when the server goes quiet (src/idle-trim.ts): one memory-reducing collection
// per busy-to-quiet turn, never again while it stays quiet, and the server runs it by default.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { trimWhenIdle, type IdleTrim } from '../../src/idle-trim.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { seedPgliteFolder } from '../helpers/database.ts';
import { runCli } from '../helpers/process.ts';

const until = async (check: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe('trimWhenIdle', () => {
  let trim: IdleTrim | undefined;
  afterEach(() => trim?.stop());
  const requests = { started: 0, inFlight: 0 };
  const watch = { started: () => requests.started, inFlight: () => requests.inFlight > 0 };

  it('collects once after the start goes quiet, not again while quiet, and again after the next request', async () => {
    const seen: { ms: number; rssBefore: number; rssAfter: number; youngBytes: number }[] = [];
    trim = trimWhenIdle({
      ...watch,
      quietMs: 300,
      checkMs: 50,
      onTrim: (t) => seen.push({ ...t, youngBytes: v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size }),
    });
    await until(() => trim!.trims() === 1, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(trim.trims()).toBe(1);
    requests.started++;
    await until(() => trim!.trims() === 2, 10_000);
    expect(seen).toHaveLength(2);
    for (const t of seen) {
      expect(t.ms).toBeGreaterThanOrEqual(0);
      expect(t.rssBefore).toBeGreaterThan(0);
      expect(t.rssAfter).toBeGreaterThan(0);
      // The young generation is shrunk to its smallest: semi-spaces grown since are released.
      expect(t.youngBytes).toBeLessThanOrEqual(4 * 1024 * 1024);
    }
  });

  it('never collects while requests keep beginning, nor while one is in flight', async () => {
    trim = trimWhenIdle({ ...watch, quietMs: 300, checkMs: 50 });
    for (let i = 0; i < 15; i++) {
      requests.started++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(trim.trims()).toBe(0);
    requests.inFlight = 1;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(trim.trims()).toBe(0);
    requests.inFlight = 0;
    await until(() => trim!.trims() === 1, 10_000);
  });

  it('stops', async () => {
    trim = trimWhenIdle({ ...watch, quietMs: 100, checkMs: 20 });
    trim.stop();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(trim.trims()).toBe(0);
  });
});

describe('App.activity', () => {
  // Started in a hook: this file runs in a process of its own, whose cold app start took over the
  // 60 s a test has at load 23 (a hook has 120 s).
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('counts each HTTP request begun, and the one in flight while it is answered', async () => {
    const before = t.app.activity();
    expect(before.inFlight).toBe(0);
    await fetch(`${t.origin}/healthz`);
    await t.gql('{ __typename }');
    const after = t.app.activity();
    expect(after.started).toBe(before.started + 2);
    expect(after.inFlight).toBe(0);
  });
});

describe('the server', () => {
  it('gives memory back once its start has gone quiet (IDLE_TRIM_MS)', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'dirledger-idle-trim-'));
    // A migrated folder (the suite's template): a new folder's first start is test/server/lifecycle.test.ts's.
    await seedPgliteFolder(path.join(dataDir, 'pglite'));
    const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'debug', IDLE_TRIM_MS: '500' };
    const server = runCli(['serve'], env, { nodeFlags: [] });
    try {
      await server.waitFor(/dirledger is listening/, 170_000);
      const [line] = await server.waitFor(/\{[^\n]*"msg":"quiet: memory given back"[^\n]*\}/, 30_000);
      const logged = JSON.parse(line) as { ms: number; rssBefore: number; rssAfter: number };
      expect(logged.rssAfter).toBeGreaterThan(0);
      expect(logged.rssAfter).toBeLessThan(logged.rssBefore);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
