// Grants on the record: issueToken, and `dirledger token narrow|admin --url`, write a GRANT event with
// the token's id, caveats and issuer before the token is handed out, never the token; inspecting a
// token records nothing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authority } from '../../src/auth/authority.ts';
import { mintWithRootKey } from '../../src/auth/tokens.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { runCli } from '../helpers/process.ts';
import { rawSql } from '../helpers/sql.ts';

type GrantRow = { id: string; action_id: string; status: string; direction: string; metadata: Record<string, unknown> };

async function run(args: string[], env: Record<string, string> = {}) {
  const child = runCli(args, env);
  const { code } = await child.exited;
  return { code, output: child.output().trim() };
}

describe.each(databaseKinds)('grants on the record on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t?.stop());

  const grants = async (): Promise<GrantRow[]> => {
    const sql = await rawSql(t.db);
    try {
      return await sql.query<GrantRow>(`SELECT id, action_id, status, direction, metadata FROM ledger_event WHERE kind = 'GRANT' ORDER BY position`);
    } finally {
      await sql.close();
    }
  };
  /** Every stored text of every event, for the token itself. */
  const storedText = async (): Promise<string> => {
    await t.app.services.writer.flush(); // what earlier tests captured lands before, not during, the comparison
    const sql = await rawSql(t.db);
    try {
      const rows = await sql.query<{ r: string }>(`SELECT row_to_json(x)::text AS r FROM ledger_event x ORDER BY position`);
      return rows.map((r) => r.r).join('\n');
    } finally {
      await sql.close();
    }
  };
  const issue = (input: Record<string, unknown>, bearer?: string) =>
    fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer ?? t.token}` },
      body: JSON.stringify({ query: 'mutation($input: IssueTokenInput!) { issueToken(input: $input) { token tokenId caveats } }', variables: { input } }),
    }).then((r) => r.json() as Promise<{ data?: { issueToken: { token: string; tokenId: string; caveats: string[] } }; errors?: any[] }>);

  it('issueToken writes one GRANT with the id, caveats and issuer, before answering; never the token', async () => {
    const before = (await grants()).length;
    const result = await issue({ tools: ['ECHO'], uses: 3, powers: ['CALL'] });
    expect(result.errors).toBeUndefined();
    const issued = result.data!.issueToken;
    const rows = await grants();
    expect(rows.length).toBe(before + 1);
    const row = rows.at(-1)!;
    expect(row).toMatchObject({ status: 'GRANTED', direction: 'OUT' });
    const admin = t.app.services.authority.authenticate(t.token, 'GRAPHQL');
    expect(admin.ok).toBe(true);
    expect(row.metadata).toMatchObject({
      via: 'ISSUE',
      door: 'GRAPHQL',
      tokenId: issued.tokenId,
      caveats: issued.caveats,
      issuer: admin.ok ? admin.grant.caller : '',
      issuerTokenId: admin.ok ? admin.grant.tokenId : '',
      issuerCaveats: [],
    });
    expect((row.metadata.limits as string[]).length).toBe(issued.caveats.length);
    const stored = await storedText();
    expect(stored).not.toContain(issued.token.slice(0, 30));
    expect(stored).not.toContain(issued.token.slice(-30));
  });

  it('a token issued by a narrower issuer records that issuer and its caveats', async () => {
    const issuer = t.mint('powers = call,issue', 'tools = ECHO*');
    const result = await issue({ tools: ['ECHO'] }, issuer);
    expect(result.errors).toBeUndefined();
    const row = (await grants()).at(-1)!;
    expect(row.metadata.tokenId).toBe(result.data!.issueToken.tokenId);
    expect(row.metadata.issuerCaveats).toEqual(['powers = call,issue', 'tools = ECHO*']);
    expect(row.metadata.caveats).toEqual(['tools = ECHO*', 'tools = ECHO']);
  });

  it('a refused issue writes no GRANT (its REFUSAL is recorded as before)', async () => {
    const before = (await grants()).length;
    const result = await issue({ tools: ['ECHO'] }, t.mint('powers = call'));
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const bad = await issue({ uses: -1 });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    expect((await grants()).length).toBe(before);
  });

  it('inspectToken answers are not recorded', async () => {
    const before = await storedText();
    const result = await t.gql('query($token: String!) { inspectToken(token: $token) { tokenId caveats valid } }', { token: t.mint('tools = ECHO') });
    expect(result.data.inspectToken.caveats).toEqual(['tools = ECHO']);
    expect(await storedText()).toBe(before);
  });

  it('recordGrant takes only a narrowing of the bearer token, or an admin token presenting itself, signed here', async () => {
    const parent = t.mint('tools = ECHO*');
    const narrowed = Authority.narrow(parent, ['uses <= 2']);
    const record = (token: string, via: string, bearer: string) =>
      fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({
          query: 'mutation($token: String!, $via: GrantVia!) { recordGrant(token: $token, via: $via) { tokenId caveats } }',
          variables: { token, via },
        }),
      }).then((r) => r.json() as Promise<{ data?: any; errors?: any[] }>);
    const before = (await grants()).length;
    const other = t.mint('tools = CLOCK');
    const refusals = [
      await record(narrowed, 'NARROW', other),
      await record(Authority.narrow(mintWithRootKey(randomBytes(32)), ['uses <= 1']), 'NARROW', t.token),
      await record('not a token', 'NARROW', t.token),
      await record(narrowed, 'ADMIN', parent),
      await record(t.mint(), 'ADMIN', t.token),
    ];
    for (const r of refusals) expect(r.errors?.[0]?.extensions?.code, JSON.stringify(r)).toBe('BAD_INPUT');
    expect(refusals.map((r) => r.errors?.[0]?.message)).toEqual([
      expect.stringContaining('narrowing of the bearer token'),
      expect.stringContaining('signed with this server'),
      expect.stringContaining('Expected a dirledger token'),
      expect.stringContaining('admin token (no caveats)'),
      expect.stringContaining('present itself'),
    ]);
    expect((await grants()).length).toBe(before);

    const ok = await record(narrowed, 'NARROW', parent);
    expect(ok.errors).toBeUndefined();
    expect(ok.data.recordGrant.caveats).toEqual(['tools = ECHO*', 'uses <= 2']);
    const row = (await grants()).at(-1)!;
    expect(row.metadata).toMatchObject({ via: 'NARROW', caveats: ['tools = ECHO*', 'uses <= 2'], issuerCaveats: ['tools = ECHO*'] });
  });

  it('dirledger token narrow and admin --url record the grant, then print the token; unreachable: exit 3, nothing printed', async () => {
    const parent = t.mint('tools = ECHO*');
    const before = (await grants()).length;
    const narrowed = await run(['token', 'narrow', parent, 'uses <= 5', '--url', t.origin]);
    expect(narrowed.code, narrowed.output).toBe(0);
    const token = narrowed.output.split('\n').at(-1)!;
    expect(Authority.narrow(parent, ['uses <= 5'])).toBe(token);
    const admin = await run(['token', 'admin', '--url', t.origin], { DATA_DIR: t.dataDir });
    expect(admin.code, admin.output).toBe(0);
    const adminToken = admin.output.split('\n').at(-1)!;
    const adminGrant = t.app.services.authority.authenticate(adminToken, 'CLI');
    expect(adminGrant.ok && adminGrant.grant.admin).toBe(true);

    const rows = (await grants()).slice(before);
    expect(rows.map((r) => [r.metadata.via, r.metadata.caveats])).toEqual([
      ['NARROW', ['tools = ECHO*', 'uses <= 5']],
      ['ADMIN', []],
    ]);
    expect(rows[1]!.metadata.tokenId).toBe(adminGrant.ok ? adminGrant.grant.tokenId : '');
    const stored = await storedText();
    for (const secret of [token, adminToken]) expect(stored).not.toContain(secret.slice(-30));

    const unreachable = await run(['token', 'narrow', parent, 'uses <= 5', '--url', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(3);
    expect(unreachable.output).toMatch(/Cannot reach the server .* no token was printed/);
    expect(unreachable.output).not.toContain(token.slice(-30));
    const foreign = await run(['token', 'narrow', mintWithRootKey(randomBytes(32)), 'uses <= 5', '--url', t.origin]);
    expect(foreign.code, foreign.output).toBe(4);
  });
});
