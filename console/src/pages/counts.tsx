// Counts by hour, tool, model and agent with tokens and cost, as a bar chart and a table, and the
// plain-words `ask` box beside them.
import { type FormEvent, useState } from 'react';
import { graphql } from '../../gql/index.ts';
import type { ConsoleAskQuery, LedgerGrouping } from '../../gql/graphql.ts';
import { request } from '../client.ts';
import { hrefOf } from '../router.ts';
import { ErrorBox, Link, useLoad } from '../ui.tsx';

const CountsQuery = graphql(`
  query ConsoleCounts($by: LedgerGrouping!) {
    ledgerCounts(by: $by) {
      key
      events
      inputTokens
      outputTokens
      costUsd
    }
  }
`);

const AskQuery = graphql(`
  query ConsoleAsk($question: String!) {
    ask(question: $question) {
      readAs
      answer
      notUnderstood
      counts {
        key
        events
        inputTokens
        outputTokens
        costUsd
      }
      total {
        key
        events
        inputTokens
        outputTokens
        costUsd
      }
      events(first: 20, order: DESC) {
        edges {
          node {
            id
            actionId
            kind
            toolName
            status
          }
        }
      }
    }
  }
`);

type Count = { key?: string | null; events: number; inputTokens: string; outputTokens: string; costUsd: string };
const groupings: [LedgerGrouping, string][] = [
  ['HOUR', 'Hour'],
  ['TOOL', 'Tool'],
  ['MODEL', 'Model'],
  ['AGENT', 'Agent'],
];

function BarChart({ counts, label }: { counts: readonly Count[]; label: string }) {
  const max = Math.max(1, ...counts.map((c) => c.events));
  const bar = 22;
  const width = 640;
  return (
    <svg className="chart" role="img" aria-label={label} width={width} height={counts.length * bar + 4} viewBox={`0 0 ${width} ${counts.length * bar + 4}`}>
      {counts.map((c, i) => {
        const w = Math.max(2, ((width - 260) * c.events) / max);
        return (
          <g key={c.key ?? '(none)'} transform={`translate(0 ${i * bar})`}>
            <text x={0} y={15} className="chart-label">
              {(c.key ?? '(none)').slice(0, 28)}
            </text>
            <rect x={200} y={3} width={w} height={bar - 6} className="chart-bar" />
            <text x={206 + w} y={15} className="chart-value">
              {c.events}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function CountTable({ counts, by }: { counts: readonly Count[]; by: string }) {
  return (
    <table className="counts">
      <thead>
        <tr>
          <th scope="col">{by}</th>
          <th scope="col">Events</th>
          <th scope="col">Input tokens</th>
          <th scope="col">Output tokens</th>
          <th scope="col">Cost (USD)</th>
        </tr>
      </thead>
      <tbody>
        {counts.map((c) => (
          <tr key={c.key ?? '(none)'}>
            <td>{c.key ?? '(none)'}</td>
            <td className="num">{c.events}</td>
            <td className="num">{c.inputTokens}</td>
            <td className="num">{c.outputTokens}</td>
            <td className="num">{c.costUsd}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function CountsPage() {
  const [by, setBy] = useState<LedgerGrouping>('TOOL');
  const loaded = useLoad(by, () => request(CountsQuery, { by }));
  const label = groupings.find(([g]) => g === by)?.[1] ?? by;
  return (
    <section className="counts-page">
      <h1>Counts</h1>
      <div className="columns">
        <div>
          <fieldset className="row">
            <legend>Group by</legend>
            {groupings.map(([g, name]) => (
              <button key={g} type="button" aria-pressed={by === g} onClick={() => setBy(g)}>
                By {name.toLowerCase()}
              </button>
            ))}
          </fieldset>
          <ErrorBox error={loaded.error} />
          {loaded.data &&
            (loaded.data.ledgerCounts.length === 0 ? (
              <p>The Ledger is empty.</p>
            ) : (
              <>
                <BarChart counts={loaded.data.ledgerCounts} label={`Events by ${label.toLowerCase()}`} />
                <CountTable counts={loaded.data.ledgerCounts} by={label} />
              </>
            ))}
        </div>
        <AskBox />
      </div>
    </section>
  );
}

function AskBox() {
  const [question, setQuestion] = useState('');
  const [answer, setAnswer] = useState<ConsoleAskQuery['ask']>();
  const [error, setError] = useState<unknown>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      setAnswer((await request(AskQuery, { question })).ask);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <aside className="ask">
      <h2>Ask</h2>
      <form onSubmit={submit}>
        <label htmlFor="ask">A question in plain words</label>
        <input id="ask" value={question} onChange={(e) => setQuestion(e.target.value)} placeholder="cost by tool today" />
        <button type="submit" disabled={!question.trim()}>
          Ask
        </button>
      </form>
      <ErrorBox error={error} />
      {answer && (
        <div data-testid="ask-answer">
          <p className="message">{answer.readAs}</p>
          {answer.notUnderstood.length > 0 && <p className="hint">Not understood (no effect): {answer.notUnderstood.join(', ')}</p>}
          {answer.answer === 'COUNTS' && answer.counts && <CountTable counts={answer.counts} by="Group" />}
          {answer.answer === 'TOTAL' && <CountTable counts={[answer.total]} by="Total" />}
          {answer.answer === 'EVENTS' && (
            <ul>
              {answer.events.edges.map(({ node }) => (
                <li key={node.id}>
                  {node.kind} {node.toolName ?? ''} {node.status ?? ''} <Link href={hrefOf.action(node.actionId)}>{node.actionId.slice(0, 14)}</Link>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </aside>
  );
}
