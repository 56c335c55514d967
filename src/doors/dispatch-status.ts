// The HTTP status a door answers a runner's result with: the runner itself knows no transport.
import type { DispatchErrorCode, DispatchResult } from '../dispatch/result.ts';

const statusOfCode: Partial<Record<DispatchErrorCode, number>> = {
  BAD_INPUT: 400,
  TOOL_NOT_FOUND: 404,
  FORBIDDEN: 403,
  NOT_RUNNABLE: 409,
  ARGS_INVALID: 400,
  CODE_NOT_EXECUTED: 409,
  SECRET_UNBOUND: 409,
  RETIRED_BUILD: 403,
  CLI_SYNTAX: 409,
  TIMEOUT: 504,
  CANCELLED: 499,
};

/** 200 for an answer or a dry run; a refusal's or failure's own status; 502 for anything the upstream did. */
export function httpStatusOfResult(result: DispatchResult): number {
  if (result.outcome === 'OK' || result.outcome === 'DRY_RUN') return 200;
  return statusOfCode[(result.error?.code ?? '') as DispatchErrorCode] ?? 502;
}
