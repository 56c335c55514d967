// Hostile input at the model doors: NUL, lone surrogates, invalid UTF-8, 10,000-deep JSON, a huge body,
// and a canary secret (the upstream key itself, spelled three ways in prompts, JSON and streamed): every bad
// request is a 4xx in the provider's shape, recorded, nothing sent upstream; no stored byte holds a secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canaryLeaks } from '../helpers/canary.ts';
import { deepJson, send } from '../helpers/hostile.ts';
import { startModelApp, UPSTREAM_KEY, type ModelApp } from './helpers.ts';

let t: ModelApp;
beforeAll(async () => {
  t = await startModelApp('pglite', { PAYLOAD_MAX_BYTES: String(256 * 1024) });
}, 60_000);
afterAll(async () => t?.stop());

const chat = (body: string | Buffer) => send(t, '/v1/chat/completions', { body });
const messages = (body: string | Buffer) => send(t, '/v1/messages', { body, headers: { 'anthropic-version': '2023-06-01' } });

describe('hostile input at the model doors', () => {
  it('refuses bad bodies with a 4xx in the provider shape and sends nothing upstream', async () => {
    const before = t.fake.calls.length;
    const cases: [string, Promise<Awaited<ReturnType<typeof chat>>>, number][] = [
      ['NUL in the model name', chat(JSON.stringify({ model: 'fake-gpt\u0000', messages: [] })), 400],
      ['lone surrogate in the model name', chat('{"model":"fake-\\ud800gpt","messages":[]}'), 400],
      ['invalid UTF-8', chat(Buffer.from([0x7b, 0x22, 0x6d, 0xff, 0xfe, 0x22, 0x7d])), 400],
      ['10,000-deep JSON', chat(`{"model":"fake-gpt","messages":${deepJson(10_000)}}`), 400],
      ['not JSON', chat('model=fake-gpt'), 400],
      ['no model', chat('{"messages":[]}'), 400],
      ['a model name of 100,000 characters', chat(JSON.stringify({ model: 'x'.repeat(100_000) })), 400],
      ['a huge body', chat(JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'x'.repeat(300 * 1024) }] })), 413],
    ];
    for (const [what, answer, status] of cases) {
      const a = await answer;
      expect(a.status, what).toBe(status);
      expect(a.json.error.type, what).toMatch(/invalid_request_error/);
      expect(a.ms, what).toBeLessThan(5_000);
    }
    const anthropic = await messages(`{"model":"fake-claude-sonnet","max_tokens":1,"messages":${deepJson(10_000)}}`);
    expect(anthropic.status).toBe(400);
    expect(anthropic.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const huge = await messages(JSON.stringify({ model: 'fake-claude-sonnet', max_tokens: 1, messages: [{ role: 'user', content: 'y'.repeat(300 * 1024) }] }));
    expect(huge.status).toBe(413);
    expect(huge.json).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
    expect(t.fake.calls.length).toBe(before);
    // Each refused request is still recorded at the boundary: its request IN and answer OUT.
    await t.app.services.writer.flush();
    const outs = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'RESPONSE', status: { in: ['400', '413'] } } });
    expect(outs.filter((e) => (e.metadata as any).door === 'MODEL').length).toBeGreaterThanOrEqual(cases.length + 2);
  });

  it('NUL and lone surrogates inside the content are content: forwarded as sent and recorded losslessly', async () => {
    const body = '{"model":"fake-gpt","messages":[{"role":"user","content":"a\\u0000b \\ud800 c"}],"max_tokens":2}';
    const a = await chat(body);
    expect(a.status).toBe(200);
    expect(t.fake.calls.at(-1)!.body.toString()).toBe(body);
    await t.app.services.writer.flush();
    const [call] = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'MODEL_CALL' }, orderBy: { position: 'desc' }, take: 1 });
    expect(await t.payloadText(call!.payloadSha256)).toBe(body);
  });

  it('the upstream key, sent in prompts (raw, percent-encoded, base64), is stored nowhere', async () => {
    const spelled = [UPSTREAM_KEY, encodeURIComponent(UPSTREAM_KEY), Buffer.from(UPSTREAM_KEY).toString('base64')];
    for (const s of spelled) {
      expect((await chat(JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: `my key is ${s}` }], max_tokens: 3 }))).status).toBe(200);
      const stream = await chat(JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: `key ${s}` }], max_tokens: 3, stream: true }));
      expect(stream.status).toBe(200);
    }
    // The upstream did receive the key where the contract puts it.
    expect(t.fake.calls.at(-1)!.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    await new Promise((r) => setTimeout(r, 200));
    await t.app.services.writer.flush();
    const sql = t.app.services.db.sql;
    for (const table of ['ledger_event', 'model_price', 'token_spend', 'contract_version', 'directory_row']) {
      const rows = await sql.query<{ r: string }>(`SELECT row_to_json(x)::text AS r FROM "${table}" x`);
      for (const row of rows) expect(canaryLeaks(row.r, UPSTREAM_KEY), table).toEqual([]);
    }
    const blobs = await sql.query<{ sha256: string }>('SELECT sha256 FROM blob');
    expect(blobs.length).toBeGreaterThan(6);
    for (const blob of blobs) expect(canaryLeaks((await t.app.services.ledger.readBlob(blob.sha256))!, UPSTREAM_KEY), blob.sha256).toEqual([]);
  });
});
