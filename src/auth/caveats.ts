// The caveat language: one first-party caveat per limit, `key op value`, each readable in words.
// Several caveats of one kind all apply (a narrowed token keeps every limit its parent had).
//
//   tools = ECHO,WEATHER_*        which tools (names; a trailing * is a prefix)
//   doors = REST,MCP              by which doors
//   uses <= 5                     how many calls (counted in the database, per chain prefix)
//   not_before = 2026-12-01T00:00:00.000Z
//   expires = 2026-12-31T00:00:00.000Z
//   task = T-17                   every call is filed under this task
//   agent = planner               every call is recorded as this agent
//   folders = docs/,src/          file rows and path arguments only inside these folders
//   audience = dirledger          only at the server that calls itself this
//   read = none|task|all          what the holder may read of the ledger
//   powers = call,ingest,issue,revoke  what else the holder may do (absent: call, ingest, issue; an
//                                 admin token, with no caveats at all, also revoke)
//   collector = agent-7           which collectors' batches (and positions) it may append
//   models = gpt-4o-mini,claude-*  which model rows the model door may call (names; a trailing * is a prefix)
//   tokens <= 100000              model tokens (input + output), counted like uses, shared by narrowed tokens
//   cost <= 2.50                  model cost in USD, counted like uses (src/auth/spend.ts)
import path from 'node:path';
import { z } from 'zod';
import { TokenDoors, type Door } from '../context/door.ts';

export const ReadScopes = ['none', 'task', 'all'] as const;
export type ReadScope = (typeof ReadScopes)[number];
export const Powers = ['call', 'ingest', 'issue', 'revoke'] as const;
export type Power = (typeof Powers)[number];

export type Caveat =
  | { kind: 'tools'; names: string[] }
  | { kind: 'doors'; doors: Door[] }
  | { kind: 'uses'; max: number }
  | { kind: 'not_before'; at: Date }
  | { kind: 'expires'; at: Date }
  | { kind: 'task'; task: string }
  | { kind: 'agent'; agent: string }
  | { kind: 'folders'; folders: string[] }
  | { kind: 'audience'; audience: string }
  | { kind: 'read'; scope: ReadScope }
  | { kind: 'powers'; powers: Power[] }
  | { kind: 'collector'; names: string[] }
  | { kind: 'models'; names: string[] }
  | { kind: 'tokens'; max: number }
  | { kind: 'cost'; max: string };
export type CaveatKind = Caveat['kind'];

const label = /^[^\s,=<>]{1,200}$/;
/** The caveats written `key <= value`: each counted in the database under its chain prefix. */
const Counted = new Set(['uses', 'tokens', 'cost']);
const list = (value: string) => value.split(',').map((v) => v.trim());

/** A caveat string → its meaning; throws an Error naming what was expected and what arrived. */
export function parseCaveat(text: string): Caveat {
  const m = /^([a-z_]+) (=|<=) (.+)$/.exec(text);
  if (!m) throw new Error(`expected a caveat "key = value" or "uses <= N", got ${JSON.stringify(text.slice(0, 80))}`);
  const [, key, op, value] = m as unknown as [string, string, string, string];
  if (Counted.has(key) !== (op === '<='))
    throw new Error(`expected "uses <= N", "tokens <= N", "cost <= X" or "${key} = value", got ${JSON.stringify(text.slice(0, 80))}`);
  const labels = (what: string) => {
    const items = list(value);
    const bad = items.find((item) => !label.test(item));
    if (bad !== undefined) throw new Error(`expected ${what} without spaces, commas or operators, got ${JSON.stringify(bad)}`);
    return items;
  };
  const date = () => {
    const at = new Date(value);
    if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) throw new Error(`expected an ISO 8601 time for ${key}, got ${JSON.stringify(value)}`);
    return at;
  };
  const oneOf = <T extends string>(allowed: readonly T[], what: string): T[] =>
    list(value).map((item) => {
      if (!(allowed as readonly string[]).includes(item)) throw new Error(`expected ${what} (${allowed.join(', ')}), got ${JSON.stringify(item)}`);
      return item as T;
    });
  switch (key) {
    case 'tools':
      return { kind: 'tools', names: labels('tool names') };
    case 'doors':
      return { kind: 'doors', doors: oneOf(TokenDoors, 'doors') };
    case 'uses': {
      if (!/^\d{1,9}$/.test(value)) throw new Error(`expected a whole number of uses, got ${JSON.stringify(value)}`);
      return { kind: 'uses', max: Number(value) };
    }
    case 'not_before':
      return { kind: 'not_before', at: date() };
    case 'expires':
      return { kind: 'expires', at: date() };
    case 'task':
      return { kind: 'task', task: labels('a task id')[0]! };
    case 'agent':
      return { kind: 'agent', agent: labels('an agent name')[0]! };
    case 'folders':
      return { kind: 'folders', folders: list(value).map(folderOf) };
    case 'audience':
      return { kind: 'audience', audience: labels('an audience')[0]! };
    case 'read': {
      const [scope, ...rest] = oneOf(ReadScopes, 'a read scope');
      if (rest.length) throw new Error(`expected one read scope, got ${JSON.stringify(value)}`);
      return { kind: 'read', scope: scope! };
    }
    case 'powers':
      return { kind: 'powers', powers: oneOf(Powers, 'powers') };
    case 'collector':
      return { kind: 'collector', names: labels('collector ids') };
    case 'models':
      return { kind: 'models', names: labels('model names') };
    case 'tokens': {
      if (!/^\d{1,15}$/.test(value)) throw new Error(`expected a whole number of tokens, got ${JSON.stringify(value)}`);
      return { kind: 'tokens', max: Number(value) };
    }
    case 'cost': {
      if (!/^\d{1,12}(\.\d{1,10})?$/.test(value)) throw new Error(`expected a cost in USD (a decimal with at most 10 places), got ${JSON.stringify(value)}`);
      return { kind: 'cost', max: value };
    }
    default:
      throw new Error(
        `expected a known caveat (tools, doors, uses, not_before, expires, task, agent, folders, audience, read, powers, collector, models, tokens, cost), got ${JSON.stringify(key)}`,
      );
  }
}

