// A deterministic seed-scale Directory: the seed's type mix, realistic names, prose descriptions.
// Pure: the same (rows, seed) gives byte-identical sections.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { wayHeader } from './labels.ts';
import type { SectionFormat } from './sections.ts';

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

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = { next(): number; int(n: number): number; pick<T>(list: readonly T[]): T; chance(p: number): boolean };
function rng(seed: number): Rng {
  const next = mulberry32(seed);
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)]!,
    chance: (p) => next() < p,
  };
}

// Services a tool can wrap: prefix, host, secret name, MCP or not.
const services = [
  { prefix: 'GMAIL', host: 'https://gmail.googleapis.com/gmail/v1/users/me', secret: 'GMAIL_TOKEN', noun: 'Gmail mailbox' },
  { prefix: 'STRIPE', host: 'https://api.stripe.com/v1', secret: 'STRIPE_SECRET_KEY', noun: 'Stripe account' },
  { prefix: 'SLACK', host: 'https://slack.com/api', secret: 'SLACK_BOT_TOKEN', noun: 'Slack workspace' },
  { prefix: 'GITHUB', host: 'https://api.github.com', secret: 'GITHUB_TOKEN', noun: 'GitHub organisation' },
  { prefix: 'NOTION', host: 'https://api.notion.com/v1', secret: 'NOTION_TOKEN', noun: 'Notion workspace' },
  { prefix: 'CF', host: 'https://api.cloudflare.com/client/v4', secret: 'CLOUDFLARE_API_TOKEN', noun: 'Cloudflare account' },
  { prefix: 'BLOOIO', host: 'https://api.blooio.com/v1', secret: 'BLOOIO_API_KEY', noun: 'Blooio iMessage line' },
  { prefix: 'TWILIO', host: 'https://api.twilio.com/2010-04-01', secret: 'TWILIO_AUTH_TOKEN', noun: 'Twilio number' },
  { prefix: 'OPENAI', host: 'https://api.openai.com/v1', secret: 'OPENAI_API_KEY', noun: 'OpenAI project' },
  { prefix: 'LINEAR', host: 'https://api.linear.app', secret: 'LINEAR_API_KEY', noun: 'Linear team' },
  { prefix: 'GCAL', host: 'https://www.googleapis.com/calendar/v3', secret: 'GOOGLE_TOKEN', noun: 'Google calendar' },
  { prefix: 'GDRIVE', host: 'https://www.googleapis.com/drive/v3', secret: 'GOOGLE_TOKEN', noun: 'Google Drive' },
  { prefix: 'SHOPIFY', host: 'https://shop.myshopify.com/admin/api/2024-10', secret: 'SHOPIFY_ACCESS_TOKEN', noun: 'Shopify store' },
  { prefix: 'AIRTABLE', host: 'https://api.airtable.com/v0', secret: 'AIRTABLE_TOKEN', noun: 'Airtable base' },
  { prefix: 'HUBSPOT', host: 'https://api.hubapi.com', secret: 'HUBSPOT_TOKEN', noun: 'HubSpot portal' },
  { prefix: 'DISCORD', host: 'https://discord.com/api/v10', secret: 'DISCORD_BOT_TOKEN', noun: 'Discord server' },
  { prefix: 'TELEGRAM', host: 'https://api.telegram.org', secret: 'TELEGRAM_BOT_TOKEN', noun: 'Telegram bot' },
  { prefix: 'SUPABASE', host: 'https://project.supabase.co/rest/v1', secret: 'SUPABASE_SERVICE_KEY', noun: 'Supabase project' },
  { prefix: 'SHEETS', host: 'https://sheets.googleapis.com/v4', secret: 'GOOGLE_TOKEN', noun: 'Google spreadsheet' },
  { prefix: 'DROPBOX', host: 'https://api.dropboxapi.com/2', secret: 'DROPBOX_TOKEN', noun: 'Dropbox folder' },
] as const;
const localPrefixes = ['IMSG', 'IMESSAGE', 'MAC', 'TERMINAL', 'BROWSER', 'PHONE', 'ARTICLE', 'LEDGER', 'DIRECTORY', 'FILES', 'NOTES', 'SHORTCUTS'] as const;
const localNouns: Record<string, string> = {
  IMSG: 'iMessage on the Mac',
  IMESSAGE: 'the iMessage archive',
  MAC: 'the Mac',
  TERMINAL: 'the terminal',
  BROWSER: 'a browser session',
  PHONE: 'the phone',
  ARTICLE: 'the article store',
  LEDGER: 'the Ledger',
  DIRECTORY: 'the Directory',
  FILES: 'the file store',
  NOTES: 'Apple Notes',
  SHORTCUTS: 'Apple Shortcuts',
};
const verbs = [
  'SEND',
  'LIST',
  'GET',
  'CREATE',
  'UPDATE',
  'DELETE',
  'SEARCH',
  'READ',
  'WRITE',
  'SYNC',
  'EXPORT',
  'IMPORT',
  'ARCHIVE',
  'REPLY',
  'FORWARD',
  'SCHEDULE',
  'CANCEL',
  'UPLOAD',
  'DOWNLOAD',
  'QUERY',
  'RUN',
  'DEPLOY',
  'COUNT',
  'WATCH',
  'MOVE',
  'RENAME',
  'SHARE',
  'TAG',
  'MERGE',
  'RESTORE',
] as const;
const objects = [
  'MESSAGE',
  'THREAD',
  'EMAIL',
  'LABEL',
  'DRAFT',
  'CUSTOMER',
  'INVOICE',
  'CHARGE',
  'REFUND',
  'ISSUE',
  'PULL',
  'REPO',
  'PAGE',
  'DATABASE',
  'EVENT',
  'FILE',
  'FOLDER',
  'ROW',
  'SHEET',
  'WORKER',
  'ROUTE',
  'ZONE',
  'RECORD',
  'CONTACT',
  'CHANNEL',
  'USER',
  'ORDER',
  'PRODUCT',
  'WEBHOOK',
  'SECRET',
  'BUCKET',
  'OBJECT',
  'COMMENT',
  'ATTACHMENT',
  'CHAT',
  'NUMBER',
  'SESSION',
  'DEPLOYMENT',
  'PROJECT',
  'NOTE',
] as const;
const attributes = [
  'URL',
  'ID',
  'TIMEOUT_MS',
  'REGION',
  'LIMIT',
  'ENABLED',
  'RETRIES',
  'BATCH_SIZE',
  'TTL_SECONDS',
  'PATH',
  'VERSION',
  'OWNER',
  'CHANNEL',
  'MODE',
  'THRESHOLD',
  'WINDOW',
  'QUOTA',
  'PREFIX',
  'DEFAULT',
  'MAX_BYTES',
] as const;
const words = [
  'ledger',
  'directory',
  'inbox',
  'invoice',
  'customer',
  'weekly',
  'daily',
  'triage',
  'digest',
  'report',
  'sync',
  'backup',
  'release',
  'onboarding',
  'outreach',
  'pricing',
  'calendar',
  'meeting',
  'summary',
  'archive',
  'payment',
  'refund',
  'support',
  'research',
  'draft',
  'publish',
  'review',
  'audit',
  'cleanup',
  'migration',
  'contract',
  'catalog',
  'resolver',
  'dispatch',
  'scoped',
  'token',
  'provenance',
  'agent',
  'model',
  'gateway',
  'worker',
  'queue',
  'cache',
  'search',
  'index',
  'alias',
  'phone',
  'message',
  'garden',
  'kitchen',
  'travel',
  'budget',
  'health',
  'energy',
  'studio',
] as const;
const folders = [
  'src/ledger',
  'src/directory',
  'src/dispatch',
  'src/resolver',
  'src/capture',
  'src/auth',
  'src/http',
  'docs',
  'scripts',
  'workers/api',
  'workers/cron',
  'migrations',
  'public/img',
] as const;
const extensions = ['ts', 'md', 'json', 'sql', 'py', 'sh'] as const;
const firstNames = [
  'Ada',
  'Grace',
  'Alan',
  'Edsger',
  'Barbara',
  'Donald',
  'Margaret',
  'Ken',
  'Radia',
  'Leslie',
  'Frances',
  'John',
  'Katherine',
  'Tim',
  'Sophie',
  'Linus',
  'Hedy',
  'Dennis',
  'Shafi',
  'Niklaus',
] as const;
const lastNames = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Hamilton',
  'Thompson',
  'Perlman',
  'Lamport',
  'Allen',
  'Backus',
  'Johnson',
  'Berners-Lee',
  'Wilson',
  'Torvalds',
  'Lamarr',
  'Ritchie',
  'Goldwasser',
  'Wirth',
] as const;
const companies = ['Northwind', 'Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay', 'Stark', 'Wayne', 'Tyrell', 'Soylent', 'Cyberdyne'] as const;

