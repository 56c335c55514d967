// Issuing tokens from a grant: an issued token is never wider than its issuer, and a `uses` issuer
// spends one use per token it issues.
import type { Door } from '../context/door.ts';
import type { SqlExecutor } from '../db/sql.ts';
import type { Grant } from './verdict.ts';
import { caveatsFromInput, CaveatInput } from './caveats.ts';
import { requirePower } from './checks.ts';
import type { Refusal } from './verdict.ts';
import { describeLimits, LINEAGE_MAX_ISSUERS, mintWithId } from './tokens.ts';
import { consumeUse, usesOf } from './uses.ts';

/** The root key and its short id, which every token it signs names. */
export type IssuingKey = { rootKey: Buffer; keyId: string };

export type Issue =
  | { ok: true; token: string; tokenId: string; caveats: string[]; limits: string[] }
  | { ok: false; refusal: Refusal }
  | { ok: false; invalid: string };

/**
 * Issues a token. An admin token mints one with exactly the caveats asked; an issuing token's
 * new token also carries every limit of the issuer except its powers and use counts, so it is
 * never wider than the issuer in tools, doors, time, task, agent, folders, audience or reads.
 */
export function issue(key: IssuingKey, grant: Grant, door: Door, input: unknown, extra: readonly string[] = []): Issue {
  const refusal = requirePower(grant, 'issue', door);
  if (refusal) return { ok: false, refusal };
  const parsed = CaveatInput.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, invalid: `Invalid caveats.${issue.path.join('.')}: ${issue.message}.` };
  }
  let asked: string[];
  try {
    asked = caveatsFromInput(parsed.data);
  } catch (error) {
    return { ok: false, invalid: `Invalid caveats: ${(error as Error).message}.` };
  }
  if (grant.lineage.length > LINEAGE_MAX_ISSUERS)
    return { ok: false, invalid: `This token is the last of ${LINEAGE_MAX_ISSUERS} tokens issued one from another and may not issue more.` };
  const inherited = grant.texts.filter((_, i) => grant.caveats[i]!.kind !== 'powers' && grant.caveats[i]!.kind !== 'uses');
  const texts = [...inherited, ...asked, ...extra];
  return { ok: true, ...mintWithId(key.rootKey, key.keyId, texts, grant.lineage), caveats: texts, limits: describeLimits(texts) };
}

/**
 * Issues a token as the issueToken mutation does: a `uses` issuer spends one use per token issued
 * (consumeUse: exact under concurrency) and the new token gets at most the uses the issuer had
 * left; only a holder of the revoke power may pass it on. Time, tools and every other limit are
 * inherited (issue()), so they are never wider than the issuer's.
 */
export async function issueCounted(key: IssuingKey & { sql: SqlExecutor }, grant: Grant, door: Door, input: unknown): Promise<Issue> {
  const power = requirePower(grant, 'issue', door);
  if (power) return { ok: false, refusal: power };
  const asked = (input && typeof input === 'object' ? input : {}) as { uses?: unknown; powers?: unknown };
  if (Array.isArray(asked.powers) && asked.powers.includes('revoke') && !grant.powers.has('revoke')) {
    return { ok: false, refusal: { ...requirePower(grant, 'revoke', door)!, reason: 'the token lacks the revoke power it asked to pass on' } };
  }
  if (grant.budgets.length > 0) {
    const budget = grant.budgets[0]!;
    return {
      ok: false,
      refusal: {
        limit: budget.unit,
        caveat: budget.caveat,
        door,
        reason: 'a token with a model budget may not issue tokens (a new token would start a budget of its own)',
        message: 'This token has a model budget and may not issue tokens: narrow it instead, so the budget is shared.',
        status: 403,
        tokenId: grant.tokenId,
      },
    };
  }
  if (grant.counters.length === 0) return issue(key, grant, door, input);
  const left = Math.min(...(await usesOf(key.sql, grant)).map((u) => u.max - u.used));
  if (typeof asked.uses === 'number' && asked.uses > left) {
    const counter = grant.counters[0]!;
    return {
      ok: false,
      refusal: {
        limit: 'uses',
        caveat: counter.caveat,
        door,
        reason: `asked to issue a token with ${asked.uses} uses, ${left} left`,
        message: `This token has ${left} use${left === 1 ? '' : 's'} left and may not issue a token with more.`,
        status: 403,
        tokenId: grant.tokenId,
      },
    };
  }
  const issued = issue(key, grant, door, input, left > 0 && asked.uses === undefined ? [`uses <= ${left}`] : []);
  if (!issued.ok) return issued;
  const spent = await consumeUse(key.sql, grant, door);
  return spent ? { ok: false, refusal: { ...spent, reason: `${spent.reason}: no token issued` } } : issued;
}
