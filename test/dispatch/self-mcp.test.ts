// The demo's MCP_ECHO reaches this server's own /mcp, wherever the server listens: the contract says
// "/mcp", the runner resolves it against the public URL and sends the caller's own token, so the
// inner tools/call is checked by the same authority (and shows as [DIRLEDGER_TOKEN] on the record).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';

describe.each(databaseKinds)('MCP_ECHO through the server itself (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t?.stop());

  const call = (token: string, actionId: string) =>
    fetch(`${t.origin}/api/tools/MCP_ECHO?text=${encodeURIComponent('over mcp')}`, {
      headers: { authorization: `Bearer ${token}`, 'x-dirledger-action': actionId },
    }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));

  it('answers on whatever port the server took, recorded with the token as its name and matching its contract', async () => {
    expect(new URL(t.origin).port).not.toBe('4000');
    const { status, body } = await call(t.token, `self-${kind}`);
    expect(status).toBe(200);
    // The MCP door answers with the inner call's DispatchResult as its structured content.
    expect(body).toMatchObject({ outcome: 'OK', output: { tool: 'ECHO', outcome: 'OK', output: { text: 'over mcp' } } });
    await t.app.services.writer.flush();
    const out = await t.app.services.db.prisma.ledgerEvent.findFirst({ where: { actionId: `self-${kind}`, kind: 'TOOL_CALL', direction: 'OUT' } });
    expect(out!.url).toBe(`${t.origin}/mcp`);
    expect(out!.headers).toMatchObject({ authorization: 'Bearer [DIRLEDGER_TOKEN]' });
    const match = await t.gql<any>('query($id: ID!) { event(id: $id) { matchesContract { matches differences { part expected recorded } } } }', {
      id: out!.id,
    });
    expect(match.data.event.matchesContract).toEqual({ matches: true, differences: [] });

    // The SDK's wire traffic to /mcp is on the record too, the token a name in every header and byte.
    const wire = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId: `self-${kind}`, kind: 'REQUEST', direction: 'OUT' } });
    expect(wire.length).toBeGreaterThanOrEqual(3);
    for (const e of wire) {
      expect(e).toMatchObject({ tool: 'MCP_ECHO', url: `${t.origin}/mcp`, metadata: { capture: 'outbound', via: 'MCP' } });
      expect(e.headers).toMatchObject({ authorization: 'Bearer [DIRLEDGER_TOKEN]' });
    }
    const actionEvents = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId: `self-${kind}` } });
    for (const e of actionEvents) {
      const bytes = e.payloadSha256 ? await t.app.services.ledger.readBlob(e.payloadSha256) : null;
      expect(`${JSON.stringify(e.headers)} ${bytes?.toString('latin1') ?? ''}`).not.toContain(t.token);
    }
  });

  it("the inner call is held to the caller's token: MCP_ECHO alone is not enough to reach ECHO", async () => {
    const innerRefusals = async () => {
      await t.app.services.writer.flush();
      return (await t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL', tool: 'ECHO' } })).filter(
        (e) => (e.metadata as any).limit === 'tools',
      );
    };
    const before = (await innerRefusals()).length;
    const outerOnly = await call(t.mint('tools = MCP_ECHO'), `self-outer-${kind}`);
    expect(outerOnly.body).toMatchObject({ outcome: 'ERROR', error: { code: 'TOOL_ERROR' } });
    const after = await innerRefusals();
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)!.metadata).toMatchObject({ door: 'MCP', caveat: 'tools = MCP_ECHO' });
    const both = await call(t.mint('tools = MCP_ECHO,ECHO'), `self-both-${kind}`);
    expect(both.body).toMatchObject({ outcome: 'OK', output: { outcome: 'OK', output: { text: 'over mcp' } } });
  });
});
