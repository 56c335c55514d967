// Generates the Prisma client and Pothos types offline. Prisma's CLI insists on a
// schema engine binary it cannot download here; generation never calls it, so any
// existing executable will do (see ../shared/ENVIRONMENT.md).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const cli = require.resolve('prisma/build/index.js');
const result = spawnSync(process.execPath, [cli, 'generate'], {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
});
if (result.status !== 0) process.exit(result.status ?? 1);

// The client imports Prisma's query compiler as a module holding it in base64 (4.6 MB): the module's
// source text and its string would stay in the heap for the life of the process (~9 MB), for bytes
// compiled once. Read as a file instead, the text is garbage once compiled.
const classFile = new URL('../generated/prisma/internal/class.ts', import.meta.url);
const generated = readFileSync(classFile, 'utf8');
const imported =
  /const \{ wasm \} = await import\(("@prisma\/client\/runtime\/query_compiler_[a-z]+_bg\.[a-z]+\.wasm-base64\.mjs")\)\n(\s*)return await decodeBase64AsWasm\(wasm\)/;
const match = imported.exec(generated);
if (match) {
  const [, specifier, indent] = match;
  const readAsText = [
    "const { createRequire } = await import('node:module')",
    `const text = await (await import('node:fs/promises')).readFile(createRequire(import.meta.url).resolve(${specifier}), 'latin1')`,
    "return await decodeBase64AsWasm(text.slice(text.indexOf('\"') + 1, text.lastIndexOf('\"')))",
  ].join(`\n${indent}`);
  writeFileSync(classFile, generated.replace(imported, readAsText));
} else {
  process.stderr.write('generate: the Prisma client no longer imports its query compiler as expected; it is left as generated (src/db/generate.js)\n');
}
