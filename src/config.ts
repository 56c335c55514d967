// Configuration: parsed once, with zod, from the environment. A bad value stops
// the start with a message naming the variable, what was expected and what arrived.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const bytes = z.coerce.number().int().positive();
const positiveMs = z.coerce.number().int().positive();
const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => ['true', '1', 'yes'].includes(v));
const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
  );

/** CORS_ORIGINS as origins: each entry exactly an origin (scheme://host[:port]), no path, no `*`. */
function parseOrigins(text: string): string[] | { problem: string } {
  const origins: string[] = [];
  for (const entry of text.split(',').map((e) => e.trim())) {
    if (!entry) continue;
    let origin: string;
    try {
      origin = new URL(entry).origin;
    } catch {
      return { problem: `expected origins like https://app.example.com, got ${JSON.stringify(entry)}` };
    }
    if (origin === 'null' || origin !== entry.replace(/\/$/, ''))
      return { problem: `expected an origin (scheme://host[:port], no path and no *), got ${JSON.stringify(entry)}` };
    origins.push(origin);
  }
  return origins;
}

/** Every setting, with its environment variable, default and meaning (the README's table is printed from this). */
export const settings = {
  PORT: { schema: port.default(4000), doc: 'HTTP port of the server (0 picks a free one).' },
  HOST: { schema: z.string().min(1).default('127.0.0.1'), doc: 'Interface the server listens on.' },
  DATA_DIR: { schema: z.string().min(1).default('./.data'), doc: 'Folder for the embedded database, blobs and keys.' },
  DATABASE_URL: {
    schema: url(['postgresql:', 'postgres:']).optional(),
    doc: 'PostgreSQL to run on; unset runs on embedded PGlite in DATA_DIR.',
  },
  BLOB_STORE: {
    schema: z.enum(['folder', 's3']).default('folder'),
    doc: 'Where payloads over 256 KiB go: a local folder (DATA_DIR/blobs) or S3-compatible storage.',
  },
  BLOB_DIR: { schema: z.string().min(1).optional(), doc: 'Folder for large blobs (default DATA_DIR/blobs).' },
  S3_ENDPOINT: { schema: url(['http:', 'https:']).optional(), doc: 'S3-compatible endpoint (with BLOB_STORE=s3).' },
  S3_BUCKET: { schema: z.string().min(1).optional(), doc: 'Bucket for large blobs (with BLOB_STORE=s3).' },
  S3_REGION: { schema: z.string().min(1).default('us-east-1'), doc: 'S3 region.' },
  S3_ACCESS_KEY_ID: { schema: z.string().min(1).optional(), doc: 'S3 access key id.' },
  S3_SECRET_ACCESS_KEY: { schema: z.string().min(1).optional(), doc: 'S3 secret key (registered as a secret, never logged).' },
  SECRETS_FILE: {
    schema: z.string().min(1).optional(),
    doc: 'JSON file of {"SECRET_NAME": "value"}; with DIRLEDGER_SECRET_<NAME> variables, the secret registry.',
  },
  INLINE_MAX_BYTES: { schema: bytes.default(262_144), doc: 'Largest payload stored inline (compressed) in PostgreSQL.' },
  PAYLOAD_MAX_BYTES: {
    schema: bytes.default(8_388_608),
    doc: 'Payloads larger than this are recorded as MISSING; an outbound request body larger than this is not sent (PAYLOAD_TOO_LARGE).',
  },
  BATCH_MAX_BYTES: { schema: bytes.default(67_108_864), doc: 'Largest request body the ledger ingest door reads (413 past it).' },
  INGEST_INFLIGHT_MAX_BYTES: {
    schema: bytes.default(8_388_608),
    doc: 'Request body bytes the ingest and OTLP doors hold at once (a larger body runs alone); further batches wait unread, then get 503 with Retry-After.',
  },
  INGEST_WAIT_MAX_MS: {
    schema: positiveMs.default(30_000),
    doc: 'How long a batch waits for room under INGEST_INFLIGHT_MAX_BYTES before it is refused with 503 and Retry-After (nothing written).',
  },
  GRAPHQL_MAX_DEPTH: { schema: z.coerce.number().int().min(1).default(12), doc: 'Deepest GraphQL selection allowed.' },
  GRAPHQL_MAX_COST: { schema: z.coerce.number().int().min(1).default(20_000), doc: 'Highest GraphQL query cost allowed.' },
  GRAPHQL_MAX_ALIASES: { schema: z.coerce.number().int().min(1).default(30), doc: 'Most aliases in one operation.' },
  GRAPHQL_MAX_TOKENS: { schema: z.coerce.number().int().min(1).default(5_000), doc: 'Most tokens in one document.' },
  SHUTDOWN_GRACE_MS: { schema: positiveMs.default(10_000), doc: 'How long shutdown waits for in-flight work.' },
  IDLE_TRIM_MS: {
    schema: z.coerce.number().int().min(0).default(10_000),
    doc: 'Once no request has begun for this long (and none is in flight) after some did, or after the start, the server runs one memory-reducing garbage collection and gives the memory back; 0 turns it off.',
  },
  LOG_LEVEL: {
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    doc: 'Structured log level.',
  },
  GRAPHIQL: { schema: bool.default(true), doc: 'Serve GraphiQL at /graphql.' },
  CONSOLE: {
    schema: bool.default(true),
    doc: 'Serve the reviewer console at /console (files only: its data comes through the GraphQL door, with a token); off, /console is an unknown path (404).',
  },
  DIRECTORY_DIR: {
    schema: z.string().min(1).optional(),
    doc: 'Folder of Directory section files (`<type>.csv` / `<type>.json`); default the shipped demo, src/directory/demo.',
  },
  DIRECTORY_WATCH_MS: {
    schema: z.coerce.number().int().min(0).default(200),
    doc: 'Debounce of the Directory folder watcher in milliseconds; 0 turns watching off.',
  },
  RETIRED_HOSTS: {
    schema: z
      .string()
      .refine(
        (v) =>
          v.split(',').every((entry) => {
            const e = entry.trim();
            if (!e) return true;
            try {
              return Boolean(new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(e) ? e : `http://${e}`).hostname);
            } catch {
              return false;
            }
          }),
        'comma-separated hosts or URL prefixes',
      )
      .optional(),
    doc: 'Comma-separated hosts or URL prefixes of a retired build; Directory rows that reach one are refused.',
  },
  PUBLIC_URL: {
    schema: url(['http:', 'https:']).optional(),
    doc: "This server's base URL as callers reach it, written into every contract form (default http://HOST:PORT).",
  },
  CORS_ORIGINS: {
    schema: z
      .string()
      .transform((text, ctx) => {
        const origins = parseOrigins(text);
        if ('problem' in origins) {
          ctx.addIssue({ code: 'custom', message: origins.problem });
          return z.NEVER;
        }
        return origins;
      })
      .optional(),
    doc: 'Comma-separated origins (https://app.example.com) whose browser pages may call this server with credentials; a preflight is answered without a token. They and the pages this server serves may also open its WebSockets: any other browser Origin is refused (403). Unset: none.',
  },
  MCP_CATALOG: {
    schema: z.enum(['tools', 'names']).default('tools'),
    doc: 'What MCP tools/list lists: `tools` every runnable tool with its input schema; `names` only `find` and `call`, the runnable names (names alone) as the resource dirledger://directory/names. `/mcp?catalog=…` chooses per client.',
  },
  STREAM_CUTOFF_MS: {
    schema: positiveMs.default(25_000),
    doc: 'How long the ledger keeps reading a streamed answer (and an MCP call goes on) after its client disconnects; what arrived is stored as PARTIAL.',
  },
  MODEL_TIMEOUT_MS: {
    schema: positiveMs.default(600_000),
    doc: 'How long the model door waits for an upstream model (a whole streamed answer included) before abandoning the call.',
  },
  DIRLEDGER_FAKE_MODELS: {
    schema: bool.default(false),
    doc: 'Start a fake OpenAI and Anthropic upstream on 127.0.0.1:FAKE_MODELS_PORT for the demo model rows (no key needed).',
  },
  FAKE_MODELS_PORT: { schema: z.coerce.number().int().min(1).max(65_535).default(4011), doc: 'Port of the fake model upstream (DIRLEDGER_FAKE_MODELS).' },
  REDIS_URL: {
    schema: url(['redis:', 'rediss:']).optional(),
    doc: 'Redis for the live signal between server instances (pub/sub); unset: in-memory, one process.',
  },
  LIVE_CHANNEL: {
    schema: z.string().min(1).default('dirledger:ledger-appended'),
    doc: 'Redis pub/sub channel the instances of one deployment announce commits on.',
  },
  LIVE_POLL_MS: {
    schema: positiveMs.default(2_000),
    doc: 'Safety poll of the live tail: it reads the ledger at least this often, so a lost signal only delays delivery.',
  },
  LIVE_PAGE_SIZE: {
    schema: z.coerce.number().int().min(1).max(5_000).default(500),
    doc: 'Events per database read of the live tail and of replays.',
  },
  LIVE_BUFFER_MAX: {
    schema: z.coerce.number().int().min(1).default(10_000),
    doc: 'Events (or stream chunks) a subscription may hold undelivered; past it, it ends with SUBSCRIBER_TOO_SLOW and its cursor.',
  },
  STREAM_RETAIN_MS: {
    schema: positiveMs.default(60_000),
    doc: 'How long a finished stream stays for late streamCapture subscribers.',
  },
  DISPATCH_TIMEOUT_MS: {
    schema: positiveMs.default(30_000),
    doc: 'How long the runner waits for one call (each step of a sequence) before abandoning it (TIMEOUT).',
  },
  DISPATCH_RESPONSE_MAX_BYTES: {
    schema: bytes.default(8_388_608),
    doc: 'Most bytes of one answer the runner holds in memory; past it the call is stopped (RESPONSE_TOO_LARGE).',
  },
  CAPTURE_BATCH_MAX_EVENTS: {
    schema: z.coerce.number().int().min(1).max(10_000).default(500),
    doc: 'The background ledger writer cuts a batch at this many events…',
  },
  CAPTURE_BATCH_DELAY_MS: {
    schema: positiveMs.default(50),
    doc: '…or this long after its first event was queued, whichever comes first: about the longest a captured event waits before it is committed and live readers see it.',
  },
  CAPTURE_QUEUE_MAX_EVENTS: {
    schema: z.coerce.number().int().min(1).default(20_000),
    doc: 'Events captured and not yet in the Ledger, at most (in the spool, or in memory); when full, callers wait for room.',
  },
  DIRLEDGER_SPOOL: {
    schema: z.enum(['durable', 'memory']).default('durable'),
    doc: 'durable: every captured event is on disk (fdatasync) before the step it records goes on, and replayed at start; memory: held in memory until committed (a crash loses what was not; see docs/ARCHITECTURE.md).',
  },
  SPOOL_DIR: { schema: z.string().min(1).optional(), doc: 'Folder of the durable spool (default DATA_DIR/spool); one process per folder.' },
  SPOOL_MAX_BYTES: {
    schema: bytes.default(268_435_456),
    doc: 'Bytes the spool holds not yet in the Ledger, at most; when full, callers wait for room.',
  },
  SPOOL_WAIT_MS: {
    schema: positiveMs.default(10_000),
    doc: 'How long a caller waits for room in a full spool before it is refused (503 + Retry-After; the refusal says whether the call had run).',
  },
  SPOOL_LINGER_MS: {
    schema: positiveMs.default(2),
    doc: 'How long an event that may wait (a request, before the call it leads to) waits to share the next durable spool write; then it is written alone.',
  },
  AUTHORITY: {
    schema: z.enum(['required', 'off']).default('required'),
    doc: "required: every door but /healthz and GraphiQL's page needs a token. off opens every door (benchmarks only; logged loudly).",
  },
  LEDGER_CHAIN: {
    schema: z
      .enum(['on', 'v1', 'off'])
      .default('on')
      .transform((v) => (v === 'on' ? 2 : v === 'v1' ? 1 : 'off') as 1 | 2 | 'off'),
    shown: 'on',
    doc: 'on: every appended batch takes the next link of the hash chain (version 2). v1: the older encoding, hashed under the commit lock (to compare; verify reads both). off only to measure what the chain costs (benchmarks; logged loudly): such batches fail `dirledger verify`.',
  },
  AUTH_AUDIENCE: {
    schema: z
      .string()
      .regex(/^[^\s,=<>]{1,200}$/, 'a name without spaces, commas or operators')
      .default('dirledger'),
    doc: "This server's name for `audience` caveats: a token for another audience is refused here.",
  },
  AUTH_RATE_PER_SECOND: {
    schema: z.coerce.number().min(0).default(50),
    doc: 'Requests per second one token may make (all narrowed tokens share it); 0 turns the limit off. Over it: 429 + Retry-After.',
  },
  AUTH_RATE_BURST: {
    schema: z.coerce.number().int().min(1).default(200),
    doc: 'Requests one token may make at once above the steady rate.',
  },
  GRAPHQL_INTROSPECTION: { schema: bool.default(true), doc: 'Answer introspection queries (__schema, __type).' },
  GRAPHQL_MAX_BATCH: {
    schema: z.coerce.number().int().min(1).default(10),
    doc: 'Most operations in one batched GraphQL request (a JSON array body).',
  },
} as const;

