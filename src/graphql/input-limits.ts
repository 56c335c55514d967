// The door limits of src/limits.ts at GraphQL (HTTP, SSE and graphql-ws): the body read with its size
// limit and pre-scanned for depth before it is parsed, variables checked for depth, and every String
// or ID input (literal or variable) that is a name, filter or id refused when it holds NUL or an
// unpaired surrogate. JSON scalars (args, metadata, headers) and payload text are content: not checked.
import { isUtf8 } from 'node:buffer';
import {
  getNamedType,
  getNullableType,
  getOperationAST,
  GraphQLError,
  isInputObjectType,
  isListType,
  isScalarType,
  Kind,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { DomainError } from '../errors.ts';
import { JSON_MAX_DEPTH, jsonTextTooDeep, readBody, plainTextExpected, plainTextProblem, tooDeep, tooLarge, valueTooDeep } from '../limits.ts';

/** Input fields that carry content, not names: `Type.field`. */
const contentFields = new Set(['PayloadInput.text']);
const textScalars = new Set(['String', 'ID']);

const badUserInput = (message: string, status = 400) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', http: { status } } });

const plainError = (where: string, text: string, problem: string) =>
  badUserInput(`Invalid ${where}: expected ${plainTextExpected}, got ${JSON.stringify(text.slice(0, 80))} (it holds ${problem}).`);

/** String and ID literals in the document: names, filters and ids, never NUL or a lone surrogate. */
export const PlainStringLiterals: ValidationRule = (context) => ({
  StringValue(node, _key, parent) {
    const type = getNamedType(context.getInputType());
    if (!type || !textScalars.has(type.name)) return;
    const holder = getNamedType(context.getParentInputType());
    const field =
      parent && !Array.isArray(parent) && (parent as { kind?: string }).kind === Kind.OBJECT_FIELD
        ? (parent as { name: { value: string } }).name.value
        : undefined;
    if (holder && field && contentFields.has(`${holder.name}.${field}`)) return;
    const problem = plainTextProblem(node.value);
    if (problem) context.reportError(Object.assign(plainError(field ?? context.getArgument()?.name ?? 'argument', node.value, problem), { nodes: [node] }));
  },
});

/** The first variable value that breaks a limit, as a GraphQLError; undefined when all hold. */
export function variablesProblem(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: unknown,
): GraphQLError | undefined {
  if (variables === null || typeof variables !== 'object') return undefined;
  if (valueTooDeep(variables)) return badUserInput(tooDeep('variables').message);
  for (const [name, type] of declaredVariables(schema, document, operationName ?? undefined)) {
    const found = type && textProblem((variables as Record<string, unknown>)[name], type, `$${name}`);
    if (found) return plainError(found.where, found.text, found.problem);
  }
  return undefined;
}

type Declared = [name: string, type: GraphQLInputType | undefined][];
/** Per parsed document (yoga's parse cache hands every request with the same text the same one) and schema. */
const declared = new WeakMap<DocumentNode, Map<string | undefined, { schema: GraphQLSchema; variables: Declared }>>();

/** The variables the operation declares, each with its input type in `schema`. */
function declaredVariables(schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined): Declared {
  let byName = declared.get(document);
  if (!byName) {
    byName = new Map();
    declared.set(document, byName);
  }
  const kept = byName.get(operationName);
  if (kept?.schema === schema) return kept.variables;
  const operation = getOperationAST(document, operationName);
  // Kept only under a name the document defines, so a request's operationName cannot grow the map.
  if (!operation) return [];
  const variables: Declared = (operation.variableDefinitions ?? []).map((d) => [
    d.variable.name.value,
    typeFromAST(schema, d.type) as GraphQLInputType | undefined,
  ]);
  byName.set(operationName, { schema, variables });
  return variables;
}

function textProblem(value: unknown, type: GraphQLInputType, where: string): { where: string; text: string; problem: string } | undefined {
  if (value === null || value === undefined) return undefined;
  const inner = getNullableType(type);
  if (isListType(inner)) {
    const items = Array.isArray(value) ? value : [value];
    for (const [i, item] of items.entries()) {
      const found = textProblem(item, inner.ofType, Array.isArray(value) ? `${where}[${i}]` : where);
      if (found) return found;
    }
    return undefined;
  }
  if (isInputObjectType(inner)) {
    if (typeof value !== 'object') return undefined;
    for (const [name, field] of Object.entries(inner.getFields())) {
      if (contentFields.has(`${inner.name}.${name}`)) continue;
      const found = textProblem((value as Record<string, unknown>)[name], field.type, `${where}.${name}`);
      if (found) return found;
    }
    return undefined;
  }
  if (isScalarType(inner) && textScalars.has(inner.name) && typeof value === 'string') {
    const problem = plainTextProblem(value);
    if (problem) return { where, text: value, problem };
  }
  return undefined;
}

const isJsonPost = (request: Request) => request.method === 'POST' && /^application\/(graphql\+)?json\b/i.test(request.headers.get('content-type') ?? '');

/** Brackets and braces nested past the JSON limit in a GraphQL document (strings skipped as in JSON). */
export const documentTooDeep = (query: string) => jsonTextTooDeep(query);
export const tooDeepDocument = `Expected a GraphQL document nested at most ${JSON_MAX_DEPTH} levels deep, got one nested deeper.`;

const tooLargeError = (error: DomainError) => new GraphQLError(error.message, { extensions: { code: error.code, http: { status: 413 } } });

const parsedBodies = new WeakMap<Request, { params: object; size: number }>();

/**
 * A bodyless copy of `request` whose JSON body the door has already read and checked (UTF-8, depth,
 * parsed): yoga takes `params` as its parse, so the body is not copied, streamed and parsed twice.
 */
export function withParsedBody(request: Request, params: object, size: number): Request {
  const forwarded = new Request(request.url, { method: 'POST', headers: request.headers, signal: request.signal });
  parsedBodies.set(forwarded, { params, size });
  return forwarded;
}

/** The yoga plugin: body limits at parse, the literal rule at validation, variables before execution. */
export function useInputLimits(maxBytes: number): Plugin {
  return {
    onRequestParse({ request, setRequestParser }) {
      if (!isJsonPost(request)) return;
      const parsed = parsedBodies.get(request);
      if (parsed)
        return setRequestParser(() => {
          if (parsed.size > maxBytes) throw tooLargeError(tooLarge(maxBytes, parsed.size));
          return parsed.params as never;
        });
      setRequestParser(async (req) => {
        let body: Buffer;
        try {
          body = await readBody(req, maxBytes);
        } catch (error) {
          if (error instanceof DomainError) throw tooLargeError(error);
          throw error;
        }
        if (!isUtf8(body)) throw badUserInput('Expected a JSON body in UTF-8, got bytes that are not valid UTF-8.');
        if (jsonTextTooDeep(body)) throw badUserInput(tooDeep('the body').message);
        let params: unknown;
        try {
          params = JSON.parse(body.toString('utf8'));
        } catch (error) {
          throw new GraphQLError(`Expected the body as JSON, got invalid JSON (${(error as Error).message}).`, {
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          });
        }
        if (params === null || typeof params !== 'object')
          throw new GraphQLError(`Expected the body to be a JSON object, got ${params === null ? 'null' : typeof params}.`, {
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          });
        return params as never;
      });
    },
    onParams({ params }) {
      // GET carries variables in the URL: the same depth limit as a body. The document's own nesting
      // (list and object literals) is held to it before graphql-js parses it recursively.
      if (valueTooDeep(params.variables) || valueTooDeep(params.extensions)) throw badUserInput(tooDeep('variables').message);
      if (typeof params.query === 'string' && documentTooDeep(params.query)) throw badUserInput(tooDeepDocument);
    },
    onValidate({ addValidationRule }) {
      addValidationRule(PlainStringLiterals);
    },
    onExecute({ args, setResultAndStopExecution }) {
      const problem = variablesProblem(args.schema, args.document, args.operationName, args.variableValues);
      if (problem) setResultAndStopExecution({ errors: [problem] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const problem = variablesProblem(args.schema, args.document, args.operationName, args.variableValues);
      if (problem) setResultAndStopExecution({ errors: [problem] });
    },
  };
}
