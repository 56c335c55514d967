// Authority: who may do what, decided once per door from a macaroon bearer token.
// The core knows no transport: a door hands it the token text and its own name, and gets a
// Grant or a Refusal back. Every refusal is recorded as a ledger event of kind REFUSAL naming the
// limit that refused; a forged or unknown token is answered plainly, the ledger keeps the detail.
// The checks themselves live beside it: checks.ts (per call), uses.ts (counted uses), read-scope.ts
// (ledger reads), issue.ts (issuing), tokens.ts (minting and inspecting), refusal.ts (REFUSAL events).
import { createHash } from 'node:crypto';
import type { SqlExecutor } from '../db/sql.ts';
import type { EventInput } from '../ledger/input.ts';
import { parseCaveat, type Caveat, type Power, type ReadScope } from './caveats.ts';
import type { Door } from '../context/door.ts';
import type { SharedRateLimiter } from './shared-rate.ts';
import { attenuate, derivedKey, MalformedToken, parse, serialize, signatureChain, type Macaroon } from './macaroon.ts';
import { LRUCache } from 'lru-cache';
import * as checks from './checks.ts';
import type { Budget, Checked, Grant } from './verdict.ts';
import { narrowerRead, readLimit, readLimitOf, readRefusal, type ReadLimit } from './read-scope.ts';
import { refusalEvent, type Refusal } from './verdict.ts';
import { IDENTIFIER, keyIdOf, lineageOf, mintWithId, TOKEN_LOCATION } from './tokens.ts';
import { consumeUse, usesOf } from './uses.ts';
import { issue, issueCounted, type Issue } from './issue.ts';

export type AuthorityOptions = {
  rootKey: Buffer;
  /** The server's own name; a token with `audience = X` works only where X matches. */
  audience: string;
  sql: SqlExecutor;
  /** Records a REFUSAL event (the background writer). */
  record(event: EventInput): Promise<void> | void;
  /** Requests per second per token (0: no limit) and the burst allowed above it. */
  ratePerSecond: number;
  rateBurst: number;
  now?: () => Date;
  /** Rate limits shared by every instance (REDIS_URL); absent: a token bucket in this process. */
  sharedRate?: SharedRateLimiter;
  /** Revoked token ids, checked in memory on every request (absent: nothing is ever revoked). */
  revocations?: { revokedIn(lineage: readonly string[]): string | undefined };
};

const PLAIN = 'Missing or invalid credential.';

/** A token whose signature verified and whose caveats parsed: what does not change between requests. */
type Verified = { token: Macaroon; tokenId: string; lineage: string[]; caveats: Caveat[]; counterKeys: Map<number, string> };

const VERIFIED_CACHE_MAX = 10_000;
const VERIFIED_KEY_MAX_CHARS = 2_048;

export class Authority {
  private readonly keyId: string;
  private readonly signingKey: Buffer<ArrayBuffer>;
  // Bounded by count through maxSize, not max: lru-cache allocates arrays for `max` entries up front (2.8 MB of idle heap here).
  private readonly buckets = new LRUCache<string, { tokens: number; at: number }>({ maxSize: 100_000, sizeCalculation: () => 1 });
  /** Token text → its verified form; the time, audience and door checks still run on every request. */
  private readonly verified = new LRUCache<string, Verified>({ max: VERIFIED_CACHE_MAX });

  private readonly options: AuthorityOptions;
  constructor(options: AuthorityOptions) {
    this.options = options;
    this.keyId = keyIdOf(options.rootKey);
    this.signingKey = derivedKey(options.rootKey);
  }

  /** The rate limiter shared through Redis, when one is configured. */
  get sharedRate(): SharedRateLimiter | undefined {
    return this.options.sharedRate;
  }

  /** A fresh token with these caveats, signed by the root key. In process only (start-up, tests, the CLI). */
  mintToken(caveats: readonly string[] = []): string {
    return mintWithId(this.options.rootKey, this.keyId, caveats).token;
  }

