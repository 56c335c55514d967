// The demo directory (src/directory/demo) as a resolver index, with its alias file beside the sections.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSection, sectionFileType } from '../../src/directory/sections.ts';
import { loadAliasFile } from '../../src/resolver/aliases.ts';
import { buildResolverIndex, type ResolverIndex } from '../../src/resolver/build.ts';
import type { ResolverRow } from '../../src/resolver/types.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
export const demoDir = path.join(here, '../../src/directory/demo');

export async function demoRows(dir = demoDir): Promise<ResolverRow[]> {
  const rows: ResolverRow[] = [];
  for (const file of (await readdir(dir)).sort()) {
    if (!sectionFileType(file)) continue;
    const section = parseSection(file, await readFile(path.join(dir, file)));
    for (const row of section.rows) {
      rows.push({ name: row.name, type: section.type, kind: row.kind || null, description: row.description, text: Object.values(row.text) });
    }
  }
  return rows;
}

export async function demoAliases(dir = demoDir) {
  return loadAliasFile(dir);
}

export async function demoResolverIndex(): Promise<ResolverIndex> {
  return buildResolverIndex(await demoRows(), await demoAliases());
}
