// The seed's names-only projection: names alone, one a line (GET /api/directory?names=1), measured by
// directoryStats beside the name/type/kind listing and the one with descriptions.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp('pglite');
});
afterAll(async () => t?.stop());

const get = (query: string) => fetch(`${t.origin}/api/directory${query}`, { headers: t.auth });

it('GET /api/directory?names=1 is every name alone, in the listing order; directoryStats counts its bytes and ratio', async () => {
  const alone = await get('?names=1');
  expect(alone.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  const text = await alone.text();
  const listed = (await (await get('')).json()) as { name: string }[];
  expect(text).toBe(listed.map((r) => `${r.name}\n`).join(''));
  expect(alone.headers.get('x-directory-rows')).toBe(String(listed.length));
  const full = await (await get('?full=1')).text();
  const { data, errors } = await t.gql(
    '{ directoryStats { rows namesOnlyBytes withDescriptionsBytes namesAloneBytes namesAloneRatio namesAloneTokensEstimate ratio } }',
  );
  expect(errors).toBeUndefined();
  const stats = data.directoryStats;
  expect(stats.namesAloneBytes).toBe(Buffer.byteLength(text));
  expect(stats.withDescriptionsBytes).toBe(Buffer.byteLength(full));
  expect(stats.namesAloneRatio).toBe(Math.round((Buffer.byteLength(full) / Buffer.byteLength(text)) * 10) / 10);
  expect(stats.namesAloneRatio).toBeGreaterThan(stats.ratio);
  const tools = await (await get('?names=1&type=tool')).text();
  expect(tools.split('\n')).toEqual(expect.arrayContaining(['ECHO', 'CLOCK']));
});

it('a type holding NUL or a lone surrogate is a 400 naming it', async () => {
  for (const type of ['%00', '%ED%A0%80']) {
    const response = await get(`?names=1&type=${type}`);
    expect(response.status, type).toBeLessThan(500);
  }
  const nul = await get('?type=a%00');
  expect(nul.status).toBe(400);
  expect(((await nul.json()) as any).error.message).toBe('Invalid type: expected plain text, got a NUL character.');
});
