// One implementation, every door: the core, GraphQL, HTTP and the CLI give the same answer,
// and the live index follows the Directory's sections and alias file.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolutionJson } from '../../src/doors/resolver-routes.ts';
import { ALIAS_FILE } from '../../src/resolver/aliases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

const toolCsv = [
  'name,description,way: cli,type,kind,id',
  'IMSG_SEND,Send an iMessage from the Mac.,"{""method"":""CLI"",""command"":""imsg send""}",tool,cli,t1',
  'IMSG_LIST_CHATS,List recent iMessage chats.,"{""method"":""CLI"",""command"":""imsg chats""}",tool,cli,t2',
  'IMSG_READ_THREAD,Read one thread.,"{""method"":""CLI"",""command"":""imsg read""}",tool,cli,t3',
  'IMSG_REACT,Add a tapback.,"{""method"":""CLI"",""command"":""imsg react""}",tool,cli,t4',
  'TERMINAL_RUN,Run a command in the terminal.,"{""method"":""CLI"",""command"":""sh -c true""}",tool,cli,t5',
].join('\n');
const credentialCsv = ['name,description,type,kind,id', 'TERMINAL_KEY,The key for the terminal relay.,credential,secret,c1'].join('\n');
const fileCsv = ['name,description,path,type,id', 'tests/ledger_tests.py,Ledger tests.,tests/ledger_tests.py,file,f1'].join('\n');

const gqlQuery = /* GraphQL */ `
  query Resolve($query: String!, $minScore: Int, $limit: Int, $types: [String!]) {
    resolve(query: $query, minScore: $minScore, limit: $limit, types: $types) {
      query
      readAs
      corrections { from to distance }
      matches { row { name type kind id description } score layer reason matchedWords }
      message
    }
  }
`;

const asks: { q: string; minScore?: number; limit?: number; types?: string[] }[] = [
  { q: 'send an imessge' },
  { q: 'where is my terminal key' },
  { q: 'tiktok' },
  { q: 'imsg', limit: 2 },
  { q: 'terminal', types: ['credential'] },
  { q: 'imessage', minScore: 760 },
  { q: 'how do I zqxv' },
];

