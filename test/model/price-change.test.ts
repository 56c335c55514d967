// A model row's price changed in the Directory: the next call is charged at the new row, and names it,
// while the call before keeps the row it was charged with (prices are parsed once per row, never per model name).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startModelApp, type ModelApp } from './helpers.ts';

let t: ModelApp;
beforeAll(async () => {
  t = await startModelApp();
}, 60_000);
afterAll(async () => t?.stop());

async function chat(): Promise<any> {
  const response = await fetch(`${t.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'price check' }], max_tokens: 5 }),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  const events = await t.events(response.headers.get('x-dirledger-action')!);
  return events.find((e) => e.kind === 'MODEL_RESULT');
}

/** Cost in USD of `input` and `output` tokens at per-million prices, as the 10-place decimal the ledger stores. */
const cost = (input: number, output: number, perMillion: { input: number; output: number }) =>
  ((input * perMillion.input + output * perMillion.output) / 1e6).toFixed(10);

it('a changed price charges the next call at the new row; the call before keeps its own', async () => {
  const before = await chat();
  expect(before.costUsd.toFixed(10)).toBe(cost(before.inputTokens, before.outputTokens, { input: 0.15, output: 0.6 }));

  const file = path.join(t.app.services.config.DIRECTORY_DIR!, 'model.csv');
  const csv = await readFile(file, 'utf8');
  const fakeGpt = csv.split('\n').find((line) => line.startsWith('fake-gpt,'))!;
  expect(fakeGpt).toContain(',0.15,0.60,');
  await writeFile(file, csv.replace(fakeGpt, fakeGpt.replace(',0.15,0.60,', ',0.45,1.80,')));
  await t.app.services.directory.build();

  const after = await chat();
  expect(after.costUsd.toFixed(10)).toBe(cost(after.inputTokens, after.outputTokens, { input: 0.45, output: 1.8 }));
  expect(after.metadata.price.id).not.toBe(before.metadata.price.id);
  expect(before.costUsd.toFixed(10)).toBe(cost(before.inputTokens, before.outputTokens, { input: 0.15, output: 0.6 }));
});
