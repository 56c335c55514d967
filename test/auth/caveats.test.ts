// Every caveat kind, through Authority: each one allows what it names and refuses the rest,
// several of one kind all apply, issued tokens are never wider than their issuer, and use counts
// are exact under concurrency on the real database.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Authority } from '../../src/auth/authority.ts';
import type { Grant } from '../../src/auth/verdict.ts';
import { describeLimits, inspect } from '../../src/auth/tokens.ts';
import { callAuthorizer } from '../../src/auth/calls.ts';
import { TokenDoors, type Door } from '../../src/context/door.ts';
import { MalformedToken, mint, serialize } from '../../src/auth/macaroon.ts';
import { currentInvocation, runInInvocation } from '../../src/context/request.ts';
import type { SqlExecutor } from '../../src/db/sql.ts';
import type { EventInput } from '../../src/ledger/input.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/database.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

/** For the caveats that never touch the database; uses run on a real one below. */
const noDatabase: SqlExecutor = {
  query: () => Promise.reject(new Error('this check must not query the database')),
  transaction: () => Promise.reject(new Error('this check must not query the database')),
};

const rootKey = randomBytes(32);
const today = new Date('2026-12-15T12:00:00.000Z');
let clock = today;
afterEach(() => {
  clock = today;
});
const recorded: EventInput[] = [];
const authorityOn = (sql: SqlExecutor) =>
  new Authority({ rootKey, audience: 'dirledger', sql, record: (event) => void recorded.push(event), ratePerSecond: 0, rateBurst: 1, now: () => clock });
const authority = authorityOn(noDatabase);

function grantOf(token: string, door: Door = 'REST', by = authority): Grant {
  const checked = by.authenticate(token, door);
  if (!checked.ok) throw new Error(`expected the token to be admitted at ${door}: ${checked.refusal.reason}`);
  return checked.grant;
}
const refusalAt = (token: string, door: Door = 'REST') => {
  const checked = authority.authenticate(token, door);
  return checked.ok ? null : checked.refusal;
};
const PLAIN = refusalAt('')!.message;
const toolRefusal = (grant: Grant, tool: string) => authority.allowsTool(grant, 'REST', tool);

describe('tools', () => {
  it('allows the names and prefixes it lists, and refuses every other tool naming the caveat', () => {
    const grant = grantOf(authority.mintToken(['tools = ECHO,WEATHER_*']));
    for (const tool of ['ECHO', 'WEATHER_NOW', 'WEATHER_']) expect(toolRefusal(grant, tool), tool).toBeNull();
    for (const tool of ['OTHER', 'ECHO2', 'ECH', 'echo', 'WEATHER', 'XWEATHER_NOW']) {
      expect(toolRefusal(grant, tool), tool).toMatchObject({ limit: 'tools', caveat: 'tools = ECHO,WEATHER_*', status: 403, tool, door: 'REST' });
    }
    expect(toolRefusal(grant, 'OTHER')!.message).toContain('"OTHER"');
  });

  it('a lone * allows every tool', () => {
    const grant = grantOf(authority.mintToken(['tools = *']));
    for (const tool of ['ECHO', 'ANYTHING', 'docs/readme.md']) expect(toolRefusal(grant, tool)).toBeNull();
  });

  it('several tools caveats all apply: only what every one allows', () => {
    const grant = grantOf(authority.mintToken(['tools = ECHO,WEATHER_*', 'tools = WEATHER_NOW,ECHO_*']));
    expect(toolRefusal(grant, 'WEATHER_NOW')).toBeNull();
    expect(toolRefusal(grant, 'ECHO')!.caveat).toBe('tools = WEATHER_NOW,ECHO_*');
    expect(toolRefusal(grant, 'WEATHER_DAY')!.caveat).toBe('tools = WEATHER_NOW,ECHO_*');
    expect(toolRefusal(grant, 'ECHO_LOUD')!.caveat).toBe('tools = ECHO,WEATHER_*');
  });
});

