// Every error path of the ledger's HTTP doors, over real HTTP against a real database.
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds, databaseOutage } from '../helpers/database.ts';
import { event } from '../helpers/ledger.ts';
import { rawSql, type RawSql } from '../helpers/sql.ts';

const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const BATCH_MAX_BYTES = 65_536;

async function postRaw(t: TestApp, body: BodyInit, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const response = await fetch(`${t.origin}/ledger/batches`, { method: 'POST', headers: { ...t.auth, ...headers }, body, duplex: 'half' } as RequestInit);
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? (JSON.parse(text) as any) : null };
}
const post = (t: TestApp, batch: unknown) => postRaw(t, JSON.stringify(batch));

async function counts(sql: RawSql) {
  const [row] = await sql.query<{ events: number; blobs: number; batches: number; collectors: number }>(
    `SELECT (SELECT count(*)::int FROM ledger_event) AS events, (SELECT count(*)::int FROM blob) AS blobs,
            (SELECT count(*)::int FROM ledger_batch) AS batches, (SELECT count(*)::int FROM collector) AS collectors`,
  );
  return row!;
}

describe.each(databaseKinds)('POST /ledger/batches on %s', (kind) => {
  let t: TestApp;
  let sql: RawSql;
  beforeAll(async () => {
    t = await startTestApp(kind, { BATCH_MAX_BYTES: String(BATCH_MAX_BYTES) });
    sql = await rawSql(t.db);
  });
  afterAll(async () => {
    await sql?.close();
    await t?.stop();
  });

  it('answers 200 with the counts', async () => {
    const result = await post(t, { collector: 'http', position: 3, events: [event('http-1'), event('http-2')] });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ received: 2, inserted: 2, duplicates: 0, position: '3' });
    expect(result.body.batchId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['form data', 'application/x-www-form-urlencoded'],
    ['no content type', undefined],
  ])('refuses %s with 400 and writes nothing', async (_what, type) => {
    const before = await counts(sql);
    const result = await postRaw(t, JSON.stringify({ collector: 'http', events: [event('ctype-1')] }), type ? { 'content-type': type } : {});
    expect(result.status).toBe(400);
    expect(result.body.error).toMatchObject({ code: 'BAD_INPUT' });
    expect(result.body.error.message).toMatch(/Expected content-type application\/json, got/);
    expect(await counts(sql)).toEqual(before);
  });

  it('keeps the largest token counts its columns hold, exactly', async () => {
    const result = await post(t, { collector: 'http-tokens', events: [event('tokens-max', { inputTokens: 2_147_483_647, outputTokens: 0 })] });
    expect(result.status).toBe(200);
    const rows = await sql.query<{ input_tokens: number; output_tokens: number }>(
      `SELECT input_tokens, output_tokens FROM ledger_event WHERE id = 'tokens-max'`,
    );
    expect(rows).toEqual([{ input_tokens: 2_147_483_647, output_tokens: 0 }]);
  });

  it('accepts a JSON content type with parameters or a +json suffix', async () => {
    for (const [i, type] of ['application/json; charset=utf-8', 'application/vnd.collector+json'].entries()) {
      const result = await postRaw(t, JSON.stringify({ collector: 'http', events: [event(`ctype-ok-${i}`)] }), { 'content-type': type });
      expect(result.status).toBe(200);
    }
  });

  it.each([
    ['truncated JSON', '{"collector":"http","events":['],
    ['a trailing comma', '{"collector":"http","events":[],}'],
    ['an empty body', ''],
  ])('refuses %s with 400 naming the problem', async (_what, body) => {
    const before = await counts(sql);
    const result = await postRaw(t, body);
    expect(result.status).toBe(400);
    expect(result.body.error.code).toBe('BAD_INPUT');
    expect(result.body.error.message).toMatch(/^Expected a JSON body, got invalid JSON/);
    expect(await counts(sql)).toEqual(before);
  });

  it('refuses a body whose bytes are not UTF-8 instead of coercing them', async () => {
    const before = await counts(sql);
    const head = Buffer.from(
      `{"collector":"http","events":[${JSON.stringify(event('bad-utf8', { payload: { state: 'COMPLETE', text: 'X' } })).replace('"X"', '"')}`,
    );
    const body = Buffer.concat([head, Buffer.from([0xc0, 0xaf]), Buffer.from('"}}]}')]);
    const result = await postRaw(t, body);
    expect(result.status).toBe(400);
    expect(result.body.error.message).toMatch(/not valid UTF-8/);
    expect(await counts(sql)).toEqual(before);
    expect(await sql.query(`SELECT 1 FROM ledger_event WHERE id = 'bad-utf8'`)).toEqual([]);
  });

  it('refuses a batch with one invalid event with 400 naming the field, and writes nothing of it', async () => {
    const before = await counts(sql);
    const events = [0, 1, 2, 3, 4].map((i) => event(`invalid-batch-${i}`, { payload: { state: 'COMPLETE', text: `body ${i}` } }));
    events[3] = event('invalid-batch-3', { payload: { state: 'COMPLETE', base64: 'not base64!' } });
    const result = await post(t, { collector: 'http-invalid', position: 9, events });
    expect(result.status).toBe(400);
    expect(result.body.error.code).toBe('BAD_INPUT');
    expect(result.body.error.message).toContain('events[3].payload.base64: expected base64 text, got "not base64!"');
    expect(result.body.error.problems.every((p: string) => p.startsWith('events[3].payload.base64: expected base64 text'))).toBe(true);
    expect(await counts(sql)).toEqual(before);

    const gql = await t.gql(`mutation($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`, {
      input: { collector: 'http-invalid', position: '9', events },
    });
    expect(gql.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    expect(gql.errors?.[0]?.message).toContain('events[3].payload.base64');
    expect(await counts(sql)).toEqual(before);
  });

  it.each([
    ['a missing field', { collector: 'c', events: [{ ...event('f-1'), kind: undefined }] }, 'events[0].kind'],
    ['a wrong direction', { collector: 'c', events: [event('f-2', { direction: 'SIDEWAYS' })] }, 'events[0].direction'],
    ['an unknown field', { collector: 'c', events: [event('f-3', { colour: 'red' })] }, 'events[0]: expected only known fields, got unknown colour'],
    ['a bad timestamp', { collector: 'c', events: [event('f-4', { occurredAt: 'yesterday' })] }, 'events[0].occurredAt'],
    ['a bad decimal', { collector: 'c', events: [event('f-5', { costUsd: '1e5' })] }, 'events[0].costUsd'],
    ['an ARTIFACT without a URI', { collector: 'c', events: [event('f-6', { payload: { state: 'ARTIFACT' } })] }, 'events[0].payload.artifactUri'],
    ['a body on a NONE payload', { collector: 'c', events: [event('f-7', { payload: { state: 'NONE', text: 'x' } })] }, 'events[0].payload.text'],
    ['no events', { collector: 'c', events: [] }, 'events: expected'],
    ['a negative position', { collector: 'c', position: -1, events: [event('f-8')] }, 'position'],
    ['input tokens past a 4-byte integer', { collector: 'c', events: [event('f-9', { inputTokens: 2_147_483_648 })] }, 'events[0].inputTokens'],
    ['output tokens past a 4-byte integer', { collector: 'c', events: [event('f-10', { outputTokens: 2 ** 40 })] }, 'events[0].outputTokens'],
    ['not an object', [1, 2], '(input)'],
  ])('refuses %s with 400 naming the field', async (_what, batch, field) => {
    const result = await post(t, batch);
    expect(result.status).toBe(400);
    expect(result.body.error.message).toContain(field);
  });

  it(`refuses a body past BATCH_MAX_BYTES (${BATCH_MAX_BYTES}) with 413, declared or streamed, and writes nothing`, async () => {
    const before = await counts(sql);
    const big = JSON.stringify({ collector: 'http-big', events: [event('big-1', { payload: { state: 'COMPLETE', text: 'x'.repeat(BATCH_MAX_BYTES) } })] });
    const declared = await postRaw(t, big);
    expect(declared.status).toBe(413);
    expect(declared.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', limit: BATCH_MAX_BYTES });
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 8192) controller.enqueue(bytes.subarray(at, at + 8192));
        controller.close();
      },
    });
    const streamed = await postRaw(t, stream);
    expect(streamed.status).toBe(413);
    expect(streamed.body.error.message).toMatch(new RegExp(`expected at most ${BATCH_MAX_BYTES} bytes`));
    expect(await counts(sql)).toEqual(before);
    const exact = JSON.stringify({ collector: 'http-big', events: [event('big-2')] });
    expect((await postRaw(t, exact.padEnd(BATCH_MAX_BYTES, ' '))).status).toBe(200);
  });

  it('answers 405 to other methods', async () => {
    const response = await fetch(`${t.origin}/ledger/batches`, { headers: t.auth });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe.each(databaseKinds)('GET /ledger/blob/:sha256 on %s', (kind) => {
  let t: TestApp;
  const body = Buffer.from('{"blob":"served"}');
  beforeAll(async () => {
    t = await startTestApp(kind);
    expect((await post(t, { collector: 'blob', events: [event('blob-1', { payload: { state: 'COMPLETE', base64: body.toString('base64') } })] })).status).toBe(
      200,
    );
  });
  afterAll(async () => t?.stop());

  it.each([['xyz'], ['a'.repeat(63)], ['g'.repeat(64)], ['a'.repeat(65)]])('answers 400 to a bad hash (%s)', async (hash) => {
    const response = await fetch(`${t.origin}/ledger/blob/${hash}`, { headers: t.auth });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.code).toBe('BAD_INPUT');
  });

  it('answers 404 to an unknown hash', async () => {
    const response = await fetch(`${t.origin}/ledger/blob/${sha('never stored')}`, { headers: t.auth });
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.code).toBe('NOT_FOUND');
  });

  it('serves the exact bytes with the hash as ETag, and 304 when the client has them', async () => {
    const hash = sha(body);
    const response = await fetch(`${t.origin}/ledger/blob/${hash}`, { headers: t.auth });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(`"${hash}"`);
    expect(response.headers.get('content-length')).toBe(String(body.length));
    expect(Buffer.from(await response.arrayBuffer()).equals(body)).toBe(true);
    expect((await fetch(`${t.origin}/ledger/blob/${hash.toUpperCase()}`, { headers: t.auth })).headers.get('etag')).toBe(`"${hash}"`);

    for (const match of [`"${hash}"`, `W/"${hash}"`, `"${sha('other')}", "${hash}"`, '*']) {
      const cached = await fetch(`${t.origin}/ledger/blob/${hash}`, { headers: { ...t.auth, 'if-none-match': match } });
      expect([match, cached.status]).toEqual([match, 304]);
      expect(cached.headers.get('etag')).toBe(`"${hash}"`);
      expect(await cached.text()).toBe('');
    }
    const stale = await fetch(`${t.origin}/ledger/blob/${hash}`, { headers: { ...t.auth, 'if-none-match': `"${sha('other')}"` } });
    expect(stale.status).toBe(200);
    expect(Buffer.from(await stale.arrayBuffer()).equals(body)).toBe(true);
  });

  it('answers HEAD with the headers and no body', async () => {
    const response = await fetch(`${t.origin}/ledger/blob/${sha(body)}`, { method: 'HEAD', headers: t.auth });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(body.length));
  });
});

