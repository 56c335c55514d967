// Runs after each test file when DIRLEDGER_TEST_CPU_LOG names a file: appends one JSON line with the test
// file's wall seconds, its worker's CPU seconds and the CPU of the child processes it reaped (servers, CLI
// runs, browsers), and its page faults. A full run so instrumented shows where the suite's CPU goes.
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';

const log = process.env.DIRLEDGER_TEST_CPU_LOG;

/** This process's own CPU seconds, its reaped children's, and its minor page faults (/proc/self/stat). */
function usage() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  const ticks = 100;
  return { self: (fields[11]! + fields[12]!) / ticks, children: (fields[13]! + fields[14]!) / ticks, faults: fields[7]! };
}

if (log && process.platform === 'linux') {
  let start: ReturnType<typeof usage> & { at: number };
  beforeAll(() => {
    start = { ...usage(), at: performance.now() };
  });
  afterAll(() => {
    const end = usage();
    const line = {
      file: expect.getState().testPath,
      wall: (performance.now() - start.at) / 1000,
      self: end.self - start.self,
      children: end.children - start.children,
      faults: end.faults - start.faults,
    };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  });
}
