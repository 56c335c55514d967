// A tool's page (the seed's contracts page): every form for the given args with copy buttons, secrets
// as names, what varies between forms, a dispatch from here, its recent events and contract versions.
import { type FormEvent, useState } from 'react';
import { graphql } from '../../gql/index.ts';
import type { ConsoleDispatchMutation, ConsoleToolQuery } from '../../gql/graphql.ts';
import { request } from '../client.ts';
import { hrefOf } from '../router.ts';
import { CopyButton, ErrorBox, formatTime, Link, Pre, useLoad } from '../ui.tsx';

const ToolQuery = graphql(`
  query ConsoleTool($name: String!, $args: JSON) {
    tool(name: $name) {
      name
      description
      kind
      runnable
      reasons
      secretNames
      unboundSecrets
      argsSchema
      section {
        type
        versionTag
        builtAt
      }
      contracts(args: $args) {
        form
        door
        shape
        text
        json
        sha256
        secretNames
        parts {
          sentTo
          credentialPlace
          credential
          wrapping
        }
      }
    }
    events(filter: { tool: [$name] }, order: DESC, first: 20) {
      edges {
        node {
          id
          actionId
          kind
          direction
          status
          occurredAt
          contract {
            form
            sha256
          }
        }
      }
    }
  }
`);

const Dispatch = graphql(`
  mutation ConsoleDispatch($tool: String!, $args: JSON) {
    dispatch(tool: $tool, args: $args, form: DISPATCH) {
      actionId
      outcome
      status
      outputText
      error {
        code
        message
      }
    }
  }
`);

type Contract = NonNullable<ConsoleToolQuery['tool']>['contracts'][number];

/** Of one part of the forms: how many different values it takes. */
const kinds = (contracts: readonly Contract[], pick: (p: NonNullable<Contract['parts']>) => string) =>
  new Set(contracts.flatMap((c) => (c.parts ? [pick(c.parts)] : []))).size;

/** The seed's contracts page: the same call in every form; only these three parts vary. */
function WhatVaries({ name, args, contracts }: { name: string; args: unknown; contracts: readonly Contract[] }) {
  const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return (
    <>
      <h2>What varies between forms</h2>
      <p data-testid="forms-same">
        The same in every form: the tool name <code>{name}</code> and the arguments <code>{JSON.stringify(args)}</code>, that is the canonical call{' '}
        <code>{JSON.stringify({ tool: name, args })}</code>.
      </p>
      <p data-testid="forms-vary">
        Between the {contracts.length} forms vary only where the call is sent (
        {counted(
          kinds(contracts, (p) => p.sentTo),
          'door',
          'doors',
        )}
        ), where the credential goes (
        {counted(
          kinds(contracts, (p) => p.credentialPlace),
          'place',
          'places',
        )}
        ) and how the name and arguments are wrapped (
        {counted(
          kinds(contracts, (p) => p.wrapping),
          'way',
          'ways',
        )}
        ).
      </p>
      <table data-testid="forms-parts">
        <thead>
          <tr>
            <th scope="col">Form</th>
            <th scope="col">Sent to</th>
            <th scope="col">Credential</th>
            <th scope="col">Name and arguments</th>
          </tr>
        </thead>
        <tbody>
          {contracts.map((c) =>
            c.parts ? (
              <tr key={c.form ?? c.sha256}>
                <th scope="row">{c.form}</th>
                <td>{c.parts.sentTo}</td>
                <td>{c.parts.credential}</td>
                <td>{c.parts.wrapping}</td>
              </tr>
            ) : null,
          )}
        </tbody>
      </table>
    </>
  );
}

