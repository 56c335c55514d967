// zod at the boundary: one formatter, so every door's message names the field,
// what was expected and what arrived.
import type { z } from 'zod';
import { badInput, type DomainError } from './errors.ts';

function pathOf(path: PropertyKey[]): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out ? `.${String(part)}` : String(part);
  return out || '(input)';
}

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v = input;
  for (const part of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[part];
  }
  return v;
}

export function describeIssues(error: z.ZodError, input: unknown, prefix: PropertyKey[] = []): string[] {
  return error.issues.map((issue) => {
    const at = [...prefix, ...issue.path];
    const arrived = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : shown(valueAt(input, issue.path));
    const expected = issue.message.replace(/^Invalid input: expected /, '').replace(/, received .*$/, '');
    return issue.code === 'unrecognized_keys'
      ? `${pathOf(at)}: expected only known fields, got unknown ${arrived}`
      : `${pathOf(at)}: expected ${expected}, got ${arrived}`;
  });
}

/** Parses or throws BAD_INPUT naming every field that failed. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = describeIssues(parsed.error, input);
  const error: DomainError = badInput(`Invalid ${what}: ${problems.join('; ')}`, { problems });
  throw error;
}
