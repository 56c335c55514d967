// Issuing is counted: an issuing token's `uses` bounds the tokens it issues, exactly under
// concurrency, and an issued token never has more uses, a later expiry or a wider tool list.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspect } from '../../src/auth/tokens.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';

const issueMutation = `mutation ($input: IssueTokenInput!) { issueToken(input: $input) { token caveats } }`;

async function issueAs(t: TestApp, token: string, input: Record<string, unknown>) {
  const response = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: issueMutation, variables: { input } }),
  });
  return (await response.json()) as any;
}

describe.each(databaseKinds)('issuing is counted (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t?.stop());

  it('an issuing token with uses <= 3 issues exactly 3 under 12 concurrent attempts; the rest are refused and recorded', async () => {
    const issuer = t.mint('powers = issue,call', 'uses <= 3', 'tools = ECHO');
    const answers = await Promise.all(Array.from({ length: 12 }, () => issueAs(t, issuer, {})));
    const issued = answers.filter((a) => a.data?.issueToken);
    const refused = answers.filter((a) => a.errors);
    expect(issued).toHaveLength(3);
    expect(refused).toHaveLength(9);
    for (const a of refused) expect(a.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'uses' });
    // Each new token has at most the uses the issuer had left, and the issuer's tools.
    for (const a of issued) {
      const caveats = inspect(a.data.issueToken.token).caveats;
      expect(caveats).toContain('tools = ECHO');
      const uses = caveats.filter((c) => c.startsWith('uses <= ')).map((c) => Number(c.slice(8)));
      expect(uses.length).toBe(1);
      expect(uses[0]).toBeLessThanOrEqual(3);
    }
    await t.app.services.writer.flush();
    const rows = await t.app.services.db.sql.query(
      `SELECT 1 FROM ledger_event WHERE kind = 'REFUSAL' AND metadata->>'tokenId' = $1 AND metadata->>'limit' = 'uses'`,
      [inspect(issuer).tokenId],
    );
    expect(rows).toHaveLength(9);
  });

  it('never more uses than the issuer has left, nor a revoke power it lacks; nothing is spent by a refused ask', async () => {
    const issuer = t.mint('powers = issue,call', 'uses <= 4');
    const tooMany = await issueAs(t, issuer, { uses: 5 });
    expect(tooMany.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'uses' });
    expect(tooMany.errors[0].message).toBe('This token has 4 uses left and may not issue a token with more.');
    const revoker = await issueAs(t, issuer, { powers: ['REVOKE'] });
    expect(revoker.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'power' });
    const first = await issueAs(t, issuer, {});
    expect(first.data.issueToken.caveats).toContain('uses <= 4');
    const second = await issueAs(t, issuer, { uses: 2 });
    expect(second.data.issueToken.caveats).toContain('uses <= 2');
    const third = await issueAs(t, issuer, {});
    expect(third.data.issueToken.caveats).toContain('uses <= 2');
  });

  it('a later expiry or a wider tool list asked for does not widen the new token', async () => {
    const soon = new Date(Date.now() + 60_000).toISOString();
    const issuer = t.mint('powers = issue,call', 'tools = ECHO', `expires = ${soon}`);
    const wide = await issueAs(t, issuer, { tools: ['*'], expires: '2030-01-01T00:00:00.000Z' });
    const checked = t.app.services.authority.authenticate(wide.data.issueToken.token, 'REST');
    if (!checked.ok) throw new Error(checked.refusal.reason);
    expect(t.app.services.authority.allowsTool(checked.grant, 'REST', 'CLOCK')).toMatchObject({ limit: 'tools', caveat: 'tools = ECHO' });
    expect(t.app.services.authority.expiryOf(checked.grant)!.toISOString()).toBe(new Date(soon).toISOString());
  });
});
