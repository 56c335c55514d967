// Authority over model spend: `models`, `tokens <= N` and `cost <= X`, checked before a call is sent,
// shared by narrowed tokens, exact under concurrency; every refusal a ledger row naming the limit.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authority } from '../../src/auth/authority.ts';
import { databaseKinds } from '../helpers/database.ts';
import { startModelApp, type ModelApp } from './helpers.ts';

describe.each(databaseKinds)('model budgets on %s', (kind) => {
  let t: ModelApp;
  const body = { model: 'fake-gpt', messages: [{ role: 'user' as const, content: 'budgeted call' }], max_tokens: 10 };
  /** The exact cost of one such call, in units of 10^-10 USD: every byte of the body an input token, 10 output tokens. */
  let unitsPerCall: bigint;
  const clientOf = (token: string) => new OpenAI({ baseURL: `${t.origin}/v1`, apiKey: token, maxRetries: 0 });
  const usd = (units: bigint) => `${units / 10n ** 10n}.${(units % 10n ** 10n).toString().padStart(10, '0')}`;

  beforeAll(async () => {
    t = await startModelApp(kind);
    const { response } = await clientOf(t.token).chat.completions.create(body).withResponse();
    const result = (await t.events(response.headers.get('x-dirledger-action')!)).find((e) => e.kind === 'MODEL_RESULT')!;
    expect(result.inputTokens).toBe(t.fake.calls.at(-1)!.body.length);
    unitsPerCall = BigInt(result.inputTokens) * 1500n + 10n * 6000n;
    expect(result.costUsd.toFixed(10)).toBe(usd(unitsPerCall));
  }, 60_000);
  afterAll(async () => t?.stop());

  const inspect = async (token: string) =>
    (await t.gql(`query($t: String!) { inspectToken(token: $t) { budgets { caveat unit max spent held left } } }`, { t: token })).data.inspectToken.budgets;

  it('N concurrent calls against cost <= X: exactly the calls that fit run, every other is refused before it is sent and recorded', async () => {
    const token = t.mint(`cost <= ${usd(unitsPerCall * 3n)}`);
    const sentBefore = t.fake.calls.length;
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () =>
        clientOf(token)
          .chat.completions.create(body)
          .then(() => 'ok')
          .catch((e) => e),
      ),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(3);
    const refused = outcomes.filter((o) => o !== 'ok');
    expect(refused).toHaveLength(5);
    for (const e of refused) {
      expect(e).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(e.code).toBe('budget_exceeded');
      expect(e.error.limit).toBe('cost');
    }
    expect(t.fake.calls.length - sentBefore).toBe(3);
    await t.app.services.writer.flush();
    const checked = t.app.services.authority.authenticate(token, 'MODEL');
    const tokenId = checked.ok ? checked.grant.tokenId : '';
    const refusals = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL', model: 'fake-gpt' } });
    const mine = refusals.filter((r) => (r.metadata as any).tokenId === tokenId);
    expect(mine).toHaveLength(5);
    for (const r of mine) expect(r.metadata).toMatchObject({ limit: 'cost', caveat: `cost <= ${usd(unitsPerCall * 3n)}`, door: 'MODEL' });
    expect(await inspect(token)).toEqual([
      { caveat: `cost <= ${usd(unitsPerCall * 3n)}`, unit: 'cost', max: usd(unitsPerCall * 3n), spent: usd(unitsPerCall * 3n), held: usd(0n), left: usd(0n) },
    ]);
  });

  it('a narrowed token spends its parent budget; tokens <= N counts input and output', async () => {
    const parent = t.mint(`cost <= ${usd(unitsPerCall * 2n)}`);
    const child = Authority.narrow(parent, ['models = fake-gpt']);
    await clientOf(child).chat.completions.create(body);
    await clientOf(parent).chat.completions.create(body);
    const third = await clientOf(child)
      .chat.completions.create(body)
      .catch((e) => e);
    expect(third).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const perCallTokens = t.fake.calls.at(-1)!.body.length + 10;
    const tokens = t.mint(`tokens <= ${perCallTokens * 2 + 5}`);
    await clientOf(tokens).chat.completions.create(body);
    await clientOf(tokens).chat.completions.create(body);
    const over = await clientOf(tokens)
      .chat.completions.create(body)
      .catch((e) => e);
    expect(over.error.limit).toBe('tokens');
    expect((await inspect(tokens))[0]).toMatchObject({ unit: 'tokens', spent: String(perCallTokens * 2), left: '5', held: '0' });
  });

  it('models = … refuses other rows; a budget needs a bounded output; a failed call gives its hold back', async () => {
    const only = t.mint('models = fake-c*');
    const e = await clientOf(only)
      .chat.completions.create(body)
      .catch((x) => x);
    expect(e).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(e.code).toBe('model_not_allowed');
    expect(e.error.caveat).toBe('models = fake-c*');
    const listed = [];
    for await (const m of clientOf(only).models.list()) listed.push(m.id);
    expect(listed).toEqual(['fake-claude-sonnet']);
    const budget = t.mint('cost <= 1');
    const unbounded = await clientOf(budget)
      .chat.completions.create({ model: 'fake-unbounded', messages: [{ role: 'user', content: 'x' }] })
      .catch((x) => x);
    expect(unbounded.message).toContain('max_tokens');
    const failed = await clientOf(budget)
      .chat.completions.create({ ...body, messages: [{ role: 'user', content: 'FAKE_ERROR_500' }] })
      .catch((x) => x);
    expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
    expect((await inspect(budget))[0]).toMatchObject({ spent: usd(0n), held: usd(0n) });
  });
});