const openers = [
  'Use this when the caller needs to',
  'This capability lets an agent',
  'Run it to',
  'It is the one call that can',
  'Reach for it whenever you must',
] as const;
const middles = [
  'The call is recorded by the Ledger at the boundary, request and answer linked by one id, so a reviewer can compare what ran with the contract in this row.',
  'Arguments are validated against the args schema before anything leaves the build; a missing or malformed field is refused with a message that names it.',
  'Credentials are written as secret names and substituted only into the outgoing request, so the row can be read by people who must not see the keys.',
  'Results are returned as JSON exactly as the service sent them, and large answers are stored once under their hash rather than copied into every event.',
  'Retries are safe: the event id is fixed when the call is made, so a replayed request adds nothing to the record.',
  'Pagination follows the service’s own cursor; pass the cursor from the previous answer to continue where it stopped.',
  'Rate limits of the underlying service apply; a refusal comes back with the retry-after the service gave.',
  'Dry runs return the exact request that would be sent, with secret names in place of values, and send nothing.',
] as const;
const closers = [
  'Prefer it over composing raw HTTP by hand.',
  'It never writes back into the Directory.',
  'Pair it with the matching list call to find ids first.',
  'Most flows call it once per run.',
  'Scoped tokens can lend this call out with a use count and an expiry.',
] as const;

