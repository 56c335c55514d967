// The labelled query set and how it is scored; shared by the quality test and the benchmark.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const QueryClasses = ['exact', 'prefix', 'word-order', 'alias', 'typo', 'transposition', 'sound-alike', 'framed', 'paraphrase', 'nothing'] as const;
export type QueryClass = (typeof QueryClasses)[number];

export type LabelledQuery = { q: string; class: QueryClass; source: 'fixture' | 'demo'; expect: string[] };
export type LabelledSet = { about: string; queries: LabelledQuery[] };

const here = path.dirname(fileURLToPath(import.meta.url));

export function loadLabelledSet(): LabelledSet {
  return JSON.parse(readFileSync(path.join(here, 'labelled-queries.json'), 'utf8')) as LabelledSet;
}

export function fixtureAliasJson(): unknown {
  return JSON.parse(readFileSync(path.join(here, 'fixture-aliases.json'), 'utf8'));
}

/** Top-1 and top-3 hits of one answer (names, best first). A must-return-nothing query scores only when nothing came back. */
export function grade(query: LabelledQuery, names: readonly string[]): { top1: boolean; top3: boolean } {
  if (!query.expect.length) return { top1: names.length === 0, top3: names.length === 0 };
  const want = new Set(query.expect);
  return { top1: want.has(names[0] ?? '\0'), top3: names.slice(0, 3).some((n) => want.has(n)) };
}

export type Accuracy = { queries: number; top1: number; top3: number; byClass: Record<string, { queries: number; top1: number; top3: number }> };

export function accuracy(set: readonly LabelledQuery[], answer: (q: LabelledQuery) => readonly string[]): Accuracy {
  const byClass: Accuracy['byClass'] = {};
  let top1 = 0;
  let top3 = 0;
  for (const query of set) {
    const g = grade(query, answer(query));
    byClass[query.class] ??= { queries: 0, top1: 0, top3: 0 };
    const c = byClass[query.class]!;
    c.queries++;
    if (g.top1) {
      top1++;
      c.top1++;
    }
    if (g.top3) {
      top3++;
      c.top3++;
    }
  }
  return { queries: set.length, top1: top1 / set.length, top3: top3 / set.length, byClass };
}

export function formatAccuracy(label: string, a: Accuracy): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const lines = [`${label}: top-1 ${pct(a.top1)}, top-3 ${pct(a.top3)} over ${a.queries} queries`];
  for (const [cls, c] of Object.entries(a.byClass))
    lines.push(
      `  ${cls.padEnd(14)} ${String(c.queries).padStart(4)}  top-1 ${pct(c.top1 / c.queries).padStart(6)}  top-3 ${pct(c.top3 / c.queries).padStart(6)}`,
    );
  return lines.join('\n');
}