  /** The grant of a webhook sender that signed its body with the hook's secret: that tool, that door, nothing else. */
  hookGrant(tool: string): Grant {
    const texts = [`tools = ${tool}`, 'doors = WEBHOOK', 'powers = call', 'read = none'];
    const caveats = texts.map(parseCaveat);
    return Object.freeze({
      tokenId: 'hook',
      lineage: [],
      caller: `hook:${tool}`.slice(0, 512),
      admin: false,
      caveats,
      texts,
      counters: [],
      budgets: [],
      read: 'none',
      powers: new Set<Power>(['call']),
    });
  }

  /** Verifies a presented token for one door: signature, time window, audience and door caveats. */
  authenticate(text: string | undefined | null, door: Door): Checked {
    const plain = (reason: string, tokenId?: string): Checked => ({
      ok: false,
      refusal: { limit: 'credential', door, reason, message: PLAIN, status: 401, ...(tokenId && { tokenId }) },
    });
    if (!text) return plain('no credential was presented');
    let verified = this.verified.get(text);
    if (!verified) {
      const checked = this.verify(text);
      if ('reason' in checked) return plain(checked.reason, checked.tokenId);
      verified = checked;
      if (text.length <= VERIFIED_KEY_MAX_CHARS) {
        this.verified.set(text, verified);
      }
    }
    const { token, tokenId, lineage, caveats, counterKeys } = verified;
    const revoked = this.options.revocations?.revokedIn(lineage);
    if (revoked !== undefined) {
      const reason = revoked === tokenId ? 'the token was revoked' : `the token was issued under token ${revoked}, which was revoked`;
      return { ok: false, refusal: { limit: 'revoked', door, reason, message: 'This token was revoked.', status: 401, tokenId } };
    }
    let task: string | undefined;
    let agent: string | undefined;
    let read: ReadScope = 'all';
    let powers: Set<Power> | undefined;
    const counters: { key: string; max: number; caveat: string }[] = [];
    const budgets: Budget[] = [];
    const now = this.now();
    const refuse = (i: number, reason: string, message: string): Checked => ({
      ok: false,
      refusal: { limit: caveats[i]!.kind, caveat: token.caveats[i], door, reason, message, status: 403, tokenId },
    });
    for (const [i, caveat] of caveats.entries()) {
      switch (caveat.kind) {
        case 'not_before':
          if (now < caveat.at)
            return refuse(i, `used at ${now.toISOString()}, before ${caveat.at.toISOString()}`, `This token is not valid before ${caveat.at.toISOString()}.`);
          break;
        case 'expires':
          if (now >= caveat.at)
            return refuse(
              i,
              `used at ${now.toISOString()}, after it expired at ${caveat.at.toISOString()}`,
              `This token expired at ${caveat.at.toISOString()}.`,
            );
          break;
        case 'audience':
          if (caveat.audience !== this.options.audience)
            return plain(`the token is for audience ${JSON.stringify(caveat.audience)}, this server is ${JSON.stringify(this.options.audience)}`, tokenId);
          break;
        case 'doors':
          if (!caveat.doors.includes(door))
            return refuse(i, `door ${door} is not among ${caveat.doors.join(', ')}`, `This token may not be used through the ${door} door.`);
          break;
        case 'task':
          if (task !== undefined && task !== caveat.task)
            return refuse(i, `the token names two tasks, ${task} and ${caveat.task}`, 'This token names two different tasks and can never be used.');
          task = caveat.task;
          break;
        case 'agent':
          if (agent !== undefined && agent !== caveat.agent)
            return refuse(i, `the token names two agents, ${agent} and ${caveat.agent}`, 'This token names two different agents and can never be used.');
          agent = caveat.agent;
          break;
        case 'read':
          read = narrowerRead(read, caveat.scope);
          break;
        case 'powers':
          powers = new Set(caveat.powers.filter((p) => !powers || powers.has(p)));
          break;
        case 'uses':
          counters.push({ key: counterKeys.get(i)!, max: caveat.max, caveat: token.caveats[i]! });
          break;
        case 'tokens':
        case 'cost':
          budgets.push({ key: counterKeys.get(i)!, unit: caveat.kind, max: String(caveat.max), caveat: token.caveats[i]! });
          break;
        case 'models':
        case 'tools':
        case 'folders':
        case 'collector':
          break;
      }
    }
    if (read === 'task' && task === undefined) read = 'none';
    const grant: Grant = Object.freeze({
      tokenId,
      lineage,
      caller: `token:${tokenId}`,
      admin: caveats.length === 0,
      caveats,
      texts: token.caveats,
      token,
      counters,
      budgets,
      ...(task !== undefined && { task }),
      ...(agent !== undefined && { agent }),
      read,
      powers: powers ?? new Set<Power>(caveats.length === 0 ? ['call', 'ingest', 'issue', 'revoke'] : ['call', 'ingest', 'issue']),
    });
    return { ok: true, grant };
  }