function folderOf(raw: string): string {
  if (!raw || raw.includes('\0')) throw new Error(`expected a folder, got ${JSON.stringify(raw)}`);
  const normal = path.posix.normalize(raw.replaceAll('\\', '/'));
  if (normal === '..' || normal.startsWith('../')) throw new Error(`expected a folder that does not climb out with "..", got ${JSON.stringify(raw)}`);
  return normal.endsWith('/') ? normal : `${normal}/`;
}

/** A caveat's canonical text (the inverse of parseCaveat). */
export function caveatText(caveat: Caveat): string {
  switch (caveat.kind) {
    case 'tools':
      return `tools = ${caveat.names.join(',')}`;
    case 'doors':
      return `doors = ${caveat.doors.join(',')}`;
    case 'uses':
      return `uses <= ${caveat.max}`;
    case 'not_before':
    case 'expires':
      return `${caveat.kind} = ${caveat.at.toISOString()}`;
    case 'task':
      return `task = ${caveat.task}`;
    case 'agent':
      return `agent = ${caveat.agent}`;
    case 'folders':
      return `folders = ${caveat.folders.join(',')}`;
    case 'audience':
      return `audience = ${caveat.audience}`;
    case 'read':
      return `read = ${caveat.scope}`;
    case 'powers':
      return `powers = ${caveat.powers.join(',')}`;
    case 'collector':
      return `collector = ${caveat.names.join(',')}`;
    case 'models':
      return `models = ${caveat.names.join(',')}`;
    case 'tokens':
      return `tokens <= ${caveat.max}`;
    case 'cost':
      return `cost <= ${caveat.max}`;
  }
}

/** One limit in plain words. */
export function describeCaveat(caveat: Caveat): string {
  switch (caveat.kind) {
    case 'tools': {
      const names = caveat.names.filter((n) => !n.endsWith('*'));
      const prefixes = caveat.names.filter((n) => n.endsWith('*')).map((n) => n.slice(0, -1));
      const parts = [
        names.length ? `the tool${names.length > 1 ? 's' : ''} ${names.join(', ')}` : '',
        prefixes.length ? `tools whose name starts with ${prefixes.join(' or ')}` : '',
      ];
      return `Only ${parts.filter(Boolean).join(', and ')}.`;
    }
    case 'doors':
      return `Only through the door${caveat.doors.length > 1 ? 's' : ''} ${caveat.doors.join(', ')}.`;
    case 'uses':
      return `At most ${caveat.max} call${caveat.max === 1 ? '' : 's'}, counted across every token narrowed from this one.`;
    case 'not_before':
      return `Not before ${caveat.at.toISOString()}.`;
    case 'expires':
      return `Expires at ${caveat.at.toISOString()}.`;
    case 'task':
      return `Every call is filed under task ${caveat.task}.`;
    case 'agent':
      return `Every call is recorded as agent ${caveat.agent}.`;
    case 'folders':
      return `Files only inside ${caveat.folders.join(', ')}.`;
    case 'audience':
      return `Only at the server called ${caveat.audience}.`;
    case 'read':
      return caveat.scope === 'none'
        ? 'Reads nothing of the ledger.'
        : caveat.scope === 'task'
          ? "Reads only its own task's events."
          : 'Reads the whole ledger.';
    case 'powers':
      return `May only ${caveat.powers.map((p) => powerWords[p]).join(', ')}.`;
    case 'collector': {
      const names = caveat.names.filter((n) => !n.endsWith('*'));
      const prefixes = caveat.names.filter((n) => n.endsWith('*')).map((n) => n.slice(0, -1));
      const parts = [
        names.length ? `the collector${names.length > 1 ? 's' : ''} ${names.join(', ')}` : '',
        prefixes.length ? `collectors whose id starts with ${prefixes.join(' or ')}` : '',
      ];
      return `Appends ledger batches (and moves the position) only of ${parts.filter(Boolean).join(', and ')}.`;
    }
    case 'models':
      return `Only the model${caveat.names.length > 1 ? 's' : ''} ${caveat.names.join(', ')} (a trailing * is a prefix).`;
    case 'tokens':
      return `At most ${caveat.max} model tokens (input and output), counted across every token narrowed from this one.`;
    case 'cost':
      return `At most ${caveat.max} USD of model cost, counted across every token narrowed from this one.`;
  }
}

