// The live index swaps without blocking; aliases are data, checked against the rows.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.ts';
import { ALIAS_FILE, loadAliasFile, parseAliasTable } from '../../src/resolver/aliases.ts';
import { buildResolverIndex } from '../../src/resolver/build.ts';
import { resolve } from '../../src/resolver/resolve.ts';
import { ResolverService } from '../../src/resolver/service.ts';
import type { ResolverRow } from '../../src/resolver/types.ts';

const v1: ResolverRow[] = [{ name: 'IMSG_SEND', type: 'tool' }];
const v2: ResolverRow[] = [...v1, { name: 'TERMINAL_KEY', type: 'credential' }];
const names = (s: ResolverService, q: string) => s.resolve(q).matches.map((m) => m.row.name);
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('ResolverService', () => {
  it('answers from the previous version until the new one is built, then swaps', async () => {
    const service = new ResolverService({ version: 'a', rows: v1 });
    const load = deferred<{ rows: ResolverRow[] }>();
    const done = service.refresh('b', () => load.promise);
    await new Promise((r) => setImmediate(r));
    expect(service.current.version).toBe('a');
    expect(names(service, 'terminal key')).toEqual([]);
    load.resolve({ rows: v2 });
    await done;
    expect(service.current.version).toBe('b');
    expect(names(service, 'terminal key')).toEqual(['TERMINAL_KEY']);
  });

  it('builds in slices: the event loop keeps turning and queries keep answering during a large build', async () => {
    const big: ResolverRow[] = Array.from({ length: 30_000 }, (_, i) => ({ name: `ROW_${i}_SYNC`, type: 'variable', description: `row number ${i}` }));
    const service = new ResolverService({ version: 'a', rows: v1 });
    let turns = 0;
    let answeredDuring = 0;
    let building = true;
    const tick = () => {
      if (!building) return;
      turns++;
      if (names(service, 'imsg send')[0] === 'IMSG_SEND' && service.current.version === 'a') answeredDuring++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await service.refresh('big', () => ({ rows: big }));
    building = false;
    expect(turns).toBeGreaterThan(3);
    expect(answeredDuring).toBeGreaterThan(3);
    expect(service.current.index.rows).toHaveLength(30_000);
  });

  it('does nothing for the live version or the one being built, and coalesces versions asked for meanwhile', async () => {
    const service = new ResolverService();
    let loads = 0;
    const load = (rows: ResolverRow[]) => () => {
      loads++;
      return { rows };
    };
    await service.refresh('a', load(v1));
    await service.refresh('a', load(v1));
    expect(service.builds).toBe(1);
    const b = service.refresh('b', load(v1));
    const bAgain = service.refresh('b', load(v1));
    const c = service.refresh('c', load(v1));
    const d = service.refresh('d', load(v2));
    expect(bAgain).toBe(b);
    await Promise.all([b, c, d]);
    expect((await c).version).toBe('d');
    expect(service.builds).toBe(3); // a, b, d: c was superseded before it started
    expect(loads).toBe(3);
    expect(names(service, 'terminal key')).toEqual(['TERMINAL_KEY']);
  });

  it('keeps the previous version live when a load or build fails', async () => {
    const service = new ResolverService({ version: 'a', rows: v1 });
    const failure = new Error('section unreadable');
    await expect(
      service.refresh('b', () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(service.current.version).toBe('a');
    expect(service.lastError).toBe(failure);
    expect(names(service, 'imsg send')).toEqual(['IMSG_SEND']);
    await service.refresh('b', () => ({ rows: v2 }));
    expect(service.lastError).toBeUndefined();
  });
});

describe('aliases', () => {
  const rows: ResolverRow[] = [
    { name: 'IMSG_SEND', type: 'tool' },
    { name: 'IMSG_LIST', type: 'tool' },
    { name: 'GMAIL_SEND_EMAIL', type: 'tool' },
    { name: 'STRIPE_API_KEY', type: 'credential' },
    { name: 'OPENAI_API_KEY', type: 'credential' },
  ];

  it('checks every pattern against the rows: one that names no row is reported and not loaded', () => {
    const index = buildResolverIndex(rows, [
      { words: 'imessage', patterns: ['IMSG_', 'IMESSAGE', 'BLOOIO'] },
      { words: 'tiktok', patterns: ['TIKTOK_'] },
      { words: 'api keys', patterns: ['*_API_KEY'] },
      { words: 'the', patterns: ['IMSG_'] },
      { words: 'iMessage', patterns: ['=IMSG_SEND'] },
      { words: 'mail', patterns: ['=GMAIL_SEND'] },
    ]);
    expect(index.aliasProblems.map((p) => [p.code, p.alias, p.pattern ?? null])).toEqual([
      ['NO_SEARCHABLE_WORDS', 'the', null],
      ['DUPLICATE', 'iMessage', null],
      ['NAMES_NO_ROW', 'imessage', 'IMESSAGE'],
      ['NAMES_NO_ROW', 'imessage', 'BLOOIO'],
      ['NAMES_NO_ROW', 'tiktok', 'TIKTOK_'],
      ['NAMES_NO_ROW', 'tiktok', null],
      ['NAMES_NO_ROW', 'mail', '=GMAIL_SEND'],
      ['NAMES_NO_ROW', 'mail', null],
    ]);
    expect([...index.aliases.keys()]).toEqual(['imessage', 'api keys']);
    expect(index.aliases.get('imessage')!.patterns).toEqual(['IMSG_', '=IMSG_SEND']);
    expect(resolve(index, 'tiktok').matches).toEqual([]);
    // The exact pattern (one row) is more specific than the prefix (two rows).
    expect(resolve(index, 'imessage').matches.map((m) => [m.row.name, m.score])).toEqual([
      ['IMSG_SEND', 760],
      ['IMSG_LIST', 759],
    ]);
    expect(resolve(index, 'api keys').matches.map((m) => [m.row.name, m.score, m.layer])).toEqual([
      ['OPENAI_API_KEY', 759, 'ALIAS'],
      ['STRIPE_API_KEY', 759, 'ALIAS'],
    ]);
  });

  it('prefix patterns end at a separator when they are written with one', () => {
    const index = buildResolverIndex([{ name: 'IMSGX_SEND', type: 'tool' }, ...rows], [{ words: 'imessage', patterns: ['IMSG_'] }]);
    expect(resolve(index, 'imessage').matches.map((m) => m.row.name)).toEqual(['IMSG_LIST', 'IMSG_SEND']);
  });

  it('loads the alias file beside the sections; no file means no aliases; a bad file is BAD_INPUT naming the entry', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'resolver-aliases-'));
    try {
      expect(await loadAliasFile(dir)).toEqual([]);
      await writeFile(path.join(dir, ALIAS_FILE), JSON.stringify({ imessage: ['IMSG_', 'BLOOIO'], 'api keys': ['*_API_KEY'] }));
      expect(await loadAliasFile(dir)).toEqual([
        { words: 'imessage', patterns: ['IMSG_', 'BLOOIO'] },
        { words: 'api keys', patterns: ['*_API_KEY'] },
      ]);
      await writeFile(path.join(dir, ALIAS_FILE), '{"imessage": []}');
      await expect(loadAliasFile(dir)).rejects.toThrow(/imessage: expected at least one name pattern/);
      await writeFile(path.join(dir, ALIAS_FILE), '{"imessage": "IMSG_"}');
      await expect(loadAliasFile(dir)).rejects.toBeInstanceOf(DomainError);
      await writeFile(path.join(dir, ALIAS_FILE), '{nope');
      await expect(loadAliasFile(dir)).rejects.toThrow(/expected JSON/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(() => parseAliasTable([1, 2])).toThrow(DomainError);
  });
});