  /** The earliest `expires` of a grant, if it has one. */
  /** The earliest `expires` of a grant, if it has one. */
  expiryOf(grant: Grant): Date | undefined {
    return checks.expiryOf(grant);
  }

  /** What can change about a verified grant while a connection stays open: its expiry and revocation. */
  recheck(grant: Grant, door: Door): Refusal | null {
    const revoked = this.options.revocations?.revokedIn(grant.lineage);
    if (revoked !== undefined) {
      const reason = revoked === grant.tokenId ? 'the token was revoked' : `the token was issued under token ${revoked}, which was revoked`;
      return { limit: 'revoked', door, reason, message: 'This token was revoked.', status: 401, tokenId: grant.tokenId };
    }
    return checks.expired(grant, door, this.now());
  }

  /** Signature and caveat syntax: everything about a token that does not depend on when or where it is used. */
  private verify(text: string): Verified | { reason: string; tokenId?: string } {
    let token: Macaroon;
    try {
      token = parse(text);
    } catch (error) {
      return { reason: `the credential is not a token: ${error instanceof MalformedToken ? error.message : 'unreadable'}` };
    }
    const id = IDENTIFIER.exec(token.identifier);
    if (token.location !== TOKEN_LOCATION || !id) return { reason: 'the token was not issued by dirledger' };
    const tokenId = id[2]!;
    if (id[1] !== this.keyId) return { reason: 'the token was signed by another root key', tokenId };
    const chain = signatureChain(this.options.rootKey, token, this.signingKey);
    if (!chain) return { reason: 'the token signature does not verify (forged, tampered or truncated)', tokenId };
    const caveats: Caveat[] = [];
    const counterKeys = new Map<number, string>();
    for (const [i, caveatText] of token.caveats.entries()) {
      try {
        caveats.push(parseCaveat(caveatText));
      } catch (error) {
        return { reason: `the token carries a caveat this server cannot check: ${(error as Error).message}`, tokenId };
      }
      const kind = caveats[i]!.kind;
      if (kind === 'uses' || kind === 'tokens' || kind === 'cost')
        counterKeys.set(
          i,
          createHash('sha256')
            .update(chain[i + 1]!)
            .digest('hex'),
        );
    }
    return { token, tokenId, lineage: lineageOf(id), caveats, counterKeys };
  }
  /** The tool and path caveats, and the call power, for one call (before anything else about it is checked). */
  allowsTool(grant: Grant, door: Door, tool: string): Refusal | null {
    return checks.allowsTool(grant, door, tool);
  }

  /** The folders caveats against a file row's path and every path-like argument. */
  allowsPaths(grant: Grant, door: Door, tool: string, paths: readonly { where: string; path: string }[]): Refusal | null {
    return checks.allowsPaths(grant, door, tool, paths);
  }

  /** Appending a batch: the ingest power, then the `collector` and `tools` caveats (checks.ts). */
  allowsIngest(grant: Grant, door: Door, batch: { collector: string; events: readonly { tool?: string | undefined }[] }): Refusal | null {
    return checks.allowsIngest(grant, door, batch);
  }