describe('doors', () => {
  it('admits the listed doors and refuses the others, naming the door', () => {
    const token = authority.mintToken(['doors = REST,MCP']);
    expect(grantOf(token, 'REST').texts).toEqual(['doors = REST,MCP']);
    grantOf(token, 'MCP');
    for (const door of TokenDoors.filter((d) => d !== 'REST' && d !== 'MCP')) {
      expect(refusalAt(token, door), door).toMatchObject({ limit: 'doors', caveat: 'doors = REST,MCP', status: 403, door });
    }
    expect(refusalAt(token, 'DISPATCH')!.message).toContain('DISPATCH');
  });

  it('several doors caveats all apply', () => {
    const token = authority.mintToken(['doors = REST,MCP', 'doors = MCP,SSE']);
    expect(TokenDoors.filter((door) => authority.authenticate(token, door).ok)).toEqual(['MCP']);
    expect(refusalAt(token, 'SSE')!.caveat).toBe('doors = REST,MCP');
    expect(refusalAt(token, 'REST')!.caveat).toBe('doors = MCP,SSE');
  });
});

describe('time: not_before and expires (injected clock)', () => {
  const from = '2026-12-01T00:00:00.000Z';
  const until = '2026-12-31T00:00:00.000Z';
  const token = authority.mintToken([`not_before = ${from}`, `expires = ${until}`]);
  const at = (iso: string) => {
    clock = new Date(iso);
    return refusalAt(token);
  };

  it('refuses before not_before, admits inside the window, refuses from the expiry on', () => {
    expect(at('2026-11-30T23:59:59.999Z')).toMatchObject({ limit: 'not_before', caveat: `not_before = ${from}`, status: 403 });
    expect(at(from)).toBeNull();
    expect(at('2026-12-30T23:59:59.999Z')).toBeNull();
    expect(at(until)).toMatchObject({ limit: 'expires', caveat: `expires = ${until}`, status: 403, message: `This token expired at ${until}.` });
    expect(at('2030-01-01T00:00:00.000Z')!.limit).toBe('expires');
  });

  it('several of each: the latest not_before and the earliest expiry apply', () => {
    const both = authority.mintToken([
      'not_before = 2026-12-01T00:00:00.000Z',
      'not_before = 2026-12-05T00:00:00.000Z',
      'expires = 2026-12-31T00:00:00.000Z',
      'expires = 2026-12-20T00:00:00.000Z',
    ]);
    const check = (iso: string) => {
      clock = new Date(iso);
      return refusalAt(both);
    };
    expect(check('2026-12-03T00:00:00.000Z')!.caveat).toBe('not_before = 2026-12-05T00:00:00.000Z');
    expect(check('2026-12-10T00:00:00.000Z')).toBeNull();
    expect(check('2026-12-25T00:00:00.000Z')!.caveat).toBe('expires = 2026-12-20T00:00:00.000Z');
  });
});

describe('task and agent', () => {
  it('bind the grant, and win over what the request claims', () => {
    const grant = grantOf(authority.mintToken(['task = T-17', 'agent = planner']));
    expect(grant).toMatchObject({ task: 'T-17', agent: 'planner' });
    const seen = runInInvocation({ door: 'REST', grant, task: 'T-other', agent: 'impostor' }, () => currentInvocation());
    expect(seen).toMatchObject({ task: 'T-17', agent: 'planner', caller: grant.caller });
    expect(grantOf(authority.mintToken()).task).toBeUndefined();
  });

  it('the same task or agent twice is fine; two different ones make the token unusable', () => {
    expect(grantOf(authority.mintToken(['task = T-1', 'task = T-1'])).task).toBe('T-1');
    expect(refusalAt(authority.mintToken(['task = T-1', 'task = T-2']))).toMatchObject({ limit: 'task', caveat: 'task = T-2', status: 403 });
    expect(refusalAt(authority.mintToken(['agent = a', 'agent = b']))).toMatchObject({ limit: 'agent', caveat: 'agent = b', status: 403 });
  });
});

