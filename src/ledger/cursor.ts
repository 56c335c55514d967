// One cursor format for the ledger, shared by connections and subscriptions:
// an opaque string that names a commit-ordered position.
import { badInput } from '../errors.ts';
import { isBigintText } from '../limits.ts';

const prefix = 'ledger:';

export function encodeCursor(position: bigint): string {
  return Buffer.from(`${prefix}${position}`).toString('base64url');
}

export function decodeCursor(cursor: string): bigint {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(prefix) || !isBigintText(text.slice(prefix.length))) {
    throw badInput(`Invalid cursor: expected a cursor returned by this ledger, got ${JSON.stringify(cursor.slice(0, 40))}`);
  }
  return BigInt(text.slice(prefix.length));
}
