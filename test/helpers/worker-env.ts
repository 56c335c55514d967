// Runs before each test file, first: the malloc setting vitest.config.ts gives the worker processes is theirs
// alone. Taken out of the worker's environment again, so the processes a test starts run as a user's do.
const before = process.env.DIRLEDGER_TEST_TUNABLES_BEFORE;
if (before !== undefined) {
  delete process.env.DIRLEDGER_TEST_TUNABLES_BEFORE;
  if (before) process.env.GLIBC_TUNABLES = before;
  else delete process.env.GLIBC_TUNABLES;
}
