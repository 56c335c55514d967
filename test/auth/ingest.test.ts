// Issue 16 part 4: appending events is its own power. `tools` limits which tools ingested events may
// name, `collector` which collector's batches (and position) a token may append; every refusal is a
// 403 naming the limit, recorded as a REFUSAL, with nothing appended. Through POST /ledger/batches
// and GraphQL appendBatch alike.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';

const event = (tool?: string) => ({
  id: randomUUID(),
  kind: 'TOOL_CALL',
  direction: 'OUT',
  actionId: randomUUID(),
  ...(tool && { tool }),
  occurredAt: '2026-11-30T00:00:00Z',
});

type Door = (
  t: TestApp,
  token: string,
  batch: { collector: string; position?: string; events: object[] },
) => Promise<{ ok: boolean; status: number; code?: string; limit?: string; message?: string }>;

const http: Door = async (t, token, batch) => {
  const response = await fetch(`${t.origin}/ledger/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-dirledger-action': `ingest-${batch.collector}` },
    body: JSON.stringify(batch),
  });
  const body = (await response.json()) as any;
  return { ok: response.ok, status: response.status, code: body.error?.code, limit: body.error?.limit, message: body.error?.message };
};

const graphql: Door = async (t, token, batch) => {
  const response = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: 'mutation($input: AppendBatchInput!) { appendBatch(input: $input) { inserted position } }', variables: { input: batch } }),
  });
  const body = (await response.json()) as any;
  const error = body.errors?.[0];
  return {
    ok: !error,
    status: error ? (error.extensions?.code === 'FORBIDDEN' ? 403 : 400) : 200,
    code: error?.extensions?.code,
    limit: error?.extensions?.limit,
    message: error?.message,
  };
};

describe.each(databaseKinds)('ingest authority on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t?.stop());

  const refusalsOf = async (tokenId: string) => {
    await t.app.services.writer.flush();
    return t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL', metadata: { path: ['tokenId'], equals: tokenId } } });
  };
  const tokenId = (token: string) => t.app.services.authority.authenticate(token, 'INGEST');
  const idOf = (token: string) => {
    const checked = tokenId(token);
    if (!checked.ok) throw new Error('token did not verify');
    return checked.grant.tokenId;
  };
  const batches = (collector: string) => t.app.services.db.prisma.ledgerBatch.count({ where: { collector } });
  const position = async (collector: string) => (await t.app.services.db.prisma.collector.findUnique({ where: { id: collector } }))?.deliveredPosition ?? null;

  describe.each([
    ['POST /ledger/batches', http, 'INGEST'],
    ['GraphQL appendBatch', graphql, 'GRAPHQL'],
  ] as const)('%s', (_name, door, doorName) => {
    const c = (suffix: string) => `${kind}-${doorName}-${suffix}`;

    it('an admin token appends; a token without the ingest power is refused (403, power), recorded, nothing appended', async () => {
      expect((await door(t, t.token, { collector: c('admin'), events: [event('CLOCK')] })).ok).toBe(true);
      const callOnly = t.mint('powers = call');
      const refused = await door(t, callOnly, { collector: c('call-only'), events: [event('ECHO')] });
      expect(refused).toMatchObject({ ok: false, status: 403, code: 'FORBIDDEN', limit: 'power' });
      expect(refused.message).toMatch(/may not append ledger batches/);
      expect(await batches(c('call-only'))).toBe(0);
      const [recorded] = await refusalsOf(idOf(callOnly));
      expect(recorded?.metadata).toMatchObject({ capture: 'authority', limit: 'power', door: doorName, caveat: 'powers = call' });
      expect(await door(t, t.mint('powers = ingest'), { collector: c('ingest-only'), events: [event('ECHO')] })).toMatchObject({ ok: true });
    });

    it('tools = ECHO: events naming ECHO (or no tool) are appended; an event claiming CLOCK ran is refused (403, tools), recorded, nothing appended', async () => {
      const echoOnly = t.mint('tools = ECHO');
      expect(await door(t, echoOnly, { collector: c('echo'), events: [event('ECHO'), event()] })).toMatchObject({ ok: true });
      const refused = await door(t, echoOnly, { collector: c('echo-clock'), events: [event('ECHO'), event('CLOCK')] });
      expect(refused).toMatchObject({ ok: false, status: 403, code: 'FORBIDDEN', limit: 'tools' });
      expect(refused.message).toContain('"CLOCK"');
      expect(await batches(c('echo-clock'))).toBe(0);
      const recorded = await refusalsOf(idOf(echoOnly));
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({ tool: 'CLOCK', status: 'REFUSED' });
      expect(recorded[0]!.metadata).toMatchObject({ limit: 'tools', caveat: 'tools = ECHO', door: doorName });
      // A prefix caveat, and a narrowed token keeping its parent's limit.
      const weather = t.mint('tools = WEATHER_*');
      expect(await door(t, weather, { collector: c('weather'), events: [event('WEATHER_NOW')] })).toMatchObject({ ok: true });
      expect(await door(t, weather, { collector: c('weather'), events: [event('WEATHERX')] })).toMatchObject({ ok: false, limit: 'tools' });
      const narrowed = t.mint('tools = ECHO,CLOCK', 'tools = ECHO');
      expect(await door(t, narrowed, { collector: c('narrowed'), events: [event('CLOCK')] })).toMatchObject({ ok: false, limit: 'tools' });
    });

    it('collector = X: moves X only; another collector is refused (403, collector), recorded, its position unmoved', async () => {
      const mine = c('mine');
      const theirs = c('theirs');
      expect(await door(t, t.token, { collector: theirs, position: '5', events: [event()] })).toMatchObject({ ok: true });
      const scoped = t.mint(`collector = ${mine}`);
      expect(await door(t, scoped, { collector: mine, position: '3', events: [event()] })).toMatchObject({ ok: true });
      expect(await position(mine)).toBe(3n);
      const refused = await door(t, scoped, { collector: theirs, position: '900', events: [event()] });
      expect(refused).toMatchObject({ ok: false, status: 403, code: 'FORBIDDEN', limit: 'collector' });
      expect(refused.message).toContain(JSON.stringify(theirs));
      expect(await position(theirs)).toBe(5n);
      expect(await batches(theirs)).toBe(1);
      const [recorded] = await refusalsOf(idOf(scoped));
      expect(recorded!.metadata).toMatchObject({ limit: 'collector', caveat: `collector = ${mine}`, door: doorName });
    });
  });

  it('issueToken grants a collector caveat, described in words; an unknown caveat value is refused at issue', async () => {
    const issued = await t.gql('mutation { issueToken(input: { collectors: ["agent-7", "ci-*"], powers: [INGEST] }) { token caveats limits } }');
    expect(issued.errors).toBeUndefined();
    const { token, caveats, limits } = issued.data.issueToken;
    expect(caveats).toEqual(['powers = ingest', 'collector = agent-7,ci-*']);
    expect(limits[1]).toBe('Appends ledger batches (and moves the position) only of the collector agent-7, and collectors whose id starts with ci-.');
    expect(await http(t, token, { collector: 'ci-42', events: [event()] })).toMatchObject({ ok: true });
    expect(await http(t, token, { collector: 'agent-8', events: [event()] })).toMatchObject({ ok: false, limit: 'collector' });
    const bad = await t.gql('mutation { issueToken(input: { collectors: ["two words"] }) { token } }');
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
  });
});
