// LedgerEvent.matchesContract: does a recorded outbound call equal what its contract renders to?
// Pure: no Prisma, no GraphQL. The caller hands in the stored contract (contract_version, by the
// event's sha256), the args the runner recorded (metadata.args) and the recorded request.
//
// The expected side is rendered by the runner's own code (renderStep → describeSent, the same
// template module) with NO secret values bound, so every `[SECRET_NAME]` stays a name. The recorded
// side already reads `[NAME]` wherever a secret value was, because the ledger redacts every stored
// URL, header and payload; so the two sides are compared as names on both sides ("shown" vs recorded).
//
// Normalisation, and nothing more:
// - method: upper case on both sides;
// - url: equal as text, or equal once parsed by WHATWG URL (what fetch sends);
// - headers: names compared case-insensitively; multi-valued headers joined with ", ";
//   a header the HTTP client adds by itself (CLIENT_ADDED_HEADERS) is ignored when only the recorded
//   side has it; when the contract sets it, it is compared like any other;
// - body: equal as text, or both JSON and equal as values (key order and whitespace do not count).
import type { Contract, StepContract } from '../directory/contracts.ts';
import { describeSent, renderStep } from './plan.ts';

export type ContractDifference = { part: string; expected: string | null; recorded: string | null };
export type ContractMatch = { matches: boolean; differences: ContractDifference[] };

/** What the ledger holds of one outbound request. `body` is the payload text (null: no stored body). */
export type RecordedCall = { method: string | null; url: string | null; headers: Record<string, unknown> | null; body: string | null };

/**
 * Headers that undici/fetch (or node:http, a proxy, an MCP SDK transport) add to a request by
 * themselves; a call made by another client differs here without differing from the contract.
 */
export const CLIENT_ADDED_HEADERS: readonly string[] = [
  'accept',
  'accept-encoding',
  'accept-language',
  'connection',
  'content-length',
  'host',
  'keep-alive',
  'sec-fetch-mode',
  'te',
  'transfer-encoding',
  'user-agent',
];
const clientAdded = new Set(CLIENT_ADDED_HEADERS);

/** The request the runner would record for this contract and args, secrets as [NAME]. */
export function expectedCall(contract: Contract, args: Record<string, unknown>, selfOrigin?: string): RecordedCall | ContractDifference {
  if (Array.isArray(contract)) {
    return {
      part: 'contract',
      expected: 'one step contract (the runner records each step of a sequence under its own hash)',
      recorded: `a sequence of ${contract.length} steps`,
    };
  }
  const step = contract as StepContract;
  if (step.method === 'CODE')
    return { part: 'contract', expected: 'a runnable contract (HTTP, MCP or CLI)', recorded: 'a CODE contract, which the runner never sends' };
  let described: ReturnType<typeof describeSent>;
  try {
    described = describeSent(renderStep(step, args, {}, selfOrigin === undefined ? undefined : { origin: selfOrigin }));
  } catch (error) {
    return { part: 'contract', expected: 'a contract that renders with the recorded args', recorded: (error as Error).message };
  }
  const payload = described.payload as { state: string; text?: string } | undefined;
  return {
    method: described.method ?? null,
    url: described.url ?? null,
    headers: (described.headers as Record<string, unknown> | undefined) ?? {},
    body: payload?.text ?? null,
  };
}

const headerText = (value: unknown): string => (Array.isArray(value) ? value.map(String).join(', ') : String(value));

function lowerHeaders(headers: Record<string, unknown> | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined || value === null) continue;
    const key = name.toLowerCase();
    const text = headerText(value);
    out.set(key, out.has(key) ? `${out.get(key)}, ${text}` : text);
  }
  return out;
}

function sameUrl(a: string | null, b: string | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function sameBody(a: string | null, b: string | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  try {
    return canonicalJson(JSON.parse(a)) === canonicalJson(JSON.parse(b));
  } catch {
    return false;
  }
}

/** Lists the parts of `recorded` that differ from `expected`: method, url, header:NAME (lower case), body. */
export function compareCalls(expected: RecordedCall, recorded: RecordedCall): ContractMatch {
  const differences: ContractDifference[] = [];
  const em = expected.method?.toUpperCase() ?? null;
  const rm = recorded.method?.toUpperCase() ?? null;
  if (em !== rm) differences.push({ part: 'method', expected: expected.method, recorded: recorded.method });
  if (!sameUrl(expected.url, recorded.url)) differences.push({ part: 'url', expected: expected.url, recorded: recorded.url });
  const eh = lowerHeaders(expected.headers);
  const rh = lowerHeaders(recorded.headers);
  for (const name of [...new Set([...eh.keys(), ...rh.keys()])].sort()) {
    const e = eh.get(name) ?? null;
    const r = rh.get(name) ?? null;
    if (e === null && clientAdded.has(name)) continue;
    if (e !== r) differences.push({ part: `header:${name}`, expected: e, recorded: r });
  }
  if (!sameBody(expected.body, recorded.body)) differences.push({ part: 'body', expected: expected.body, recorded: recorded.body });
  return { matches: differences.length === 0, differences };
}

/**
 * The whole check. `contract` undefined: the event's hash names no stored contract (a difference,
 * not a null: the event claims an identity that does not exist). `args` are the runner's recorded
 * args (metadata.args); an event without them is rendered with none.
 */
/** `selfOrigin`: this server's base URL, for contracts that reach the server itself (an MCP server of "/mcp"). */
export function matchContract(contract: Contract | undefined, args: unknown, recorded: RecordedCall, sha256: string, selfOrigin?: string): ContractMatch {
  if (contract === undefined)
    return { matches: false, differences: [{ part: 'contract', expected: `a stored contract with sha256 ${sha256}`, recorded: null }] };
  const argsObject = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const expected = expectedCall(contract, argsObject, selfOrigin);
  if ('part' in expected) return { matches: false, differences: [expected] };
  return compareCalls(expected, recorded);
}
