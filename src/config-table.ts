// `node src/config-table.ts` rewrites the README's settings table from config.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import type { z } from 'zod';
import { settings } from './config.ts';

export function settingsTable(): string {
  const rows = Object.entries(settings).map(([name, setting]) => {
    const { schema, doc } = setting;
    // `shown`: the default as it is written, where the schema turns it into something else.
    const shown = 'shown' in setting ? setting.shown : undefined;
    const parsed = (schema as z.ZodType).safeParse(undefined);
    const fallback = shown ? `\`${shown}\`` : parsed.success && parsed.data !== undefined ? `\`${String(parsed.data)}\`` : '(unset)';
    return `| \`${name}\` | ${fallback} | ${doc} |`;
  });
  rows.push('| `DIRLEDGER_SECRET_<NAME>` | (unset) | Registers a secret named NAME; its value is never stored, logged or returned. |');
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = new URL('../README.md', import.meta.url);
  const readme = readFileSync(file, 'utf8');
  const next = readme.replace(/<!-- settings:start -->[\s\S]*<!-- settings:end -->/, `<!-- settings:start -->\n${settingsTable()}\n<!-- settings:end -->`);
  writeFileSync(file, next);
}