describe('folders', () => {
  const grant = grantOf(authority.mintToken(['folders = docs/,src/lib,/srv/data']));
  const at = (...paths: string[]) =>
    authority.allowsPaths(
      grant,
      'REST',
      'FILES',
      paths.map((path) => ({ where: 'argument path', path })),
    );

  it('allows paths inside the folders', () => {
    for (const path of ['docs/a.md', 'docs/sub/b.md', 'src/lib', 'src/lib/x.ts', './docs/a.md', 'docs/./a.md', 'docs/x/../a.md', '/srv/data/file'])
      expect(at(path), path).toBeNull();
  });

  it('refuses paths outside, `..` escapes included, naming the caveat and the path', () => {
    for (const path of [
      'src/other.ts',
      'src/library/x',
      'docsx/a',
      'docs/../secret',
      '../docs/a.md',
      'docs/../../etc/passwd',
      '..',
      '/etc/passwd',
      '/srv/data/../etc',
      'docs\\..\\..\\x',
      'docs/a\0.md',
      '',
    ]) {
      expect(at(path), JSON.stringify(path)).toMatchObject({ limit: 'folders', caveat: 'folders = docs/,src/lib,/srv/data', status: 403 });
    }
    expect(at('docs/a.md', 'src/x')!.reason).toContain('"src/x"');
  });

  it('a folder that climbs out cannot be signed, and a token narrowed with one is refused plainly', () => {
    expect(() => authority.mintToken(['folders = ../up'])).toThrow(/climb out/);
    const narrowed = Authority.narrow(authority.mintToken(), ['folders = docs/../../up']);
    expect(refusalAt(narrowed)).toMatchObject({ limit: 'credential', status: 401, message: PLAIN });
  });

  it('several folders caveats all apply', () => {
    const narrow = grantOf(authority.mintToken(['folders = docs/,src/', 'folders = docs/api/']));
    const check = (path: string) => authority.allowsPaths(narrow, 'REST', 'FILES', [{ where: 'argument path', path }]);
    expect(check('docs/api/x.md')).toBeNull();
    expect(check('docs/x.md')!.caveat).toBe('folders = docs/api/');
    expect(check('src/a.ts')!.caveat).toBe('folders = docs/api/');
  });

  it('the runner hook checks a file row by its path and path arguments, before any use is spent', async () => {
    const hook = callAuthorizer(authority);
    const inside = (call: Parameters<typeof hook.call>[0]) => runInInvocation({ door: 'REST', grant }, () => hook.call(call));
    const base = { rowType: 'tool', args: {}, argsSchema: {}, dryRun: false };
    expect(await inside({ ...base, tool: 'docs/readme.md', rowType: 'file' })).toBeNull();
    expect(await inside({ ...base, tool: 'secrets/key.pem', rowType: 'file' })).toMatchObject({
      limit: 'folders',
      reason: expect.stringContaining('the file row'),
    });
    expect(await inside({ ...base, tool: 'docs/../../etc/passwd', rowType: 'file' })).toMatchObject({ limit: 'folders' });
    expect(await inside({ ...base, tool: 'READ', args: { path: 'docs/a.md', files: ['src/lib/x.ts'] } })).toBeNull();
    expect(await inside({ ...base, tool: 'READ', args: { files: ['docs/a.md', '../../etc/passwd'] } })).toMatchObject({
      limit: 'folders',
      reason: expect.stringContaining('argument files'),
    });
    const schema = { type: 'object', properties: { target: { type: 'string', format: 'path' } } };
    expect(await inside({ ...base, tool: 'READ', args: { target: '/etc/shadow' }, argsSchema: schema })).toMatchObject({
      limit: 'folders',
      reason: expect.stringContaining('argument target'),
    });
    expect(await inside({ ...base, tool: 'READ', args: { note: '/etc/shadow' } })).toBeNull();
  });
});

describe('audience', () => {
  it('admits a token for this server; a token for another is a plain refusal', () => {
    grantOf(authority.mintToken(['audience = dirledger']));
    for (const caveats of [['audience = elsewhere'], ['audience = dirledger', 'audience = elsewhere']]) {
      const refusal = refusalAt(authority.mintToken(caveats))!;
      expect(refusal).toMatchObject({ limit: 'credential', status: 401, message: PLAIN });
      expect(refusal.caveat).toBeUndefined();
      expect(refusal.reason).toContain('elsewhere');
    }
  });
});

