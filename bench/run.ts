// `npm run bench -- <name> [args…]` runs bench/<name>.ts; with no name, lists the benchmarks.
//
// Contract for a benchmark module bench/<name>.ts: its first line is a `// ` comment that says
// what it measures (shown in the list), and it exports `run(args: string[]): Promise<void>`,
// which prints figures and never asserts timings. Anything it starts (servers, databases) is
// registered with bench/lib/cleanup.ts `onCleanup`, so this dispatcher undoes it on success,
// failure, SIGINT and SIGTERM.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cleanupAll, installSignalCleanup } from './lib/cleanup.ts';

type BenchModule = { run(args: string[]): Promise<void> };

const here = path.dirname(fileURLToPath(import.meta.url));

async function available(): Promise<{ name: string; about: string }[]> {
  const files = (await readdir(here)).filter((f) => f.endsWith('.ts') && f !== 'run.ts').sort();
  return Promise.all(
    files.map(async (file) => {
      const first = (await readFile(path.join(here, file), 'utf8')).split('\n', 1)[0] ?? '';
      return { name: file.slice(0, -3), about: first.startsWith('//') ? first.replace(/^\/\/\s*/, '') : '' };
    }),
  );
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  const benches = await available();
  const list = () => benches.map((b) => `  ${b.name.padEnd(14)} ${b.about}`).join('\n');
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(`Usage: npm run bench -- <name> [args…]\n\nBenchmarks:\n${list() || '  (none)'}\n`);
    return 0;
  }
  if (!benches.some((b) => b.name === name)) {
    process.stderr.write(`Unknown benchmark ${JSON.stringify(name)}. Expected one of: ${benches.map((b) => b.name).join(', ') || '(none)'}.\n\n${list()}\n`);
    return 2;
  }
  const mod = (await import(pathToFileURL(path.join(here, `${name}.ts`)).href)) as Partial<BenchModule>;
  if (typeof mod.run !== 'function') {
    process.stderr.write(`bench/${name}.ts does not export run(args: string[]); see the contract at the top of bench/run.ts.\n`);
    return 2;
  }
  installSignalCleanup();
  try {
    await mod.run(args);
    return 0;
  } catch (error) {
    process.stderr.write(`bench ${name} failed: ${(error as Error).stack ?? error}\n`);
    return 1;
  } finally {
    await cleanupAll();
  }
}

process.exit(await main(process.argv.slice(2)));
