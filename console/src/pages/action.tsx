// An action: every event of one call in order with its payload bytes, matchesContract's differences
// part by part, and, while the call is in flight, its streamed answer growing live (streamCapture).
import { useEffect, useState } from 'react';
import { graphql } from '../../gql/index.ts';
import type { ConsoleActionQuery, ConsoleStreamSubscription } from '../../gql/graphql.ts';
import { request, subscribe } from '../client.ts';
import { bytesOf, PayloadView } from '../payload.tsx';
import { hrefOf } from '../router.ts';
import { ErrorBox, formatTime, Json, Link, useLoad } from '../ui.tsx';

const ActionQuery = graphql(`
  query ConsoleAction($id: ID!) {
    action(id: $id) {
      id
      toolName
      outcome
      status
      startedAt
      endedAt
      events {
        id
        position
        occurredAt
        kind
        direction
        status
        method
        url
        task
        session
        model
        inputTokens
        outputTokens
        costUsd
        metadata
        redactedSecrets
        payloadState
        payloadSha256
        payloadSize
        contract {
          form
          sha256
        }
        matchesContract {
          matches
          differences {
            part
            expected
            recorded
          }
        }
        payload {
          base64
          text
        }
      }
    }
  }
`);

const StreamQuery = graphql(`
  subscription ConsoleStream($actionId: ID!) {
    streamCapture(actionId: $actionId) {
      sequence
      offset
      size
      base64
      final
      state
      sha256
      totalSize
      cut
    }
  }
`);

type Event = NonNullable<ConsoleActionQuery['action']>['events'][number];
type Chunk = ConsoleStreamSubscription['streamCapture'];

const finished = (events: readonly Event[]) =>
  events.some((e) => e.kind === 'TOOL_RESULT' || e.kind === 'REFUSAL' || (e.kind === 'RESPONSE' && e.direction === 'OUT'));

export function ActionPage({ id }: { id: string }) {
  const loaded = useLoad(id, () => request(ActionQuery, { id }));
  const action = loaded.data?.action;
  const inFlight = loaded.data !== undefined && (!action || !finished(action.events));
  return (
    <section>
      <h1>
        Action <span className="mono">{id}</span>
      </h1>
      <ErrorBox error={loaded.error} />
      {action && (
        <dl className="facts">
          <dt>Tool</dt>
          <dd>{action.toolName ? <Link href={hrefOf.tool(action.toolName)}>{action.toolName}</Link> : '—'}</dd>
          <dt>Outcome</dt>
          <dd data-testid="action-outcome">{action.outcome ?? (inFlight ? 'in flight' : '—')}</dd>
          <dt>Status</dt>
          <dd>{action.status ?? '—'}</dd>
          <dt>From</dt>
          <dd>
            {formatTime(action.startedAt)} to {formatTime(action.endedAt)}
          </dd>
        </dl>
      )}
      {loaded.data && !action && <p>No event of this action is in the Ledger yet.</p>}
      {inFlight && <LiveStream actionId={id} onFinal={loaded.reload} />}
      {action?.events.map((e) => (
        <EventCard key={e.id} event={e} />
      ))}
    </section>
  );
}

function EventCard({ event: e }: { event: Event }) {
  return (
    <article className="event" data-testid="action-event">
      <h2>
        #{e.position} {e.kind} {e.direction} {e.status && <small>status {e.status}</small>}
      </h2>
      <p className="hint">
        {formatTime(e.occurredAt)}
        {e.method && ` · ${e.method} ${e.url ?? ''}`}
        {e.task && (
          <>
            {' · task '}
            <Link href={hrefOf.task(e.task)}>{e.task}</Link>
          </>
        )}
        {e.model && ` · ${e.model}`}
        {(e.inputTokens != null || e.outputTokens != null) && ` · ${e.inputTokens ?? 0} in / ${e.outputTokens ?? 0} out tokens`}
        {e.costUsd && ` · $${e.costUsd}`}
        {e.redactedSecrets.length > 0 && ` · secrets replaced: ${e.redactedSecrets.join(', ')}`}
      </p>
      {e.contract && (
        <p className="hint">
          Contract {e.contract.form} <span className="mono">{e.contract.sha256.slice(0, 16)}</span>
        </p>
      )}
      {e.matchesContract && <ContractCheck match={e.matchesContract} />}
      {e.payload ? (
        <PayloadView
          label={`the payload of event ${e.position}`}
          payload={{ base64: e.payload.base64, text: e.payload.text, sha256: e.payloadSha256, state: e.payloadState, size: e.payloadSize }}
        />
      ) : (
        <p className="hint">Payload {e.payloadState}.</p>
      )}
      {e.metadata != null && (
        <details>
          <summary>Metadata</summary>
          <Json value={e.metadata} />
        </details>
      )}
    </article>
  );
}

function ContractCheck({ match }: { match: NonNullable<Event['matchesContract']> }) {
  if (match.matches) return <p className="ok">Matches its contract.</p>;
  return (
    <table className="differences" data-testid="contract-differences">
      <caption>Differs from its contract</caption>
      <thead>
        <tr>
          <th scope="col">Part</th>
          <th scope="col">Contract renders</th>
          <th scope="col">Ledger recorded</th>
        </tr>
      </thead>
      <tbody>
        {match.differences.map((d) => (
          <tr key={d.part}>
            <td>{d.part}</td>
            <td className="mono">{d.expected ?? '(absent)'}</td>
            <td className="mono">{d.recorded ?? '(absent)'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function LiveStream({ actionId, onFinal }: { actionId: string; onFinal(): void }) {
  const [chunks, setChunks] = useState<Chunk[]>([]);
  const [error, setError] = useState<unknown>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: one subscription per action; onFinal only reloads.
  useEffect(
    () =>
      subscribe(
        StreamQuery,
        { actionId },
        {
          next: ({ streamCapture }) => {
            setChunks((c) => [...c, streamCapture]);
            if (streamCapture.final) setTimeout(onFinal, 300);
          },
          error: setError,
          complete: () => {},
        },
      ),
    [actionId],
  );
  const last = chunks.at(-1);
  const joined = chunks.flatMap((c) => Array.from(bytesOf(c.base64)));
  const bytes = Uint8Array.from(joined);
  let base64 = '';
  for (let i = 0; i < bytes.length; i += 0x8000) base64 += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  base64 = btoa(base64);
  let text: string | null = null;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = null;
  }
  return (
    <article className="stream" aria-live="polite">
      <h2>Streamed answer</h2>
      <p data-testid="stream-status">
        {chunks.length === 0
          ? 'Waiting for the stream to start…'
          : last?.final
            ? `Ended: ${last.state}${last.cut ? ` (cut: ${last.cut})` : ''}, ${last.totalSize ?? bytes.length} bytes in ${chunks.length} chunks`
            : `Growing: ${bytes.length} bytes in ${chunks.length} chunks so far`}
      </p>
      <ErrorBox error={error} />
      {chunks.length > 0 && (
        <PayloadView label="the streamed answer" payload={{ base64, text, sha256: last?.sha256 ?? null, state: last?.final ? last.state : 'PARTIAL' }} />
      )}
    </article>
  );
}
