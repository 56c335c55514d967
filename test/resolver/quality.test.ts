// The labelled query set: prints top-1 and top-3 accuracy by class and asserts a floor.
import { beforeAll, describe, expect, it } from 'vitest';
import { generateDirectory } from '../../src/directory/fixtures.ts';
import { parseAliasTable } from '../../src/resolver/aliases.ts';
import { buildResolverIndex, type ResolverIndex } from '../../src/resolver/build.ts';
import { resolverRowsFromSections } from '../../src/resolver/from-sections.ts';
import { resolve } from '../../src/resolver/resolve.ts';
import { accuracy, fixtureAliasJson, formatAccuracy, loadLabelledSet, QueryClasses } from './labelled.ts';
import { demoResolverIndex } from './demo.ts';

const set = loadLabelledSet().queries;

describe('labelled queries', () => {
  let fixture: ResolverIndex;
  let demo: ResolverIndex;
  beforeAll(async () => {
    fixture = buildResolverIndex(resolverRowsFromSections(generateDirectory({ rows: 24890, seed: 1 })), parseAliasTable(fixtureAliasJson()));
    demo = await demoResolverIndex();
  });

  it('holds at least 300 queries in every class', () => {
    expect(set.length).toBeGreaterThanOrEqual(300);
    for (const cls of QueryClasses) expect(set.filter((q) => q.class === cls).length, cls).toBeGreaterThanOrEqual(10);
  });

  it('ranks the right row first often enough', () => {
    const result = accuracy(set, (q) => resolve(q.source === 'demo' ? demo : fixture, q.q, { limit: 3 }).matches.map((m) => m.row.name));
    process.stdout.write(`\n${formatAccuracy('resolver', result)}\n`);
    for (const source of ['fixture', 'demo'] as const) {
      const part = set.filter((q) => q.source === source);
      if (part.length)
        process.stdout.write(
          `${
            formatAccuracy(
              `  ${source}`,
              accuracy(part, (q) => resolve(source === 'demo' ? demo : fixture, q.q, { limit: 3 }).matches.map((m) => m.row.name)),
            ).split('\n')[0]
          }\n`,
        );
    }
    expect(result.top1).toBeGreaterThanOrEqual(0.9);
    expect(result.top3).toBeGreaterThanOrEqual(0.92);
    for (const cls of ['exact', 'prefix', 'word-order', 'alias', 'framed', 'nothing'] as const) {
      expect(result.byClass[cls]!.top1, cls).toBeGreaterThanOrEqual(0.95);
    }
    for (const cls of ['typo', 'transposition'] as const) expect(result.byClass[cls]!.top1, cls).toBeGreaterThanOrEqual(0.85);
  });
});
