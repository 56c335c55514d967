// The dirledger CLI. Each command is a thin door over the same cores the server uses.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, parseConfig } from '../config.ts';
import { FolderLockedError, folderHolder } from '../db/folder-lock.ts';
import { EXIT_REFUSED, refusalCode, refusalLine, resolveToken, tokenHelp } from './token.ts';

// The cores are imported by the commands that run them, so a client command starts without loading them.

function config() {
  try {
    return parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/**
 * `npm run dirledger -- mcp` prints npm's banner (the command line, token and all) on stdout unless
 * silent: no place for a stdio protocol. Only that script's own run: npx prints none, and a process an
 * npm script merely started (a test run) inherits npm's variables without any banner.
 */
function npmBannerOnStdout(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.npm_lifecycle_event === 'dirledger' && env.npm_config_loglevel !== 'silent';
}

function port(value: string): string {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError(`expected a port from 0 to 65535, got ${JSON.stringify(value)}`);
  return value;
}

export const program = new Command()
  .name('dirledger')
  .description('The Directory (what could be done) and the Ledger (what was done).')
  .version(packageVersion(), '-V, --version', "print dirledger's version")
  .showHelpAfterError();

program
  .command('serve')
  .description('Start the GraphQL server (applies pending migrations first).')
  .option('-p, --port <port>', 'port to listen on (overrides PORT)', port)
  .action(async (opts: { port?: string }) => {
    const { serve } = await import('../server.ts');
    await serve({ ...process.env, ...(opts.port ? { PORT: opts.port } : {}) });
  });

program
  .command('migrate')
  .description('Apply pending database migrations and exit.')
  .action(async () => {
    const { openConfiguredDatabase } = await import('../services.ts');
    const db = await openConfiguredDatabase(config());
    try {
      const applied = await db.migrate();
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'no pending migrations\n');
    } finally {
      await db.close();
    }
  });

program
  .command('migration-diff')
  .description('Print the SQL that takes prisma/migrations to prisma/schema.prisma (for a new migration).')
  .action(async () => {
    const { openDatabase } = await import('../db/client.ts');
    const { diffMigrations } = await import('../db/schema-engine.ts');
    const db = await openDatabase({ memory: true });
    try {
      process.stdout.write(await diffMigrations(db.adapterFactory));
    } finally {
      await db.close();
    }
  });

program
  .command('find')
  .description('Resolve words to ranked Directory rows, asking a running server (GET /api/directory/resolve).')
  .argument('<words...>', 'what you are looking for, in any words')
  .option('--url <url>', 'the server (default DIRLEDGER_URL, else http://127.0.0.1:PORT)')
  .option('--min-score <n>', 'refuse anything scored below this')
  .option('--limit <n>', 'at most this many rows (default 10)')
  .option('--types <types>', 'only these types, comma-separated')
  .option('--json', 'print the answer as JSON, exactly as the HTTP door sends it')
  .option('--token <token>', 'sent as authorization: Bearer <token>')
  .addHelpText('after', `\n${tokenHelp}`)
  .action(async (words: string[], opts: { url?: string; token?: string; minScore?: string; limit?: string; types?: string; json?: boolean }) => {
    const { find } = await import('./find.ts');
    const token = resolveToken(opts.token);
    process.exitCode = await find(words, { ...opts, url: serverUrl(opts.url), ...(token && { token }) });
  });

function position(value: string): bigint {
  if (!/^\d{1,19}$/.test(value) || BigInt(value) > 9_223_372_036_854_775_807n)
    throw new InvalidArgumentError(`expected a whole number from 0 to 2^63-1, got ${JSON.stringify(value)}`);
  return BigInt(value);
}

/**
 * The server a client command talks to: --url, else DIRLEDGER_URL, else the server holding this data
 * folder (its lock file records the URL it serves), else 127.0.0.1:PORT.
 */
const serverUrl = (url?: string) => url ?? process.env.DIRLEDGER_URL ?? folderServer()?.url ?? `http://127.0.0.1:${process.env.PORT || 4000}`;

/** The running process holding the configured PGlite folder (none when DATABASE_URL is set). */
function folderServer() {
  const c = config();
  return c.DATABASE_URL ? null : folderHolder(path.join(c.DATA_DIR, 'pglite'));
}

program
  .command('call')
  .description('Run a Directory tool through a running server (POST /api/dispatch) and print the DispatchResult as JSON.')
  .argument('<name>', 'the tool, as named in the Directory')
  .option('--args <json>', 'the arguments, one JSON object (default {})')
  .option('--dry-run', 'render the outgoing request(s) without sending anything')
  .option('--url <url>', 'the server (default DIRLEDGER_URL, else http://127.0.0.1:PORT)')
  .addOption(new Option('--server <url>', 'the same as --url').hideHelp())
  .option('--token <token>', 'sent as authorization: Bearer <token>')
  .addOption(new Option('--form <form>', 'the contract form this call was written as (recorded; default CLI)').hideHelp())
  .addHelpText(
    'after',
    `\n${tokenHelp}\nExit codes: 0 OK or DRY_RUN, 1 the call failed or was refused, 2 bad input, 3 server unreachable or failing, 4 refused for its credential (none, invalid, its limits, its rate).`,
  )
  .action(async (name: string, opts: { args?: string; dryRun?: boolean; url?: string; server?: string; token?: string; form?: string }) => {
    const { call } = await import('./call.ts');
    const token = resolveToken(opts.token);
    process.exitCode = await call(name, { ...opts, url: serverUrl(opts.url ?? opts.server), ...(token && { token }) });
  });

program
  .command('mcp')
  .description(
    "Serve MCP over stdio. With --url (or DIRLEDGER_URL) it relays every message to that server's /mcp; otherwise it runs the cores in this process on the configured database (DATABASE_URL, else PGlite in DATA_DIR).",
  )
  .option('--url <url>', 'relay to this running server (default DIRLEDGER_URL; unset: in process)')
  .option('--token <token>', 'relay: sent to /mcp as authorization: Bearer <token>; in process: checked for door MCP_STDIO')
  .addOption(
    new Option(
      '--catalog <catalog>',
      'tools/list: every runnable tool with its schema, or only find and call with the names as a resource (default MCP_CATALOG)',
    ).choices(['tools', 'names']),
  )
  .addHelpText(
    'after',
    `\n${tokenHelp}\nRun it as \`npx dirledger mcp\` or \`npm run -s dirledger -- mcp\`: without -s, npm prints its banner on stdout, where only the protocol may go.`,
  )
  .action(async (opts: { url?: string; token?: string; catalog?: 'tools' | 'names' }) => {
    if (npmBannerOnStdout()) {
      process.stderr.write(
        'dirledger mcp: npm printed its banner on stdout, where only the protocol may go: run `npm run -s dirledger -- mcp` or `npx dirledger mcp`.\n',
      );
      process.exit(2);
    }
    const token = resolveToken(opts.token);
    let url = opts.url ?? process.env.DIRLEDGER_URL;
    if (!url) {
      // Never a second copy of the database: relay to the server holding the folder, or say why not.
      const holder = folderServer();
      if (holder?.url) {
        process.stderr.write(`dirledger mcp: relaying to the server on this data folder, ${holder.url} (pid ${holder.pid})\n`);
        url = holder.url;
      } else if (holder) {
        process.stderr.write(`dirledger mcp: ${new FolderLockedError(path.join(config().DATA_DIR, 'pglite'), holder).message}\n`);
        process.exit(3);
      }
    }
    if (url) {
      const { proxyStdio } = await import('../doors/mcp-stdio.ts');
      const refused = await proxyStdio(url, token, config().PAYLOAD_MAX_BYTES, opts.catalog);
      if (refused) {
        process.stderr.write(`dirledger mcp: ${refusalLine(refused.status, refused.error ?? { code: refusalCode(refused.status) }, Boolean(token))}\n`);
        process.exitCode = EXIT_REFUSED;
      }
    } else {
      const { serveStdio } = await import('../doors/mcp-stdio.ts');
      const refused = await serveStdio(config(), token, opts.catalog);
      if (refused) {
        process.stderr.write(
          `dirledger mcp: ${refusalLine(refused.status, { code: refusalCode(refused.status), message: refused.message }, Boolean(token))}\n`,
        );
        process.exitCode = EXIT_REFUSED;
      }
    }
    process.exit(process.exitCode ?? 0);
  });

program
  .command('tail')
  .description('Print ledger events live as they commit (graphql-ws); --after replays from a cursor first.')
  .option('--tool <name...>', 'only events of these tools')
  .option('--kind <kind...>', 'only events of these kinds')
  .option('--session <id...>', 'only events of these sessions')
  .option('--after <cursor>', 'replay everything after this cursor, then follow')
  .option('--url <url>', 'the server (default DIRLEDGER_URL, else http://127.0.0.1:PORT)')
  .option('--json', 'one JSON object per line')
  .option('--limit <n>', 'stop after this many events')
  .option('--token <token>', 'sent in connection_init as authorization: Bearer <token>')
  .addHelpText('after', `\n${tokenHelp}`)
  .action(
    async (opts: { tool?: string[]; kind?: string[]; session?: string[]; after?: string; url?: string; json?: boolean; limit?: string; token?: string }) => {
      const { tail } = await import('./tail.ts');
      const url = serverUrl(opts.url);
      const token = resolveToken(opts.token);
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.exitCode = await tail(
        { ...opts, url, ...(token && { token }), limit: opts.limit === undefined ? undefined : Number(opts.limit) },
        process.stdout,
        process.stderr,
        stop.signal,
      );
    },
  );

const db = program.command('db').description('Database administration (PostgreSQL).');

db.command('roles')
  .description(
    'Print the SQL that creates the owner role (migrations) and the server role (read and append only), or run it with --apply (DATABASE_URL as a superuser).',
  )
  .option('--owner <role>', 'the owner role', 'dirledger_owner')
  .option('--server <role>', 'the server role', 'dirledger_server')
  .option('--apply', 'run it against DATABASE_URL instead of printing it')
  .action(async (opts: { owner: string; server: string; apply?: boolean }) => {
    const { rolesSql } = await import('../db/roles.ts');
    let sql: string;
    try {
      sql = rolesSql(opts);
    } catch (error) {
      process.stderr.write(`dirledger db roles: ${(error as Error).message}\n`);
      process.exitCode = 2;
      return;
    }
    if (!opts.apply) {
      process.stdout.write(sql);
      return;
    }
    const { DATABASE_URL } = config();
    if (!DATABASE_URL) {
      process.stderr.write('dirledger db roles --apply: expected DATABASE_URL (a PostgreSQL superuser connection); the embedded PGlite has no roles.\n');
      process.exitCode = 2;
      return;
    }
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      await client.query(sql);
      process.stdout.write(
        `roles ${opts.owner} (owner: run migrations as it) and ${opts.server} (the server) are in place; set their passwords with ALTER ROLE … PASSWORD.\n`,
      );
    } finally {
      await client.end();
    }
  });

