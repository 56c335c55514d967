// The plan of a call, pure (no I/O): the row's way → its steps rendered with the args (secrets as
// names for the ledger, values for the wire) → the refusals that stop a call before anything is sent
// (a CODE step, an unbound secret, a retired build). The runner's dry run is this plan, shown.
import type { Contract, StepContract } from '../directory/contracts.ts';
import type { StoredWay } from '../directory/directory.ts';
import { describeRetiredHit, findRetired, type RetiredTarget } from '../directory/retired.ts';
import type { RunnableRow } from '../directory/row-meant.ts';
import type { EventInput } from '../ledger/input.ts';
import { plainTextExpected, plainTextProblem } from '../limits.ts';
import { TOKEN_SECRET_NAME } from '../secrets/tokens.ts';
import { Refusal } from './result.ts';
import type { Sent } from './runners.ts';
import { render, renderCommand, templateSecrets } from './template.ts';

/** The way a call runs: its header (the form), its hash and the stored contract. */
export type Way = { header: string; sha256: string; contract: Contract };

const wayOrder = ['HTTP', 'MCP', 'CLI', 'SEQUENCE'];
const rank = (shape: string) => {
  const i = wayOrder.indexOf(shape);
  return i < 0 ? wayOrder.length : i;
};

/** A tool name no column can hold, refused as BAD_INPUT before anything is looked up. */
export function checkToolName(tool: unknown): void {
  const problem = typeof tool !== 'string' || tool.length > 512 ? 'more than 512 characters' : plainTextProblem(tool);
  if (problem)
    throw new Refusal(
      'BAD_INPUT',
      `Invalid tool: expected a tool name (${plainTextExpected}, at most 512), got ${JSON.stringify(String(tool).slice(0, 80))} (it holds ${problem}).`,
      { field: 'tool' },
    );
}

/** The way the runner takes: HTTP, then MCP, then CLI, then a sequence; NOT_RUNNABLE when the row has none. */
export function chooseWay(row: RunnableRow): StoredWay {
  const chosen = [...Object.values(row.ways)].sort((a, b) => rank(a.shape) - rank(b.shape))[0];
  if (!chosen)
    throw new Refusal('NOT_RUNNABLE', `${JSON.stringify(row.name)} has no way to call it${row.reasons.length ? `: ${row.reasons.join('; ')}` : ''}.`);
  return chosen;
}

/** The steps of a way, rendered; a Refusal (or TemplateError) when the call must not be sent. */
export function planSteps(
  row: RunnableRow,
  way: Way,
  args: Record<string, unknown>,
  env: { secrets: Record<string, string>; retired: RetiredTarget[]; self: () => SelfTarget },
): RenderedStep[] {
  const steps = Array.isArray(way.contract) ? way.contract : [way.contract];
  const code = steps.findIndex((s) => s.method === 'CODE');
  if (code >= 0) {
    const others = Object.values(row.ways)
      .filter((w) => w.shape !== 'CODE')
      .map((w) => w.header);
    throw new Refusal(
      'CODE_NOT_EXECUTED',
      `${JSON.stringify(row.name)} ${steps.length > 1 ? `step ${code + 1} ` : ''}is a CODE contract, which the runner never executes. ` +
        (others.length
          ? `Its runnable ways: ${others.join(', ')}.`
          : 'The row has no other way; paste the code where it belongs, or add an HTTP, MCP or CLI way.'),
    );
  }
  const unbound = templateSecrets(way.contract).filter((name) => !(name in env.secrets));
  if (unbound.length) {
    throw new Refusal(
      'SECRET_UNBOUND',
      `${JSON.stringify(row.name)} needs the secret${unbound.length > 1 ? 's' : ''} ${unbound.map((n) => `[${n}]`).join(', ')}, which ${unbound.length > 1 ? 'are' : 'is'} not bound; nothing was sent.`,
      { secrets: unbound },
    );
  }
  // Only a contract that reaches this server itself carries the caller's token.
  const self = steps.some((step) => step.method === 'MCP' && isSelfMcp(step.server)) ? env.self() : undefined;
  const rendered = steps.map((step) => renderStep(step, args, env.secrets, self));
  const hit =
    findRetired(
      rendered.map((r) => r.shown),
      env.retired,
    ) ?? findRetired(args, env.retired);
  if (hit)
    throw new Refusal('RETIRED_BUILD', `${JSON.stringify(row.name)} was refused: the rendered request ${describeRetiredHit(hit)}; nothing was sent.`, {
      target: hit.target,
      where: hit.where,
      via: hit.via,
    });
  return rendered;
}

export type RenderedStep =
  | { kind: 'http'; shown: unknown; sent: { method: string; url: string; headers: Record<string, string>; body?: unknown } }
  | {
      kind: 'mcp';
      shown: unknown;
      sent: { server: string; argv?: string[]; headers: Record<string, string>; tool: string; arguments: Record<string, unknown> };
    }
  | { kind: 'cli'; shown: unknown; sent: { argv: string[] } }
  | { kind: 'builtin'; shown: unknown; sent?: undefined };