describe.each(databaseKinds)('when the database is unavailable (%s)', (kind) => {
  let t: TestApp;
  let sql: RawSql | undefined;
  const batchOf = (tag: string) => ({
    collector: `outage-${tag}`,
    position: 5,
    events: [0, 1, 2].map((i) =>
      event(`outage-${tag}-${i}`, { payload: { state: 'COMPLETE', text: `outage ${tag} payload ${i} ${'y'.repeat(i * 100_000)}` } }),
    ),
  });
  beforeAll(async () => {
    t = await startTestApp(kind);
    if (kind === 'postgres') sql = await rawSql(t.db);
  });
  afterAll(async () => {
    await sql?.close();
    // The closed PGlite refuses to close twice; its data folder still goes.
    await t?.stop().catch(() => rm(t.dataDir, { recursive: true, force: true }));
  });

  const expect503 = (result: Awaited<ReturnType<typeof post>>) => {
    expect(result.status).toBe(503);
    expect(result.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(result.body.error.code).toBe('DATABASE_UNAVAILABLE');
  };

  if (kind === 'pglite') {
    it('answers 503 with Retry-After once the embedded database is closed', async () => {
      expect((await post(t, batchOf('warmup'))).status).toBe(200);
      await t.app.services.db.pglite!.close();
      expect503(await post(t, batchOf('closed')));
      const gql = await t.gql(`mutation($input: AppendBatchInput!) { appendBatch(input: $input) { inserted } }`, { input: batchOf('closed') });
      expect(gql.errors?.[0]?.extensions?.code).toBe('DATABASE_UNAVAILABLE');
      const blob = await fetch(`${t.origin}/ledger/blob/${sha('anything')}`, { headers: t.auth });
      expect(blob.status).toBe(503);
      expect(blob.headers.get('retry-after')).toMatch(/^\d+$/);
    });
    return;
  }

  const { begin: refuse, end: allowConnections } = databaseOutage(() => t.db.url!);

  it('answers 503 with Retry-After while connections are refused, then takes the retry with nothing lost', async () => {
    await sql!.close();
    const batch = batchOf('refused');
    await refuse();
    try {
      expect503(await post(t, batch));
      expect503(await post(t, batch));
    } finally {
      await allowConnections();
    }
    sql = await rawSql(t.db);
    expect(await sql.query(`SELECT id FROM ledger_event WHERE id LIKE 'outage-refused-%'`)).toEqual([]);
    const retried = await post(t, batch);
    expect(retried).toMatchObject({ status: 200, body: { received: 3, inserted: 3, duplicates: 0, position: '5' } });
    expect((await post(t, batch)).body).toMatchObject({ inserted: 0, duplicates: 3 });
    expect((await sql.query(`SELECT count(*)::int AS n FROM ledger_batch WHERE collector = 'outage-refused'`))[0]).toEqual({ n: 2 });
  });

  it('answers 503 when the connection dies inside the transaction, with nothing of the batch written', async () => {
    await sql!.exec(`
      CREATE FUNCTION test_stall() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(60); RETURN NEW; END; $$;
      CREATE TRIGGER test_stall BEFORE INSERT ON ledger_batch FOR EACH ROW WHEN (NEW.collector = 'outage-stalled') EXECUTE FUNCTION test_stall();
    `);
    const batch = batchOf('stalled');
    const pending = post(t, batch);
    // Wait until the batch's transaction has inserted its blobs and events and sits in the trigger.
    const name = new URL(t.db.url!).pathname.slice(1);
    for (let i = 0; ; i++) {
      const rows = await sql!.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event = 'PgSleep'`, [name]);
      if (rows.length) break;
      if (i === 500) throw new Error('the batch never reached the stalling trigger');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await sql!.close();
    await refuse();
    try {
      expect503(await pending);
    } finally {
      await allowConnections();
    }
    sql = await rawSql(t.db);
    const hashes = batch.events.map((e) => sha((e.payload as { text: string }).text));
    expect(await sql.query(`SELECT id FROM ledger_event WHERE id LIKE 'outage-stalled-%'`)).toEqual([]);
    expect(await sql.query(`SELECT sha256 FROM blob WHERE sha256 = ANY($1::text[])`, [hashes])).toEqual([]);
    expect(await sql.query(`SELECT id FROM ledger_batch WHERE collector = 'outage-stalled'`)).toEqual([]);
    expect(await sql.query(`SELECT id FROM collector WHERE id = 'outage-stalled'`)).toEqual([]);
    await sql.exec(`DROP TRIGGER test_stall ON ledger_batch`);
    expect(await post(t, batch)).toMatchObject({ status: 200, body: { inserted: 3, duplicates: 0, position: '5' } });
    expect((await sql.query(`SELECT count(*)::int AS n FROM blob WHERE sha256 = ANY($1::text[])`, [hashes]))[0]).toEqual({ n: 3 });
  });
});
