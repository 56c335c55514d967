// Search: the resolver as you type, each row with its score, layer and reason, and the no-match sentence.
import { useDeferredValue, useEffect, useState } from 'react';
import { graphql } from '../../gql/index.ts';
import type { ConsoleResolveQuery } from '../../gql/graphql.ts';
import { request } from '../client.ts';
import { hrefOf } from '../router.ts';
import { ErrorBox, Link } from '../ui.tsx';

const Resolve = graphql(`
  query ConsoleResolve($query: String!) {
    resolve(query: $query, limit: 20) {
      query
      message
      readAs
      corrections {
        from
        to
      }
      matches {
        score
        layer
        reason
        row {
          __typename
          name
          type
          description
        }
      }
    }
  }
`);

export function SearchPage() {
  const [words, setWords] = useState('');
  const deferred = useDeferredValue(words.trim());
  const [answer, setAnswer] = useState<ConsoleResolveQuery['resolve']>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (!deferred) {
      setAnswer(undefined);
      return;
    }
    let current = true;
    const timer = setTimeout(() => {
      request(Resolve, { query: deferred }).then(
        (data) => {
          if (!current) return;
          setAnswer(data.resolve);
          setError(undefined);
        },
        (caught: unknown) => current && setError(caught),
      );
    }, 80);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [deferred]);
  return (
    <section>
      <h1>Search the Directory</h1>
      <label htmlFor="search" className="block">
        Words
      </label>
      <input id="search" type="search" autoComplete="off" value={words} onChange={(e) => setWords(e.target.value)} placeholder="e.g. echo the text back" />
      <ErrorBox error={error} />
      {answer && (
        <div aria-live="polite">
          <p className="message" data-testid="resolve-message">
            {answer.message}
          </p>
          {answer.corrections.length > 0 && <p className="hint">Read as: {answer.corrections.map((c) => `${c.from} → ${c.to}`).join(', ')}</p>}
          {answer.matches.length > 0 && (
            <table className="matches">
              <thead>
                <tr>
                  <th scope="col">Row</th>
                  <th scope="col">Type</th>
                  <th scope="col">Score</th>
                  <th scope="col">Layer</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {answer.matches.map((m) => (
                  <tr key={`${m.row.type}:${m.row.name}`}>
                    <td>{m.row.__typename === 'Tool' ? <Link href={hrefOf.tool(m.row.name)}>{m.row.name}</Link> : m.row.name}</td>
                    <td>{m.row.type}</td>
                    <td className="num">{m.score}</td>
                    <td>{m.layer}</td>
                    <td>{m.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </section>
  );
}