/**
 * This server, for contracts that reach it: an MCP `server` of "/mcp" is resolved against `origin`
 * and sent with the caller's own token (shown as [DIRLEDGER_TOKEN]), so the inner call is checked
 * by the same authority as the outer one.
 */
export type SelfTarget = { origin: string; token?: string };

/** This server's own MCP endpoint, as an MCP contract names it (resolved against the public URL). */
export const selfMcpPath = '/mcp';

/**
 * An MCP server of `/mcp` (with a query, if any) is this server itself; any other server starting
 * with `/` is a command line whose program has an absolute path (`/usr/bin/node server.mjs`).
 */
export function isSelfMcp(server: string): boolean {
  return server === selfMcpPath || server.startsWith(`${selfMcpPath}?`);
}

export function renderStep(step: StepContract, args: Record<string, unknown>, secrets: Record<string, string>, self?: SelfTarget): RenderedStep {
  if (step.method === 'CLI') {
    const argv = renderCommand(step.command, args, secrets);
    return { kind: 'cli', shown: { method: 'CLI', command: step.command, argv: argv.shown }, sent: { argv: argv.sent } };
  }
  if (step.method === 'MCP') {
    const selfRelative = isSelfMcp(step.server) && self !== undefined;
    const serverText = selfRelative ? `${self.origin}${step.server}` : step.server;
    const overHttp = /^https?:/i.test(serverText);
    const server = render(serverText, args, secrets, overHttp ? 'url' : 'text');
    // A command line is split into words first, then each {{arg}} filled inside its word, as for a
    // CLI contract: an argument never becomes two words, and shell syntax is refused (CLI_SYNTAX).
    const argv = overHttp ? undefined : renderCommand(serverText, args, secrets).sent;
    const headers = render(step.headers ?? {}, args, secrets, 'header');
    if (selfRelative) {
      (headers.shown as Record<string, string>).authorization = `Bearer [${TOKEN_SECRET_NAME}]`;
      // Without a caller token (AUTHORITY=off, or re-rendering for matchesContract) the name is sent as is.
      (headers.sent as Record<string, string>).authorization = self.token ? `Bearer ${self.token}` : `Bearer [${TOKEN_SECRET_NAME}]`;
    }
    const tool = render(step.tool, args, secrets, 'text');
    const argumentsR = render(step.arguments ?? {}, args, secrets, 'json');
    return {
      kind: 'mcp',
      shown: { method: 'MCP', server: server.shown, headers: headers.shown, tool: tool.shown, arguments: argumentsR.shown },
      sent: {
        server: server.sent as string,
        ...(argv && { argv }),
        headers: headers.sent as Record<string, string>,
        tool: tool.sent as string,
        arguments: argumentsR.sent as Record<string, unknown>,
      },
    };
  }
  if (step.method === 'CODE') throw new Error('CODE is refused before rendering');
  const url = render(step.url, args, secrets, 'url');
  const headers = render(step.headers ?? {}, args, secrets, 'header');
  const body = step.body === undefined ? undefined : render(step.body, args, secrets, 'json');
  return {
    kind: 'http',
    shown: { method: step.method, url: url.shown, headers: headers.shown, ...(body && { body: body.shown }) },
    sent: { method: step.method, url: url.sent as string, headers: headers.sent as Record<string, string>, ...(body && { body: body.sent }) },
  };
}

export function describeSent(step: RenderedStep): Partial<EventInput> {
  const sent = step.sent as Sent | undefined;
  if (step.kind === 'http' && sent && 'url' in sent) {
    const body = sent.body === undefined ? undefined : typeof sent.body === 'string' ? sent.body : JSON.stringify(sent.body);
    return {
      method: sent.method,
      url: sent.url.slice(0, 16_384),
      headers: withJsonType(sent.headers, sent.body),
      payload: body === undefined ? { state: 'NONE' } : { state: 'COMPLETE', text: body },
    };
  }
  if (step.kind === 'mcp' && sent && 'server' in sent) {
    return {
      method: 'MCP',
      ...(/^https?:/i.test(sent.server) && { url: sent.server.slice(0, 16_384) }),
      headers: sent.headers,
      payload: { state: 'COMPLETE', text: JSON.stringify({ server: sent.server, tool: sent.tool, arguments: sent.arguments }) },
    };
  }
  if (step.kind === 'cli' && sent && 'argv' in sent) return { method: 'CLI', payload: { state: 'COMPLETE', text: JSON.stringify({ argv: sent.argv }) } };
  return { method: 'BUILTIN', payload: { state: 'COMPLETE', text: JSON.stringify(step.shown) } };
}

export function withJsonType(headers: Record<string, string>, body: unknown): Record<string, string> {
  if (body === undefined || typeof body === 'string') return headers;
  if (Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) return headers;
  return { ...headers, 'content-type': 'application/json' };
}