program
  .command('verify')
  .description(
    "Recompute the ledger's hash chain from the rows (DATABASE_URL, else PGlite in DATA_DIR) and name what no longer matches. Exit 0 intact, 1 changed.",
  )
  .option('--from <position>', "from the batch holding this position (default: the chain's start)", position)
  .option('--to <position>', 'up to the batch holding this position (default: the head, with the head and collectors checked)', position)
  .option('--limit <n>', 'problems listed at most (default 100; all are counted)', position)
  .option('--json', 'print the verification as JSON')
  .action(async (opts: { from?: bigint; to?: bigint; limit?: bigint; json?: boolean }) => {
    const { runVerify } = await import('./verify.ts');
    process.exitCode = await runVerify(config(), opts, process.stdout);
  });

const checkpoint = program.command('checkpoint').description("Signed checkpoints of the ledger's hash chain (Ed25519, key derived from the root key).");

checkpoint
  .command('export')
  .description("Sign the chain's current head and print the checkpoint (JSON); keep it outside the database.")
  .option('--out <file>', 'write it to this file instead of stdout')
  .action(async (opts: { out?: string }) => {
    const { runCheckpointExport } = await import('./verify.ts');
    process.exitCode = await runCheckpointExport(config(), opts, process.stdout);
  });

checkpoint
  .command('verify')
  .description(
    'Check a checkpoint file against the database: signed by this root key (or --public-key), and the chain up to it unchanged. Exit 0 holds, 1 does not, 2 unreadable.',
  )
  .argument('<file>', 'the checkpoint JSON')
  .option('--public-key <key>', 'trust only this Ed25519 public key (base64url); default: the one derived from the root key')
  .option('--json', 'print the check as JSON')
  .action(async (file: string, opts: { publicKey?: string; json?: boolean }) => {
    const { runCheckpointVerify } = await import('./verify.ts');
    process.exitCode = await runCheckpointVerify(config(), file, opts, process.stdout);
  });

