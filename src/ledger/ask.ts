// A question in plain words → the same LedgerFilter and grouping the other reads
// take. Deterministic, no model: a word is either in the grammar below or reported
// back in `notUnderstood`, never guessed. Times are UTC; weeks start on Monday.
//
//   time       today | yesterday | this hour|week|month|year | last week|month|year (the previous
//              calendar one) | last|past|previous [N] minutes|hours|days|weeks|months|years, also
//              after "in|within|over|during the" and as 24h, 30m, 7d, 2w (rolling, up to now) |
//              since D | before D | until D | on D | between D and D   (D: 2026-11-30, an ISO
//              date-time, today or yesterday; "until D" includes the day D)
//   grouping   by|per hour|day|session|turn|kind|agent|model|tool|task|status | hourly | daily
//   filters    task|tool|session|agent|model|turn|kind|status VALUE [or|and VALUE …]
//              (usually after for/of/from/with/on; VALUE is matched exactly, "quote" it for spaces)
//   kinds      tool calls → TOOL_CALL, refusals → REFUSAL, requests → REQUEST, responses → RESPONSE
//   status     errors | failures | failed → status ERROR
//   direction  incoming | inbound → IN, outgoing | outbound → OUT
//   measures   cost | spend | dollars → COST; tokens → TOKENS; how many | number of | count | total → EVENTS
//              (only when neither cost nor tokens is named: "total cost" is a cost)
//
// Grouped questions are answered with counts; questions with a measure with one total; the rest
// with the events themselves.
import type { FilterDimension, LedgerFilter } from './filter.ts';
import type { LedgerGrouping } from './reads.ts';
import { addDays, addMonths, readDate, rollingStart, type Span, startOfDay, startOfHour, startOfMonth, startOfWeek, startOfYear } from './ask-time.ts';
import {
  countWords,
  dimensions,
  directions,
  fillers,
  groupings,
  HOUR,
  kinds,
  LedgerMeasure,
  measureWords,
  numbers,
  reserved,
  shortUnits,
  statuses,
  type Token,
  tokenize,
  type Unit,
  units,
} from './ask-words.ts';

export { LedgerMeasure };

export const AnswerKind = ['COUNTS', 'TOTAL', 'EVENTS'] as const;
export type AnswerKind = (typeof AnswerKind)[number];

export type AskReading = {
  filter: LedgerFilter;
  grouping: LedgerGrouping | null;
  /** What the question asked to be measured, in the order asked. */
  measures: LedgerMeasure[];
  /** COUNTS when grouped, TOTAL when something was measured, else EVENTS. */
  answer: AnswerKind;
  /** One sentence saying how the question was read. */
  readAs: string;
  /** The words that were not understood, in the order they appear. */
  notUnderstood: string[];
};

/**
 * Reads a question into a filter, an optional grouping and the measures asked for.
 * `now` fixes every relative time phrase, so the same question and instant always read the same.
 */
