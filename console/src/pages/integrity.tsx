// Integrity: the hash chain recomputed from the stored rows (verifyLedger), and what no longer matches.
import { graphql } from '../../gql/index.ts';
import { request } from '../client.ts';
import { ErrorBox, useLoad } from '../ui.tsx';

const Verify = graphql(`
  query ConsoleVerify {
    verifyLedger(limit: 50) {
      ok
      batches
      events
      problemCount
      genesisPosition
      headSeq
      headLink
      lastPosition
      problems {
        kind
        message
        position
        batchId
        eventId
        columns
      }
    }
  }
`);

export function IntegrityPage() {
  const loaded = useLoad('verify', () => request(Verify));
  const v = loaded.data?.verifyLedger;
  return (
    <section>
      <h1>Integrity</h1>
      <button type="button" onClick={loaded.reload} disabled={loaded.loading}>
        {loaded.loading ? 'Verifying…' : 'Verify again'}
      </button>
      <ErrorBox error={loaded.error} />
      {v && (
        <>
          <p className={v.ok ? 'ok' : 'error'} data-testid="integrity-state">
            {v.ok
              ? `The chain holds: ${v.batches} batches and ${v.events} events hash as appended.`
              : `${v.problemCount} problems: the chain no longer matches the stored rows.`}
          </p>
          <dl className="facts">
            <dt>Head</dt>
            <dd className="mono">
              {v.headSeq ?? '—'} {v.headLink?.slice(0, 16)}
            </dd>
            <dt>Last position</dt>
            <dd>{v.lastPosition ?? '—'}</dd>
            <dt>Not covered</dt>
            <dd>events at or below position {v.genesisPosition} predate the chain</dd>
          </dl>
          {v.problems.length > 0 && (
            <table>
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">Position</th>
                  <th scope="col">What</th>
                </tr>
              </thead>
              <tbody>
                {v.problems.map((p) => (
                  <tr key={`${p.kind}:${p.position ?? ''}:${p.batchId ?? ''}:${p.eventId ?? ''}`}>
                    <td>{p.kind}</td>
                    <td>{p.position ?? ''}</td>
                    <td>
                      {p.message}
                      {p.columns?.length ? ` (${p.columns.join(', ')})` : ''}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