const token = program.command('token').description('Tokens: mint an admin token from the root key, read or narrow any token offline.');

token
  .command('admin')
  .description('Print a new admin token, signed with the root key (DIRLEDGER_ROOT_KEY secret, else DATA_DIR/root.key, created if missing).')
  .option('--url <url>', "record the grant in that server's ledger first (also DIRLEDGER_URL); nothing is printed if it cannot be")
  .action(async (opts: { url?: string }) => {
    const { withRootKey } = await import('../auth/root-key.ts');
    const { mintWithRootKey } = await import('../auth/tokens.ts');
    const minted = mintWithRootKey(withRootKey(config()).rootKey);
    const url = opts.url ?? process.env.DIRLEDGER_URL;
    if (url) {
      const { recordGrantAt } = await import('./grant.ts');
      const code = await recordGrantAt(url, minted, minted, 'ADMIN');
      if (code !== 0) {
        process.exitCode = code;
        return;
      }
    }
    process.stdout.write(`${minted}\n`);
  });

token
  .command('inspect')
  .description("List a token's limits in words (anyone holding it can read them; nothing is verified).")
  .argument('<token>', 'the token')
  .option('--json', 'print {tokenId, caveats, limits} as JSON')
  .action(async (text: string, opts: { json?: boolean }) => {
    const { inspect } = await import('../auth/tokens.ts');
    try {
      const read = inspect(text);
      process.stdout.write(
        opts.json ? `${JSON.stringify(read)}\n` : `token ${read.tokenId ?? '(not a dirledger token id)'}\n${read.limits.map((l) => `  ${l}`).join('\n')}\n`,
      );
    } catch (error) {
      process.stderr.write(`dirledger token inspect: ${(error as Error).message}\n`);
      process.exitCode = 2;
    }
  });

