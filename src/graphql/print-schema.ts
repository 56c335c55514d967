// `npm run schema:print` writes schema.graphql; `npm run schema:check` fails when it has drifted.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { printedSchema } from './schema.ts';

const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema.graphql');
const printed = printedSchema();
if (process.argv.includes('--check')) {
  const committed = await readFile(file, 'utf8').catch(() => '');
  if (committed !== printed) {
    process.stderr.write('schema.graphql has drifted from the code: run `npm run schema:print` and commit it.\n');
    process.exit(1);
  }
  process.stdout.write('schema.graphql is current\n');
} else {
  await writeFile(file, printed);
  process.stdout.write(`wrote ${file}\n`);
}
