// A one-off build of the server for benchmarks that measure it from outside: esbuild bundles src/
// (every package stays external) into one plain JavaScript file under bench/.tmp, so the measured
// process loads one file instead of stripping the types of each source file.
// Each module's import.meta.url is kept as its source file's URL, so paths it resolves (prisma/,
// the demo Directory, the migration child) are the same as when src/server.ts runs.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** The server file a benchmark runs: the bundle of `root` (undefined with BENCH_SERVER_SOURCE=1: src/server.ts itself). */
export async function benchServerEntry(root: string, name: string): Promise<string | undefined> {
  return process.env.BENCH_SERVER_SOURCE === '1' ? undefined : buildServer(root, name);
}

/** Bundles `root`/src/server.ts into `root`/bench/.tmp/server-<name>.mjs (inside root, so its packages resolve) and returns the path. */
export async function buildServer(root: string, name = 'bench'): Promise<string> {
  const outfile = path.join(root, 'bench/.tmp', `server-${name}.mjs`);
  await build({
    stdin: { contents: `import { serve } from './src/server.ts';\nawait serve();\n`, resolveDir: root, loader: 'ts', sourcefile: 'bench-server-entry.ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    packages: 'external',
    outfile,
    logLevel: 'warning',
    plugins: [
      {
        name: 'keep-import-meta-url',
        setup(b) {
          b.onLoad({ filter: /\.ts$/ }, async (args) => ({
            contents: (await readFile(args.path, 'utf8')).replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
            loader: 'ts',
          }));
        },
      },
    ],
  });
  return outfile;
}
