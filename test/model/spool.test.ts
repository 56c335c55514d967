// Record before send at the model door: a call whose MODEL_CALL the spool cannot make durable is
// answered 503 + Retry-After in the provider's shape (SPOOL_UNAVAILABLE), nothing reaches the
// upstream, and a budget's hold is given back; a spool that takes nothing at all refuses before routing.
import type { FileHandle } from 'node:fs/promises';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpoolIo } from '../../src/ledger/spool-files.ts';
import { databaseKinds } from '../helpers/database.ts';
import { startModelApp, type ModelApp } from './helpers.ts';

/** The real file operations, failing like a full disk for every write, or for writes holding `failWhen`. */
function faultyIo() {
  const state: { full: boolean; failWhen: string | undefined } = { full: false, failWhen: undefined };
  const io: SpoolIo = {
    async write(file: FileHandle, bytes: Buffer, position: number) {
      if (state.full || (state.failWhen && bytes.includes(state.failWhen))) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      let offset = 0;
      while (offset < bytes.length) offset += (await file.write(bytes, offset, bytes.length - offset, position + offset)).bytesWritten;
    },
    sync: (file) => file.datasync(),
  };
  return { io, state };
}

describe.each(databaseKinds)('the model door when the spool cannot take the call (%s)', (kind) => {
  let t: ModelApp;
  const faults = faultyIo();
  const openai = (key: string) => new OpenAI({ baseURL: `${t.origin}/v1`, apiKey: key, maxRetries: 0 });
  const body = { model: 'fake-gpt', messages: [{ role: 'user' as const, content: 'spool me' }], max_tokens: 5 };

  beforeAll(async () => {
    t = await startModelApp(kind, { SPOOL_LINGER_MS: '600000' }, { spoolIo: faults.io });
  }, 60_000);
  afterAll(async () => t?.stop());

  it('refuses 503 + Retry-After in each provider shape when its MODEL_CALL cannot be made durable; nothing is sent, the hold is given back', async () => {
    const budgeted = t.mint('cost <= 1');
    const sentBefore = t.fake.calls.length;
    faults.state.failWhen = '"kind":"MODEL_CALL"';
    let fromOpenai: any;
    let fromAnthropic: any;
    try {
      fromOpenai = await openai(budgeted)
        .chat.completions.create(body)
        .catch((e) => e);
      fromAnthropic = await new Anthropic({ baseURL: t.origin, apiKey: t.token, maxRetries: 0 }).messages
        .create({ model: 'fake-claude-sonnet', max_tokens: 5, messages: [{ role: 'user', content: 'spool me' }] })
        .catch((e) => e);
    } finally {
      faults.state.failWhen = undefined;
    }
    expect(fromOpenai).toBeInstanceOf(OpenAI.APIError);
    expect(fromOpenai.status).toBe(503);
    expect(fromOpenai.headers.get('retry-after')).toBe('1');
    expect(fromOpenai.error).toMatchObject({ type: 'api_error', code: 'SPOOL_UNAVAILABLE', message: expect.stringMatching(/nothing was sent/i) });
    expect(fromAnthropic).toBeInstanceOf(Anthropic.APIError);
    expect(fromAnthropic.status).toBe(503);
    expect(fromAnthropic.headers.get('retry-after')).toBe('1');
    expect(fromAnthropic.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', code: 'SPOOL_UNAVAILABLE' } });
    expect(t.fake.calls.length).toBe(sentBefore);
    // Never said to have been sent: no MODEL_CALL for either; the budget holds nothing and spent nothing.
    await t.app.services.writer.flush();
    const calls = await t.app.services.db.prisma.ledgerEvent.findMany({
      where: { kind: 'MODEL_CALL', actionId: { in: [fromOpenai, fromAnthropic].map((e) => e.headers.get('x-dirledger-action') ?? '') } },
    });
    expect(calls).toEqual([]);
    const budgets = (await t.gql(`query($t: String!) { inspectToken(token: $t) { budgets { spent held } } }`, { t: budgeted })).data.inspectToken.budgets;
    expect(budgets).toEqual([{ spent: '0.0000000000', held: '0.0000000000' }]);

    // The same token's next call, with the spool healthy again, runs and is charged.
    const { response } = await openai(budgeted).chat.completions.create(body).withResponse();
    expect(t.fake.calls.length).toBe(sentBefore + 1);
    const events = await t.events(response.headers.get('x-dirledger-action')!);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'MODEL_CALL/OUT', 'MODEL_RESULT/IN', 'RESPONSE/OUT']);
  });

  it('refuses 503 before anything is sent when nothing can be written at all, then recovers', async () => {
    const sentBefore = t.fake.calls.length;
    faults.state.full = true;
    let refused: any;
    try {
      refused = await openai(t.token)
        .chat.completions.create({ ...body, stream: true })
        .catch((e) => e);
    } finally {
      faults.state.full = false;
    }
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(t.fake.calls.length).toBe(sentBefore);
    const done = await openai(t.token).chat.completions.create(body);
    expect(done.choices[0]!.message.content).toBe('w0 w1 w2 w3 w4');
    expect(t.fake.calls.length).toBe(sentBefore + 1);
  });
});