export function readQuestion(question: string, now: Date = new Date()): AskReading {
  const tokens = tokenize(question);
  const used = new Array<boolean>(tokens.length).fill(false);
  const filter: LedgerFilter = {};
  const measures: LedgerMeasure[] = [];
  let grouping: LedgerGrouping | null = null;
  let span: Span = {};
  let countAsked = false;

  const word = (i: number) => (tokens[i] && !tokens[i]!.quoted ? tokens[i]!.word : undefined);
  const take = (from: number, count: number) => {
    for (let k = from; k < from + count; k++) used[k] = true;
    return count;
  };
  const add = <K extends FilterDimension | 'direction'>(key: K, value: string) => {
    const lists = filter as Record<string, string[]>;
    lists[key] ??= [];
    const list = lists[key]!;
    if (!list.includes(value)) list.push(value);
  };
  const measure = (m: LedgerMeasure) => {
    if (!measures.includes(m)) measures.push(m);
  };
  /** Applies a time span unless it sets a bound already set; returns the words consumed (0 = refused). */
  const setSpan = (next: Span, at: number, count: number) => {
    if ((next.from && span.from) || (next.to && span.to)) return 0;
    span = { from: next.from ?? span.from, to: next.to ?? span.to };
    return take(at, count);
  };
  /** [N] unit at i (N defaults to 1), or a shorthand like 24h; returns the span start and the words read. */
  const rolling = (i: number): { from: Date; count: number; unit: Unit; n: number } | null => {
    const w = word(i);
    if (!w) return null;
    const short = /^(\d+)(m|min|h|d|w)$/.exec(w);
    if (short) {
      const n = Number(short[1]);
      return n > 0 ? { from: rollingStart(now, n, shortUnits[short[2]!]!), count: 1, unit: shortUnits[short[2]!]!, n } : null;
    }
    if (w in units) return { from: rollingStart(now, 1, units[w]!), count: 1, unit: units[w]!, n: 1 };
    const n = /^\d+$/.test(w) ? Number(w) : numbers[w];
    const u = word(i + 1);
    if (n && n > 0 && u && u in units) return { from: rollingStart(now, n, units[u]!), count: 2, unit: units[u]!, n };
    return null;
  };

  /** Tries to read a time phrase at i; returns the number of words it used (0 = none). */
  const timePhrase = (i: number): number => {
    const w = word(i);
    if (w === 'today') return setSpan({ from: startOfDay(now), to: addDays(startOfDay(now), 1) }, i, 1);
    if (w === 'yesterday') return setSpan({ from: addDays(startOfDay(now), -1), to: startOfDay(now) }, i, 1);
    if (w === 'this') {
      const u = word(i + 1);
      if (u === 'hour') return setSpan({ from: startOfHour(now), to: new Date(startOfHour(now).getTime() + HOUR) }, i, 2);
      if (u === 'week') return setSpan({ from: startOfWeek(now), to: addDays(startOfWeek(now), 7) }, i, 2);
      if (u === 'month') return setSpan({ from: startOfMonth(now), to: addMonths(startOfMonth(now), 1) }, i, 2);
      if (u === 'year') return setSpan({ from: startOfYear(now), to: addMonths(startOfYear(now), 12) }, i, 2);
      return 0;
    }
    // "in the last 2 hours", "within the past day", "over the last week": always rolling.
    if ((w === 'in' || w === 'within' || w === 'over' || w === 'during') && word(i + 1) === 'the') {
      const l = word(i + 2);
      if (l === 'last' || l === 'past' || l === 'previous') {
        const r = rolling(i + 3);
        return r ? setSpan({ from: r.from }, i, 3 + r.count) : 0;
      }
      return 0;
    }
    if (w === 'last' || w === 'past' || w === 'previous') {
      const u = word(i + 1);
      if (w === 'last' && (u === 'week' || u === 'month' || u === 'year')) {
        const [start, months] = u === 'week' ? [startOfWeek(now), 0] : u === 'month' ? [startOfMonth(now), 1] : [startOfYear(now), 12];
        const from = months ? addMonths(start, -months) : addDays(start, -7);
        return setSpan({ from, to: start }, i, 2);
      }
      const r = rolling(i + 1);
      return r ? setSpan({ from: r.from }, i, 1 + r.count) : 0;
    }
    if (w === 'since') {
      const d = readDate(tokens[i + 1], now);
      return d ? setSpan({ from: d.at }, i, 2) : 0;
    }
    if (w === 'before') {
      const d = readDate(tokens[i + 1], now);
      return d ? setSpan({ to: d.at }, i, 2) : 0;
    }
    if (w === 'until' || w === 'till' || w === 'through') {
      const d = readDate(tokens[i + 1], now);
      return d ? setSpan({ to: d.wholeDay ? addDays(d.at, 1) : d.at }, i, 2) : 0;
    }
    if (w === 'on') {
      const d = readDate(tokens[i + 1], now);
      return d?.wholeDay ? setSpan({ from: d.at, to: addDays(d.at, 1) }, i, 2) : 0;
    }
    if (w === 'between' && word(i + 2) === 'and') {
      const a = readDate(tokens[i + 1], now);
      const b = readDate(tokens[i + 3], now);
      if (a && b && a.at < (b.wholeDay ? addDays(b.at, 1) : b.at)) {
        return setSpan({ from: a.at, to: b.wholeDay ? addDays(b.at, 1) : b.at }, i, 4);
      }
      return 0;
    }
    const r = /^\d+(m|min|h|d|w)$/.test(w ?? '') ? rolling(i) : null;
    return r ? setSpan({ from: r.from }, i, 1) : 0;
  };

  /** Values after a dimension word: VALUE [or|and VALUE …]; a reserved word is never taken as a value. */
  const valuesAt = (i: number): string[] => {
    const out: string[] = [];
    let k = i;
    const isValue = (t: Token | undefined) => t !== undefined && (t.quoted || !reserved(t.word));
    if (!isValue(tokens[k])) return out;
    out.push(tokens[k]!.raw);
    k++;
    while ((word(k) === 'or' || word(k) === 'and') && isValue(tokens[k + 1])) {
      out.push(tokens[k + 1]!.raw);
      k += 2;
    }
    return out;
  };

  for (let i = 0; i < tokens.length; ) {
    const t = tokens[i]!;
    const w = t.quoted ? undefined : t.word;
    if (w === undefined) {
      i++;
      continue;
    }
    const timed = timePhrase(i);
    if (timed) {
      i += timed;
      continue;
    }
    if ((w === 'tool' || w === 'tools') && (word(i + 1) === 'calls' || word(i + 1) === 'call')) {
      add('kind', 'TOOL_CALL');
      i += take(i, 2);
      continue;
    }
    if ((w === 'how' && word(i + 1) === 'many') || (w === 'number' && word(i + 1) === 'of')) {
      countAsked = true;
      i += take(i, 2);
      continue;
    }
    if (w === 'how' && word(i + 1) === 'much') {
      i += take(i, 2);
      continue;
    }
    if (w === 'by' || w === 'per') {
      const g = word(i + 1);
      if (g && g in groupings && grouping === null) {
        grouping = groupings[g]!;
        i += take(i, 2);
        continue;
      }
      i++;
      continue;
    }
    if ((w === 'hourly' || w === 'daily') && grouping === null) {
      grouping = w === 'hourly' ? 'HOUR' : 'DAY';
      i += take(i, 1);
      continue;
    }
    if (w in dimensions) {
      const values = valuesAt(i + 1);
      if (values.length) {
        for (const v of values) add(dimensions[w]!, v);
        i += take(i, 1 + values.length * 2 - 1);
        continue;
      }
      i++;
      continue;
    }
    if (w in kinds) add('kind', kinds[w]!);
    else if (w in statuses) add('status', statuses[w]!);
    else if (w in directions) add('direction', directions[w]!);
    else if (w in measureWords) measure(measureWords[w]!);
    else if (countWords.has(w)) countAsked = true;
    else if (!fillers.has(w)) {
      i++;
      continue;
    }
    i += take(i, 1);
  }

  if (countAsked && measures.length === 0) measures.push('EVENTS');
  if (span.from) filter.occurredFrom = span.from;
  if (span.to) filter.occurredTo = span.to;
  const answer: AnswerKind = grouping ? 'COUNTS' : measures.length ? 'TOTAL' : 'EVENTS';
  return {
    filter,
    grouping,
    measures,
    answer,
    readAs: describeReading(filter, grouping, measures),
    notUnderstood: tokens.filter((_, k) => !used[k]).map((t) => t.raw),
  };
}

