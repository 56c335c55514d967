// One place where benchmarks register what must be undone (child processes, databases),
// run in reverse order on success, failure, SIGINT and SIGTERM.

type Step = { name: string; run: () => Promise<void> | void };
const steps: Step[] = [];
let running: Promise<void> | undefined;

/** Registers an undo step; returns a function that runs it now (once) and unregisters it. */
export function onCleanup(name: string, run: () => Promise<void> | void): () => Promise<void> {
  const step: Step = { name, run };
  steps.push(step);
  let done: Promise<void> | undefined;
  return () =>
    (done ??= (async () => {
      const i = steps.indexOf(step);
      if (i >= 0) steps.splice(i, 1);
      await step.run();
    })());
}

/** Runs every registered step, newest first; a failing step is reported and the rest still run. */
export function cleanupAll(): Promise<void> {
  running ??= (async () => {
    while (steps.length) {
      const step = steps.pop()!;
      try {
        await step.run();
      } catch (error) {
        process.stderr.write(`cleanup "${step.name}" failed: ${(error as Error).message}\n`);
      }
    }
    running = undefined;
  })();
  return running;
}

let installed = false;
/** SIGINT/SIGTERM → clean up, then exit with the conventional code. */
export function installSignalCleanup(): void {
  if (installed) return;
  installed = true;
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: cleaning up…\n`);
      void cleanupAll().finally(() => process.exit(code));
    });
  }
}
