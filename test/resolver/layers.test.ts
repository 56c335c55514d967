// Every layer's score boundary, the alias band, the edit budget, tie-breaks, options and errors.
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.ts';
import { aliasSpecificity, buildResolverIndex } from '../../src/resolver/build.ts';
import { aliasScore } from '../../src/resolver/layers.ts';
import { resolve } from '../../src/resolver/resolve.ts';
import { editBudget, osaDistance, soundex, stripFraming, queryWords } from '../../src/resolver/text.ts';
import type { ResolverRow } from '../../src/resolver/types.ts';

const rows: ResolverRow[] = [
  { name: 'IMSG_SEND', type: 'tool', description: 'Send an iMessage from the Mac.' },
  { name: 'IMSG_LIST_CHATS', type: 'tool', description: 'List recent iMessage chats.' },
  { name: 'BLOOIO_SEND_MESSAGE', type: 'tool', description: 'Send a message through the Blooio line.' },
  { name: 'TERMINAL_KEY', type: 'credential', description: 'The key the terminal relay signs with.' },
  { name: 'TERMINAL_RUN', type: 'tool', description: 'Run a shell command on the build machine.' },
  { name: 'KEY_TERMINAL', type: 'variable', description: 'Which key the terminal uses.' },
  { name: 'STRIPE_CREATE_INVOICE', type: 'tool', description: 'Create an invoice for a customer.', text: ['billing'] },
  { name: 'tests/ledger.test.ts', type: 'file', description: 'Ledger tests.' },
  { name: 'weekly-digest', type: 'flow', description: 'Collects the week into one summary email.' },
];
const index = buildResolverIndex(rows, [
  { words: 'imessage', patterns: ['IMSG_', 'BLOOIO'] },
  { words: 'relay secret', patterns: ['=TERMINAL_KEY'] },
]);
const top = (query: string, options = {}) => resolve(index, query, options).matches[0];
const scores = (query: string, options = {}) => resolve(index, query, options).matches.map((m) => [m.row.name, m.score, m.layer]);

