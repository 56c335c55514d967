// A task: its calls in the order they started, and its refusals, each naming the limit that refused.
import { useState } from 'react';
import { graphql } from '../../gql/index.ts';
import { request } from '../client.ts';
import { hrefOf } from '../router.ts';
import { ErrorBox, formatTime, Link, useLoad } from '../ui.tsx';

const TaskQuery = graphql(`
  query ConsoleTask($id: ID!) {
    task(id: $id) {
      id
      calls(first: 200) {
        edges {
          node {
            id
            toolName
            outcome
            status
            startedAt
          }
        }
      }
      refusals(first: 200) {
        edges {
          node {
            id
            actionId
            occurredAt
            toolName
            status
            metadata
          }
        }
      }
    }
  }
`);

type RefusalFacts = { limit?: unknown; caveat?: unknown; door?: unknown; code?: unknown; message?: unknown };

const limitOf = (metadata: unknown): RefusalFacts => (metadata && typeof metadata === 'object' ? (metadata as RefusalFacts) : {});
const said = (value: unknown) => (value == null ? '' : String(value));

export function TaskPage({ id }: { id: string }) {
  const loaded = useLoad(id, () => request(TaskQuery, { id }));
  const task = loaded.data?.task;
  const [reads, setReads] = useState(false);
  const calls = task?.calls.edges.filter(({ node }) => reads || node.toolName !== null) ?? [];
  const hidden = (task?.calls.edges.length ?? 0) - calls.length;
  return (
    <section>
      <h1>
        Task <span className="mono">{id}</span>
      </h1>
      <ErrorBox error={loaded.error} />
      <button type="button" onClick={loaded.reload}>
        Refresh
      </button>
      {loaded.data && !task && <p>The Ledger holds no event of this task.</p>}
      {task && (
        <>
          <h2>Calls</h2>
          <label className="row">
            <input type="checkbox" checked={reads} onChange={(e) => setReads(e.target.checked)} />
            Show reads too (requests that ran no tool){hidden > 0 && `: ${hidden} hidden`}
          </label>
          {calls.length === 0 ? (
            <p>No calls.</p>
          ) : (
            <table data-testid="task-calls">
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Status</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {calls.map(({ node }) => (
                  <tr key={node.id}>
                    <td>{formatTime(node.startedAt)}</td>
                    <td>{node.toolName ?? '—'}</td>
                    <td>{node.outcome ?? '—'}</td>
                    <td>{node.status ?? ''}</td>
                    <td>
                      <Link href={hrefOf.action(node.id)}>{node.id.slice(0, 18)}</Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Refusals</h2>
          {task.refusals.edges.length === 0 ? (
            <p>Nothing was refused.</p>
          ) : (
            <table data-testid="task-refusals">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Limit</th>
                  <th scope="col">Caveat</th>
                  <th scope="col">Why</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {task.refusals.edges.map(({ node }) => {
                  const facts = limitOf(node.metadata);
                  return (
                    <tr key={node.id}>
                      <td>{formatTime(node.occurredAt)}</td>
                      <td>{node.toolName ?? '—'}</td>
                      <td className="limit">{said(facts.limit) || '—'}</td>
                      <td className="mono">{said(facts.caveat)}</td>
                      <td>{said(facts.message) || said(facts.code) || node.status}</td>
                      <td>
                        <Link href={hrefOf.action(node.actionId)}>{node.actionId.slice(0, 18)}</Link>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
