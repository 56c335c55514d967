// Property: whatever the words, every result is a row of the index, scored by a layer, best first.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateDirectory } from '../../src/directory/fixtures.ts';
import { parseAliasTable } from '../../src/resolver/aliases.ts';
import { buildResolverIndex } from '../../src/resolver/build.ts';
import { resolverRowsFromSections } from '../../src/resolver/from-sections.ts';
import { resolve } from '../../src/resolver/resolve.ts';
import { ALIAS_SCORE_MAX, layerScore, noMatchMessage } from '../../src/resolver/types.ts';
import { fixtureAliasJson } from './labelled.ts';

const rows = resolverRowsFromSections(generateDirectory({ rows: 3000, seed: 7 }));
const index = buildResolverIndex(rows, parseAliasTable(fixtureAliasJson()));
const members = new Set<object>(rows);
const fixedScores = new Set<number>(Object.values(layerScore));
const vocabulary = index.tokens.slice(0, 4000);

const word = fc.oneof(
  fc.constantFrom(...vocabulary),
  fc.constantFrom(...vocabulary).chain((w) => fc.nat({ max: Math.max(0, w.length - 1) }).map((i) => w.slice(0, i) + w.slice(i + 1))),
  fc.constantFrom('how do i', 'where is my', 'what is', 'can you', 'show me', 'i want to', 'the', 'a', 'please', 'tiktok', 'imessge'),
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constantFrom(...rows.slice(0, 500).map((r) => r.name)),
);
const query = fc.tuple(fc.array(word, { minLength: 1, maxLength: 6 }), fc.constantFrom(' ', '_', '-')).map(([ws, sep]) => ws.join(sep));
const options = fc.record({
  minScore: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
  limit: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
  types: fc.option(fc.subarray(['tool', 'variable', 'credential', 'file', 'article', 'nonesuch']), { nil: undefined }),
});

describe('the resolver never invents a row', () => {
  it('every match is a row of the index, with a layer score, best first, within limit and minScore', () => {
    fc.assert(
      fc.property(query, options, (q, opts) => {
        if (!q.trim() || q.trim().length > 500) return;
        const answer = resolve(index, q, opts);
        const seen = new Set<object>();
        let last = Infinity;
        for (const m of answer.matches) {
          expect(members.has(m.row)).toBe(true);
          expect(seen.has(m.row)).toBe(false);
          seen.add(m.row);
          expect(fixedScores.has(m.score) || (m.layer === 'ALIAS' && m.score >= 750 && m.score <= ALIAS_SCORE_MAX)).toBe(true);
          expect(m.score).toBeLessThanOrEqual(last);
          expect(m.score).toBeGreaterThanOrEqual(opts.minScore ?? 0);
          if (opts.types?.length) expect(opts.types).toContain(m.row.type);
          expect(m.reason.length).toBeGreaterThan(0);
          last = m.score;
        }
        expect(answer.matches.length).toBeLessThanOrEqual(opts.limit ?? 10);
        if (!answer.matches.length && !answer.message.includes('scored at least')) expect(answer.message).toBe(noMatchMessage(q.trim()));
        // Same query, same answer.
        expect(resolve(index, q, opts)).toEqual(answer);
      }),
      { numRuns: 400, seed: 20261130 },
    );
  });
});
