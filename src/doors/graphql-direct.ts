// A plain JSON query answered through yoga's envelop (the same parse and validation caches, plugins,
// context and masking) without yoga's HTTP layer: no second Request, no request-parser, params and
// result-processor hook chains. Issue 17: that layer was ~10% of the server's CPU for a reviewer's
// read. Anything else (mutations, subscriptions, batches, other media types, a parse or validation
// error, a limit broken) returns undefined and goes to yoga.fetch, which answers it as before.
import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionResult } from 'graphql';
import { createGraphQLError, processRegularResult, type YogaServerInstance } from 'graphql-yoga';
import type { Context } from '../graphql/context.ts';
import { documentTooDeep } from '../graphql/input-limits.ts';
import { valueTooDeep } from '../limits.ts';

type Yoga = YogaServerInstance<Record<string, unknown>, Context>;
type Mask = (error: unknown, message: string) => Error;
type Params = { query: string; variables?: Record<string, unknown>; operationName?: string; extensions?: Record<string, unknown> };

/** Bodies above this go to yoga, which holds them to the configured limits. */
export const DIRECT_BODY_MAX_BYTES = 65_536;

type Direct = { mask: Mask; maxBytes: number };
/**
 * Documents that validated without an error against this yoga's schema and rules (both fixed when it
 * is built): yoga's own validation cache keeps that result per document too, but its hooks (a rule
 * made by each limit plugin, the cache's key) ran for every request (issue 17: ~3% of a recorded
 * Directory read). A document yoga's parse cache drops leaves this set with it.
 */
type Registered = Direct & { valid: WeakSet<DocumentNode> };
const registered = new WeakMap<object, Registered>();
/** Registers what yoga was built with: its mask (for an error thrown, not returned, by execution) and its body limit. */
export function answerDirectly(yoga: Yoga, direct: Direct): void {
  registered.set(yoga, { ...direct, valid: new WeakSet() });
}

const keys = new Set(['query', 'variables', 'operationName', 'extensions']);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What yoga's checks would let through unchanged: one operation's params, each of its type, within the depth limits. */
function plainParams(params: unknown): params is Params {
  if (!isObject(params)) return false;
  for (const key of Object.keys(params)) if (!keys.has(key)) return false;
  const { query, variables, operationName, extensions } = params;
  return (
    typeof query === 'string' &&
    (variables === undefined || (isObject(variables) && !valueTooDeep(variables))) &&
    (operationName === undefined || typeof operationName === 'string') &&
    (extensions === undefined || (isObject(extensions) && !valueTooDeep(extensions))) &&
    !documentTooDeep(query)
  );
}

/**
 * The media type yoga would answer in when it is one of its two JSON ones: the first type the client
 * lists (yoga's processors take the first listed), exactly, with no parameters.
 */
export function regularMediaType(request: Request): 'application/json' | 'application/graphql-response+json' | undefined {
  const first = request.headers.get('accept')?.split(',', 1)[0]?.replace(/\s/g, '').toLowerCase();
  return first === 'application/json' || first === 'application/graphql-response+json' ? first : undefined;
}

/** The answer to a plain JSON query, as yoga would give it; undefined when yoga should answer. */
export async function answerDirect(yoga: Yoga, request: Request, params: unknown, size: number): Promise<Response | undefined> {
  const direct = registered.get(yoga);
  const accepted = regularMediaType(request);
  if (
    !direct ||
    !accepted ||
    size > Math.min(direct.maxBytes, DIRECT_BODY_MAX_BYTES) ||
    !/^application\/json\b/i.test(request.headers.get('content-type') ?? '')
  )
    return undefined;
  if (!plainParams(params)) return undefined;
  const enveloped = yoga.getEnveloped({ request, params });
  // A document that does not parse, is not one query, or does not validate (a limit rule may throw) is yoga's to answer.
  let document: DocumentNode;
  try {
    document = enveloped.parse(params.query);
    if (getOperationAST(document, params.operationName)?.operation !== 'query') return undefined;
    if (!direct.valid.has(document)) {
      if (enveloped.validate(enveloped.schema, document).length) return undefined;
      direct.valid.add(document);
    }
  } catch {
    return undefined;
  }
  let result: ExecutionResult;
  try {
    const contextValue = await enveloped.contextFactory();
    result = (await enveloped.execute({
      schema: enveloped.schema,
      document,
      contextValue,
      variableValues: params.variables,
      operationName: params.operationName,
    })) as ExecutionResult;
  } catch (error) {
    const masked = direct.mask(error, 'Unexpected error.');
    result = { errors: [masked instanceof GraphQLError ? masked : createGraphQLError((masked as Error).message, { originalError: masked as Error })] };
  }
  return processRegularResult(result, yoga.fetchAPI, accepted);
}
