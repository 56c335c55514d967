import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { demoDirectoryDir } from '../../src/services.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { isBackground, recordStatements, type Statement } from '../helpers/sql.ts';
import { databaseKinds } from '../helpers/database.ts';

const SECRET_VALUE = 'sk-live-value-never-rendered';

describe.each(databaseKinds)('the Directory index (%s)', (kind) => {
  let t: TestApp;
  let dir: string;
  const build = () => t.app.services.directory.build();
  const sections = async () => {
    const r = await t.gql(
      `{ directoryIndex { passes sectionBuilds sections { type versionTag builtAt status builds rowCount unknownHeaders errors { section row column message text } refusals { name reason } } } }`,
    );
    expect(r.errors).toBeUndefined();
    return r.data.directoryIndex;
  };
  const section = async (type: string) => (await sections()).sections.find((s: { type: string }) => s.type === type);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-directory-'));
    await cp(demoDirectoryDir, dir, { recursive: true });
    t = await startTestApp(kind, {
      DIRECTORY_DIR: dir,
      DIRECTORY_WATCH_MS: '0',
      RETIRED_HOSTS: 'old.example.com',
      DIRLEDGER_SECRET_OPENWEATHER_KEY: SECRET_VALUE,
    });
  });
  afterAll(async () => {
    await t?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('builds every demo section at start, at least 8 types, with version tags and build times', async () => {
    const index = await sections();
    expect(index.sections.length).toBeGreaterThanOrEqual(8);
    for (const s of index.sections) {
      expect(s.status).toBe('OK');
      expect(s.versionTag).toMatch(/^[0-9a-f]{64}$/);
      expect(s.builtAt).toBeTruthy();
      expect(s.errors).toEqual([]);
    }
    const tool = await t.gql(
      `{ tool(name: "WEATHER_NOW") { name runnable reasons secretNames unboundSecrets section { type versionTag } upstream { shape json } } }`,
    );
    expect(tool.data.tool).toMatchObject({ runnable: true, secretNames: ['OPENWEATHER_KEY'], unboundSecrets: [], section: { type: 'tool' } });
  });

  it('renders every form of every demo tool over GraphQL with secrets as names only', async () => {
    const list = await t.gql(`{ directory(type: "tool", first: 100) { edges { node { name } } } }`);
    const names: string[] = list.data.directory.edges.map((e: { node: { name: string } }) => e.node.name);
    expect(names).toEqual(expect.arrayContaining(['ECHO', 'CLOCK', 'CLOCK_THEN_ECHO', 'MCP_ECHO', 'HTTPBIN_ANYTHING']));
    for (const name of names) {
      const r = await t.gql(`query($n: String!) { tool(name: $n) { contracts { form shape door json text secretNames sha256 } upstream { json } } }`, {
        n: name,
      });
      expect(r.errors).toBeUndefined();
      const forms = r.data.tool.contracts;
      expect(forms.length).toBe(r.data.tool.upstream ? 27 : 26);
      expect(JSON.stringify(r.data)).not.toContain(SECRET_VALUE);
      expect(forms.find((f: { form: string }) => f.form === 'REST').json.url).toBe(`${t.origin}/api/tools/${name}`);
    }
    const weather = await t.gql(`{ tool(name: "WEATHER_NOW") { contracts(forms: [UPSTREAM, CURL]) { form json secretNames } } }`);
    expect(weather.data.tool.contracts[0]).toMatchObject({ form: 'UPSTREAM', secretNames: ['OPENWEATHER_KEY'] });
    expect(JSON.stringify(weather.data.tool.contracts[0].json)).toContain('[OPENWEATHER_KEY]');
  });

  it('pages the directory listing with relay offset cursors, forward only, in section order', async () => {
    const q = `query($after: String) { directory(type: "tool", first: 2, after: $after) { edges { cursor node { name } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    const all = await t.gql(`{ directory(type: "tool", first: 1000) { edges { node { name } } pageInfo { hasNextPage } } }`);
    const expected: string[] = all.data.directory.edges.map((e: { node: { name: string } }) => e.node.name);
    expect(all.data.directory.pageInfo.hasNextPage).toBe(false);
    expect(expected.length).toBeGreaterThan(4);
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 100; page++) {
      const r: { data?: any; errors?: any[] } = await t.gql(q, { after });
      expect(r.errors).toBeUndefined();
      const { edges, pageInfo }: { edges: any[]; pageInfo: any } = r.data.directory;
      seen.push(...edges.map((e: { node: { name: string } }) => e.node.name));
      expect(pageInfo.hasPreviousPage).toBe(after !== null);
      expect(pageInfo.startCursor).toBe(edges[0].cursor);
      expect(pageInfo.endCursor).toBe(edges.at(-1).cursor);
      if (!pageInfo.hasNextPage) break;
      after = pageInfo.endCursor;
    }
    expect(seen).toEqual(expected);

    for (const bad of ['not-a-cursor', Buffer.from('directory:2').toString('base64url'), Buffer.from('OffsetConnection:-3').toString('base64')]) {
      const r = await t.gql(q, { after: bad });
      expect(r.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_INPUT' } });
      expect(r.errors?.[0].message).toContain('Invalid after: expected a cursor returned by directory');
    }
    const last = await t.gql(`{ directory(last: 2) { edges { cursor } } }`);
    expect(last.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_INPUT' } });
    const tooMany = await t.gql(`{ directory(first: 1001) { edges { cursor } } }`);
    expect(tooMany.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_INPUT' } });
  });

  it('appends the three links for a live scoped token, and says which check a token fails', async () => {
    const q = `query($token: String, $forms: [ContractForm!]) { tool(name: "ECHO") { contracts(token: $token, forms: $forms) { form door json text secretNames } } }`;
    const token = t.mint('tools = ECHO', 'uses <= 2');
    const ok = await t.gql(q, { token });
    expect(ok.errors).toBeUndefined();
    const forms = ok.data.tool.contracts;
    expect(forms.map((f: { form: string }) => f.form).slice(-3)).toEqual(['LINK_URL', 'LINK_REST', 'LINK_MCP']);
    expect(forms).toHaveLength(26 + 3);
    expect(forms.at(-3).json).toEqual({ method: 'GET', url: `${t.origin}/api/tools/ECHO?text=hello&token=${token}` });
    for (const f of forms.slice(0, -3)) expect(JSON.stringify(f.json), f.form).not.toContain(token);
    // A doors caveat leaves out the links through other doors; none left is an error naming the limit.
    const urlOnly = await t.gql(q, { token: t.mint('tools = ECHO', 'doors = URL') });
    expect(urlOnly.data.tool.contracts.filter((f: { form: string }) => f.form.startsWith('LINK_')).map((f: { form: string }) => f.form)).toEqual(['LINK_URL']);
    const refused = async (tokenText: string) => (await t.gql(q, { token: tokenText })).errors?.[0];
    expect(await refused('AgEJZGlybGVkZ2VyAnotarealtoken')).toMatchObject({
      message: 'Invalid token: it does not verify at this server. Missing or invalid credential.',
      extensions: { code: 'UNAUTHENTICATED', field: 'token' },
    });
    expect(await refused(t.mint('audience = elsewhere'))).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    expect(await refused(t.mint('expires = 2020-01-01T00:00:00.000Z'))).toMatchObject({
      message: 'The token cannot link "ECHO": This token expired at 2020-01-01T00:00:00.000Z.',
      extensions: { code: 'FORBIDDEN', limit: 'expires' },
    });
    expect(await refused(t.mint('tools = CLOCK'))).toMatchObject({
      message: 'The token cannot link "ECHO": This token may not call "ECHO".',
      extensions: { code: 'FORBIDDEN', limit: 'tools' },
    });
    expect(await refused(t.mint('doors = CLI'))).toMatchObject({
      message: 'The token cannot link "ECHO": This token may not be used through the URL door.',
      extensions: { code: 'FORBIDDEN', limit: 'doors' },
    });
    expect(await refused(t.mint('powers = ingest'))).toMatchObject({ extensions: { code: 'FORBIDDEN', limit: 'power' } });
    const spent = t.mint('tools = ECHO', 'uses <= 1');
    const call = await fetch(`${t.origin}/api/tools/ECHO?text=once&token=${spent}`);
    expect(call.status).toBe(200);
    expect(await refused(spent)).toMatchObject({
      message: 'The token cannot link "ECHO": all 1 of its uses are spent (uses <= 1).',
      extensions: { code: 'FORBIDDEN', limit: 'uses' },
    });
    // A link form asked for without a token is bad input.
    const noToken = await t.gql(q, { forms: ['LINK_URL'] });
    expect(noToken.errors?.[0]).toMatchObject({
      message: 'Invalid forms: LINK_URL need a token (the token argument) to carry',
      extensions: { code: 'BAD_INPUT' },
    });
  });

  it('issueToken answers the links of each tool its tools caveat names exactly', async () => {
    const issued = await t.gql(
      `mutation { issueToken(input: { tools: ["ECHO", "CLOCK", "WEATHER_*", "NO_SUCH_TOOL"], uses: 3, doors: [URL, MCP] }) { token links { form door json } } }`,
    );
    expect(issued.errors).toBeUndefined();
    const { token, links } = issued.data.issueToken;
    expect(
      links.map((l: { form: string; json: { url?: string; server?: string; tool?: string } }) => `${l.form} ${l.json.tool ?? new URL(l.json.url!).pathname}`),
    ).toEqual(['LINK_URL /api/tools/ECHO', 'LINK_MCP ECHO', 'LINK_URL /api/tools/CLOCK', 'LINK_MCP CLOCK']);
    for (const link of links) expect(JSON.stringify(link.json)).toContain(`token=${token}`);
    const none = await t.gql(`mutation { issueToken(input: { tools: ["WEATHER_*"] }) { links { form } } }`);
    expect(none.data.issueToken.links).toEqual([]);
  });

  it('reports an unknown header and never guesses at it', async () => {
    await writeFile(path.join(dir, 'skill.csv'), 'name,description,colour\nsay-it-back,Repeat,red\n');
    expect((await build()).unknownHeaders).toEqual({ skill: ['colour'] });
    const s = await section('skill');
    expect(s).toMatchObject({ status: 'OK', unknownHeaders: ['colour'], rowCount: 1 });
  });

  it('rejects a malformed cell of each shape naming section, row and column, and keeps the previous version live', async () => {
    const before = await section('tool');
    const original = await readFile(path.join(dir, 'tool.csv'), 'utf8');
    const bad: [string, string][] = [
      ['way: http', '{"method":"POST","url":"nowhere"}'],
      ['way: mcp', '{"method":"MCP","server":"http://x/mcp"}'],
      ['way: cli', '{"method":"CLI","command":""}'],
      ['way', '[{"method":"CLI","command":"date"},{"method":"CODE"}]'],
      ['way: code', '{"method":"CODE","language":"js"}'],
    ];
    for (const [column, cell] of bad) {
      await writeFile(path.join(dir, 'tool.csv'), `name,description,${column}\nGOOD,fine,\nBROKEN,bad,"${cell.replace(/"/g, '""')}"\n`);
      await build();
      const s = await section('tool');
      expect(s.status).toBe('STALE');
      expect(s.versionTag).toBe(before.versionTag);
      expect(s.errors[0]).toMatchObject({ section: 'tool', row: 2, column });
      expect(s.errors[0].text).toMatch(/^section tool, row 2, column .*: .*expected/);
      const echo = await t.gql(`{ tool(name: "ECHO") { name section { versionTag } } }`);
      expect(echo.data.tool).toEqual({ name: 'ECHO', section: { versionTag: before.versionTag } });
    }
    await writeFile(path.join(dir, 'tool.csv'), original);
    await build();
    expect(await section('tool')).toMatchObject({ status: 'OK', versionTag: before.versionTag, errors: [] });
  });

  it('rebuilds only the sections whose content changed', async () => {
    const before = await sections();
    const noChange = await build();
    expect(noChange.rebuilt).toEqual([]);
    const after = await sections();
    expect(after.sectionBuilds).toBe(before.sectionBuilds);
    await writeFile(path.join(dir, 'flow.csv'), 'name,description\nmorning-digest,Changed.\n');
    const changed = await build();
    expect(changed.rebuilt).toEqual(['flow']);
    const later = await sections();
    expect(later.sectionBuilds).toBe(before.sectionBuilds + 1);
    for (const s of later.sections) {
      const old = before.sections.find((o: { type: string }) => o.type === s.type);
      if (s.type === 'flow') {
        expect(s.versionTag).not.toBe(old.versionTag);
        expect(s.builds).toBe(old.builds + 1);
      } else expect([s.type, s.versionTag, s.builds]).toEqual([s.type, old.versionTag, old.builds]);
    }
  });

  it('refuses rows that reach the retired build, with the reason', async () => {
    await writeFile(
      path.join(dir, 'webhook.csv'),
      `name,way: cli\nOK_HOOK,"{""method"":""CLI"",""command"":""date""}"\nOLD_HOOK,"{""method"":""CLI"",""command"":""echo ${Buffer.from('curl https://old.example.com/x').toString('base64')} | base64 -d | sh""}"\n`,
    );
    await build();
    const s = await section('webhook');
    expect(s.rowCount).toBe(1);
    expect(s.refusals[0]).toMatchObject({ name: 'OLD_HOOK', reason: expect.stringMatching(/retired build old\.example\.com.*base64/) });
    expect((await t.gql(`{ row(name: "OLD_HOOK") { name } }`)).data.row).toBeNull();
  });

  it('counts projection bytes exactly as the listings return them', async () => {
    for (const type of [null, 'tool']) {
      const stats = await t.gql(
        `query($type: String) { directoryStats(type: $type) { rows namesOnlyBytes withDescriptionsBytes ratio rowsByType { type rows } } }`,
        { type },
      );
      const q = type ? `&type=${type}` : '';
      const names = await fetch(`${t.origin}/api/directory?${q}`, { headers: t.auth }).then((r) => r.arrayBuffer());
      const full = await fetch(`${t.origin}/api/directory?full=1${q}`, { headers: t.auth }).then((r) => r.arrayBuffer());
      const s = stats.data.directoryStats;
      expect(s.namesOnlyBytes).toBe(names.byteLength);
      expect(s.withDescriptionsBytes).toBe(full.byteLength);
      expect(s.rows).toBe(JSON.parse(Buffer.from(names).toString()).length);
      expect(s.ratio).toBeGreaterThan(1);
    }
  });

  it('resolves an event to the exact contract it ran after the row is edited', async () => {
    const tool = await t.gql(`{ tool(name: "HTTPBIN_ANYTHING") { ways { way sha256 json } } }`);
    const way = tool.data.tool.ways[0];
    const appended = await fetch(`${t.origin}/ledger/batches`, {
      method: 'POST',
      headers: { ...t.auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        collector: 'directory-test',
        events: [
          {
            id: 'dir-contract-1',
            kind: 'TOOL_CALL',
            direction: 'OUT',
            actionId: 'a1',
            tool: 'HTTPBIN_ANYTHING',
            occurredAt: '2026-11-30T00:00:00Z',
            contract: { form: way.way, sha256: way.sha256 },
          },
        ],
      }),
    });
    expect(appended.status).toBe(200);
    const file = path.join(dir, 'tool.csv');
    await writeFile(file, (await readFile(file, 'utf8')).replace('https://httpbin.org/anything', 'https://httpbin.org/anything/v2'));
    await build();
    const now = await t.gql(`{ tool(name: "HTTPBIN_ANYTHING") { ways { sha256 } } }`);
    expect(now.data.tool.ways[0].sha256).not.toBe(way.sha256);
    const event = await t.gql(`{ event(id: "dir-contract-1") { tool { name } contract { form sha256 shape json } } }`);
    expect(event.errors).toBeUndefined();
    expect(event.data.event).toEqual({ tool: { name: 'HTTPBIN_ANYTHING' }, contract: { form: way.way, sha256: way.sha256, shape: 'HTTP', json: way.json } });

    const viaGraphql = await t.gql(`mutation($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`, {
      input: {
        collector: 'directory-test',
        events: [
          {
            id: 'dir-contract-2',
            kind: 'TOOL_CALL',
            direction: 'OUT',
            actionId: 'a2',
            tool: 'HTTPBIN_ANYTHING',
            occurredAt: '2026-11-30T00:00:00Z',
            contract: { form: way.way, sha256: way.sha256 },
          },
        ],
      },
    });
    expect(viaGraphql).toEqual({ data: { appendBatch: { inserted: 1 } } });
    const second = await t.gql(`{ event(id: "dir-contract-2") { toolName tool { name } contract { sha256 json } } }`);
    expect(second.data.event).toEqual({ toolName: 'HTTPBIN_ANYTHING', tool: { name: 'HTTPBIN_ANYTHING' }, contract: { sha256: way.sha256, json: way.json } });
  });

  it('lists every event of a tool with a bounded number of SQL statements (no N+1)', async () => {
    const tools = Array.from({ length: 50 }, (_, i) => `LOAD_TOOL_${i}`);
    await writeFile(path.join(dir, 'method.csv'), `name,way: cli\n${tools.map((n) => `${n},"{""method"":""CLI"",""command"":""date""}"`).join('\n')}\n`);
    await build();
    const events = tools.flatMap((tool, i) =>
      Array.from({ length: 21 }, (_, j) => ({
        id: `load-${i}-${j}`,
        kind: 'TOOL_CALL',
        direction: 'OUT',
        actionId: `load-${i}`,
        tool,
        occurredAt: '2026-11-30T00:00:00Z',
      })),
    );
    const appended = await t.gql(`mutation($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`, { input: { collector: 'load', events } });
    expect(appended.data.appendBatch.inserted).toBe(1050);
    const query = `query($names: [String!]!) { tools(names: $names) { name events(first: 20) { edges { node { id payloadState batch { id } } } pageInfo { hasNextPage } } } }`;
    const count = await countStatements(t, () => t.gql(query, { names: tools }));
    expect(count.result.errors).toBeUndefined();
    const found = (count.result.data as { tools: { events: { edges: unknown[]; pageInfo: { hasNextPage: boolean } } }[] }).tools;
    expect(found).toHaveLength(50);
    expect(found.every((d) => d.events.edges.length === 20 && d.events.pageInfo.hasNextPage)).toBe(true);
    const page = `{ directory(type: "method", first: 50) { edges { node { name } } } }`;
    expect((await t.gql(page)).data.directory.edges).toHaveLength(50);
    // One read for the tools, two for all their events, one for the events' batches: not one per tool.
    expect(count.statements).toBeGreaterThan(0);
    expect(count.statements).toBeLessThanOrEqual(6);
    const events50 = await countStatements(t, () => t.gql(`{ event(id: "load-0-0") { action { events { tool { name } contract { sha256 } } } } }`));
    expect(events50.statements).toBeGreaterThan(0);
    expect(events50.statements).toBeLessThanOrEqual(4);
  });
});