describe('the resolver doors', () => {
  let app: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'resolver-doors-'));
    await writeFile(path.join(dir, 'tool.csv'), toolCsv);
    await writeFile(path.join(dir, 'credential.csv'), credentialCsv);
    await writeFile(path.join(dir, 'file.csv'), fileCsv);
    await writeFile(path.join(dir, ALIAS_FILE), JSON.stringify({ imessage: ['IMSG_', 'IMESSAGE'] }));
    app = await startTestApp('pglite', { DIRECTORY_DIR: dir, DIRECTORY_WATCH_MS: '0' });
  });
  afterAll(async () => {
    await app?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const viaHttp = async (ask: (typeof asks)[number]) => {
    const url = new URL('/api/directory/resolve', app.origin);
    url.searchParams.set('q', ask.q);
    if (ask.minScore !== undefined) url.searchParams.set('minScore', String(ask.minScore));
    if (ask.limit !== undefined) url.searchParams.set('limit', String(ask.limit));
    if (ask.types) url.searchParams.set('types', ask.types.join(','));
    const response = await fetch(url, { headers: app.auth });
    expect(response.status).toBe(200);
    return response.json();
  };
  const viaGraphql = async (ask: (typeof asks)[number]) => {
    const { data, errors } = await app.gql(gqlQuery, { query: ask.q, minScore: ask.minScore, limit: ask.limit, types: ask.types });
    expect(errors).toBeUndefined();
    return data.resolve;
  };
  /** `dirledger find` as a child process, with the admin token in DIRLEDGER_TOKEN unless env says otherwise (and no token file). */
  const cliFind = (args: string[], env: Record<string, string | undefined> = {}) =>
    run(process.execPath, ['src/cli/main.ts', 'find', ...args], {
      cwd: root,
      env: { ...process.env, DIRLEDGER_TOKEN: app.token, XDG_CONFIG_HOME: dir, ...env },
    });
  const viaCore = (ask: (typeof asks)[number]) => JSON.parse(JSON.stringify(resolutionJson(app.app.services.resolver.resolve(ask.q, ask))));

  it('gives the same answer through the core, GraphQL and HTTP', async () => {
    for (const ask of asks) {
      const core = viaCore(ask);
      expect(await viaHttp(ask)).toEqual(core);
      expect(await viaGraphql(ask)).toEqual(core);
    }
    const imessage = viaCore(asks[0]!);
    expect(imessage.readAs).toEqual(['send', 'imessage']);
    expect(imessage.matches[0]).toMatchObject({ row: { name: 'IMSG_SEND', type: 'tool', kind: 'cli', id: 't1' }, score: 764, layer: 'ALIAS' });
    expect(viaCore(asks[1]!).matches[0]).toMatchObject({ row: { name: 'TERMINAL_KEY', type: 'credential' }, score: 850 });
    expect(viaCore(asks[2]!).matches).toEqual([
      expect.objectContaining({ row: expect.objectContaining({ name: 'tests/ledger_tests.py' }), score: 200, layer: 'SOUNDS_LIKE' }),
    ]);
    expect(viaCore(asks[6]!).message).toBe('Nothing in the Directory is called, or means, "how do I zqxv". Every row is listed at GET /api/directory');
  });

  it("returns the Directory's own row type, with its section and Tool fields", async () => {
    const { data, errors } = await app.gql(/* GraphQL */ `
      query ResolveRows {
        resolve(query: "send an imessge", limit: 1) {
          matches {
            score
            row {
              __typename
              name
              section { type versionTag }
              ... on Tool { runnable contracts(forms: [REST]) { form } }
            }
          }
        }
      }
    `);
    expect(errors).toBeUndefined();
    const row = data.resolve.matches[0].row;
    expect(row).toMatchObject({ __typename: 'Tool', name: 'IMSG_SEND', section: { type: 'tool' } });
    expect(row.section.versionTag).toMatch(/^[0-9a-f]{64}$/);
    expect(row.contracts.map((c: { form: string }) => c.form)).toEqual(['REST']);
  });

  it('gives the same answer through the CLI', async () => {
    for (const ask of [asks[0]!, asks[4]!]) {
      const args = [...ask.q.split(' '), '--url', app.origin, '--json'];
      if (ask.types) args.push('--types', ask.types.join(','));
      const { stdout } = await cliFind(args);
      expect(JSON.parse(stdout)).toEqual(viaCore(ask));
    }
    const { stdout } = await cliFind(['where', 'is', 'my', 'terminal', 'key', '--url', app.origin, '--token', app.token], { DIRLEDGER_TOKEN: undefined });
    expect(stdout).toContain('read as: terminal key');
    expect(stdout).toContain(' 850  TERMINAL_KEY (credential)  EXACT_WORDS: the row is named exactly the words of the query');
  });

  it('refuses bad input on every door with BAD_INPUT', async () => {
    const http = await fetch(new URL('/api/directory/resolve?q=imsg&limit=0', app.origin), { headers: app.auth });
    expect(http.status).toBe(400);
    expect((await http.json()).error).toMatchObject({ code: 'BAD_INPUT', message: 'limit: expected an integer from 1 to 100, got 0.' });
    const noQuery = await fetch(new URL('/api/directory/resolve?limit=3', app.origin), { headers: app.auth });
    expect(noQuery.status).toBe(400);
    expect((await noQuery.json()).error.code).toBe('BAD_INPUT');
    const unknown = await fetch(new URL('/api/directory/resolve?q=imsg&top=3', app.origin), { headers: app.auth });
    expect(unknown.status).toBe(400);
    const { errors } = await app.gql(gqlQuery, { query: '   ' });
    expect(errors?.[0]).toMatchObject({ message: 'query: expected some words, got nothing.', extensions: { code: 'BAD_INPUT' } });
    const cli = await cliFind(['imsg', '--limit', '0', '--url', app.origin]).catch((e) => e);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('BAD_INPUT: limit: expected an integer from 1 to 100, got 0.');
  });

  it('the CLI without a token is refused: the plain message, where a token is read from, exit 4, and the refusal recorded', async () => {
    const cli = await cliFind(['imsg', '--url', app.origin], { DIRLEDGER_TOKEN: undefined }).catch((e) => e);
    expect(cli.code).toBe(4);
    expect(cli.stderr).toContain('UNAUTHENTICATED: Missing or invalid credential. No token was sent: pass --token, set DIRLEDGER_TOKEN');
    expect(cli.stdout).toBe('');
    await app.app.services.writer.flush();
    const refusals = await app.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' } });
    expect(refusals.some((r) => (r.metadata as { door?: string; limit?: string }).door === 'REST' && r.url?.includes('/api/directory/resolve?q=imsg'))).toBe(
      true,
    );
  });

  it('follows the Directory: a changed section or alias file is picked up without blocking a query', async () => {
    const resolver = app.app.services.resolver;
    const before = resolver.service.current.version;
    await writeFile(path.join(dir, 'credential.csv'), `${credentialCsv}\nBLOOIO_API_KEY,Key for the Blooio line.,credential,secret,c2`);
    await writeFile(path.join(dir, ALIAS_FILE), JSON.stringify({ imessage: ['IMSG_', 'BLOOIO'] }));
    await app.app.services.directory.build();
    // The first query after the build still answers from the previous version, and schedules the rebuild.
    expect(resolver.resolve('key for the blooio line').matches).toEqual([]);
    await resolver.sync();
    expect(resolver.service.current.version).not.toBe(before);
    expect(resolver.resolve('key for the blooio line').matches[0]).toMatchObject({ score: 700, row: { name: 'BLOOIO_API_KEY' } });
    expect(resolver.resolve('imessage', { types: ['credential'] }).matches[0]).toMatchObject({ layer: 'ALIAS', row: { name: 'BLOOIO_API_KEY' } });
    const builds = resolver.service.builds;
    await app.app.services.directory.build();
    await resolver.sync();
    expect(resolver.service.builds).toBe(builds); // nothing changed: no rebuild
  });
});
