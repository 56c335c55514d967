// `ask`: questions in plain words read into the same filter and grouping as the other
// reads, with a fixed "now"; then over the real transport against seeded events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readQuestion, type AskReading } from '../../src/ledger/ask.ts';
import type { LedgerFilter } from '../../src/ledger/filter.ts';
import { graphql } from '../gql/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { AppendBatch } from '../helpers/operations.ts';

// A Wednesday afternoon: this week began on Monday 2026-11-30.
const now = new Date('2026-12-02T15:30:00Z');
const at = (iso: string) => new Date(iso);

type Expected = Pick<AskReading, 'filter' | 'grouping' | 'measures' | 'answer'>;

const understood: [string, Expected][] = [
  [
    'tool calls by model in the last 24 hours',
    { filter: { kind: ['TOOL_CALL'], occurredFrom: at('2026-12-01T15:30:00Z') }, grouping: 'MODEL', measures: [], answer: 'COUNTS' },
  ],
  [
    'errors for task T-17 today',
    {
      filter: { status: ['ERROR'], task: ['T-17'], occurredFrom: at('2026-12-02T00:00:00Z'), occurredTo: at('2026-12-03T00:00:00Z') },
      grouping: null,
      measures: [],
      answer: 'EVENTS',
    },
  ],
  [
    'cost by tool this week',
    { filter: { occurredFrom: at('2026-11-30T00:00:00Z'), occurredTo: at('2026-12-07T00:00:00Z') }, grouping: 'TOOL', measures: ['COST'], answer: 'COUNTS' },
  ],
  [
    'How many refusals by agent last week?',
    {
      filter: { kind: ['REFUSAL'], occurredFrom: at('2026-11-23T00:00:00Z'), occurredTo: at('2026-11-30T00:00:00Z') },
      grouping: 'AGENT',
      measures: ['EVENTS'],
      answer: 'COUNTS',
    },
  ],
  [
    'total cost for model gpt-4o or claude-3 yesterday',
    {
      filter: { model: ['gpt-4o', 'claude-3'], occurredFrom: at('2026-12-01T00:00:00Z'), occurredTo: at('2026-12-02T00:00:00Z') },
      grouping: null,
      measures: ['COST'],
      answer: 'TOTAL',
    },
  ],
  ['tokens per hour for session "abc def"', { filter: { session: ['abc def'] }, grouping: 'HOUR', measures: ['TOKENS'], answer: 'COUNTS' }],
  [
    'failed tool calls in the last 30 minutes',
    { filter: { status: ['ERROR'], kind: ['TOOL_CALL'], occurredFrom: at('2026-12-02T15:00:00Z') }, grouping: null, measures: [], answer: 'EVENTS' },
  ],
  [
    'outgoing requests between 2026-11-01 and 2026-11-02',
    {
      filter: { direction: ['OUT'], kind: ['REQUEST'], occurredFrom: at('2026-11-01T00:00:00Z'), occurredTo: at('2026-11-03T00:00:00Z') },
      grouping: null,
      measures: [],
      answer: 'EVENTS',
    },
  ],
  [
    'incoming responses since 2026-11-15T08:00:00Z',
    { filter: { direction: ['IN'], kind: ['RESPONSE'], occurredFrom: at('2026-11-15T08:00:00Z') }, grouping: null, measures: [], answer: 'EVENTS' },
  ],
  [
    'events for turn 3 on 2026-11-20',
    {
      filter: { turn: ['3'], occurredFrom: at('2026-11-20T00:00:00Z'), occurredTo: at('2026-11-21T00:00:00Z') },
      grouping: null,
      measures: [],
      answer: 'EVENTS',
    },
  ],
  [
    'cost this month by day',
    { filter: { occurredFrom: at('2026-12-01T00:00:00Z'), occurredTo: at('2027-01-01T00:00:00Z') }, grouping: 'DAY', measures: ['COST'], answer: 'COUNTS' },
  ],
  [
    'number of errors by status last month',
    {
      filter: { status: ['ERROR'], occurredFrom: at('2026-11-01T00:00:00Z'), occurredTo: at('2026-12-01T00:00:00Z') },
      grouping: 'STATUS',
      measures: ['EVENTS'],
      answer: 'COUNTS',
    },
  ],
  [
    'tokens for agent alice and bob in the past 2 days',
    { filter: { agent: ['alice', 'bob'], occurredFrom: at('2026-11-30T15:30:00Z') }, grouping: null, measures: ['TOKENS'], answer: 'TOTAL' },
  ],
  [
    'requests by session last 7d',
    { filter: { kind: ['REQUEST'], occurredFrom: at('2026-11-25T15:30:00Z') }, grouping: 'SESSION', measures: [], answer: 'COUNTS' },
  ],
  [
    'show me errors for tool web.search before 2026-11-01',
    { filter: { status: ['ERROR'], tool: ['web.search'], occurredTo: at('2026-11-01T00:00:00Z') }, grouping: null, measures: [], answer: 'EVENTS' },
  ],
  [
    'how many events per kind until 2026-11-30',
    { filter: { occurredTo: at('2026-12-01T00:00:00Z') }, grouping: 'KIND', measures: ['EVENTS'], answer: 'COUNTS' },
  ],
  [
    'daily cost for task T-17 this year',
    {
      filter: { task: ['T-17'], occurredFrom: at('2026-01-01T00:00:00Z'), occurredTo: at('2027-01-01T00:00:00Z') },
      grouping: 'DAY',
      measures: ['COST'],
      answer: 'COUNTS',
    },
  ],
  ['spend by turn in the last hour', { filter: { occurredFrom: at('2026-12-02T14:30:00Z') }, grouping: 'TURN', measures: ['COST'], answer: 'COUNTS' }],
  [
    'refusals by task in the last 3 months',
    { filter: { kind: ['REFUSAL'], occurredFrom: at('2026-09-02T15:30:00Z') }, grouping: 'TASK', measures: [], answer: 'COUNTS' },
  ],
  [
    'what happened this hour',
    { filter: { occurredFrom: at('2026-12-02T15:00:00Z'), occurredTo: at('2026-12-02T16:00:00Z') }, grouping: null, measures: [], answer: 'EVENTS' },
  ],
  [
    'count of tool calls by status for model m-a',
    { filter: { kind: ['TOOL_CALL'], model: ['m-a'] }, grouping: 'STATUS', measures: ['EVENTS'], answer: 'COUNTS' },
  ],
  [
    'hourly tokens and cost of requests and responses',
    { filter: { kind: ['REQUEST', 'RESPONSE'] }, grouping: 'HOUR', measures: ['TOKENS', 'COST'], answer: 'COUNTS' },
  ],
  [
    'errors with agent "build bot" within the last week',
    { filter: { status: ['ERROR'], agent: ['build bot'], occurredFrom: at('2026-11-25T15:30:00Z') }, grouping: null, measures: [], answer: 'EVENTS' },
  ],
];

