// The words readQuestion knows (src/ledger/ask.ts): units, numbers, groupings, filters, kinds,
// measures and fillers, and the question cut into tokens.
import type { FilterDimension } from './filter.ts';
import type { LedgerGrouping } from './reads.ts';

export const LedgerMeasure = ['EVENTS', 'COST', 'TOKENS'] as const;
export type LedgerMeasure = (typeof LedgerMeasure)[number];

export type Token = { raw: string; word: string; quoted: boolean };

export const HOUR = 3_600_000;
export const unitMs = { minute: 60_000, hour: HOUR, day: 24 * HOUR, week: 7 * 24 * HOUR } as const;
export type Unit = keyof typeof unitMs | 'month' | 'year';

export const units: Record<string, Unit> = {
  minute: 'minute',
  minutes: 'minute',
  min: 'minute',
  mins: 'minute',
  hour: 'hour',
  hours: 'hour',
  hr: 'hour',
  hrs: 'hour',
  day: 'day',
  days: 'day',
  week: 'week',
  weeks: 'week',
  wk: 'week',
  wks: 'week',
  month: 'month',
  months: 'month',
  year: 'year',
  years: 'year',
};
export const shortUnits: Record<string, Unit> = { m: 'minute', min: 'minute', h: 'hour', d: 'day', w: 'week' };

export const numbers: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  twelve: 12,
};

export const groupings: Record<string, LedgerGrouping> = {
  hour: 'HOUR',
  hours: 'HOUR',
  day: 'DAY',
  days: 'DAY',
  session: 'SESSION',
  sessions: 'SESSION',
  turn: 'TURN',
  turns: 'TURN',
  kind: 'KIND',
  kinds: 'KIND',
  agent: 'AGENT',
  agents: 'AGENT',
  model: 'MODEL',
  models: 'MODEL',
  tool: 'TOOL',
  tools: 'TOOL',
  task: 'TASK',
  tasks: 'TASK',
  status: 'STATUS',
  statuses: 'STATUS',
};

export const dimensions: Record<string, FilterDimension> = {
  task: 'task',
  tasks: 'task',
  tool: 'tool',
  tools: 'tool',
  session: 'session',
  sessions: 'session',
  agent: 'agent',
  agents: 'agent',
  model: 'model',
  models: 'model',
  turn: 'turn',
  turns: 'turn',
  kind: 'kind',
  kinds: 'kind',
  status: 'status',
};

export const kinds: Record<string, string> = {
  refusal: 'REFUSAL',
  refusals: 'REFUSAL',
  request: 'REQUEST',
  requests: 'REQUEST',
  response: 'RESPONSE',
  responses: 'RESPONSE',
};
export const statuses: Record<string, string> = { error: 'ERROR', errors: 'ERROR', failure: 'ERROR', failures: 'ERROR', failed: 'ERROR' };
export const directions: Record<string, 'IN' | 'OUT'> = { incoming: 'IN', inbound: 'IN', outgoing: 'OUT', outbound: 'OUT' };
export const measureWords: Record<string, LedgerMeasure> = {
  cost: 'COST',
  costs: 'COST',
  spend: 'COST',
  spent: 'COST',
  spending: 'COST',
  dollars: 'COST',
  usd: 'COST',
  tokens: 'TOKENS',
  token: 'TOKENS',
};
/** Ask for a count only when no other measure is named: "total cost" is a cost. */
export const countWords = new Set(['count', 'total']);

/** Words that carry no condition of their own. */
export const fillers = new Set([
  'a',
  'an',
  'all',
  'and',
  'any',
  'are',
  'at',
  'did',
  'do',
  'does',
  'during',
  'each',
  'event',
  'events',
  'for',
  'from',
  'get',
  'give',
  'had',
  'has',
  'have',
  'happened',
  'i',
  'in',
  'is',
  'list',
  'me',
  'my',
  'of',
  'on',
  'or',
  'our',
  'please',
  'recorded',
  'show',
  'the',
  'there',
  'to',
  'was',
  'we',
  'were',
  'what',
  'which',
  'with',
  'using',
]);

export const timeStarters = new Set([
  'today',
  'yesterday',
  'this',
  'last',
  'past',
  'previous',
  'since',
  'before',
  'until',
  'till',
  'through',
  'between',
  'within',
  'over',
]);

export function reserved(word: string): boolean {
  return (
    fillers.has(word) ||
    timeStarters.has(word) ||
    word in groupings ||
    word in dimensions ||
    word in kinds ||
    word in statuses ||
    word in directions ||
    word in measureWords ||
    countWords.has(word) ||
    word in units ||
    ['by', 'per', 'how', 'many', 'much', 'number', 'hourly', 'daily', 'calls', 'call'].includes(word) ||
    /^\d+(m|min|h|d|w)$/.test(word)
  );
}

export function tokenize(question: string): Token[] {
  const tokens: Token[] = [];
  for (const m of question.matchAll(/"([^"]*)"|“([^”]*)”|(\S+)/g)) {
    const quoted = m[1] ?? m[2];
    if (quoted !== undefined) {
      if (quoted.trim()) tokens.push({ raw: quoted.trim(), word: quoted.trim().toLowerCase(), quoted: true });
      continue;
    }
    const raw = m[3]!.replace(/^[([{,;:!?]+|[)\]},;:!?.]+$/g, '');
    if (raw) tokens.push({ raw, word: raw.toLowerCase(), quoted: false });
  }
  return tokens;
}