describe('layers and their scores', () => {
  it('1000: the name is the query, case-insensitive, with _ - and space equivalent', () => {
    for (const q of ['IMSG_SEND', 'imsg send', 'Imsg-Send', '  imsg_send  ', 'imsg__send?']) {
      expect(top(q)).toMatchObject({ score: 1000, layer: 'EXACT_NAME', reason: 'its name is the query' });
      expect(top(q)!.row.name).toBe('IMSG_SEND');
    }
  });

  it('900: the query is the start of the name (not the whole name)', () => {
    expect(scores('imsg_se')).toEqual([['IMSG_SEND', 900, 'NAME_PREFIX']]);
    expect(scores('imsg').slice(0, 2)).toEqual([
      ['IMSG_SEND', 900, 'NAME_PREFIX'],
      ['IMSG_LIST_CHATS', 900, 'NAME_PREFIX'],
    ]);
  });

  it('850: the name is exactly the words of the query, in any order and after framing', () => {
    expect(top('key terminal')!.row.name).toBe('KEY_TERMINAL'); // 1000 beats 850
    const answer = resolve(index, 'where is my terminal key');
    expect(answer.readAs).toEqual(['terminal', 'key']);
    expect(answer.matches.slice(0, 2).map((m) => [m.row.name, m.score, m.layer])).toEqual([
      ['TERMINAL_KEY', 850, 'EXACT_WORDS'],
      ['KEY_TERMINAL', 850, 'EXACT_WORDS'],
    ]);
    expect(top('send the imsg')).toMatchObject({ score: 850, layer: 'EXACT_WORDS', row: { name: 'IMSG_SEND' } });
  });

  it('800: every word of the query is a word of the name, which has more', () => {
    expect(scores('chats imsg')).toEqual([['IMSG_LIST_CHATS', 800, 'NAME_WORDS']]);
    expect(top('invoice stripe')).toMatchObject({ score: 800, layer: 'NAME_WORDS', matchedWords: ['invoice', 'stripe'] });
  });

  it('750–772: a word is an alias; a more specific alias scores higher; other words in the name add points', () => {
    const answer = resolve(index, 'imessage');
    expect(answer.matches.map((m) => [m.row.name, m.score, m.layer])).toEqual([
      // BLOOIO names one row (specificity 10); IMSG_ names two (9).
      ['BLOOIO_SEND_MESSAGE', 760, 'ALIAS'],
      ['IMSG_SEND', 759, 'ALIAS'],
      ['IMSG_LIST_CHATS', 759, 'ALIAS'],
    ]);
    expect(answer.matches[1]!.reason).toContain('"imessage" is an alias for names starting IMSG_');
    // "relay secret" names exactly one row: specificity 10, no other words.
    expect(top('relay secret')).toMatchObject({ score: 760, layer: 'ALIAS', row: { name: 'TERMINAL_KEY' }, matchedWords: ['relay', 'secret'] });
    expect(scores('list imessage chats').slice(0, 1)).toEqual([['IMSG_LIST_CHATS', 759 + 12, 'ALIAS']]);
  });

  it('the alias band formula stays inside 750–772', () => {
    expect(aliasSpecificity(1)).toBe(10);
    expect(aliasSpecificity(2)).toBe(9);
    expect(aliasSpecificity(3)).toBe(8);
    expect(aliasSpecificity(4)).toBe(8);
    expect(aliasSpecificity(5)).toBe(7);
    expect(aliasSpecificity(1024)).toBe(0);
    expect(aliasSpecificity(1_000_000)).toBe(0);
    expect(aliasScore(0, 0)).toBe(750);
    expect(aliasScore(10, 0)).toBe(760);
    expect(aliasScore(8, 1)).toBe(764);
    expect(aliasScore(10, 2)).toBe(772);
    expect(aliasScore(10, 5)).toBe(772);
  });

  it('700: every word of the query is somewhere in the row (description or text columns)', () => {
    expect(scores('shell command')).toEqual([['TERMINAL_RUN', 700, 'ROW_WORDS']]);
    expect(top('billing customer')).toMatchObject({ score: 700, row: { name: 'STRIPE_CREATE_INVOICE' } });
    // More of the words in the name ranks first inside the layer.
    expect(scores('terminal key relay').slice(0, 1)).toEqual([['TERMINAL_KEY', 700, 'ROW_WORDS']]);
  });

  it('600: the name starts with the first word (as typed) and the rest is in the row', () => {
    expect(scores('stri customer')).toEqual([['STRIPE_CREATE_INVOICE', 600, 'NAME_START']]);
    expect(top('termin shell')).toMatchObject({ score: 600, layer: 'NAME_START', row: { name: 'TERMINAL_RUN' } });
  });

  it('300: a word within its edit budget of a word of a name, when no better layer holds', () => {
    const answer = resolve(index, 'termnal zqxv');
    expect(answer.readAs).toEqual(['terminal', 'zqxv']);
    expect(answer.matches.map((m) => [m.row.name, m.score, m.layer])).toEqual([
      ['KEY_TERMINAL', 300, 'EDIT_DISTANCE'],
      ['TERMINAL_KEY', 300, 'EDIT_DISTANCE'],
      ['TERMINAL_RUN', 300, 'EDIT_DISTANCE'],
    ]);
    expect(answer.matches[0]!.reason).toContain('"termnal" is one edit from "terminal"');
    expect(answer.matches[0]!.matchedWords).toEqual(['termnal']);
  });

  it('a corrected word reaches the better layers and is shown in readAs', () => {
    const answer = resolve(index, 'termnal');
    expect(answer.readAs).toEqual(['terminal']);
    expect(answer.corrections).toEqual([{ from: 'termnal', to: 'terminal', distance: 1 }]);
    expect(answer.matches[0]).toMatchObject({ score: 800, layer: 'NAME_WORDS' });
    expect(answer.matches[0]!.reason).toContain('"termnal" read as "terminal"');
    expect(resolve(index, 'teminal').readAs).toEqual(['terminal']); // deletion
    expect(resolve(index, 'tremina').readAs).toEqual(['tremina']); // two edits in a 7-letter word: over budget
  });

  it('200: a word sounds like a word of a name (Soundex), and nothing better matched', () => {
    const answer = resolve(index, 'tiktok');
    expect(answer.readAs).toEqual(['tiktok']);
    expect(answer.matches.map((m) => [m.row.name, m.score, m.layer])).toEqual([['tests/ledger.test.ts', 200, 'SOUNDS_LIKE']]);
    expect(answer.matches[0]!.reason).toBe('one word of the query sounds like part of the name: "tiktok" sounds like "tests" (Soundex T232)');
  });

  it('a row keeps only its best layer', () => {
    const names = resolve(index, 'imsg send', { limit: 100 }).matches.map((m) => m.row.name);
    expect(new Set(names).size).toBe(names.length);
    expect(top('imsg send')).toMatchObject({ score: 1000, row: { name: 'IMSG_SEND' } });
  });
});

