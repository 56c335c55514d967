// Reads of model traffic: ledgerCounts by MODEL, AGENT and TASK with tokens and cost summed exactly
// (checked against the fake's own figures at the row prices), and a model row's link to its events.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelApp, type ModelApp } from './helpers.ts';

let t: ModelApp;
beforeAll(async () => {
  t = await startModelApp();
}, 60_000);
afterAll(async () => t?.stop());

/** Units of 10^-10 USD for one call at per-million prices given in 10^-10 units per token. */
const units = (u: { input: number; output: number; cached: number }, p: { input: bigint; output: bigint; cached: bigint }) =>
  (BigInt(u.input - u.cached) * p.input + BigInt(u.cached) * p.cached + BigInt(u.output) * p.output + 500_000n) / 1_000_000n;
const usd = (v: bigint) => `${v / 10n ** 10n}.${(v % 10n ** 10n).toString().padStart(10, '0')}`;
const gpt = { input: 1_500_000_000n, output: 6_000_000_000n, cached: 750_000_000n };
const claude = { input: 30_000_000_000n, output: 150_000_000_000n, cached: 3_000_000_000n };

describe('model reads', () => {
  it('ledgerCounts by MODEL, AGENT and TASK sum tokens and cost exactly; Model.events lists the calls', async () => {
    const openai = (agent: string, task: string) =>
      new OpenAI({ baseURL: `${t.origin}/v1`, apiKey: t.token, maxRetries: 0, defaultHeaders: { 'x-dirledger-agent': agent, 'x-dirledger-task': task } });
    const anthropic = new Anthropic({
      baseURL: t.origin,
      apiKey: t.token,
      maxRetries: 0,
      defaultHeaders: { 'x-dirledger-agent': 'writer', 'x-dirledger-task': 'T-2' },
    });
    const expected = new Map<string, { n: number; input: number; output: number; cost: bigint }>();
    const add = (key: string, u: { input: number; output: number; cached: number }, cost: bigint) => {
      const e = expected.get(key) ?? { n: 0, input: 0, output: 0, cost: 0n };
      expected.set(key, { n: e.n + 1, input: e.input + u.input, output: e.output + u.output, cost: e.cost + cost });
    };
    for (const [i, [agent, task]] of [
      ['planner', 'T-1'],
      ['planner', 'T-2'],
      ['coder', 'T-1'],
    ].entries()) {
      await openai(agent!, task!).chat.completions.create({
        model: 'fake-gpt',
        messages: [{ role: 'user', content: `call ${i} FAKE_CACHED` }],
        max_tokens: 3 + i,
      });
      const u = t.fake.calls.at(-1)!.usage!;
      const cost = units(u, gpt);
      for (const key of ['fake-gpt', agent!, task!]) add(key, u, cost);
    }
    await anthropic.messages.create({ model: 'fake-claude-sonnet', max_tokens: 11, messages: [{ role: 'user', content: 'hi FAKE_CACHED' }] });
    const u = t.fake.calls.at(-1)!.usage!;
    for (const key of ['fake-claude-sonnet', 'writer', 'T-2']) add(key, u, units(u, claude));
    await new Promise((r) => setTimeout(r, 100));
    await t.app.services.writer.flush();
    for (const by of ['MODEL', 'AGENT', 'TASK']) {
      const r = await t.gql(
        `query($by: LedgerGrouping!) { ledgerCounts(by: $by, filter: { kind: ["MODEL_RESULT"] }) { key events inputTokens outputTokens costUsd } }`,
        { by },
      );
      expect(r.errors).toBeUndefined();
      for (const row of r.data.ledgerCounts) {
        const e = expected.get(row.key)!;
        expect(e, `${by} ${row.key}`).toBeDefined();
        expect({ events: row.events, input: Number(row.inputTokens), output: Number(row.outputTokens), cost: String(row.costUsd) }).toEqual({
          events: e.n,
          input: e.input,
          output: e.output,
          cost: usd(e.cost).replace(/0+$/, '').replace(/\.$/, ''),
        });
      }
      expect(r.data.ledgerCounts).toHaveLength(by === 'MODEL' ? 2 : by === 'AGENT' ? 3 : 2);
    }
    const m = await t.gql(
      `{ model(name: "fake sonnet") { name provider wire upstreamModel price { id input output cached date } events(first: 10) { edges { node { kind model inputTokens } } } } }`,
    );
    expect(m.errors).toBeUndefined();
    expect(m.data.model).toMatchObject({
      name: 'fake-claude-sonnet',
      provider: 'anthropic',
      wire: 'anthropic',
      upstreamModel: 'claude-upstream-id',
      price: { input: '3', output: '15', cached: '0.30' },
    });
    expect(m.data.model.events.edges.map((e: any) => e.node.kind)).toEqual(['REQUEST', 'MODEL_CALL', 'MODEL_RESULT', 'RESPONSE']);
    const models = await t.gql('{ models { name unboundSecrets } }');
    expect(models.data.models.find((x: any) => x.name === 'unbound-gpt').unboundSecrets).toEqual(['NOT_BOUND_KEY']);
  });
});
