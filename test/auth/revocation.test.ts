// Revocation: by token id, of every token narrowed or issued from it; append-only (table + a
// REVOCATION ledger event); effective on every instance within 1 s (PostgreSQL LISTEN/NOTIFY, and
// Redis pub/sub beside it when configured, so Redis being down delays nothing), re-read from the
// table whenever a feed reconnects; inspectToken shows it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authority } from '../../src/auth/authority.ts';
import { inspect } from '../../src/auth/tokens.ts';
import { feedConnectionName } from '../../src/auth/revocations.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { twoInstances } from '../helpers/instances.ts';
import { freePort, privateRedis, privateRedisMissing } from '../helpers/private-redis.ts';
import { runCli } from '../helpers/process.ts';

const revokeMutation = `mutation ($tokenId: String!, $reason: String!) {
  revokeToken(tokenId: $tokenId, reason: $reason) { tokenId reason revokedBy revokedAt actionId already }
}`;
const inspectQuery = `query ($token: String!) {
  inspectToken(token: $token) { tokenId issuedBy valid revoked revocation { tokenId reason revokedBy revokedAt } }
}`;
const issueMutation = `mutation ($input: IssueTokenInput!) { issueToken(input: $input) { token tokenId } }`;

async function gqlAs(url: string, token: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** The status a door answers for this token (GET /api/directory), and its error code. */
async function door(origin: string, token: string): Promise<{ status: number; code?: string }> {
  const response = await fetch(`${origin}/api/directory`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as any;
  return { status: response.status, ...(body?.error?.code && { code: body.error.code }) };
}

const idOf = (token: string) => inspect(token).tokenId!;

describe('revocation on one instance (PGlite)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite');
  });
  afterAll(() => t?.stop());

  it('revokes a token by id, with every token narrowed or issued from it; siblings keep working', async () => {
    const parent = t.mint('read = all', 'powers = call,issue');
    const narrowed = Authority.narrow(parent, ['tools = ECHO']);
    const issued = await gqlAs(t.url, parent, issueMutation, { input: { tools: ['ECHO'] } });
    const child = issued.body.data.issueToken.token as string;
    const grandchild = (await gqlAs(t.url, child, issueMutation, { input: { doors: ['REST'] } })).body.data.issueToken.token as string;
    expect(inspect(grandchild).issuedBy).toEqual([idOf(child), idOf(parent)]);
    const sibling = t.mint('read = all');
    for (const token of [parent, narrowed, child, grandchild, sibling]) expect((await door(t.origin, token)).status).toBe(200);

    const revoked = await t.gql(revokeMutation, { tokenId: idOf(parent), reason: 'leaked in a build log' });
    expect(revoked.errors).toBeUndefined();
    expect(revoked.data.revokeToken).toMatchObject({
      tokenId: idOf(parent),
      reason: 'leaked in a build log',
      revokedBy: `token:${idOf(t.token)}`,
      already: false,
    });

    for (const token of [parent, narrowed, child, grandchild]) expect(await door(t.origin, token)).toEqual({ status: 401, code: 'TOKEN_REVOKED' });
    expect((await door(t.origin, sibling)).status).toBe(200);
    // The GraphQL door refuses it too, before any operation runs.
    expect((await gqlAs(t.url, child, '{ __typename }')).status).toBe(401);

    // inspectToken: revoked, when, by whom, why, and through which id.
    const shown = await t.gql(inspectQuery, { token: grandchild });
    expect(shown.data.inspectToken).toMatchObject({
      tokenId: idOf(grandchild),
      valid: false,
      revoked: true,
      revocation: { tokenId: idOf(parent), reason: 'leaked in a build log', revokedBy: `token:${idOf(t.token)}` },
    });
    expect(Date.parse(shown.data.inspectToken.revocation.revokedAt)).toBe(Date.parse(revoked.data.revokeToken.revokedAt));
    expect((await t.gql(inspectQuery, { token: sibling })).data.inspectToken).toMatchObject({ valid: true, revoked: false, revocation: null });

    // Revoking again answers the first revocation; the ledger holds one REVOCATION event for the id.
    const again = await t.gql(revokeMutation, { tokenId: narrowed, reason: 'second time' });
    expect(again.data.revokeToken).toMatchObject({ tokenId: idOf(parent), reason: 'leaked in a build log', already: true });
    await t.app.services.writer.flush();
    const rows = await t.app.services.db.sql.query<any>(`SELECT kind, status, action_id, metadata FROM ledger_event WHERE kind = 'REVOCATION'`);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'REVOKED',
      action_id: revoked.data.revokeToken.actionId,
      metadata: { tokenId: idOf(parent), reason: 'leaked in a build log', revokedBy: `token:${idOf(t.token)}` },
    });
    // Refusals of a revoked token are recorded like any other, naming the limit.
    const refusals = await t.app.services.db.sql.query<any>(`SELECT metadata FROM ledger_event WHERE kind = 'REFUSAL' AND metadata->>'limit' = 'revoked'`);
    expect(refusals.length).toBeGreaterThanOrEqual(4);
    expect(refusals.map((r) => r.metadata.reason)).toContain(`the token was issued under token ${idOf(parent)}, which was revoked`);
  });

  it('needs the revoke power: a token without it is refused (recorded); `powers = revoke` may', async () => {
    const victim = t.mint('read = all');
    const noPower = t.mint('read = all');
    const refused = await gqlAs(t.url, noPower, revokeMutation, { tokenId: idOf(victim), reason: 'x' });
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'power' });
    expect(refused.body.errors[0].message).toBe('This token may not revoke tokens.');
    expect((await door(t.origin, victim)).status).toBe(200);
    const revoker = t.mint('powers = revoke');
    const done = await gqlAs(t.url, revoker, revokeMutation, { tokenId: idOf(victim), reason: 'on-call' });
    expect(done.body.data.revokeToken).toMatchObject({ tokenId: idOf(victim), revokedBy: `token:${idOf(revoker)}` });
    expect((await door(t.origin, victim)).code).toBe('TOKEN_REVOKED');
    await t.app.services.writer.flush();
    const [row] = await t.app.services.db.sql.query<any>(`SELECT metadata FROM ledger_event WHERE kind = 'REFUSAL' AND metadata->>'tokenId' = $1`, [
      idOf(noPower),
    ]);
    expect(row.metadata).toMatchObject({ limit: 'power', reason: 'the token lacks the revoke power' });
  });

  it('refuses hostile or malformed input with BAD_INPUT naming the field, and revokes nothing', async () => {
    const victim = t.mint('read = all');
    const cases: [string, string, string][] = [
      ['not-an-id', 'why', 'tokenId'],
      ['\u0000'.repeat(32), 'why', 'tokenId'],
      [idOf(victim), '', 'reason'],
      [idOf(victim), 'a\u0000b', 'reason'],
      [idOf(victim), 'lone \ud800 surrogate', 'reason'],
      [idOf(victim), 'x'.repeat(1001), 'reason'],
    ];
    for (const [tokenId, reason, field] of cases) {
      const answer = await t.gql(revokeMutation, { tokenId, reason });
      const label = JSON.stringify([tokenId.slice(0, 10), reason.slice(0, 10)]);
      // Text no field can hold (NUL, a lone surrogate) is refused for every String input before the resolver runs.
      const said = tokenId + reason;
      if (said.includes('\u0000') || said.includes('\ud800')) {
        expect(answer.errors?.[0].extensions, label).toMatchObject({ code: 'BAD_USER_INPUT' });
        expect(answer.errors?.[0].message, label).toContain(field);
      } else expect(answer.errors?.[0].extensions, label).toMatchObject({ code: 'BAD_INPUT', field });
    }
    expect((await door(t.origin, victim)).status).toBe(200);
    expect((await t.app.services.db.sql.query(`SELECT 1 FROM token_revocation WHERE token_id = $1`, [idOf(victim)])).length).toBe(0);
  });

  it('the table is append-only: UPDATE, DELETE and TRUNCATE are refused by the database', async () => {
    const victim = t.mint();
    await t.gql(revokeMutation, { tokenId: idOf(victim), reason: 'append-only check' });
    const sql = t.app.services.db.sql;
    await expect(sql.query(`UPDATE token_revocation SET reason = 'edited' WHERE token_id = $1`, [idOf(victim)])).rejects.toThrow(/append-only/);
    await expect(sql.query(`DELETE FROM token_revocation WHERE token_id = $1`, [idOf(victim)])).rejects.toThrow(/append-only/);
    await expect(sql.query(`TRUNCATE token_revocation`)).rejects.toThrow(/append-only/);
    expect(await sql.query(`SELECT reason FROM token_revocation WHERE token_id = $1`, [idOf(victim)])).toEqual([{ reason: 'append-only check' }]);
  });

  it('`dirledger token revoke` revokes through a running server and prints who and when; a refusal exits 4', async () => {
    const victim = t.mint('read = all');
    const denied = runCli(['token', 'revoke', idOf(victim), '--reason', 'cli', '--url', t.origin, '--token', t.mint('read = all')]);
    expect((await denied.exited).code).toBe(4);
    expect(denied.output()).toContain('FORBIDDEN: This token may not revoke tokens.');
    const child = runCli(['token', 'revoke', victim, '--reason', 'rotated by cli', '--url', t.origin, '--token', t.token, '--json']);
    const { code } = await child.exited;
    expect(code).toBe(0);
    const printed = JSON.parse(child.output().trim().split('\n').at(-1)!);
    expect(printed).toMatchObject({ tokenId: idOf(victim), reason: 'rotated by cli', revokedBy: `token:${idOf(t.token)}`, already: false });
    expect((await door(t.origin, victim)).code).toBe('TOKEN_REVOKED');
  });
});

