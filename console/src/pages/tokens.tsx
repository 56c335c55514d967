// Tokens: paste one to see its caveats, uses and what is left; issue a narrowed one (shown once).
import { type FormEvent, useState } from 'react';
import { graphql } from '../../gql/index.ts';
import type { ConsoleInspectTokenQuery, ConsoleIssueTokenMutation, IssueTokenInput, ReadScope } from '../../gql/graphql.ts';
import { request } from '../client.ts';
import { CopyButton, ErrorBox } from '../ui.tsx';

const Inspect = graphql(`
  query ConsoleInspectToken($token: String!) {
    inspectToken(token: $token) {
      valid
      revoked
      tokenId
      caveats
      limits
      issuedBy
      uses {
        caveat
        max
        used
      }
      revocation {
        tokenId
        reason
        revokedAt
        revokedBy
      }
    }
  }
`);

const Issue = graphql(`
  mutation ConsoleIssueToken($input: IssueTokenInput!) {
    issueToken(input: $input) {
      token
      tokenId
      caveats
      limits
    }
  }
`);

export function TokensPage() {
  return (
    <section>
      <h1>Tokens</h1>
      <div className="columns">
        <InspectForm />
        <IssueForm />
      </div>
    </section>
  );
}

function InspectForm() {
  const [token, setToken] = useState('');
  const [seen, setSeen] = useState<ConsoleInspectTokenQuery['inspectToken']>();
  const [error, setError] = useState<unknown>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      setSeen((await request(Inspect, { token: token.trim().replace(/^Bearer\s+/i, '') })).inspectToken);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <div>
      <h2>Inspect</h2>
      <form onSubmit={submit}>
        <label htmlFor="inspect-token">Token</label>
        <input id="inspect-token" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} />
        <button type="submit" disabled={!token.trim()}>
          Inspect
        </button>
      </form>
      <ErrorBox error={error} />
      {seen && (
        <dl className="facts" data-testid="token-inspection">
          <dt>Valid here</dt>
          <dd>{seen.valid ? 'yes' : 'no'}</dd>
          <dt>Revoked</dt>
          <dd>{seen.revoked ? `yes: ${seen.revocation?.reason ?? ''} (${seen.revocation?.revokedAt ?? ''})` : 'no'}</dd>
          <dt>Id</dt>
          <dd className="mono">{seen.tokenId ?? '—'}</dd>
          <dt>Caveats</dt>
          <dd>
            {seen.caveats.length
              ? seen.caveats.map((c) => (
                  <div key={c} className="mono">
                    {c}
                  </div>
                ))
              : 'none (an admin token)'}
          </dd>
          <dt>Limits</dt>
          <dd>{seen.limits.length ? seen.limits.map((l) => <div key={l}>{l}</div>) : 'none'}</dd>
          <dt>Uses</dt>
          <dd>
            {seen.uses?.length
              ? seen.uses.map((u) => (
                  <div key={u.caveat}>
                    {u.used} of {u.max} spent, {Math.max(0, u.max - u.used)} left
                  </div>
                ))
              : 'no use limit'}
          </dd>
          {seen.issuedBy.length > 0 && (
            <>
              <dt>Issued under</dt>
              <dd className="mono">{seen.issuedBy.join(' ← ')}</dd>
            </>
          )}
        </dl>
      )}
    </div>
  );
}

const list = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

function IssueForm() {
  const [tools, setTools] = useState('');
  const [task, setTask] = useState('');
  const [uses, setUses] = useState('');
  const [read, setRead] = useState<ReadScope | ''>('');
  const [expires, setExpires] = useState('');
  const [issued, setIssued] = useState<ConsoleIssueTokenMutation['issueToken']>();
  const [error, setError] = useState<unknown>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    const input: IssueTokenInput = {
      ...(list(tools).length && { tools: list(tools) }),
      ...(task.trim() && { task: task.trim() }),
      ...(uses.trim() && { uses: Number(uses) }),
      ...(read && { read }),
      ...(expires && { expires: new Date(expires).toISOString() }),
    };
    try {
      setIssued((await request(Issue, { input })).issueToken);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <div>
      <h2>Issue a narrowed token</h2>
      <form onSubmit={submit} className="stack">
        <label htmlFor="issue-tools">Tools (names, a trailing * is a prefix)</label>
        <input id="issue-tools" value={tools} onChange={(e) => setTools(e.target.value)} placeholder="ECHO, WEATHER_*" />
        <label htmlFor="issue-task">Task every call is filed under</label>
        <input id="issue-task" value={task} onChange={(e) => setTask(e.target.value)} />
        <label htmlFor="issue-uses">Uses</label>
        <input id="issue-uses" type="number" min={1} value={uses} onChange={(e) => setUses(e.target.value)} />
        <label htmlFor="issue-read">Reads</label>
        <select id="issue-read" value={read} onChange={(e) => setRead(e.target.value as ReadScope | '')}>
          <option value="">as the issuer</option>
          <option value="NONE">nothing</option>
          <option value="TASK">its task's events</option>
          <option value="ALL">everything</option>
        </select>
        <label htmlFor="issue-expires">Expires</label>
        <input id="issue-expires" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
        <button type="submit">Issue</button>
      </form>
      <ErrorBox error={error} />
      {issued && (
        <div className="issued" data-testid="issued-token">
          <p>Shown once: copy it now. Id {issued.tokenId}.</p>
          <CopyButton text={issued.token} label="Copy the new token" />
          <ul>
            {issued.limits.map((l) => (
              <li key={l}>{l}</li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