const notUnderstood: [string, string[], Partial<Expected>][] = [
  ['show me the weather by color', ['weather', 'by', 'color'], { filter: {}, grouping: null, answer: 'EVENTS' }],
  [
    'errors today and yesterday',
    ['yesterday'],
    { filter: { status: ['ERROR'], occurredFrom: at('2026-12-02T00:00:00Z'), occurredTo: at('2026-12-03T00:00:00Z') } },
  ],
  ['cost by model by tool', ['by', 'tool'], { grouping: 'MODEL', measures: ['COST'] }],
  ['tool calls for task', ['task'], { filter: { kind: ['TOOL_CALL'] } }],
  ['errors since last tuesday', ['since', 'last', 'tuesday'], { filter: { status: ['ERROR'] } }],
  ['calls in the last fortnight', ['calls', 'last', 'fortnight'], { filter: {} }],
  ['errors on 2026-02-30', ['2026-02-30'], { filter: { status: ['ERROR'] } }],
  ['errors "quoted words" for tools', ['quoted words', 'tools'], { filter: { status: ['ERROR'] } }],
  ['successful tool calls by model', ['successful'], { filter: { kind: ['TOOL_CALL'] }, grouping: 'MODEL' }],
  ['how many tasks', ['tasks'], { filter: {}, measures: ['EVENTS'], answer: 'TOTAL' }],
];

