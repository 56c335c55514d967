// npm run fixtures -- --rows 24890 --seed 1 [--out DIR] [--format csv|json]
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateDirectory, SeedRows, writeDirectory } from './fixtures.ts';

const usage = `Usage: npm run fixtures -- [--rows N] [--seed N] [--out DIR] [--format csv|json]

Writes a seed-scale Directory (one section file per type, the seed's mix of types) for benchmarks.
  --rows N       rows in all (default ${SeedRows}, the seed's count)
  --seed N       the generator's seed (default 1): the same seed writes the same files
  --out DIR      where (default .data/fixtures/directory-<rows>-<seed>)
  --format F     csv (default) or json
`;

/** A bad option: said in one line with the usage, exit 2, nothing written. */
function refuse(message: string): never {
  process.stderr.write(`fixtures: ${message}\n\n${usage}`);
  process.exit(2);
}

let values: { rows: string; seed: string; out?: string; format: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      rows: { type: 'string', default: String(SeedRows) },
      seed: { type: 'string', default: '1' },
      out: { type: 'string' },
      format: { type: 'string', default: 'csv' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  refuse((error as Error).message);
}
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}
const rows = Number(values.rows);
const seed = Number(values.seed);
if (!/^\d+$/.test(values.rows) || rows < 1) refuse(`--rows: expected a positive whole number, got ${JSON.stringify(values.rows)}`);
if (!/^-?\d+$/.test(values.seed)) refuse(`--seed: expected a whole number, got ${JSON.stringify(values.seed)}`);
if (values.format !== 'csv' && values.format !== 'json') refuse(`--format: expected csv or json, got ${JSON.stringify(values.format)}`);
const out = path.resolve(values.out ?? `.data/fixtures/directory-${rows}-${seed}`);
const sections = generateDirectory({ rows, seed });
const files = await writeDirectory(out, sections, values.format as 'csv' | 'json');
const counts = Object.entries(sections)
  .map(([t, r]) => `${t}=${r.length}`)
  .join(' ');
process.stdout.write(`wrote ${files.length} sections (${rows} rows) to ${out}\n${counts}\n`);