/** Counts the SQL statements the app's database runs while `run` is in flight, the ledger's own appends aside. */
async function countStatements<T>(t: TestApp, run: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const statements: Statement[] = [];
  const restore = recordStatements(t.db, statements);
  try {
    return { result: await run(), statements: statements.filter((s) => !isBackground(s)).length };
  } finally {
    restore();
  }
}

describe('the Directory watcher', () => {
  it('rebuilds a section soon after its file changes, and the config refuses a malformed RETIRED_HOSTS', async () => {
    const { parseConfig } = await import('../../src/config.ts');
    expect(() => parseConfig({ RETIRED_HOSTS: 'old.example.com, http://[bad' })).toThrow(/RETIRED_HOSTS: expected comma-separated hosts or URL prefixes/);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-watch-'));
    await writeFile(path.join(dir, 'task.csv'), 'name,description\nfirst,one\n');
    const t = await startTestApp('pglite', { DIRECTORY_DIR: dir, DIRECTORY_WATCH_MS: '30' });
    try {
      const tag = async () => (await t.gql(`{ directoryIndex { sections { type versionTag rowCount } } }`)).data.directoryIndex.sections[0];
      const before = await tag();
      expect(before.rowCount).toBe(1);
      await writeFile(path.join(dir, 'task.csv'), 'name,description\nfirst,one\nsecond,two\n');
      let after = before;
      for (let i = 0; i < 100 && after.rowCount === 1; i++) {
        await new Promise((r) => setTimeout(r, 50));
        after = await tag();
      }
      expect(after.rowCount).toBe(2);
      expect(after.versionTag).not.toBe(before.versionTag);
    } finally {
      await t.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
