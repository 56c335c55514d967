// Expected failures, as data. Every door maps these to its own protocol: GraphQL
// errors with `extensions.code`, HTTP statuses. Anything else is masked.

export const ErrorCode = {
  BAD_INPUT: 'BAD_INPUT',
  NOT_FOUND: 'NOT_FOUND',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  DATABASE_UNAVAILABLE: 'DATABASE_UNAVAILABLE',
  /** The spool could not make a record durable (disk full, write failed) or stayed full. `ran` says whether the call it records had run (its result could not be recorded) or nothing ran; `retryAfterSeconds` when to try again. */
  SPOOL_UNAVAILABLE: 'SPOOL_UNAVAILABLE',
  BLOB_CORRUPT: 'BLOB_CORRUPT',
  /** The server is busy with others' work of the same kind (the ingest door's budget); nothing was done; `retryAfterSeconds` when to try again. */
  SERVER_BUSY: 'SERVER_BUSY',
  QUERY_TOO_COMPLEX: 'QUERY_TOO_COMPLEX',
  /** No credential, or one this server cannot verify (never says which check failed). */
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  /** A valid token whose limits do not allow this; `extensions.limit` names the limit. */
  FORBIDDEN: 'FORBIDDEN',
  /** Over the token's rate limit; `retryAfterSeconds` says when to try again. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** A live subscription fell too far behind and was closed; `extensions.cursor` (or `sequence`) says where to resume. */
  SUBSCRIBER_TOO_SLOW: 'SUBSCRIBER_TOO_SLOW',
  /** The token, or a token it was issued under, was revoked (a live subscription ends with it too). */
  TOKEN_REVOKED: 'TOKEN_REVOKED',
  /** The token's `expires` time passed while a live subscription was open. */
  TOKEN_EXPIRED: 'TOKEN_EXPIRED',
  /** A token was sent as `?token=` on a door that takes it in a header or connection_init. */
  TOKEN_IN_URL: 'TOKEN_IN_URL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class DomainError extends Error {
  override name = 'DomainError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

export const badInput = (message: string, details?: Record<string, unknown>) => new DomainError(ErrorCode.BAD_INPUT, message, details);

export const httpStatusOf: Record<ErrorCode, number> = {
  BAD_INPUT: 400,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  DATABASE_UNAVAILABLE: 503,
  SPOOL_UNAVAILABLE: 503,
  BLOB_CORRUPT: 500,
  SERVER_BUSY: 503,
  QUERY_TOO_COMPLEX: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  RATE_LIMITED: 429,
  SUBSCRIBER_TOO_SLOW: 429,
  TOKEN_REVOKED: 401,
  TOKEN_EXPIRED: 401,
  TOKEN_IN_URL: 400,
};
