// The seed's read routes over plain HTTP, for reviewers with curl: one event whole, every event of an
// action, counted views by any grouping, a window snapshot and `ask`. Each runs one fixed GraphQL
// document through the same schema and resolvers as /graphql (one implementation; the answer is the
// root field's value), as the route's caller, and is never recorded (the Ledger's own reads).
import { execute, type GraphQLError, parse } from 'graphql';
import { currentCaller } from '../context/request.ts';
import { badInput, DomainError, ErrorCode } from '../errors.ts';
import { schema } from '../graphql/schema.ts';
import { plainTextProblem } from '../limits.ts';
import type { Services } from '../services.ts';
import { errorResponse, json } from './respond.ts';

const eventFields = `id position cursor kind direction actionId toolName session turn task agent model status method url headers
  costUsd inputTokens outputTokens occurredAt recordedAt payloadState payloadSha256 payloadSize payloadEncoding artifactUri artifactSha256
  redactedSecrets metadata contract { form sha256 } payload { sha256 size encoding text url }`;

const countFields = 'key events inputTokens outputTokens costUsd';
const filterFields = 'kind direction tool session turn task agent model status occurredFrom occurredTo';

/** The GraphQL each read route runs, by the root field that answers it (tests ask /graphql the same). */
export const ledgerReadDocuments = {
  event: `query LedgerRow($id: ID!) { event(id: $id) { ${eventFields} } }`,
  action: `query LedgerAction($id: ID!) { action(id: $id) { id toolName status outcome startedAt endedAt events { ${eventFields} } } }`,
  ledgerCounts: `query LedgerCounts($by: LedgerGrouping!, $filter: LedgerFilter) { ledgerCounts(by: $by, filter: $filter) { ${countFields} } }`,
  ledgerSnapshot: `query LedgerSnapshot($window: String, $filter: LedgerFilter) { ledgerSnapshot(window: $window, filter: $filter) {
    asOf window filter { ${filterFields} } events distinctTools distinctModels distinctSessions inputTokens outputTokens costUsd } }`,
  ask: `query LedgerAsk($question: String!) { ask(question: $question) { question readAs filter { ${filterFields} } grouping measures notUnderstood answer
    counts { ${countFields} } total { ${countFields} } } }`,
} as const;

export type LedgerReadField = keyof typeof ledgerReadDocuments;
const parsed = Object.fromEntries(Object.entries(ledgerReadDocuments).map(([field, text]) => [field, parse(text)])) as Record<
  LedgerReadField,
  ReturnType<typeof parse>
>;

export const ledgerReadPath = /^\/api\/ledger\/(row|action|counts|snapshot|ask)(?:\/([^/]*))?$/;

const listParams = ['kind', 'direction', 'tool', 'session', 'turn', 'task', 'agent', 'model', 'status'] as const;

/** The LedgerFilter a query string spells: a dimension repeated (`tool=A&tool=B`) or comma-separated, occurredFrom/To as ISO times. */
function filterOf(url: URL): Record<string, unknown> | undefined {
  const filter: Record<string, unknown> = {};
  for (const name of listParams) {
    const values = url.searchParams.getAll(name).flatMap((v) => v.split(','));
    if (values.length) filter[name] = values;
  }
  for (const name of ['occurredFrom', 'occurredTo'] as const) {
    const value = url.searchParams.get(name);
    if (value !== null) filter[name] = value;
  }
  return Object.keys(filter).length ? filter : undefined;
}

function plainParam(name: string, value: string | null): string | null {
  const problem = value === null ? undefined : plainTextProblem(value);
  if (problem) throw badInput(`Invalid ${name}: expected plain text, got ${problem}.`, { field: name });
  return value;
}

function required(name: string, value: string | null): string {
  if (!value) throw badInput(`Missing ${name}: expected it in the path or query string.`, { field: name });
  return value;
}

/** The root field and variables a read route's request asks for. */
function readOf(what: string, segment: string | undefined, url: URL): { field: LedgerReadField; variables: Record<string, unknown> } {
  let idText: string | null = null;
  if (segment !== undefined) {
    try {
      idText = decodeURIComponent(segment);
    } catch {
      throw badInput('Invalid id: expected a percent-encoded path segment, got a malformed escape.', { field: 'id' });
    }
  }
  const id = () => required('id', plainParam('id', idText));
  if (what === 'row') return { field: 'event', variables: { id: id() } };
  if (what === 'action') return { field: 'action', variables: { id: id() } };
  if (segment) throw badInput(`Unexpected path segment after /api/ledger/${what}: expected its parameters in the query string.`);
  for (const name of url.searchParams.keys()) plainParam(name, url.searchParams.getAll(name).join(','));
  if (what === 'ask') return { field: 'ask', variables: { question: required('q', url.searchParams.get('q')) } };
  const filter = filterOf(url);
  if (what === 'counts') return { field: 'ledgerCounts', variables: { by: required('by', url.searchParams.get('by'))?.toUpperCase(), filter } };
  return { field: 'ledgerSnapshot', variables: { window: url.searchParams.get('window'), filter } };
}

/** A GraphQL error as the HTTP answer: a domain error with its status, a malformed variable 400, anything else masked. */
function errorAnswer(error: GraphQLError, services: Services): Response {
  if (error.originalError instanceof DomainError) return errorResponse(error.originalError);
  // No path: the variables were refused before anything ran (a value of the wrong type, an unknown enum value).
  if (!error.originalError || !error.path) return errorResponse(new DomainError(ErrorCode.BAD_INPUT, error.message));
  services.logger.error({ err: error.originalError }, 'unexpected error in a ledger read route');
  return json({ error: { code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.' } }, 500);
}

/** GET /api/ledger/{row/:id, action/:id, counts, snapshot, ask}: the root field's value as JSON; 404 when there is none. */
export async function ledgerReadRoute(url: URL, match: readonly string[], services: Services): Promise<Response> {
  let read: ReturnType<typeof readOf>;
  try {
    read = readOf(match[1]!, match[2], url);
  } catch (error) {
    if (error instanceof DomainError) return errorResponse(error);
    throw error;
  }
  const caller = currentCaller() ?? { door: 'REST' as const };
  const result = await execute({ schema, document: parsed[read.field], variableValues: read.variables, contextValue: { services, caller } });
  if (result.errors?.length) return errorAnswer(result.errors[0]!, services);
  const value = (result.data as Record<string, unknown>)[read.field];
  if (value === null)
    return json(
      { error: { code: 'NOT_FOUND', message: `No ${match[1] === 'row' ? 'event' : 'action'} has the id ${JSON.stringify(read.variables.id)}.` } },
      404,
    );
  return json(value);
}