describe('the edit budget, Soundex and distance', () => {
  it('scales with the word: 0 up to 3 letters, 1 for 4–7, 2 for 8 and more', () => {
    expect([1, 2, 3, 4, 7, 8, 12].map(editBudget)).toEqual([0, 0, 0, 1, 1, 2, 2]);
  });
  it('counts a transposition as one edit (optimal string alignment)', () => {
    expect(osaDistance('imessage', 'imesasge', 2)).toBe(1);
    expect(osaDistance('ca', 'abc', 3)).toBe(3); // OSA, not unrestricted Damerau–Levenshtein (which gives 2)
    expect(osaDistance('kitten', 'sitting', 5)).toBe(3);
    expect(osaDistance('kitten', 'sitting', 1)).toBe(2); // stops early at max + 1
  });
  it('codes Soundex the American way', () => {
    expect(['robert', 'rupert', 'tymczak', 'pfister', 'ashcraft', 'tiktok', 'tests'].map(soundex)).toEqual([
      'R163',
      'R163',
      'T522',
      'P236',
      'A261',
      'T232',
      'T232',
    ]);
  });
  it('strips framing from the start and stop words anywhere', () => {
    expect(stripFraming(queryWords('How do I send an iMessage, please?'))).toEqual(['send', 'imessage']);
    expect(stripFraming(queryWords('where is my terminal key'))).toEqual(['terminal', 'key']);
    expect(stripFraming(queryWords("can you show me what's the stripe invoice"))).toEqual(['stripe', 'invoice']);
    expect(stripFraming(queryWords('I want to run the terminal'))).toEqual(['run', 'terminal']);
  });
});

describe('ties, options and errors', () => {
  it('breaks ties by shorter name, then name, then type, then input order', () => {
    const tied = buildResolverIndex([
      { name: 'SYNC_LONGER_NAME', type: 'tool' },
      { name: 'SYNC_B', type: 'tool' },
      { name: 'SYNC_A', type: 'variable' },
      { name: 'SYNC_A', type: 'tool' },
    ]);
    expect(resolve(tied, 'sync').matches.map((m) => `${m.row.name}/${m.row.type}`)).toEqual([
      'SYNC_A/tool',
      'SYNC_A/variable',
      'SYNC_B/tool',
      'SYNC_LONGER_NAME/tool',
    ]);
  });

  it('minScore refuses lower layers and says what the best below was', () => {
    expect(resolve(index, 'imessage', { minScore: 760 }).matches.map((m) => m.row.name)).toEqual(['BLOOIO_SEND_MESSAGE']);
    const none = resolve(index, 'tiktok', { minScore: 300 });
    expect(none.matches).toEqual([]);
    expect(none.message).toBe(
      'Nothing in the Directory scored at least 300 for "tiktok"; the best was tests/ledger.test.ts (file) at 200. Every row is listed at GET /api/directory',
    );
  });

  it('limit and types narrow the answer', () => {
    expect(resolve(index, 'imsg', { limit: 1 }).matches).toHaveLength(1);
    expect(resolve(index, 'terminal key', { types: ['variable'] }).matches.map((m) => m.row.name)).toEqual(['KEY_TERMINAL']);
    expect(resolve(index, 'terminal key', { types: ['nonesuch'] }).matches).toEqual([]);
    expect(resolve(index, 'terminal key', { types: [] }).matches.length).toBeGreaterThan(1);
  });

  it('answers exactly the no-match message when no layer matches', () => {
    const answer = resolve(index, 'how do I zqxv');
    expect(answer.matches).toEqual([]);
    expect(answer.readAs).toEqual(['zqxv']);
    expect(answer.message).toBe('Nothing in the Directory is called, or means, "how do I zqxv". Every row is listed at GET /api/directory');
    expect(resolve(index, 'where is my').message).toMatch(/^Nothing in the Directory is called, or means, "where is my"\./);
  });

  it('refuses bad input with BAD_INPUT naming what was expected', () => {
    const bad = (q: string, options = {}) => {
      try {
        resolve(index, q, options);
      } catch (error) {
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe('BAD_INPUT');
        return (error as DomainError).message;
      }
      throw new Error('expected BAD_INPUT');
    };
    expect(bad('   ')).toBe('query: expected some words, got nothing.');
    expect(bad('x'.repeat(501))).toBe('query: expected at most 500 characters, got 501.');
    expect(bad('imsg', { limit: 0 })).toBe('limit: expected an integer from 1 to 100, got 0.');
    expect(bad('imsg', { limit: 101 })).toBe('limit: expected an integer from 1 to 100, got 101.');
    expect(bad('imsg', { minScore: -1 })).toBe('minScore: expected an integer from 0 to 1000, got -1.');
    expect(bad('imsg', { minScore: 2.5 })).toBe('minScore: expected an integer from 0 to 1000, got 2.5.');
  });

  it('answers from an empty index', () => {
    expect(resolve(buildResolverIndex([]), 'anything').message).toBe(
      'Nothing in the Directory is called, or means, "anything". Every row is listed at GET /api/directory',
    );
  });
});