const measureNames: Record<LedgerMeasure, string> = { EVENTS: 'number', COST: 'cost in USD', TOKENS: 'input and output tokens' };

const shownValue = (v: string) => (/\s|^$/.test(v) ? JSON.stringify(v) : v);

const listed = (parts: string[], last: string) => (parts.length > 1 ? `${parts.slice(0, -1).join(', ')} ${last} ${parts.at(-1)}` : (parts[0] ?? ''));

/** One sentence naming every condition, the grouping and the measures, in a fixed order. */
export function describeReading(filter: LedgerFilter, grouping: LedgerGrouping | null, measures: LedgerMeasure[]): string {
  const asked = measures.length ? measures : grouping ? (['EVENTS'] as LedgerMeasure[]) : [];
  const head = asked.length
    ? `${listed(
        asked.map((m) => measureNames[m]),
        'and',
      )} of`
    : '';
  const conditions: string[] = [];
  for (const d of ['kind', 'direction', 'status', 'tool', 'session', 'turn', 'task', 'agent', 'model'] as const) {
    const values = filter[d];
    if (values) conditions.push(`${d} is ${listed(values.map(shownValue), 'or')}`);
  }
  const from = filter.occurredFrom?.toISOString();
  const to = filter.occurredTo?.toISOString();
  const when = from && to ? `from ${from} to before ${to}` : from ? `at or after ${from}` : to ? `before ${to}` : '';
  let subject = conditions.length ? `events where ${conditions.join(' and ')}` : 'all events';
  if (when) subject += conditions.length ? `, occurred ${when}` : ` that occurred ${when}`;
  const sentence = `${head ? `${head} ` : ''}${subject}${grouping ? `, grouped by ${grouping.toLowerCase()}` : ''}.`;
  return sentence[0]!.toUpperCase() + sentence.slice(1);
}
