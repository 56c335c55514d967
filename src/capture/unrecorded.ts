// What a refused write (the spool's, or a synchronous ledger write's) means for the call it was to
// record: refused before anything ran (its request, its TOOL_CALL, a REQUEST/OUT not sent), or after
// the call ran (its result, the door's answer). Said in the message and in `details.ran`, so a caller
// knows whether sending again could run it twice.
import { DomainError } from '../errors.ts';

/** The refusal with its meaning for the call added; one that already says it is returned as it is. */
export function unrecorded(error: DomainError, ran: boolean): DomainError {
  if (error.details.ran !== undefined) return error;
  const meaning = ran
    ? 'The call ran, but its result could not be recorded, so it is not returned: check what it did before sending it again.'
    : 'Nothing was sent or run: send it again.';
  return new DomainError(error.code, `${error.message} ${meaning}`, { ...error.details, ran });
}