export function ToolPage({ name }: { name: string }) {
  const [argsText, setArgsText] = useState('');
  const [args, setArgs] = useState<unknown>(null);
  const [argsError, setArgsError] = useState<string>();
  const loaded = useLoad(`${name}\u0000${JSON.stringify(args)}`, () => request(ToolQuery, { name, args }));
  const [dispatched, setDispatched] = useState<ConsoleDispatchMutation['dispatch']>();
  const [dispatchError, setDispatchError] = useState<unknown>();
  const tool = loaded.data?.tool;
  // The DISPATCH form's body is the canonical call {tool, args}, args defaulting to the schema's example.
  const exampleArgs = (tool?.contracts.find((c) => c.form === 'DISPATCH')?.json as { body?: { args?: unknown } } | undefined)?.body?.args ?? null;

  const parsedArgs = (): unknown => {
    if (!argsText.trim()) return null;
    try {
      setArgsError(undefined);
      return JSON.parse(argsText);
    } catch (error) {
      setArgsError(`Expected JSON arguments: ${(error as Error).message}`);
      throw error;
    }
  };
  const render = (event: FormEvent) => {
    event.preventDefault();
    try {
      setArgs(parsedArgs());
    } catch {
      /* shown */
    }
  };
  const dispatch = async () => {
    setDispatchError(undefined);
    try {
      const data = await request(Dispatch, { tool: name, args: parsedArgs() ?? exampleArgs });
      setDispatched(data.dispatch);
      loaded.reload();
    } catch (error) {
      setDispatchError(error);
    }
  };

  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!loaded.data) return <p className="loading">Loading {name}…</p>;
  if (!tool)
    return (
      <section>
        <h1>{name}</h1>
        <p>No tool of the Directory is named {name}.</p>
      </section>
    );
  const versions = new Map<string, { form: string; current: boolean; seen: number }>();
  for (const c of tool.contracts) versions.set(c.sha256, { form: c.form ?? 'way', current: true, seen: 0 });
  for (const { node } of loaded.data.events.edges) {
    if (!node.contract) continue;
    const v = versions.get(node.contract.sha256) ?? { form: node.contract.form, current: false, seen: 0 };
    v.seen++;
    versions.set(node.contract.sha256, v);
  }
  return (
    <section>
      <h1>{tool.name}</h1>
      <p>{tool.description}</p>
      <dl className="facts">
        <dt>Kind</dt>
        <dd>{tool.kind ?? '—'}</dd>
        <dt>Runnable</dt>
        <dd>{tool.runnable ? 'yes' : `no: ${tool.reasons.join('; ')}`}</dd>
        <dt>Secrets (names only)</dt>
        <dd>{tool.secretNames.length ? tool.secretNames.map((s) => `[${s}]`).join(' ') : 'none'}</dd>
        {tool.unboundSecrets.length > 0 && (
          <>
            <dt>Not bound</dt>
            <dd>{tool.unboundSecrets.join(', ')}</dd>
          </>
        )}
        <dt>Section version</dt>
        <dd className="mono">{tool.section.versionTag?.slice(0, 16) ?? '—'}</dd>
      </dl>

      <h2>Arguments</h2>
      <form onSubmit={render} className="args">
        <label htmlFor="args">Arguments as JSON (empty: the example)</label>
        <textarea id="args" rows={4} value={argsText} placeholder={JSON.stringify(exampleArgs ?? {}, null, 1)} onChange={(e) => setArgsText(e.target.value)} />
        <div className="row">
          <button type="submit">Render the forms</button>
          <button type="button" onClick={dispatch} disabled={!tool.runnable}>
            Dispatch
          </button>
        </div>
      </form>
      {argsError && <p className="error">{argsError}</p>}
      <ErrorBox error={dispatchError} />
      {dispatched && (
        <p className={`outcome ${dispatched.outcome.toLowerCase()}`} data-testid="dispatch-outcome">
          {dispatched.outcome}
          {dispatched.status != null && ` (status ${dispatched.status})`}
          {dispatched.error && `: ${dispatched.error.code}: ${dispatched.error.message}`} — action{' '}
          <Link href={hrefOf.action(dispatched.actionId)}>{dispatched.actionId}</Link>
        </p>
      )}

      <WhatVaries name={tool.name} args={args ?? exampleArgs} contracts={tool.contracts} />

      <h2>Forms</h2>
      {tool.contracts.map((c) => {
        const text = c.text ?? JSON.stringify(c.json, null, 2);
        return (
          <article key={c.sha256 + (c.form ?? c.sha256)} className="contract">
            <h3>
              {c.form ?? 'way'} <small>{[c.door, c.shape].filter(Boolean).join(' · ')}</small>
            </h3>
            <CopyButton text={text} label={`Copy the ${c.form ?? 'way'} form`} />
            <Pre>{text}</Pre>
            {/* A request whose text is only part of it (GraphQL's operation, MCP's message): the whole contract too. */}
            {c.text && (c.shape === 'HTTP' || c.shape === 'MCP') && <Pre>{JSON.stringify(c.json, null, 2)}</Pre>}
          </article>
        );
      })}

      <h2>Contract versions</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">SHA-256</th>
            <th scope="col">Form</th>
            <th scope="col">Now rendered</th>
            <th scope="col">Recent events</th>
          </tr>
        </thead>
        <tbody>
          {[...versions].map(([sha, v]) => (
            <tr key={sha}>
              <td className="mono">{sha.slice(0, 16)}</td>
              <td>{v.form}</td>
              <td>{v.current ? 'yes' : 'no (an older version)'}</td>
              <td className="num">{v.seen}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Recent events</h2>
      {loaded.data.events.edges.length === 0 ? (
        <p>No event names this tool yet.</p>
      ) : (
        <table data-testid="tool-events">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Direction</th>
              <th scope="col">Status</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {loaded.data.events.edges.map(({ node }) => (
              <tr key={node.id}>
                <td>{formatTime(node.occurredAt)}</td>
                <td>{node.kind}</td>
                <td>{node.direction}</td>
                <td>{node.status ?? ''}</td>
                <td>
                  <Link href={hrefOf.action(node.actionId)}>{node.actionId.slice(0, 18)}</Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
