// Aliases are data: a file beside the sections maps everyday words to the name
// patterns of the rows that do that job. Loading checks the shape; building the
// index checks every pattern against the rows (see `AliasProblem`).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { badInput } from '../errors.ts';
import { parseInput } from '../validation.ts';
import { normalizeName, queryWords, stopWords } from './text.ts';

/** The file the resolver reads from the directory folder (the leading _ keeps the Directory from reading it as a section). */
export const ALIAS_FILE = '_aliases.json';

/**
 * One alias: everyday words and the name patterns they mean.
 * A pattern is matched against a row's name, case-insensitively, with `_`, `-` and space equivalent:
 * `IMSG_` means "the name starts with IMSG_"; `=TERMINAL_KEY` means "the name is exactly TERMINAL_KEY";
 * `*` matches any run of characters (`*_SEND` is any name ending in `_SEND`… or containing it).
 */
export type Alias = { words: string; patterns: string[] };
export type AliasTable = readonly Alias[];

export const AliasProblemCode = {
  NAMES_NO_ROW: 'NAMES_NO_ROW',
  NO_SEARCHABLE_WORDS: 'NO_SEARCHABLE_WORDS',
  DUPLICATE: 'DUPLICATE',
} as const;
export type AliasProblemCode = (typeof AliasProblemCode)[keyof typeof AliasProblemCode];

/** Why an alias, or one of its patterns, was not loaded. */
export type AliasProblem = { alias: string; pattern?: string; code: AliasProblemCode; message: string };

const AliasFileSchema = z.record(
  z.string().trim().min(1, 'a non-empty alias'),
  z.array(z.string().trim().min(1, 'a non-empty name pattern')).min(1, 'at least one name pattern'),
);

/** Parses the alias file's JSON: `{ "imessage": ["IMSG_", "IMESSAGE", "BLOOIO"], … }`. Throws BAD_INPUT naming each bad entry. */
export function parseAliasTable(json: unknown, source = ALIAS_FILE): Alias[] {
  const record = parseInput(AliasFileSchema, json, `alias file ${source}`);
  return Object.entries(record).map(([words, patterns]) => ({ words, patterns }));
}

/** Reads `_aliases.json` from a directory folder; no file means no aliases. */
export async function loadAliasFile(directoryDir: string): Promise<Alias[]> {
  const file = path.join(directoryDir, ALIAS_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw badInput(`Invalid alias file ${file}: expected JSON, got ${(error as Error).message}.`, { file });
  }
  return parseAliasTable(json, file);
}

/** The alias's words as the resolver reads a query (lower case, stop words dropped). */
export function aliasKeyWords(words: string): string[] {
  return queryWords(words).filter((w) => !stopWords.has(w));
}

export type CompiledPattern = { pattern: string; exact?: string; prefix?: string; glob?: RegExp };

export function compilePattern(pattern: string): CompiledPattern {
  if (pattern.startsWith('=')) return { pattern, exact: normalizeName(pattern.slice(1)) };
  // A trailing separator is kept: `IMSG_` must not match `IMSGX`.
  const normalized = normalizeName(pattern) + (/[\s_-]$/.test(pattern) ? ' ' : '');
  if (!normalized.includes('*')) return { pattern, prefix: normalized };
  const source = normalized
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return { pattern, glob: new RegExp(`^${source}`) };
}