describe('read', () => {
  const limitOf = (...caveats: string[]) => authority.readLimit(grantOf(authority.mintToken(caveats)));

  it('none < task < all, and a later caveat never widens', () => {
    expect(limitOf()).toEqual({ kind: 'all' });
    expect(limitOf('read = all')).toEqual({ kind: 'all' });
    expect(limitOf('read = none')).toEqual({ kind: 'none' });
    expect(limitOf('task = T-9', 'read = task')).toEqual({ kind: 'task', task: 'T-9' });
    expect(limitOf('read = all', 'task = T-9', 'read = task')).toEqual({ kind: 'task', task: 'T-9' });
    expect(limitOf('task = T-9', 'read = task', 'read = all')).toEqual({ kind: 'task', task: 'T-9' });
    expect(limitOf('read = none', 'read = all')).toEqual({ kind: 'none' });
    expect(limitOf('task = T-9', 'read = task', 'read = none')).toEqual({ kind: 'none' });
  });

  it('read = task without a task caveat reads nothing', () => {
    expect(limitOf('read = task')).toEqual({ kind: 'none' });
    expect(grantOf(authority.mintToken(['read = task'])).read).toBe('none');
  });
});

describe('powers', () => {
  const grantWith = (...caveats: string[]) => grantOf(authority.mintToken(caveats));

  it('absent: every power; listed: only those, each refusal naming the power caveat', () => {
    const all = grantWith();
    for (const power of ['call', 'ingest', 'issue'] as const) expect(authority.requirePower(all, power, 'REST')).toBeNull();
    const caller = grantWith('powers = call');
    expect(toolRefusal(caller, 'ECHO')).toBeNull();
    expect(authority.requirePower(caller, 'ingest', 'INGEST')).toMatchObject({
      limit: 'power',
      caveat: 'powers = call',
      status: 403,
      message: 'This token may not append ledger batches.',
    });
    expect(authority.requirePower(caller, 'issue', 'GRAPHQL')!.limit).toBe('power');
    const ingester = grantWith('powers = ingest');
    expect(toolRefusal(ingester, 'ECHO')).toMatchObject({ limit: 'power', caveat: 'powers = ingest', tool: 'ECHO' });
    expect(authority.requirePower(ingester, 'ingest', 'INGEST')).toBeNull();
  });

  it('several powers caveats all apply', () => {
    const grant = grantWith('powers = call,ingest', 'powers = ingest,issue');
    expect([...grant.powers]).toEqual(['ingest']);
    expect(authority.requirePower(grant, 'call', 'REST')!.caveat).toBe('powers = ingest,issue');
    expect(authority.requirePower(grant, 'issue', 'REST')!.limit).toBe('power');
  });
});

describe('unknown caveats and admin tokens', () => {
  it('a caveat this server cannot check refuses the token plainly', () => {
    for (const caveat of ['colour = blue', 'uses = 5', 'uses <= -1', 'doors = NOWHERE', 'expires = tomorrow', 'tools = A B']) {
      expect(refusalAt(Authority.narrow(authority.mintToken(), [caveat])), caveat).toMatchObject({ limit: 'credential', status: 401, message: PLAIN });
    }
  });

  it('a token without caveats is admin, and says so', () => {
    const grant = grantOf(authority.mintToken());
    expect(grant).toMatchObject({ admin: true, read: 'all', caveats: [], counters: [] });
    expect(describeLimits(grant.texts)).toEqual(['No limits: an admin token.']);
    expect(grantOf(authority.mintToken(['read = all'])).admin).toBe(false);
  });
});