token
  .command('revoke')
  .description(
    "Revoke a token, and every token narrowed or issued from it, on a running server (the caller's token needs the revoke power). Recorded as a REVOCATION ledger event.",
  )
  .argument('<token-id>', 'the token id (32 hex characters), or the whole token')
  .requiredOption('--reason <words>', 'why (recorded with the revocation)')
  .option('--url <url>', 'the server (default $DIRLEDGER_URL, else http://127.0.0.1:$PORT)')
  .option('--token <token>', "the caller's token, sent as authorization: Bearer <token>")
  .option('--json', 'print the revocation as JSON')
  .addHelpText('after', `\n${tokenHelp}`)
  .action(async (id: string, opts: { reason: string; url?: string; token?: string; json?: boolean }) => {
    const { revoke } = await import('./revoke.ts');
    const caller = resolveToken(opts.token);
    process.exitCode = await revoke(id, { reason: opts.reason, url: serverUrl(opts.url), ...(caller && { token: caller }), ...(opts.json && { json: true }) });
  });

token
  .command('narrow')
  .description('Add caveats to a token offline (no key needed; nobody can remove them again) and print the narrower token.')
  .argument('<token>', 'the token to narrow')
  .argument('<caveats...>', 'caveats such as "tools = ECHO" "uses <= 3" "expires = 2026-12-31T00:00:00Z"')
  .option(
    '--url <url>',
    "record the grant in that server's ledger first, sending <token> as the bearer (also DIRLEDGER_URL); nothing is printed if it cannot be",
  )
  .action(async (text: string, caveats: string[], opts: { url?: string }) => {
    const { Authority } = await import('../auth/authority.ts');
    const { parseCaveat } = await import('../auth/caveats.ts');
    let narrowed: string;
    try {
      for (const caveat of caveats) parseCaveat(caveat);
      narrowed = Authority.narrow(text, caveats);
    } catch (error) {
      process.stderr.write(`dirledger token narrow: ${(error as Error).message}\n`);
      process.exitCode = 2;
      return;
    }
    const url = opts.url ?? process.env.DIRLEDGER_URL;
    if (url) {
      const { recordGrantAt } = await import('./grant.ts');
      const code = await recordGrantAt(url, text, narrowed, 'NARROW');
      if (code !== 0) {
        process.exitCode = code;
        return;
      }
    }
    process.stdout.write(`${narrowed}\n`);
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Another process holds the data folder: said plainly, before anything was written.
  if (!(error instanceof FolderLockedError)) throw error;
  process.stderr.write(`dirledger ${program.args[0] ?? ''}: ${error.message}\n`);
  process.exit(3);
}
