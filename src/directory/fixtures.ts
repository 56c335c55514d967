// A deterministic seed-scale Directory: the seed's type mix, realistic names, prose descriptions.
// Pure: the same (rows, seed) gives byte-identical sections.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { wayHeader } from './labels.ts';
import type { SectionFormat } from './sections.ts';
import { schemaFor, toolFor, toolHeader } from './fixture-tools.ts';
import {
  attributes,
  companies,
  extensions,
  firstNames,
  folders,
  human,
  lastNames,
  localPrefixes,
  objects,
  rng,
  sentence,
  services,
  verbs,
  words,
} from './fixture-words.ts';

/** The seed's rows by type (its Facts block), 24,890 in all; the 4 untyped rows form a section named `untyped`. */
export const SeedMix: Record<string, number> = {
  variable: 17525,
  article: 3239,
  tool: 1583,
  flow: 785,
  cloudflare: 298,
  file: 290,
  skill: 267,
  lead: 225,
  credential: 201,
  asset: 194,
  task: 143,
  method: 27,
  kind: 25,
  agent: 22,
  setting: 17,
  mac: 14,
  contact: 9,
  sheet: 9,
  page: 5,
  webhook: 3,
  build: 1,
  folder: 1,
  outreach_lab: 1,
  'outside API': 1,
  spreadsheet: 1,
  untyped: 4,
};
export const SeedRows = 24890;

/** type → rows, each a record of header label → cell text. */
export type Sections = Record<string, Record<string, string>[]>;

/** Splits `rows` over the seed's mix by largest remainder, so the counts always sum to `rows`. */
export function scaleMix(rows: number): Record<string, number> {
  const entries = Object.entries(SeedMix);
  const exact = entries.map(([type, n]) => ({ type, exact: (n * rows) / SeedRows }));
  const out: Record<string, number> = {};
  let given = 0;
  for (const e of exact) given += out[e.type] = Math.floor(e.exact);
  const byRemainder = [...exact].sort((a, b) => b.exact - Math.floor(b.exact) - (a.exact - Math.floor(a.exact)) || a.type.localeCompare(b.type));
  for (let i = 0; given < rows; i++, given++) out[byRemainder[i % byRemainder.length]!.type]! += 1;
  return out;
}

/** Rows the resolver's seed examples rely on at seed scale. */
const fixedTools = [
  'IMSG_SEND',
  'IMSG_LIST_CHATS',
  'IMSG_READ_THREAD',
  'IMESSAGE_EXPORT_THREAD',
  'BLOOIO_SEND_MESSAGE',
  'BLOOIO_LIST_NUMBERS',
  'GMAIL_SEND_EMAIL',
  'STRIPE_CREATE_INVOICE',
  'ARTICLE_PUBLISH',
  'WRITE_ARTICLE',
];
const fixedCredentials = [
  'TERMINAL_KEY',
  'GMAIL_TOKEN',
  'STRIPE_SECRET_KEY',
  'BLOOIO_API_KEY',
  'GITHUB_TOKEN',
  'SLACK_BOT_TOKEN',
  'CLOUDFLARE_API_TOKEN',
  'OPENAI_API_KEY',
];
const fixedFiles = ['tests/ledger_tests.py', 'tests/directory/sections.tests.ts', 'tests/resolver/aliases_tests.json', 'tests/dispatch/refusals.tests.ts'];

