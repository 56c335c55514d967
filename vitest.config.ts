import { createRequire } from 'node:module';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const require = createRequire(import.meta.url);

/**
 * Files that run each in a process of their own: they replace process-wide state themselves (a V8 flag, the
 * console's files that the server reads once per process). Every
 * other file shares a worker process with the files run before it (`isolate: false`), so the app's
 * modules and Prisma's and PGlite's WebAssembly are loaded once per worker instead of once per file;
 * such a file must stop every app it starts, which test/helpers/shared-process.ts checks after each.
 */
const ownProcess = [
  'test/console/*.test.ts', // rebuild console/dist, which the server reads once per process
  'test/server/idle-trim.test.ts', // exposes gc with a V8 flag and watches this process's collections
];

/**
 * The slowest files, started first so that none of them is the last one still running, in this order across
 * both projects. Measured 2026-12-01 in a full run on the quiet machine (three workers, PostgreSQL and Redis),
 * one file's wall in seconds: forms 100, console 73, mcp 70, lifecycle 60, folder-lock 44, crash 42, runner 34,
 * shared-rate 31, embedded 28, lease 24, cli 23, load 22, hold-sweep 22, migrations 22, startup 21, writer 19,
 * consumer 17, graphiql 15, idle-trim 15, spool-prealloc 14; every other file 11 or less.
 * The two of their own process lead: a shared worker is reused only while the next file in the queue is a
 * shared one too, so no shared file is followed by one of them.
 */
const slowestFirst = [
  'test/console/console.test.ts',
  'test/server/idle-trim.test.ts',
  'test/dispatch/forms.test.ts',
  'test/dispatch/mcp.test.ts',
  'test/server/lifecycle.test.ts',
  'test/db/folder-lock.test.ts',
  'test/capture/crash.test.ts',
  'test/dispatch/runner.test.ts',
  'test/auth/shared-rate.test.ts',
  'test/db/embedded.test.ts',
  'test/live/lease.test.ts',
  'test/dispatch/cli.test.ts',
  'test/live/load.test.ts',
  'test/model/hold-sweep.test.ts',
  'test/db/migrations.test.ts',
  'test/server/startup.test.ts',
  'test/capture/writer.test.ts',
  'test/client/consumer.test.ts',
  'test/server/graphiql.test.ts',
  'test/ledger/spool-prealloc.test.ts',
];

/**
 * The slowest files in their order, then the other shared files, then the other files of their own process:
 * vitest's own order would run every file of the own-process project first (projects by name), which held the
 * slowest shared files back until those had finished, and every shared worker starts once.
 */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const at = slowestFirst.findIndex((file) => spec.moduleId.endsWith(file));
      if (at !== -1) return at;
      return spec.project.config.isolate ? slowestFirst.length + 1 : slowestFirst.length;
    };
    return (await super.sort(files))
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}

/**
 * Files at a time, on 2 cores. With two, the last full run's CPU (803 s) would have filled both cores for 401 s
 * of its 508 s wall: files also wait, on their child processes, PostgreSQL's checkpoints (each DROP DATABASE
 * forces one), fsync and timers. A third file uses the CPU meanwhile: with three, the quiet run above took 432 s
 * (the vitest process tree 654 s of CPU, PostgreSQL 69 s), two to three files running at any time.
 */
const workers = 3;

/**
 * The worker processes' malloc asks for transparent huge pages (glibc reads GLIBC_TUNABLES only as a process
 * starts, so it is set here, before vitest starts them). A worker opens a test database for most files, and each
 * open allocates and frees tens of MB; on this 2-core VM a 4 KiB page touched for the first time costs ~12 µs.
 * A process making eight PGlite opens from the template, three runs each: 9.4–9.7 s of CPU and 315,000–360,000
 * page faults by default, 6.9–8.3 s and ~130,000 with it; three database-heavy test files, two interleaved pairs:
 * 47.2 and 52.7 s of CPU against 57.7 and 49.6 s. test/helpers/worker-env.ts takes it back out of each worker's
 * environment, so the processes a test starts run with what a user's would.
 */
if (process.platform === 'linux' && process.env.DIRLEDGER_TEST_TUNABLES_BEFORE === undefined) {
  const before = process.env.GLIBC_TUNABLES ?? '';
  process.env.DIRLEDGER_TEST_TUNABLES_BEFORE = before;
  process.env.GLIBC_TUNABLES = before ? `${before}:glibc.malloc.hugetlb=1` : 'glibc.malloc.hugetlb=1';
}

const common: TestProjectInlineConfiguration = {
  // Node loads graphql's CommonJS build for every dependency; the tests must share it.
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  test: {
    pool: 'forks',
    maxWorkers: workers,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
};

export default defineConfig({
  test: {
    // Once for the whole run: both projects inherit what it provides.
    globalSetup: ['test/helpers/global-setup.ts'],
    maxWorkers: workers,
    sequence: { sequencer: SlowestFirst },
    projects: [
      {
        ...common,
        test: {
          ...common.test,
          name: 'own-process',
          include: ownProcess,
          isolate: true,
          setupFiles: ['test/helpers/worker-env.ts', 'test/helpers/file-cpu.ts'],
        },
      },
      {
        ...common,
        test: {
          ...common.test,
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ownProcess],
          isolate: false,
          setupFiles: ['test/helpers/worker-env.ts', 'test/helpers/shared-process.ts', 'test/helpers/file-cpu.ts'],
        },
      },
    ],
  },
});
