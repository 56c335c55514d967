// The fixture Directory's vocabulary and its seeded random source: services, names, words and
// the prose sentences built from them (src/directory/fixtures.ts).

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

export type Rng = { next(): number; int(n: number): number; pick<T>(list: readonly T[]): T; chance(p: number): boolean };
export function rng(seed: number): Rng {
  const next = mulberry32(seed);
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)]!,
    chance: (p) => next() < p,
  };
}

// Services a tool can wrap: prefix, host, secret name, MCP or not.
export const services = [
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
export const localPrefixes = [
  'IMSG',
  'IMESSAGE',
  'MAC',
  'TERMINAL',
  'BROWSER',
  'PHONE',
  'ARTICLE',
  'LEDGER',
  'DIRECTORY',
  'FILES',
  'NOTES',
  'SHORTCUTS',
] as const;
export const localNouns: Record<string, string> = {
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
export const verbs = [
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
export const objects = [
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
export const attributes = [
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
export const words = [
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
export const folders = [
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
export const extensions = ['ts', 'md', 'json', 'sql', 'py', 'sh'] as const;
export const firstNames = [
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
export const lastNames = [
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
export const companies = [
  'Northwind',
  'Acme',
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Vandelay',
  'Stark',
  'Wayne',
  'Tyrell',
  'Soylent',
  'Cyberdyne',
] as const;

export const openers = [
  'Use this when the caller needs to',
  'This capability lets an agent',
  'Run it to',
  'It is the one call that can',
  'Reach for it whenever you must',
] as const;
export const middles = [
  'The call is recorded by the Ledger at the boundary, request and answer linked by one id, so a reviewer can compare what ran with the contract in this row.',
  'Arguments are validated against the args schema before anything leaves the build; a missing or malformed field is refused with a message that names it.',
  'Credentials are written as secret names and substituted only into the outgoing request, so the row can be read by people who must not see the keys.',
  'Results are returned as JSON exactly as the service sent them, and large answers are stored once under their hash rather than copied into every event.',
  'Retries are safe: the event id is fixed when the call is made, so a replayed request adds nothing to the record.',
  'Pagination follows the service’s own cursor; pass the cursor from the previous answer to continue where it stopped.',
  'Rate limits of the underlying service apply; a refusal comes back with the retry-after the service gave.',
  'Dry runs return the exact request that would be sent, with secret names in place of values, and send nothing.',
] as const;
export const closers = [
  'Prefer it over composing raw HTTP by hand.',
  'It never writes back into the Directory.',
  'Pair it with the matching list call to find ids first.',
  'Most flows call it once per run.',
  'Scoped tokens can lend this call out with a use count and an expiry.',
] as const;

export function sentence(r: Rng, what: string): string {
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

export function human(name: string): string {
  return name.toLowerCase().replace(/_/g, ' ');
}