describe('issue()', () => {
  const expires = '2030-01-01T00:00:00.000Z';

  it('an admin token issues exactly the caveats asked, in canonical form', () => {
    const admin = grantOf(authority.mintToken());
    const issued = authority.issue(admin, 'GRAPHQL', {
      tools: ['ECHO', 'WEATHER_*'],
      doors: ['REST'],
      uses: 3,
      expires,
      task: 'T-1',
      read: 'task',
      powers: ['call'],
    });
    if (!issued.ok) throw new Error(JSON.stringify(issued));
    const caveats = ['tools = ECHO,WEATHER_*', 'doors = REST', 'uses <= 3', `expires = ${expires}`, 'task = T-1', 'read = task', 'powers = call'];
    expect(inspect(issued.token).caveats).toEqual(caveats);
    expect(issued.limits).toEqual(describeLimits(caveats));
    expect(grantOf(issued.token).texts).toEqual(caveats);
    const empty = authority.issue(admin, 'GRAPHQL', {});
    expect(empty.ok && inspect(empty.token).caveats).toEqual([]);
  });

  it("an issuing token's new token inherits its limits (not its powers or uses) and is never wider", () => {
    const issuerCaveats = [
      'tools = ECHO,WEATHER_*',
      'doors = REST,MCP',
      'uses <= 5',
      'powers = issue,call',
      'task = T-1',
      'read = task',
      'folders = docs/',
      'expires = 2026-12-31T00:00:00.000Z',
    ];
    const issuer = grantOf(authority.mintToken(issuerCaveats));
    const issued = authority.issue(issuer, 'REST', { tools: ['*'], doors: ['REST', 'DISPATCH'], expires, read: 'all', folders: ['/'] });
    if (!issued.ok) throw new Error(JSON.stringify(issued));
    const texts = inspect(issued.token).caveats;
    expect(texts).toEqual([
      ...issuerCaveats.filter((c) => !c.startsWith('uses') && !c.startsWith('powers')),
      'tools = *',
      'doors = REST,DISPATCH',
      `expires = ${expires}`,
      'folders = /',
      'read = all',
    ]);

    const child = grantOf(issued.token);
    expect(child.counters).toEqual([]);
    expect(child.powers.has('issue')).toBe(true);
    // Never wider than the issuer: tools, doors, folders, reads, time.
    expect(toolRefusal(child, 'ECHO')).toBeNull();
    for (const tool of ['OTHER', 'ECHO_X', 'WEATHER']) {
      expect(toolRefusal(issuer, tool), tool).not.toBeNull();
      expect(toolRefusal(child, tool), tool).toMatchObject({ caveat: 'tools = ECHO,WEATHER_*' });
    }
    for (const door of TokenDoors) {
      if (!authority.authenticate(authority.mintToken(issuerCaveats), door).ok) expect(refusalAt(issued.token, door), door).not.toBeNull();
    }
    expect(refusalAt(issued.token, 'DISPATCH')!.caveat).toBe('doors = REST,MCP');
    expect(authority.allowsPaths(child, 'REST', 'F', [{ where: 'argument path', path: '/etc/passwd' }])!.caveat).toBe('folders = docs/');
    expect(authority.readLimit(child)).toEqual({ kind: 'task', task: 'T-1' });
    clock = new Date('2026-12-31T00:00:00.000Z');
    expect(refusalAt(issued.token)!.caveat).toBe('expires = 2026-12-31T00:00:00.000Z');
  });

  it('asking for another task than the issuer has yields a token that can never be used', () => {
    const issuer = grantOf(authority.mintToken(['task = T-1']));
    const issued = authority.issue(issuer, 'REST', { task: 'T-2' });
    expect(issued.ok && refusalAt(issued.token)).toMatchObject({ limit: 'task', caveat: 'task = T-2' });
  });

  it('refuses a token without the issue power, and invalid caveats with a message', () => {
    const caller = grantOf(authority.mintToken(['powers = call']));
    expect(authority.issue(caller, 'REST', { tools: ['ECHO'] })).toMatchObject({ ok: false, refusal: { limit: 'power', caveat: 'powers = call' } });
    const admin = grantOf(authority.mintToken());
    for (const input of [
      { tools: [] },
      { bogus: 1 },
      { uses: 0 },
      { doors: ['NOWHERE'] },
      { expires: 'never' },
      { folders: ['../x'] },
      { tools: ['A B'] },
      'tools = *',
    ]) {
      const out = authority.issue(admin, 'REST', input);
      expect(out.ok, JSON.stringify(input)).toBe(false);
      expect('invalid' in out && out.invalid, JSON.stringify(input)).toMatch(/^Invalid caveats/);
    }
  });
});

