// GraphQL over WebSocket (graphql-ws): the token is checked at connection_init and again, for expiry,
// revocation and rate, at each subscribe; a query or mutation that touches more than the Ledger is
// recorded (door GRAPHQL_WS).
import { type ExecutionArgs, type ExecutionResult, GraphQLError } from 'graphql';
import type { Context as WsContext, SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import type { WebSocketServer } from 'ws';
import { captureCall, jsonAnswer } from '../capture/boundary.ts';
import { graphqlDocumentRecorded } from '../capture/recording.ts';
import { runAsCaller, type Caller } from '../context/request.ts';
import { documentTooDeep, tooDeepDocument } from '../graphql/input-limits.ts';
import { tooDeep, valueTooDeep } from '../limits.ts';
import { lapseCode } from '../live/lease.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { recordRefusal } from './authenticate.ts';
import type { Yoga } from './graphql-http.ts';
import { admitUpgrade } from './upgrade.ts';

type Enveloped = ReturnType<Yoga['getEnveloped']>;
/** The execution arguments `subscribeOne` answers: Yoga's enveloped execute and subscribe ride in rootValue. */
type EnvelopedArgs = ExecutionArgs & {
  query: string;
  contextValue: { caller: Caller };
  rootValue: { execute: Enveloped['execute']; subscribe: Enveloped['subscribe'] };
};

/** Serves graphql-ws on `wsServer`; returns its dispose. */
export function useGraphqlWs(services: Services, logger: Logger, yoga: Yoga, wsServer: WebSocketServer): () => Promise<void> | void {
  /** A graphql-ws query or mutation; one that touches more than the Ledger is recorded (door GRAPHQL_WS). */
  async function executeOverWs(args: EnvelopedArgs): Promise<ExecutionResult | AsyncIterable<ExecutionResult>> {
    if (!graphqlDocumentRecorded(args.document, args.operationName, args.variableValues)) return args.rootValue.execute(args);
    const body = Buffer.from(
      JSON.stringify({ query: args.query, variables: args.variableValues ?? undefined, operationName: args.operationName ?? undefined }),
    );
    return captureCall<ExecutionResult | AsyncIterable<ExecutionResult>>(
      services,
      { door: 'GRAPHQL_WS', request: { method: 'EXECUTE', url: 'graphql-ws:execute', headers: {}, body } },
      () => args.rootValue.execute(args),
      jsonAnswer,
    );
  }

  async function subscribeOne(ctx: WsContext<Record<string, unknown>, Extra>, params: SubscribePayload) {
    const grant = (ctx.extra as { caller?: Caller }).caller?.grant;
    // The socket's token was checked at connection_init; it may have expired or been revoked since.
    const lapsed = grant && services.authority.recheck(grant, 'GRAPHQL_WS');
    if (lapsed) {
      await recordRefusal(services, lapsed, grant);
      return [new GraphQLError(lapsed.message, { extensions: { code: lapseCode(lapsed) } })];
    }
    const limited = grant && (await services.authority.rate(grant, 'GRAPHQL_WS'));
    if (limited) {
      await recordRefusal(services, limited, grant);
      return [new GraphQLError(limited.message, { extensions: { code: 'RATE_LIMITED', retryAfterSeconds: limited.retryAfterSeconds } })];
    }
    if (documentTooDeep(params.query)) return [new GraphQLError(tooDeepDocument, { extensions: { code: 'BAD_USER_INPUT' } })];
    if (valueTooDeep(params.variables)) return [new GraphQLError(tooDeep('the variables').message, { extensions: { code: 'BAD_USER_INPUT' } })];
    const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
      ...ctx,
      req: ctx.extra.request,
      socket: ctx.extra.socket,
      params,
    });
    const args = {
      schema,
      query: params.query,
      operationName: params.operationName,
      document: parse(params.query),
      variableValues: params.variables,
      contextValue: await contextFactory(),
      rootValue: { execute, subscribe },
    };
    const errors = validate(args.schema, args.document);
    if (errors.length) return errors.map((e: GraphQLError) => subscribeError(e, 'GRAPHQL_VALIDATION_FAILED'));
    return args;
  }

  function subscribeError(error: unknown, code = 'BAD_USER_INPUT'): GraphQLError {
    if (error instanceof GraphQLError && !error.originalError) {
      // A syntax error, a validation error, or a limit refused at parse (its code set by the limit).
      const named = (error.extensions?.code as string | undefined) ?? (/^Syntax Error/.test(error.message) ? 'GRAPHQL_PARSE_FAILED' : code);
      return new GraphQLError(error.message, { ...(error.nodes && { nodes: error.nodes }), extensions: { ...error.extensions, code: named } });
    }
    logger.error({ err: error }, 'unexpected error subscribing over graphql-ws');
    return new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  }

  const ws = useServer(
    {
      // Every args here is the one subscribeOne answered.
      execute: (args) => runAsCaller((args as EnvelopedArgs).contextValue.caller, () => executeOverWs(args as EnvelopedArgs)),
      subscribe: (args) => runAsCaller((args as EnvelopedArgs).contextValue.caller, () => (args as EnvelopedArgs).rootValue.subscribe(args)),
      onConnect: async (ctx) => {
        const checked = await admitUpgrade(
          services,
          ctx.extra.request,
          new URL(ctx.extra.request.url ?? '/', 'http://localhost'),
          'GRAPHQL_WS',
          ctx.connectionParams,
        );
        if (checked === null) return true;
        if (!checked.ok) return false;
        (ctx.extra as { caller?: Caller }).caller = { door: 'GRAPHQL_WS', grant: checked.grant };
        return true;
      },
      // Whatever goes wrong with one subscribe is an `error` message for its id; the socket stays open.
      onSubscribe: (ctx, _id, params) => subscribeOne(ctx, params).catch((error: unknown) => [subscribeError(error)]),
    },
    wsServer,
  );
  return () => ws.dispose();
}
