// Record before send: when the upstream receives a model call, its MODEL_CALL is already on disk in
// the durable spool (the bytes it carries are found there, written before the first byte left).
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { defaultIo, type SpoolIo } from '../../src/ledger/spool-files.ts';
import { unframe } from '../../src/ledger/spool-frame.ts';
import { startFakeUpstream, type FakeUpstream } from '../../src/model/fake-upstream.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { modelDirectory, UPSTREAM_KEY } from './helpers.ts';

let t: TestApp;
let fake: FakeUpstream;
let dir: string;
/** For each request the upstream received: whether the spool already held its body. */
const seenInSpool: boolean[] = [];

beforeAll(async () => {
  fake = await startFakeUpstream(0, '127.0.0.1', {
    onRequest(body) {
      const marker = /MARKER-[0-9a-f]+/.exec(body.toString())?.[0];
      if (!marker) return;
      const spool = path.join(t.dataDir, 'spool');
      // The MODEL_CALL's own frame holds the marker (the REQUEST/IN holds it too, and may be written alone).
      const held = readdirSync(spool).some((f) => {
        let text: string;
        try {
          text = readFileSync(path.join(spool, f), 'latin1');
        } catch {
          return false;
        }
        return text.split('"kind":"').some((rest) => rest.startsWith('MODEL_CALL"') && rest.includes(marker));
      });
      seenInSpool.push(held);
    },
  });
  dir = await modelDirectory(fake.origin);
  t = await startTestApp('pglite', { DIRECTORY_DIR: dir, DIRECTORY_WATCH_MS: '0', DIRLEDGER_SECRET_OPENAI_API_KEY: UPSTREAM_KEY });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await fake?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('record before send', () => {
  it('every call the upstream receives is already in the spool, streamed or not', async () => {
    const client = new OpenAI({ baseURL: `${t.origin}/v1`, apiKey: t.token, maxRetries: 0 });
    for (let i = 0; i < 6; i++) {
      const content = `MARKER-${(1000 + i).toString(16)}abc`;
      if (i % 2) for await (const _ of await client.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content }], stream: true }));
      else await client.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content }] });
    }
    expect(seenInSpool).toEqual([true, true, true, true, true, true]);
  });

  it('a stream read to its end has its answer IN and its answer OUT in the spool already, however slow the disk', async () => {
    // Writes holding a stream's closing records take 300 ms: the client's end must wait for them.
    const slowIo: SpoolIo = {
      async write(file, bytes, position) {
        if (bytes.includes('MODEL_RESULT') || bytes.includes(':door:answer')) await sleep(300);
        await defaultIo.write(file, bytes, position);
      },
      sync: async () => {},
    };
    const slow = await startTestApp(
      'pglite',
      { DIRECTORY_DIR: dir, DIRECTORY_WATCH_MS: '0', DIRLEDGER_SECRET_OPENAI_API_KEY: UPSTREAM_KEY },
      { spoolIo: slowIo },
    );
    try {
      const spooled = (actionId: string) => {
        const spool = path.join(slow.dataDir, 'spool');
        const kinds: string[] = [];
        for (const f of readdirSync(spool).filter((n) => n.endsWith('.spool')))
          for (const event of unframe(readFileSync(path.join(spool, f))).events)
            if (event.id.startsWith(`${actionId}:`)) kinds.push(`${event.kind}/${event.direction}`);
        return kinds.sort();
      };
      for (let i = 0; i < 2; i++) {
        const answer = await fetch(`${slow.origin}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${slow.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: `read to the end ${i}` }], stream: true }),
        });
        expect(answer.status).toBe(200);
        const actionId = answer.headers.get('x-dirledger-action')!;
        expect(await answer.text()).toContain('data: [DONE]');
        expect(spooled(actionId)).toEqual(['MODEL_CALL/OUT', 'MODEL_RESULT/IN', 'REQUEST/IN', 'RESPONSE/OUT']);
      }
    } finally {
      await slow.stop();
    }
  });
});
