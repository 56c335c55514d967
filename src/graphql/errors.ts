// Expected errors become GraphQL errors with a SCREAMING_SNAKE `extensions.code`;
// everything else is masked to "Unexpected error." and logged.
import { GraphQLError } from 'graphql';
import { createGraphQLError, type YogaMaskedErrorOpts } from 'graphql-yoga';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';

const codePattern = /^[A-Z][A-Z0-9_]*$/;

export function maskError(logger: Logger, redact: (text: string) => string): YogaMaskedErrorOpts['maskError'] {
  return (error, message) => {
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    if (original instanceof DomainError) {
      const g = error instanceof GraphQLError ? error : undefined;
      return createGraphQLError(redact(original.message), {
        nodes: g?.nodes,
        path: g?.path,
        extensions: {
          ...JSON.parse(redact(JSON.stringify({ code: original.code, ...original.details }))),
          // A call that could not be recorded (`ran` says whether it had run): the HTTP answer says retry, as the other doors' do.
          ...(original.code === ErrorCode.SPOOL_UNAVAILABLE && {
            http: { status: 503, headers: { 'retry-after': String(original.details.retryAfterSeconds ?? 1) } },
          }),
        },
      });
    }
    if (original instanceof GraphQLError && typeof original.extensions?.code === 'string' && codePattern.test(original.extensions.code)) {
      return original;
    }
    if (error instanceof GraphQLError && !error.originalError) {
      // Validation and parse errors from graphql-js: expected, and safe to show.
      return createGraphQLError(redact(error.message), {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        extensions: { ...error.extensions, code: (error.extensions?.code as string) ?? 'GRAPHQL_VALIDATION_FAILED' },
      });
    }
    if (error instanceof GraphQLError && !error.path && /^Variable "\$/.test(error.message)) {
      // A variable's value failed its type (graphql-js coercion): the caller's mistake, named by graphql-js.
      return createGraphQLError(redact(error.message), { nodes: error.nodes, extensions: { code: 'BAD_USER_INPUT' } });
    }
    if (isDatabaseUnavailable(original)) {
      return createGraphQLError('The database is unavailable. Retry later.', { extensions: { code: ErrorCode.DATABASE_UNAVAILABLE } });
    }
    logger.error({ err: original }, 'unexpected error in a GraphQL operation');
    return createGraphQLError(message, { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  };
}