describe('reading a question (no database)', () => {
  it.each(understood)('%s', (question, expected) => {
    const reading = readQuestion(question, now);
    expect(reading.notUnderstood).toEqual([]);
    expect({ filter: reading.filter, grouping: reading.grouping, measures: reading.measures, answer: reading.answer }).toEqual(expected);
  });

  it.each(notUnderstood)('reports what it could not read: %s', (question, words, expected) => {
    const reading = readQuestion(question, now);
    expect(reading.notUnderstood).toEqual(words);
    expect(reading).toMatchObject(expected);
  });

  it('says in one sentence how it read the question', () => {
    expect(readQuestion('tool calls by model in the last 24 hours', now).readAs).toBe(
      'Number of events where kind is TOOL_CALL, occurred at or after 2026-12-01T15:30:00.000Z, grouped by model.',
    );
    expect(readQuestion('errors for task T-17 today', now).readAs).toBe(
      'Events where status is ERROR and task is T-17, occurred from 2026-12-02T00:00:00.000Z to before 2026-12-03T00:00:00.000Z.',
    );
    expect(readQuestion('cost by tool this week', now).readAs).toBe(
      'Cost in USD of all events that occurred from 2026-11-30T00:00:00.000Z to before 2026-12-07T00:00:00.000Z, grouped by tool.',
    );
    expect(readQuestion('tokens for agent "build bot" or ci', now).readAs).toBe('Input and output tokens of events where agent is "build bot" or ci.');
    expect(readQuestion('the weather', now).readAs).toBe('All events.');
  });

  it('reads the same question the same way every time, and relative times from the given now', () => {
    const later = new Date('2026-12-09T10:00:00Z');
    expect(readQuestion('cost by tool this week', now)).toEqual(readQuestion('cost by tool this week', now));
    expect(readQuestion('cost by tool this week', later).filter).toEqual({
      occurredFrom: at('2026-12-07T00:00:00Z'),
      occurredTo: at('2026-12-14T00:00:00Z'),
    });
    // Sunday belongs to the week that began the Monday before.
    expect(readQuestion('this week', new Date('2026-12-06T23:59:00Z')).filter.occurredFrom).toEqual(at('2026-11-30T00:00:00Z'));
    // A month later on the 31st lands on the last day of a shorter month.
    expect(readQuestion('last 1 month', new Date('2026-03-31T12:00:00Z')).filter.occurredFrom).toEqual(at('2026-02-28T12:00:00Z'));
  });
});

const Ask = graphql(`
  query Ask($question: String!, $first: Int) {
    ask(question: $question) {
      question
      readAs
      answer
      grouping
      measures
      notUnderstood
      filter {
        kind
        direction
        tool
        session
        turn
        task
        agent
        model
        status
        occurredFrom
        occurredTo
      }
      counts {
        key
        events
        inputTokens
        outputTokens
        costUsd
      }
      total {
        events
        costUsd
        inputTokens
      }
      events(first: $first) {
        edges {
          node {
            id
          }
        }
        pageInfo {
          hasNextPage
        }
      }
    }
  }
`);

