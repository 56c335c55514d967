// Builds the reviewer console (console/src) into console/dist with esbuild: the page's script, the live
// feed's worker script, one stylesheet and index.html, named by content hash so the server can cache
// them for good.
// `npm install` runs it (postinstall); the server only reads the folder, nothing is fetched at run time.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

const here = import.meta.dirname;
export const distDir = path.join(here, 'dist');

const short = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, 12);

/** Builds into `outDir` (default console/dist) and returns the files written, by name. */
export async function buildConsole(outDir = distDir): Promise<string[]> {
  const bundle = async (entry: string, define: Record<string, string> = {}) => {
    const result = await build({
      entryPoints: [path.join(here, 'src', entry)],
      bundle: true,
      minify: true,
      format: 'esm',
      target: 'es2022',
      platform: 'browser',
      jsx: 'automatic',
      write: false,
      legalComments: 'none',
      define: { 'process.env.NODE_ENV': '"production"', ...define },
      logLevel: 'silent',
    });
    return result.outputFiles[0]!.contents;
  };
  const worker = await bundle('live-feed.ts');
  const workerName = `live-feed-${short(worker)}.js`;
  const script = await bundle('main.tsx', { LIVE_FEED_URL: JSON.stringify(`/console/assets/${workerName}`) });
  const style = await readFile(path.join(here, 'src', 'console.css'));
  const names = { script: `app-${short(script)}.js`, style: `app-${short(style)}.css` };
  const template = await readFile(path.join(here, 'src', 'index.html'), 'utf8');
  const html = template.replace('%SCRIPT%', `/console/assets/${names.script}`).replace('%STYLE%', `/console/assets/${names.style}`);
  await rm(outDir, { recursive: true, force: true });
  await mkdir(path.join(outDir, 'assets'), { recursive: true });
  await writeFile(path.join(outDir, 'assets', names.script), script);
  await writeFile(path.join(outDir, 'assets', workerName), worker);
  await writeFile(path.join(outDir, 'assets', names.style), style);
  await writeFile(path.join(outDir, 'index.html'), html);
  return ['index.html', `assets/${names.script}`, `assets/${workerName}`, `assets/${names.style}`];
}

if (import.meta.main) {
  const files = await buildConsole();
  process.stdout.write(`console: built ${files.join(', ')} in ${path.relative(process.cwd(), distDir)}\n`);
}