/** Three tokens, each revoked on A and refused on B within 1 s. */
async function revokeRounds(a: TestApp, b: { origin: string }) {
  for (let round = 0; round < 3; round++) {
    const token = a.mint('read = all');
    expect((await door(b.origin, token)).status).toBe(200);
    const started = performance.now();
    const revoked = await a.gql(revokeMutation, { tokenId: idOf(token), reason: `round ${round}` });
    expect(revoked.errors).toBeUndefined();
    let answer = await door(b.origin, token);
    while (answer.status === 200 && performance.now() - started < 5_000) {
      await new Promise((r) => setTimeout(r, 10));
      answer = await door(b.origin, token);
    }
    const elapsed = performance.now() - started;
    expect(answer).toEqual({ status: 401, code: 'TOKEN_REVOKED' });
    expect(elapsed).toBeLessThan(1_000);
  }
}

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!pgUrl) process.stdout.write('test/auth/revocation.test.ts (two instances) skipped: TEST_DATABASE_URL is not set\n');
const feeds = !pgUrl ? [] : redisUrl ? (['postgres', 'redis'] as const) : (['postgres'] as const);

describe.each(feeds)('two instances on PostgreSQL, revocations carried by %s', (feed) => {
  let pair: Awaited<ReturnType<typeof twoInstances>>;
  const channel = `dirledger-test-${process.pid}-${Date.now()}`;
  beforeAll(async () => {
    pair = await twoInstances(feed === 'redis' ? { REDIS_URL: redisUrl!, LIVE_CHANNEL: channel } : {});
  });
  afterAll(() => pair?.stop());

  it(`revoked on A, refused on B within 1 s${feed === 'redis' ? ", carried by Redis alone (the table trigger's NOTIFY off)" : ''}`, async () => {
    const { a, b } = pair;
    // With Redis, PostgreSQL LISTEN runs beside it (a revocation travels while Redis is down).
    expect(b.app.services.revocations.feed.kind).toBe(feed === 'redis' ? 'redis+postgres' : 'postgres');
    if (feed === 'redis') await a.app.services.db.sql.query('ALTER TABLE token_revocation DISABLE TRIGGER token_revocation_notify');
    try {
      await revokeRounds(a, b);
    } finally {
      if (feed === 'redis') await a.app.services.db.sql.query('ALTER TABLE token_revocation ENABLE TRIGGER token_revocation_notify');
    }
  });

  it('a revocation B did not hear (its feed was cut) is read from the table when the feed reconnects', async () => {
    const { a, b } = pair;
    const token = a.mint('read = all');
    expect((await door(b.origin, token)).status).toBe(200);
    // Written behind every feed's back: no NOTIFY, no publish.
    const admin = new pg.Client({ connectionString: a.db.url });
    await admin.connect();
    try {
      await admin.query('BEGIN');
      await admin.query('ALTER TABLE token_revocation DISABLE TRIGGER token_revocation_notify');
      await admin.query(`INSERT INTO token_revocation (token_id, reason, revoked_by, action_id) VALUES ($1, 'unheard', 'test', 'test')`, [idOf(token)]);
      await admin.query('ALTER TABLE token_revocation ENABLE TRIGGER token_revocation_notify');
      await admin.query('COMMIT');
      await new Promise((r) => setTimeout(r, 300));
      expect((await door(b.origin, token)).status).toBe(200);
      if (feed === 'postgres') {
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, [
          feedConnectionName,
        ]);
      } else {
        const { Redis } = await import('ioredis');
        const redis = new Redis(redisUrl!);
        const clients = (await redis.client('LIST')) as string;
        for (const line of clients.split('\n').filter((l) => l.includes(`name=${feedConnectionName} `)))
          await redis.client('KILL', 'ID', /id=(\d+)/.exec(line)![1]!);
        redis.disconnect();
      }
    } finally {
      await admin.end();
    }
    const until = Date.now() + 5_000;
    let answer = await door(b.origin, token);
    while (answer.status === 200 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
      answer = await door(b.origin, token);
    }
    expect(answer).toEqual({ status: 401, code: 'TOKEN_REVOKED' });
  });
});

const redisDownReason = !pgUrl ? 'TEST_DATABASE_URL is not set' : privateRedisMissing;
if (redisDownReason) process.stdout.write(`test/auth/revocation.test.ts (Redis down) skipped: ${redisDownReason}\n`);

describe.skipIf(redisDownReason !== null)('two instances with REDIS_URL while Redis is down', () => {
  let pair: Awaited<ReturnType<typeof twoInstances>>;
  let redis: ReturnType<typeof privateRedis>;
  beforeAll(async () => {
    redis = privateRedis(await freePort());
    await redis.start();
    pair = await twoInstances({ REDIS_URL: redis.url, LIVE_CHANNEL: `dirledger-test-down-${process.pid}-${Date.now()}` });
  });
  afterAll(async () => {
    await pair?.stop();
    await redis?.kill().catch(() => {});
  });

  it('revoked on A, refused on B within 1 s all the same: PostgreSQL LISTEN carries it', async () => {
    expect(pair.b.app.services.revocations.feed.kind).toBe('redis+postgres');
    await redis.kill();
    await revokeRounds(pair.a, pair.b);
  });
});