/** Generates a Directory with the seed's type mix scaled to `rows`, identical for identical inputs. */
export function generateDirectory({ rows = SeedRows, seed = 1 }: { rows?: number; seed?: number } = {}): Sections {
  const r = rng(seed);
  const mix = scaleMix(rows);
  const used = new Set<string>();
  const unique = (make: (attempt: number) => string) => {
    for (let attempt = 0; ; attempt++) {
      const n = make(attempt);
      if (!used.has(n)) {
        used.add(n);
        return n;
      }
    }
  };
  const id = (type: string, i: number) =>
    `${type
      .replace(/[^a-z]/gi, '')
      .slice(0, 3)
      .toLowerCase()}_${(i + 1).toString(36).padStart(4, '0')}`;
  const out: Sections = {};
  for (const [type, count] of Object.entries(mix)) {
    if (count === 0) continue;
    const rowsOf: Record<string, string>[] = [];
    for (let i = 0; i < count; i++) {
      const base = { type: type === 'untyped' ? '' : type, id: id(type, i) };
      switch (type) {
        case 'tool': {
          const name = unique((a) => {
            if (i < fixedTools.length && a === 0) return fixedTools[i]!;
            const prefix = r.chance(0.55) ? r.pick(services).prefix : r.pick(localPrefixes);
            const parts = [prefix, r.pick(verbs), ...(r.chance(0.75) ? [r.pick(objects)] : [])];
            return a > 3 ? `${parts.join('_')}_V${a}` : parts.join('_');
          });
          const t = toolFor(r, name, i);
          const row: Record<string, string> = Object.fromEntries(toolHeader().map((h) => [h, '']));
          row.name = t.name;
          row.description = t.description;
          for (const [k, v] of Object.entries(t.ways)) row[wayHeader(k)] = JSON.stringify(v);
          row['args schema'] = schemaFor(t.args);
          row.upstream = t.upstream ? JSON.stringify(t.upstream) : '';
          Object.assign(row, base, { kind: t.kind });
          rowsOf.push(row);
          break;
        }
        case 'variable': {
          const name = unique(
            (a) => `${r.pick([...services.map((s) => s.prefix), ...localPrefixes])}_${r.pick(objects)}_${r.pick(attributes)}${a > 2 ? `_${a}` : ''}`,
          );
          rowsOf.push({
            name,
            description: `${human(name)} for the ${r.pick(words)} ${r.pick(words)} setup.`,
            value: String(r.int(10000)),
            ...base,
            kind: r.pick(['env', 'config', 'runtime']),
          });
          break;
        }
        case 'article': {
          const name = unique((a) => `${r.pick(words)}-${r.pick(words)}-${r.pick(words)}${a > 2 ? `-${a}` : ''}`);
          rowsOf.push({
            name,
            title: name.replace(/-/g, ' ').replace(/^./, (c) => c.toUpperCase()),
            description: sentence(r, `read about ${name.replace(/-/g, ' ')}`),
            url: `https://example.org/a/${name}`,
            tags: `${r.pick(words)},${r.pick(words)}`,
            ...base,
            kind: r.pick(['essay', 'guide', 'note', 'reference']),
          });
          break;
        }
        case 'file': {
          const name = unique((a) =>
            i < fixedFiles.length && a === 0
              ? fixedFiles[i]!
              : `${r.pick(folders)}/${r.pick(words)}-${r.pick(words)}${a > 2 ? `-${a}` : ''}.${r.pick(extensions)}`,
          );
          rowsOf.push({
            name,
            path: name,
            description: `The ${name.split('/').pop()} file under ${name.split('/').slice(0, -1).join('/')}.`,
            ...base,
            kind: name.split('.').pop()!,
          });
          break;
        }
        case 'credential': {
          const name = unique((a) =>
            i < fixedCredentials.length && a === 0
              ? fixedCredentials[i]!
              : `${r.pick([...services.map((s) => s.prefix), ...localPrefixes])}_${r.pick(['API_KEY', 'TOKEN', 'SECRET', 'PASSWORD', 'WEBHOOK_SECRET', 'REFRESH_TOKEN'])}${a > 1 ? `_${a}` : ''}`,
          );
          rowsOf.push({
            name,
            secret: name,
            description: `The ${human(name)}; its value lives in the secret registry, never in this row.`,
            owner: `${r.pick(firstNames)} ${r.pick(lastNames)}`,
            ...base,
            kind: 'secret',
          });
          break;
        }
        case 'lead':
        case 'contact': {
          const name = unique((a) => `${r.pick(firstNames)} ${r.pick(lastNames)}${a > 2 ? ` ${a}` : ''}`);
          const company = r.pick(companies);
          rowsOf.push({
            name,
            email: `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@${company.toLowerCase()}.example`,
            description: `${name} at ${company}; met during ${r.pick(words)} ${r.pick(words)}.`,
            status: r.pick(['new', 'contacted', 'replied', 'won', 'lost']),
            ...base,
            kind: type,
          });
          break;
        }
        case 'task': {
          const name = unique((a) => `T-${String(i + 1 + a * 1000).padStart(4, '0')} ${r.pick(verbs).toLowerCase()} the ${r.pick(words)} ${r.pick(words)}`);
          rowsOf.push({
            name,
            description: sentence(r, name.slice(7)),
            status: r.pick(['open', 'doing', 'done', 'blocked']),
            owner: r.pick(firstNames),
            ...base,
            kind: 'task',
          });
          break;
        }
        case 'cloudflare': {
          const name = unique(
            (a) => `${r.pick(['worker', 'kv', 'r2', 'd1', 'route', 'dns', 'queue'])}:${r.pick(words)}-${r.pick(words)}${a > 2 ? `-${a}` : ''}`,
          );
          rowsOf.push({ name, description: `Cloudflare ${name.split(':')[0]} ${name.split(':')[1]}.`, ...base, kind: name.split(':')[0]! });
          break;
        }
        case 'asset': {
          const name = unique((a) => `public/img/${r.pick(words)}-${r.pick(words)}${a > 2 ? `-${a}` : ''}.${r.pick(['png', 'jpg', 'svg', 'webp'])}`);
          rowsOf.push({
            name,
            path: name,
            description: `Image of ${name.split('/').pop()!.split('.')[0]!.replace(/-/g, ' ')}.`,
            ...base,
            kind: name.split('.').pop()!,
          });
          break;
        }
        default: {
          // flows, skills, agents, settings and the small types: kebab names with prose.
          const name = unique(
            (a) =>
              `${type === 'flow' || type === 'skill' ? '' : `${type.replace(/ /g, '-').toLowerCase()}-`}${r.pick(words)}-${r.pick(words)}${a > 2 ? `-${a}` : ''}`,
          );
          rowsOf.push({
            name,
            description: sentence(r, `${type === 'flow' ? 'run the' : 'use the'} ${name.replace(/-/g, ' ')}`),
            notes: r.chance(0.3) ? `owner: ${r.pick(firstNames)}` : '',
            ...base,
            kind: type === 'untyped' ? '' : type,
          });
        }
      }
    }
    out[type] = rowsOf;
  }
  return out;
}

function csvCell(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Renders one section's rows as CSV (header = union of labels in first-seen order) or JSON. */
export function renderSection(rows: Record<string, string>[], format: SectionFormat): string {
  const headers: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) for (const k of Object.keys(row)) seen.add(k);
  headers.push(...seen);
  if (format === 'json')
    return `${JSON.stringify(
      rows.map((row) => Object.fromEntries(headers.map((h) => [h, row[h] ?? '']))),
      null,
      1,
    )}\n`;
  return `${[headers.map(csvCell).join(','), ...rows.map((row) => headers.map((h) => csvCell(row[h] ?? '')).join(','))].join('\r\n')}\r\n`;
}

/** Writes one `<type>.<format>` file per section into `dir` (created when missing). */
export async function writeDirectory(dir: string, sections: Sections, format: SectionFormat = 'csv'): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  for (const [type, rows] of Object.entries(sections)) {
    const file = path.join(dir, `${type}.${format}`);
    await writeFile(file, renderSection(rows, format));
    files.push(file);
  }
  return files;
}