describe('inspect() and describeLimits()', () => {
  it('lists the token id and each limit in words, without the key', () => {
    const token = authority.mintToken([
      'tools = ECHO,WEATHER_*',
      'doors = REST',
      'uses <= 5',
      'uses <= 1',
      'not_before = 2026-12-01T00:00:00.000Z',
      'expires = 2026-12-31T00:00:00.000Z',
      'task = T-1',
      'agent = planner',
      'folders = docs/',
      'audience = dirledger',
      'read = task',
      'powers = call,issue',
    ]);
    const seen = inspect(token);
    expect(seen.tokenId).toBe(grantOf(token).tokenId);
    expect(seen.limits).toEqual([
      'Only the tool ECHO, and tools whose name starts with WEATHER_.',
      'Only through the door REST.',
      'At most 5 calls, counted across every token narrowed from this one.',
      'At most 1 call, counted across every token narrowed from this one.',
      'Not before 2026-12-01T00:00:00.000Z.',
      'Expires at 2026-12-31T00:00:00.000Z.',
      'Every call is filed under task T-1.',
      'Every call is recorded as agent planner.',
      'Files only inside docs/.',
      'Only at the server called dirledger.',
      "Reads only its own task's events.",
      'May only call tools, issue tokens.',
    ]);
    expect(inspect(authority.mintToken()).limits).toEqual(['No limits: an admin token.']);
    expect(describeLimits(['colour = blue'])[0]).toMatch(/cannot check.*refused/);
    expect(inspect(serialize(mint(rootKey, 'elsewhere', 'foreign-id', ['tools = X']))).tokenId).toBeNull();
    expect(() => inspect('not a token')).toThrow(MalformedToken);
  });
});

