// The dirledger CLI. Each command is a thin door over the same cores the server uses.
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, parseConfig } from '../config.ts';
import { resolveToken, tokenHelp } from './token.ts';

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

function port(value: string): string {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError(`expected a port from 0 to 65535, got ${JSON.stringify(value)}`);
  return value;
}

export const program = new Command()
  .name('dirledger')
  .description('The Directory (what could be done) and the Ledger (what was done).')
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

const serverUrl = (url?: string) => url ?? process.env.DIRLEDGER_URL ?? `http://127.0.0.1:${process.env.PORT || 4000}`;

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
  .addHelpText('after', `\n${tokenHelp}\nExit codes: 0 OK or DRY_RUN, 1 the call failed or was refused, 2 bad input, 3 server unreachable or failing, 4 refused for its credential (none, invalid, its limits, its rate).`)
  .action(async (name: string, opts: { args?: string; dryRun?: boolean; url?: string; server?: string; token?: string; form?: string }) => {
    const { call } = await import('./call.ts');
    const token = resolveToken(opts.token);
    process.exitCode = await call(name, { ...opts, url: serverUrl(opts.url ?? opts.server), ...(token && { token }) });
  });

program
  .command('mcp')
  .description(
    'Serve MCP over stdio. With --url (or DIRLEDGER_URL) it relays every message to that server\'s /mcp; otherwise it runs the cores in this process on the configured database (DATABASE_URL, else PGlite in DATA_DIR).',
  )
  .option('--url <url>', 'relay to this running server (default DIRLEDGER_URL; unset: in process)')
  .option('--token <token>', 'relay: sent to /mcp as authorization: Bearer <token>; in process: checked for door MCP_STDIO')
  .addHelpText('after', `\n${tokenHelp}`)
  .action(async (opts: { url?: string; token?: string }) => {
    const url = opts.url ?? process.env.DIRLEDGER_URL;
    const token = resolveToken(opts.token);
    if (url) {
      const { proxyStdio } = await import('../mcp/stdio.ts');
      await proxyStdio(url, token);
    } else {
      const { serveStdio } = await import('../mcp/stdio.ts');
      await serveStdio(config(), token);
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
  .action(async (opts: { tool?: string[]; kind?: string[]; session?: string[]; after?: string; url?: string; json?: boolean; limit?: string; token?: string }) => {
    const { tail } = await import('./tail.ts');
    const url = serverUrl(opts.url);
    const token = resolveToken(opts.token);
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    process.exitCode = await tail({ ...opts, url, ...(token && { token }), limit: opts.limit === undefined ? undefined : Number(opts.limit) }, process.stdout, process.stderr, stop.signal);
  });

const token = program.command('token').description('Tokens: mint an admin token from the root key, read or narrow any token offline.');

token
  .command('admin')
  .description('Print a new admin token, signed with the root key (DIRLEDGER_ROOT_KEY secret, else DATA_DIR/root.key, created if missing).')
  .action(async () => {
    const { withRootKey } = await import('../auth/root-key.ts');
    const { mintWithRootKey } = await import('../auth/authority.ts');
    process.stdout.write(`${mintWithRootKey(withRootKey(config()).rootKey)}\n`);
  });

token
  .command('inspect')
  .description("List a token's limits in words (anyone holding it can read them; nothing is verified).")
  .argument('<token>', 'the token')
  .option('--json', 'print {tokenId, caveats, limits} as JSON')
  .action(async (text: string, opts: { json?: boolean }) => {
    const { inspect } = await import('../auth/authority.ts');
    try {
      const read = inspect(text);
      process.stdout.write(opts.json ? `${JSON.stringify(read)}\n` : `token ${read.tokenId ?? '(not a dirledger token id)'}\n${read.limits.map((l) => `  ${l}`).join('\n')}\n`);
    } catch (error) {
      process.stderr.write(`dirledger token inspect: ${(error as Error).message}\n`);
      process.exitCode = 2;
    }
  });

token
  .command('revoke')
  .description('Revoke a token, and every token narrowed or issued from it, on a running server (the caller\'s token needs the revoke power). Recorded as a REVOCATION ledger event.')
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
  .action(async (text: string, caveats: string[]) => {
    const { Authority } = await import('../auth/authority.ts');
    const { parseCaveat } = await import('../auth/caveats.ts');
    try {
      for (const caveat of caveats) parseCaveat(caveat);
      process.stdout.write(`${Authority.narrow(text, caveats)}\n`);
    } catch (error) {
      process.stderr.write(`dirledger token narrow: ${(error as Error).message}\n`);
      process.exitCode = 2;
    }
  });

await program.parseAsync(process.argv);