function sentence(r: Rng, what: string): string {
  const parts = [`${r.pick(openers)} ${what}.`];
  const n = 1 + r.int(4);
  const used = new Set<number>();
  for (let i = 0; i < n; i++) {
    const k = r.int(middles.length);
    if (!used.has(k)) {
      used.add(k);
      parts.push(middles[k]!);
    }
  }
  parts.push(r.pick(closers));
  return parts.join(' ');
}

function human(name: string): string {
  return name.toLowerCase().replace(/_/g, ' ');
}

const schemaFor = (props: string[]) =>
  JSON.stringify({
    type: 'object',
    properties: Object.fromEntries(props.map((p) => [p, { type: p.endsWith('limit') ? 'integer' : 'string' }])),
    required: props.slice(0, 1),
  });

type ToolSpec = { name: string; description: string; ways: Record<string, unknown>; upstream?: unknown; args: string[]; kind: string };

function toolFor(r: Rng, name: string, index: number): ToolSpec {
  const [prefix] = name.split('_');
  const service = services.find((s) => s.prefix === prefix);
  const object = (name.split('_').slice(2).join('_') || name.split('_')[1] || 'item').toLowerCase();
  const args = [r.pick(['id', 'query', 'to', 'text', 'path', 'account']), ...(r.chance(0.5) ? ['limit'] : [])];
  const argsObj = Object.fromEntries(args.map((a) => [a, `{{${a}}}`]));
  const description = sentence(
    r,
    `${human(name.split('_').slice(1).join('_'))} ${service ? `in the ${service.noun}` : `through ${localNouns[prefix!] ?? 'this machine'}`}`,
  );
  if (service) {
    const call = {
      method: r.pick(['GET', 'POST', 'POST', 'PATCH']),
      url: `${service.host}/${object.replace(/_/g, '/')}s`,
      headers: { authorization: `Bearer [${service.secret}]`, 'content-type': 'application/json' },
      body: argsObj,
    };
    const ways: Record<string, unknown> = { 'way:http': call };
    if (index % 7 === 0)
      ways['way:mcp'] = {
        method: 'MCP',
        server: `https://mcp.${new URL(service.host).hostname}/mcp`,
        headers: { authorization: `Bearer [${service.secret}]` },
        tool: human(name).replace(/ /g, '_'),
        arguments: argsObj,
      };
    return { name, description, ways, upstream: call, args, kind: 'http' };
  }
  const shape = index % 5;
  if (shape === 0 || prefix === 'TERMINAL' || prefix === 'MAC') {
    return {
      name,
      description,
      ways: { 'way:cli': { method: 'CLI', command: `${prefix!.toLowerCase()}-cli ${human(name).split(' ').slice(1).join('-')} --json '{{args}}'` } },
      args,
      kind: 'cli',
    };
  }
  if (shape === 1) {
    return {
      name,
      description,
      ways: { 'way:mcp': { method: 'MCP', server: 'http://127.0.0.1:4000/mcp', headers: {}, tool: name, arguments: argsObj } },
      args,
      kind: 'mcp',
    };
  }
  if (shape === 2) {
    return {
      name,
      description,
      ways: {
        way: [
          { method: 'CLI', command: `${prefix!.toLowerCase()}-cli prepare --json '{{args}}'` },
          { method: 'POST', url: `http://127.0.0.1:4000/api/tools/${name}`, headers: { 'content-type': 'application/json' }, body: argsObj },
        ],
      },
      args,
      kind: 'sequence',
    };
  }
  if (shape === 3) {
    return {
      name,
      description,
      ways: { 'way:code': { method: 'CODE', language: 'javascript', code: `export default async (args) => ({ tool: ${JSON.stringify(name)}, args })` } },
      args,
      kind: 'code',
    };
  }
  return {
    name,
    description,
    ways: { 'way:http': { method: 'POST', url: `http://127.0.0.1:4000/api/tools/${name}`, headers: { 'content-type': 'application/json' }, body: argsObj } },
    args,
    kind: 'http',
  };
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

function toolHeader(): string[] {
  return ['name', 'description', 'way', 'way: http', 'way: mcp', 'way: cli', 'way: code', 'args schema', 'upstream', 'type', 'kind', 'id'];
}

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