describe.each(databaseKinds)('uses, counted in the database on %s', (kind) => {
  let db: TestDatabase;
  let counting: Authority;
  let sql: RawSql;
  beforeAll(async () => {
    db = await createTestDatabase(kind, { poolSize: 10 });
    counting = authorityOn(db.sql);
    sql = await rawSql(db);
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });
  const grant = (token: string) => grantOf(token, 'REST', counting);
  const spend = (g: Grant) => counting.consumeUse(g, 'REST', 'ECHO');

  it('allows exactly max uses, then refuses naming the caveat', async () => {
    const g = grant(counting.mintToken(['uses <= 3']));
    for (let i = 0; i < 3; i++) expect(await spend(g)).toBeNull();
    expect(await spend(g)).toMatchObject({ limit: 'uses', caveat: 'uses <= 3', status: 403, tool: 'ECHO', message: "This token's 3 uses are spent." });
    expect(await counting.usesOf(g)).toEqual([{ caveat: 'uses <= 3', used: 3, max: 3 }]);
    // The counter survives a new presentation of the same token.
    expect((await spend(grant(serialize(g.token!))))!.limit).toBe('uses');
  });

  it('a token without a uses caveat spends nothing and writes no row', async () => {
    const g = grant(counting.mintToken(['tools = ECHO']));
    for (let i = 0; i < 3; i++) expect(await spend(g)).toBeNull();
    expect(await counting.usesOf(g)).toEqual([]);
    expect(await sql.query(`SELECT 1 FROM token_uses WHERE token_id = $1`, [g.tokenId])).toEqual([]);
  });

  it('several uses caveats on one token all apply', async () => {
    const g = grant(counting.mintToken(['uses <= 5', 'uses <= 2']));
    expect(await spend(g)).toBeNull();
    expect(await spend(g)).toBeNull();
    expect((await spend(g))!.caveat).toBe('uses <= 2');
    expect(await counting.usesOf(g)).toEqual([
      { caveat: 'uses <= 5', used: 2, max: 5 },
      { caveat: 'uses <= 2', used: 2, max: 2 },
    ]);
  });

  it('a 5-use token consumed by 20 concurrent calls succeeds exactly 5 times', async () => {
    const g = grant(counting.mintToken(['uses <= 5']));
    const results = await Promise.all(Array.from({ length: 20 }, () => spend(g)));
    expect(results.filter((r) => r === null)).toHaveLength(5);
    expect(results.filter((r) => r?.limit === 'uses')).toHaveLength(15);
    expect(await counting.usesOf(g)).toEqual([{ caveat: 'uses <= 5', used: 5, max: 5 }]);
  });

  it('a narrowed token with uses <= 2 under a parent with uses <= 5 spends both counters, all or none', async () => {
    const parentText = counting.mintToken(['tools = ECHO', 'uses <= 5']);
    const parent = grant(parentText);
    const child = grant(Authority.narrow(parentText, ['agent = first', 'uses <= 2']));
    expect(await spend(child)).toBeNull();
    expect(await spend(child)).toBeNull();
    expect(await spend(child)).toMatchObject({ limit: 'uses', caveat: 'uses <= 2' });
    expect(await counting.usesOf(child)).toEqual([
      { caveat: 'uses <= 5', used: 2, max: 5 },
      { caveat: 'uses <= 2', used: 2, max: 2 },
    ]);
    expect(await counting.usesOf(parent)).toEqual([{ caveat: 'uses <= 5', used: 2, max: 5 }]);
    for (let i = 0; i < 3; i++) expect(await spend(parent)).toBeNull();
    expect((await spend(parent))!.caveat).toBe('uses <= 5');
    // A second child with uses left of its own is refused by the spent parent, and spends nothing.
    const second = grant(Authority.narrow(parentText, ['agent = second', 'uses <= 2']));
    expect(await spend(second)).toMatchObject({ limit: 'uses', caveat: 'uses <= 5' });
    expect(await counting.usesOf(second)).toEqual([
      { caveat: 'uses <= 5', used: 5, max: 5 },
      { caveat: 'uses <= 2', used: 0, max: 2 },
    ]);
  });

  it('ten narrowed tokens spending concurrently under one 5-use parent succeed exactly 5 times in all', async () => {
    const parentText = counting.mintToken(['uses <= 5']);
    const children = Array.from({ length: 10 }, (_, i) => grant(Authority.narrow(parentText, [`agent = c${i}`, 'uses <= 2'])));
    const results = await Promise.all(children.flatMap((child) => Array.from({ length: 4 }, () => spend(child).then((r) => ({ child, r })))));
    expect(results.filter(({ r }) => r === null)).toHaveLength(5);
    for (const child of children) {
      const [parentUses, own] = await counting.usesOf(child);
      expect(parentUses!.used).toBe(5);
      expect(own!.used).toBe(results.filter((x) => x.child === child && x.r === null).length);
      expect(own!.used).toBeLessThanOrEqual(2);
    }
  });

  it('a counter never passes its max, goes back, changes its max or disappears, even by raw SQL', async () => {
    const g = grant(counting.mintToken(['uses <= 2']));
    await spend(g);
    await spend(g);
    const key = g.counters[0]!.key;
    expect((await sql.refused(`UPDATE token_uses SET uses = uses + 1 WHERE counter = $1`, [key])).message).toMatch(/token_uses_within_max/);
    expect((await sql.refused(`UPDATE token_uses SET uses = 1 WHERE counter = $1`, [key])).message).toMatch(/only moves forward/);
    expect((await sql.refused(`UPDATE token_uses SET max_uses = 100 WHERE counter = $1`, [key])).message).toMatch(/only moves forward/);
    expect((await sql.refused(`UPDATE token_uses SET uses = 3, max_uses = 3 WHERE counter = $1`, [key])).message).toMatch(/only moves forward/);
    expect((await sql.refused(`DELETE FROM token_uses WHERE counter = $1`, [key])).message).toMatch(/never deleted/);
    expect((await sql.refused(`TRUNCATE token_uses`)).message).toMatch(/never deleted/);
    const fresh = 'f'.repeat(64);
    expect((await sql.refused(`INSERT INTO token_uses (counter, token_id, uses, max_uses) VALUES ($1, $2, 3, 2)`, [fresh, g.tokenId])).message).toMatch(
      /token_uses_within_max/,
    );
    expect((await sql.refused(`INSERT INTO token_uses (counter, token_id, uses, max_uses) VALUES ($1, $2, 0, 2)`, [fresh, g.tokenId])).message).toMatch(
      /token_uses_within_max/,
    );
    expect(await counting.usesOf(g)).toEqual([{ caveat: 'uses <= 2', used: 2, max: 2 }]);
    expect((await spend(g))!.limit).toBe('uses');
  });
});
