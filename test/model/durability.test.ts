// Record before send: when the upstream receives a model call, its MODEL_CALL is already on disk in
// the durable spool (the bytes it carries are found there, written before the first byte left).
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