  requirePower(grant: Grant, power: Power, door: Door, tool?: string): Refusal | null {
    return checks.requirePower(grant, power, door, tool);
  }

  /** Takes one use from every `uses` counter of the token, all or none (uses.ts). */
  consumeUse(grant: Grant, door: Door, tool?: string): Promise<Refusal | null> {
    return consumeUse(this.options.sql, grant, door, tool);
  }

  /** Uses taken so far under each counter of the token. */
  usesOf(grant: Grant): Promise<{ caveat: string; used: number; max: number }[]> {
    return usesOf(this.options.sql, grant);
  }

  /**
   * Per-token rate limit, shared by every instance through Redis when configured, else a token bucket
   * in this process: a Refusal with retryAfterSeconds when over it.
   */
  rate(grant: Grant, door: Door): Refusal | null | Promise<Refusal | null> {
    const { ratePerSecond, rateBurst, sharedRate } = this.options;
    if (ratePerSecond <= 0) return null;
    if (sharedRate)
      return sharedRate.take(grant.tokenId).then((verdict) => (verdict.ok ? null : this.overRate(door, grant.tokenId, verdict.retryAfterSeconds)));
    const now = this.now().getTime();
    const bucket = this.buckets.get(grant.tokenId) ?? { tokens: rateBurst, at: now };
    bucket.tokens = Math.min(rateBurst, bucket.tokens + ((now - bucket.at) / 1000) * ratePerSecond);
    bucket.at = now;
    this.buckets.set(grant.tokenId, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return null;
    }
    return this.overRate(door, grant.tokenId, Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSecond)));
  }

  private overRate(door: Door, tokenId: string, retryAfterSeconds: number): Refusal {
    const { ratePerSecond, rateBurst } = this.options;
    return {
      limit: 'rate',
      door,
      reason: `over ${ratePerSecond} requests per second (burst ${rateBurst})`,
      message: `Too many requests for this token; retry after ${retryAfterSeconds} s.`,
      status: 429,
      retryAfterSeconds,
      tokenId,
    };
  }

  /** Records a refusal as a REFUSAL event of its action (background writer; a failure is the caller's to log). */
  async record(refusal: Refusal, fields: Parameters<typeof refusalEvent>[1]): Promise<void> {
    await this.options.record(refusalEvent(refusal, fields));
  }

  /** The read limit of a caller; no grant (AUTHORITY=off) reads everything. */
  readLimitOf(grant: Grant | undefined): ReadLimit {
    return readLimitOf(grant);
  }

  /** A read refused (the token may read nothing of the ledger): its message, and recording its REFUSAL. */
  refuseRead(grant: Grant, door: Door, what: string): { message: string; record(fields: Parameters<typeof refusalEvent>[1]): Promise<void> } {
    const refusal = readRefusal(grant, door, what);
    return { message: refusal.message, record: (fields) => this.record(refusal, fields) };
  }

  /** What the holder may read of the ledger. */
  readLimit(grant: Grant): ReadLimit {
    return readLimit(grant);
  }

  /** Issues a token with the caveats asked, never wider than the issuer (issue.ts). */
  issue(grant: Grant, door: Door, input: unknown, extra: readonly string[] = []): Issue {
    return issue({ rootKey: this.options.rootKey, keyId: this.keyId }, grant, door, input, extra);
  }

  /** Issues a token as the issueToken mutation does, spending a `uses` issuer's use (issue.ts). */
  issueCounted(grant: Grant, door: Door, input: unknown): Promise<Issue> {
    return issueCounted({ rootKey: this.options.rootKey, keyId: this.keyId, sql: this.options.sql }, grant, door, input);
  }

  /** Narrows a token offline, as any holder can: appends caveats without the root key. */
  static narrow(tokenText: string, caveats: readonly string[]): string {
    let token = parse(tokenText);
    for (const caveat of caveats) token = attenuate(token, caveat);
    return serialize(token);
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }
}
