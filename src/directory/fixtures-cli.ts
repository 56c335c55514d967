// npm run fixtures -- --rows 24890 --seed 1 [--out DIR] [--format csv|json]
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateDirectory, SeedRows, writeDirectory } from './fixtures.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: String(SeedRows) },
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
    format: { type: 'string', default: 'csv' },
  },
});
const rows = Number(values.rows);
const seed = Number(values.seed);
if (!Number.isInteger(rows) || rows < 1) throw new Error(`--rows: expected a positive whole number, got ${values.rows}`);
if (!Number.isInteger(seed)) throw new Error(`--seed: expected a whole number, got ${values.seed}`);
if (values.format !== 'csv' && values.format !== 'json') throw new Error(`--format: expected csv or json, got ${values.format}`);
const out = path.resolve(values.out ?? `.data/fixtures/directory-${rows}-${seed}`);
const sections = generateDirectory({ rows, seed });
const files = await writeDirectory(out, sections, values.format);
const counts = Object.entries(sections)
  .map(([t, r]) => `${t}=${r.length}`)
  .join(' ');
process.stdout.write(`wrote ${files.length} sections (${rows} rows) to ${out}\n${counts}\n`);