describe.each(databaseKinds)('ask over GraphQL (%s)', (kind) => {
  let t: TestApp;
  const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
  const seeds = [
    { id: 'a1', kind: 'TOOL_CALL', tool: 'ECHO', task: 'T-17', status: 'OK', costUsd: '0.1', occurredAt: minutesAgo(5) },
    { id: 'a2', kind: 'TOOL_CALL', tool: 'ECHO', task: 'T-17', status: 'ERROR', costUsd: '0.2', occurredAt: minutesAgo(50) },
    { id: 'a3', kind: 'TOOL_CALL', tool: 'SEARCH', task: 'T-17', status: 'ERROR', costUsd: '1.25', occurredAt: minutesAgo(200) },
    { id: 'a4', kind: 'REFUSAL', tool: 'SEARCH', task: 'T-18', status: 'ERROR', occurredAt: minutesAgo(300) },
    { id: 'a5', kind: 'TOOL_CALL', tool: 'ECHO', task: 'T-17', status: 'ERROR', costUsd: '5', occurredAt: minutesAgo(3 * 24 * 60) },
  ].map((e) => ({ ...e, direction: 'OUT' as const, actionId: e.id, inputTokens: 10, outputTokens: 1 }));

  beforeAll(async () => {
    t = await startTestApp(kind);
    const appended = await t.op(AppendBatch, { input: { collector: 'ask', events: seeds } });
    expect(appended.data?.appendBatch.inserted).toBe(seeds.length);
  });
  afterAll(async () => t?.stop());

  it('answers a grouped question with counts, beside how it was read', async () => {
    const result = await t.op(Ask, { question: 'cost by tool in the last 24 hours' });
    expect(result.errors).toBeUndefined();
    const answer = result.data!.ask!;
    expect(answer).toMatchObject({ answer: 'COUNTS', grouping: 'TOOL', measures: ['COST'], notUnderstood: [] });
    const from = Date.parse(answer.filter.occurredFrom!);
    expect(Math.abs(from - (Date.now() - 24 * 3_600_000))).toBeLessThan(60_000);
    expect(answer.readAs).toBe(`Cost in USD of all events that occurred at or after ${new Date(from).toISOString()}, grouped by tool.`);
    expect(answer.counts).toEqual([
      { key: 'ECHO', events: 2, inputTokens: '20', outputTokens: '2', costUsd: '0.3' },
      { key: 'SEARCH', events: 2, inputTokens: '20', outputTokens: '2', costUsd: '1.25' },
    ]);
  });

  it('answers a measured question with one total', async () => {
    const result = await t.op(Ask, { question: 'how many errors for task T-17 in the last 24 hours' });
    const answer = result.data!.ask!;
    expect(answer).toMatchObject({ answer: 'TOTAL', grouping: null, counts: null, measures: ['EVENTS'] });
    expect(answer.filter).toMatchObject({ status: ['ERROR'], task: ['T-17'], kind: null, occurredTo: null });
    expect(answer.total).toEqual({ events: 2, costUsd: '1.45', inputTokens: '20' });
  });

  it('answers with the events themselves, and the filter it returns reads the same events again', async () => {
    const result = await t.op(Ask, { question: 'tool calls for task T-17 since 2020-01-01', first: 2 });
    const answer = result.data!.ask!;
    expect(answer.answer).toBe('EVENTS');
    expect(answer.filter).toEqual({
      kind: ['TOOL_CALL'],
      direction: null,
      tool: null,
      session: null,
      turn: null,
      task: ['T-17'],
      agent: null,
      model: null,
      status: null,
      occurredFrom: '2020-01-01T00:00:00.000Z',
      occurredTo: null,
    });
    expect(answer.events.edges.map((e) => e.node.id)).toEqual(['a1', 'a2']);
    expect(answer.events.pageInfo.hasNextPage).toBe(true);
    const filter = Object.fromEntries(Object.entries(answer.filter).filter(([, v]) => v !== null)) as LedgerFilter;
    const again = await t.gql(`query($filter: LedgerFilter) { events(filter: $filter) { edges { node { id } } } }`, { filter });
    expect(again.data.events.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(['a1', 'a2', 'a3', 'a5']);
  });

  it('lists the words it could not read and does not act on them', async () => {
    const result = await t.op(Ask, { question: 'errors by colour for tool ECHO' });
    const answer = result.data!.ask!;
    expect(answer.notUnderstood).toEqual(['by', 'colour']);
    expect(answer.grouping).toBeNull();
    expect(answer.filter).toMatchObject({ status: ['ERROR'], tool: ['ECHO'] });
    expect(answer.events.edges.map((e) => e.node.id)).toEqual(['a2', 'a5']);
  });

  it('refuses an empty or overlong question with BAD_INPUT', async () => {
    const empty = await t.op(Ask, { question: '   ' });
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
    expect(empty.errors?.[0]?.message).toBe('Invalid question: expected 1 to 1000 characters, got 0');
    const long = await t.op(Ask, { question: 'x'.repeat(1001) });
    expect(long.errors?.[0]?.message).toBe('Invalid question: expected 1 to 1000 characters, got 1001');
  });
});
