// The seed's three live queries, on a directory holding such rows and on the seed-scale fixture.
import { beforeAll, describe, expect, it } from 'vitest';
import { generateDirectory } from '../../src/directory/fixtures.ts';
import { parseAliasTable } from '../../src/resolver/aliases.ts';
import { buildResolverIndex, type ResolverIndex } from '../../src/resolver/build.ts';
import { resolverRowsFromSections } from '../../src/resolver/from-sections.ts';
import { resolve } from '../../src/resolver/resolve.ts';
import type { ResolverRow } from '../../src/resolver/types.ts';
import { fixtureAliasJson } from './labelled.ts';

const seedLike: ResolverRow[] = [
  { name: 'IMSG_SEND', type: 'tool', kind: 'cli', description: 'Send an iMessage from the Mac to a phone number or Apple ID.' },
  { name: 'IMSG_LIST_CHATS', type: 'tool', kind: 'cli', description: 'List recent iMessage chats.' },
  { name: 'IMSG_READ_THREAD', type: 'tool', kind: 'cli', description: 'Read one iMessage thread.' },
  { name: 'IMSG_REACT', type: 'tool', kind: 'cli', description: 'Add a tapback to a message.' },
  { name: 'BLOOIO_SEND_MESSAGE', type: 'tool', kind: 'http', description: 'Send a message through the Blooio line.' },
  { name: 'BLOOIO_LIST_NUMBERS', type: 'tool', kind: 'http', description: 'List Blooio numbers.' },
  { name: 'BLOOIO_GET_STATUS', type: 'tool', kind: 'http', description: 'Delivery status of a Blooio message.' },
  { name: 'BLOOIO_WEBHOOK_SECRET', type: 'credential', kind: 'secret', description: 'Signs Blooio webhooks.' },
  { name: 'TERMINAL_KEY', type: 'credential', kind: 'secret', description: 'The key for the terminal relay.' },
  { name: 'TERMINAL_RUN', type: 'tool', kind: 'cli', description: 'Run a command in the terminal.' },
  { name: 'ARTICLE_PUBLISH', type: 'tool', kind: 'http', description: 'Publish an article.' },
  { name: 'tests/resolver/aliases_tests.json', type: 'file', description: 'Alias fixtures.' },
  { name: 'tests/ledger_tests.py', type: 'file', description: 'Ledger tests.' },
];
const seedAliases = [
  { words: 'imessage', patterns: ['IMSG_', 'IMESSAGE', 'BLOOIO'] },
  { words: 'article', patterns: ['ARTICLE_', 'WRITE_ARTICLE', 'ARTICLES'] },
];

function expectSeedBehaviour(index: ResolverIndex, viaAliasTop: boolean) {
  const imessage = resolve(index, 'send an imessge', { limit: 20 });
  expect(imessage.readAs).toEqual(['send', 'imessage']);
  expect(imessage.corrections).toEqual([{ from: 'imessge', to: 'imessage', distance: 1 }]);
  const send = imessage.matches.find((m) => m.row.name === 'IMSG_SEND')!;
  expect(send).toMatchObject({ layer: 'ALIAS', matchedWords: ['imessage', 'send'] });
  expect(send.score).toBeGreaterThanOrEqual(750);
  expect(send.score).toBeLessThanOrEqual(772);
  expect(send.reason).toContain('one of the words means this row');
  expect(send.reason).toContain('"imessge" read as "imessage"');
  if (viaAliasTop) expect(imessage.matches[0]).toBe(send);

  const key = resolve(index, 'where is my terminal key');
  expect(key.readAs).toEqual(['terminal', 'key']);
  expect(key.matches[0]).toMatchObject({
    row: { name: 'TERMINAL_KEY', type: 'credential' },
    score: 850,
    layer: 'EXACT_WORDS',
    reason: 'the row is named exactly the words of the query',
  });

  const tiktok = resolve(index, 'tiktok', { limit: 100 });
  expect(tiktok.readAs).toEqual(['tiktok']);
  if (tiktok.matches.length) {
    for (const m of tiktok.matches) {
      expect(m).toMatchObject({ score: 200, layer: 'SOUNDS_LIKE', matchedWords: ['tiktok'] });
      expect(m.reason).toMatch(/^one word of the query sounds like part of the name: "tiktok" sounds like "\w+" \(Soundex T232\)$/);
    }
    expect(tiktok.matches.some((m) => m.row.name.startsWith('tests/'))).toBe(true);
  } else {
    expect(tiktok.message).toBe('Nothing in the Directory is called, or means, "tiktok". Every row is listed at GET /api/directory');
  }
}

describe("the seed's three examples", () => {
  it('on a directory holding such rows, as the seed reports them (IMSG_SEND at 764)', () => {
    const index = buildResolverIndex(seedLike, seedAliases);
    expect(index.aliasProblems.map((p) => p.pattern)).toEqual(['IMESSAGE', 'WRITE_ARTICLE', 'ARTICLES']);
    expectSeedBehaviour(index, true);
    expect(resolve(index, 'send an imessge').matches[0]).toMatchObject({ row: { name: 'IMSG_SEND' }, score: 764 });
  });

  describe('on the seed-scale fixture', () => {
    let index: ResolverIndex;
    beforeAll(() => {
      index = buildResolverIndex(resolverRowsFromSections(generateDirectory({ rows: 24890, seed: 1 })), parseAliasTable(fixtureAliasJson()));
    });
    it('behaves the same (its IMESSAGE_SEND tool is named exactly the words, so it ranks above the alias rows)', () => {
      expectSeedBehaviour(index, false);
      expect(resolve(index, 'send an imessge').matches[0]).toMatchObject({ row: { name: 'IMESSAGE_SEND' }, score: 850 });
    });
  });
});