/** What each power lets the holder do, in words. */
export const powerWords: Record<Power, string> = { call: 'call tools', ingest: 'append ledger batches', issue: 'issue tokens', revoke: 'revoke tokens' };

/** A tool name against a `tools` caveat's names and prefixes. */
export function toolAllowed(names: readonly string[], tool: string): boolean {
  return names.some((n) => (n.endsWith('*') ? tool.startsWith(n.slice(0, -1)) : n === tool));
}

/** A path (relative or absolute) against a `folders` caveat; `..` that climbs out never passes. */
export function pathAllowed(folders: readonly string[], candidate: string): boolean {
  if (candidate.includes('\0')) return false;
  const normal = path.posix.normalize(candidate.replaceAll('\\', '/'));
  if (normal === '..' || normal.startsWith('../')) return false;
  return folders.some((folder) => normal === folder.slice(0, -1) || normal.startsWith(folder));
}

/** The caveat input accepted by issueToken (zod at the door). */
export const CaveatInput = z
  .object({
    tools: z.array(z.string().min(1)).min(1).optional(),
    doors: z.array(z.enum(TokenDoors)).min(1).optional(),
    uses: z.number().int().min(1).max(999_999_999).optional(),
    notBefore: z.coerce.date().optional(),
    expires: z.coerce.date().optional(),
    task: z.string().min(1).optional(),
    agent: z.string().min(1).optional(),
    folders: z.array(z.string().min(1)).min(1).optional(),
    audience: z.string().min(1).optional(),
    read: z.enum(ReadScopes).optional(),
    powers: z.array(z.enum(Powers)).min(1).optional(),
    collectors: z.array(z.string().min(1)).min(1).optional(),
    models: z.array(z.string().min(1)).min(1).optional(),
    tokens: z.number().int().min(1).max(999_999_999_999_999).optional(),
    costUsd: z.string().min(1).optional(),
  })
  .strict();
export type CaveatInput = z.input<typeof CaveatInput>;

/** Issue input → caveat strings, each parsed back so the same rules hold as for a presented token. */
export function caveatsFromInput(input: z.output<typeof CaveatInput>): string[] {
  const out: string[] = [];
  const add = (text: string) => out.push(caveatText(parseCaveat(text)));
  if (input.tools) add(`tools = ${input.tools.join(',')}`);
  if (input.doors) add(`doors = ${input.doors.join(',')}`);
  if (input.uses !== undefined) add(`uses <= ${input.uses}`);
  if (input.notBefore) add(`not_before = ${input.notBefore.toISOString()}`);
  if (input.expires) add(`expires = ${input.expires.toISOString()}`);
  if (input.task) add(`task = ${input.task}`);
  if (input.agent) add(`agent = ${input.agent}`);
  if (input.folders) add(`folders = ${input.folders.join(',')}`);
  if (input.audience) add(`audience = ${input.audience}`);
  if (input.read) add(`read = ${input.read}`);
  if (input.powers) add(`powers = ${input.powers.join(',')}`);
  if (input.collectors) add(`collector = ${input.collectors.join(',')}`);
  if (input.models) add(`models = ${input.models.join(',')}`);
  if (input.tokens !== undefined) add(`tokens <= ${input.tokens}`);
  if (input.costUsd !== undefined) add(`cost <= ${input.costUsd}`);
  return out;
}
