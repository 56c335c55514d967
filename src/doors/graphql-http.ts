// GraphQL over HTTP and SSE (graphql-yoga), and the yoga instance graphql-ws shares: an operation that
// touches more than the Ledger's own records is recorded whole (request IN, answer OUT); a reviewer's
// Ledger read goes straight to yoga.
import { isUtf8 } from 'node:buffer';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { Response as AdapterResponse } from '@whatwg-node/server';
import { NoSchemaIntrospectionCustomRule, type GraphQLError } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { graphqlRequestRecorded } from '../capture/recording.ts';
import type { Door } from '../context/door.ts';
import { currentCaller, type Caller } from '../context/request.ts';
import type { Config } from '../config.ts';
import type { Context } from '../graphql/context.ts';
import { maskError } from '../graphql/errors.ts';
import { useInputLimits, withParsedBody } from '../graphql/input-limits.ts';
import { schema } from '../graphql/schema.ts';
import { bodyBytes, jsonTextTooDeep, tooDeep } from '../limits.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { answerDirect, answerDirectly } from './graphql-direct.ts';
import { json } from './respond.ts';

export const graphqlPath = '/graphql';

export type Yoga = YogaServerInstance<Record<string, unknown>, Context>;

/** Records one door exchange at the boundary, as the route table's `recorded: 'boundary'` routes are. */
export type RecordExchange = (door: Door, request: Request, body: Buffer | null, handler: () => Promise<Response>) => Promise<Response>;

/** GRAPHQL_INTROSPECTION=false: __schema and __type are refused at validation, with their own code. */
const noIntrospection: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(NoSchemaIntrospectionCustomRule);
    return ({ result, setResult }) => {
      if (result.length)
        setResult(
          result.map((e) => (/introspection/i.test(e.message) ? Object.assign(e, { extensions: { ...e.extensions, code: 'INTROSPECTION_DISABLED' } }) : e)),
        );
    };
  },
};

function limitCode(code: string) {
  return [(_ctx: unknown, error: GraphQLError) => void Object.assign(error.extensions as object, { code })];
}

export function createGraphqlYoga(config: Config, services: Services, logger: Logger): Yoga {
  const mask = maskError(logger, (text) => services.redactor.text(text, new Set()));
  const maxBytes = Math.max(config.PAYLOAD_MAX_BYTES, config.BATCH_MAX_BYTES);
  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: graphqlPath,
    logging: false,
    // CORS is the app's (src/doors/cors.ts), for every door alike.
    cors: false,
    landingPage: false,
    // GraphiQL's page is the route table's (src/doors/graphiql.ts), served from npm.
    graphiql: false,
    context: (init: Record<string, unknown>): Context => {
      // graphql-ws keeps its caller on the socket (`extra`); every other operation runs inside its door's.
      const caller = init.extra ? ((init.extra as { caller?: Caller }).caller ?? { door: 'GRAPHQL_WS' }) : (currentCaller() ?? { door: 'GRAPHQL' });
      return { services, caller };
    },
    maskedErrors: { maskError: mask },
    batching: { limit: config.GRAPHQL_MAX_BATCH },
    plugins: [
      useInputLimits(maxBytes),
      ...(config.GRAPHQL_INTROSPECTION ? [] : [noIntrospection]),
      EnvelopArmorPlugin({
        maxDepth: { n: config.GRAPHQL_MAX_DEPTH, onReject: limitCode('DEPTH_LIMIT_EXCEEDED') },
        costLimit: { maxCost: config.GRAPHQL_MAX_COST, onReject: limitCode('COST_LIMIT_EXCEEDED') },
        maxAliases: { n: config.GRAPHQL_MAX_ALIASES, onReject: limitCode('ALIAS_LIMIT_EXCEEDED') },
        maxTokens: { n: config.GRAPHQL_MAX_TOKENS, onReject: limitCode('TOKEN_LIMIT_EXCEEDED') },
        maxDirectives: { n: 50, onReject: limitCode('DIRECTIVE_LIMIT_EXCEEDED') },
        blockFieldSuggestion: { enabled: false },
      }),
    ],
  });
  answerDirectly(yoga, { mask, maxBytes });
  return yoga;
}