type Settings = typeof settings;
export type Config = { [K in keyof Settings]: z.output<Settings[K]['schema']> } & {
  secrets: Record<string, string>;
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const secretPrefix = 'DIRLEDGER_SECRET_';
const secretName = /^[A-Z][A-Z0-9_]*$/;
const minSecretLength = 6;

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = String(value);
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/** Parses the environment once; throws ConfigError naming every bad variable. */
export function parseConfig(
  env: Record<string, string | undefined> = process.env,
  readFile: (file: string) => string = (file) => readFileSync(file, 'utf8'),
): Config {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, { schema }] of Object.entries(settings)) {
    const raw = env[name] === '' ? undefined : env[name];
    const parsed = (schema as z.ZodType).safeParse(raw);
    if (parsed.success) out[name] = parsed.data;
    else {
      const secret = name.includes('SECRET');
      const issue = parsed.error.issues[0]!;
      const expected = issue.code === 'custom' ? issue.message : z.prettifyError(parsed.error).replace(/^✖ /, '');
      // zod says what it made of the text ("received NaN"); the message quotes the text itself instead.
      const shown = expected.replace(/^Invalid input: expected /, '').replace(/, received [^\n]*/, '');
      problems.push(`${name}: expected ${shown}, got ${secret ? 'a value (hidden)' : describe(raw)}`);
    }
  }
  if (out.BLOB_STORE === 's3') {
    for (const name of ['S3_ENDPOINT', 'S3_BUCKET'] as const) {
      if (!out[name]) problems.push(`${name}: expected a value because BLOB_STORE=s3, got nothing`);
    }
  }
  const secrets: Record<string, string> = {};
  if (out.SECRETS_FILE) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFile(out.SECRETS_FILE as string));
    } catch (error) {
      problems.push(`SECRETS_FILE: expected a readable JSON file, got ${describe(out.SECRETS_FILE)} (${(error as Error).message.split('\n')[0]})`);
    }
    if (parsed !== undefined) {
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        problems.push(`SECRETS_FILE: expected a JSON object of {"NAME": "value"}, got ${Array.isArray(parsed) ? 'an array' : typeof parsed}`);
      } else {
        for (const [name, value] of Object.entries(parsed)) addSecret(`SECRETS_FILE entry ${name}`, name, value);
      }
    }
  }
  for (const [key, value] of Object.entries(env)) {
    if (key.startsWith(secretPrefix) && value !== undefined) addSecret(key, key.slice(secretPrefix.length), value);
  }
  for (const name of ['S3_SECRET_ACCESS_KEY'] as const) {
    if (out[name]) secrets[name] = out[name] as string;
  }
  if (problems.length) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  out.DATA_DIR = path.resolve(out.DATA_DIR as string);
  if (out.SPOOL_DIR) out.SPOOL_DIR = path.resolve(out.SPOOL_DIR as string);
  return { ...(out as Omit<Config, 'secrets'>), secrets };

  function addSecret(source: string, name: string, value: unknown) {
    if (!secretName.test(name)) {
      problems.push(`${source}: expected a secret name in UPPER_SNAKE_CASE, got ${describe(name)}`);
    } else if (typeof value !== 'string' || value.length < minSecretLength) {
      problems.push(
        `${source}: expected a string value of at least ${minSecretLength} characters, got ${typeof value === 'string' ? `${value.length} characters` : typeof value}`,
      );
    } else secrets[name] = value;
  }
}