/** GraphQL over SSE when the client accepts an event stream, else over HTTP. */
export const graphqlDoorOf = (request: Request): Door => (request.headers.get('accept')?.includes('text/event-stream') ? 'GRAPHQL_SSE' : 'GRAPHQL');

/** GraphiQL's page (a browser GET asking for HTML, with no query) is open; its operations are not. */
export function isGraphiqlPage(request: Request, url: URL): boolean {
  return (
    url.pathname === graphqlPath && request.method === 'GET' && Boolean(request.headers.get('accept')?.includes('text/html')) && !url.searchParams.has('query')
  );
}

/** The GraphQL door over HTTP and SSE, recording each operation that touches more than the Ledger. */
export function graphqlHttpDoor(yoga: Yoga, recordExchange: RecordExchange) {
  return async function graphqlDoor(request: Request, url: URL): Promise<Response> {
    const door = graphqlDoorOf(request);
    if (request.method !== 'POST') {
      const params = {
        query: url.searchParams.get('query') ?? undefined,
        operationName: url.searchParams.get('operationName') ?? undefined,
        variables: url.searchParams.get('variables') ?? undefined,
      };
      return request.method === 'GET' && graphqlRequestRecorded(params)
        ? recordExchange(door, request, null, async () => whole(await yoga.fetch(request, {})))
        : yoga.fetch(request, {});
    }
    const body = bodyBytes(await request.arrayBuffer());
    let params: unknown;
    // A body parsed here as a JSON object goes on parsed; anything else goes as the bytes, for yoga to answer as it does.
    const forward = async () => {
      if (params === null || typeof params !== 'object')
        return yoga.fetch(new Request(request.url, { method: 'POST', headers: request.headers, body: new Uint8Array(body), signal: request.signal }), {});
      return (await answerDirect(yoga, request, params, body.length)) ?? yoga.fetch(withParsedBody(request, params, body.length), {});
    };
    // Never decoded with U+FFFD in place of what was sent: refused, the exact bytes on the request IN.
    if (!isUtf8(body)) {
      return recordExchange(door, request, body, async () =>
        json({ errors: [{ message: 'Expected a JSON body in UTF-8, got bytes that are not valid UTF-8.', extensions: { code: 'BAD_INPUT' } }] }, 400),
      );
    }
    if (jsonTextTooDeep(body)) {
      return recordExchange(door, request, body, async () =>
        json({ errors: [{ message: tooDeep('the GraphQL request body').message, extensions: { code: 'BAD_USER_INPUT' } }] }, 400),
      );
    }
    try {
      params = JSON.parse(body.toString('utf8'));
    } catch {
      params = undefined; // yoga answers it (or it is not JSON): recorded, as anything not known to be a Ledger read
    }
    return graphqlRequestRecorded(params) ? recordExchange(door, request, body, async () => whole(await forward())) : forward();
  };
}

/**
 * A recorded operation's answer, read whole: it is a query or a mutation (every subscription field reads
 * the Ledger and is not recorded), so over SSE it ends after its result. Yoga's event stream does not
 * pass through the boundary's tee (it never flowed), so the tee gets the same bytes as one body.
 */
async function whole(answer: Response): Promise<Response> {
  // Read without asking for `body` first (it builds a stream over the bytes), into the server adapter's
  // Response (the global one would wrap them in a stream again): the boundary reads it back at once.
  // An event stream goes on in the global Response: the boundary tees its body, and the adapter's body
  // over bytes never ended there (GraphQL over SSE hung until the client gave up).
  const bytes = await answer.arrayBuffer();
  const body = bytes.byteLength || answer.body ? bytes : null;
  const init = { status: answer.status, statusText: answer.statusText, headers: answer.headers };
  return (answer.headers.get('content-type') ?? '').startsWith('text/event-stream') ? new Response(body, init) : new AdapterResponse(body, init);
}
