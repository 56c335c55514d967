// Authority: who may do what, decided once per door from a macaroon bearer token.
// The core knows no transport: a door hands it the token text and its own name, and gets a
// Grant or a Refusal back. Every refusal is recorded as a ledger event of kind REFUSAL naming the
// limit that refused; a forged or unknown token is answered plainly, the ledger keeps the detail.
import { createHash, randomBytes } from 'node:crypto';
import type { SqlExecutor, SqlQueryable } from '../db/sql.ts';
import type { EventInput } from '../ledger/input.ts';
import {
  caveatsFromInput,
  CaveatInput,
  describeCaveat,
  parseCaveat,
  pathAllowed,
  powerWords,
  toolAllowed,
  type Caveat,
  type CaveatKind,
  type Power,
  type ReadScope,
} from './caveats.ts';
import type { Door } from '../context/door.ts';
import type { SharedRateLimiter } from './shared-rate.ts';
import { attenuate, derivedKey, MalformedToken, mint, parse, serialize, signatureChain, type Macaroon } from './macaroon.ts';
import { LRUCache } from 'lru-cache';

export const TOKEN_LOCATION = 'dirledger';
/** `dl1:<key id>:<token id>`, then the id of each issuer, nearest first: revoking any of them revokes the token. */
const IDENTIFIER = /^dl1:([0-9a-f]{8}):([0-9a-f]{32})((?::[0-9a-f]{32}){0,16})$/;
/** Issuers an identifier may name; a token this deep issues no more tokens. */
export const LINEAGE_MAX_ISSUERS = 16;
const lineageOf = (id: RegExpExecArray) => [id[2]!, ...(id[3] ? id[3].slice(1).split(':') : [])];

/** What a verified token lets its holder do; built once per request. */
export type Grant = Readonly<{
  tokenId: string;
  /** Who the ledger records as the caller. */
  caller: string;
  /** This token's id, then its issuers' ids, nearest first. */
  lineage: readonly string[];
  /** True for a token with no caveats at all. */
  admin: boolean;
  caveats: readonly Caveat[];
  /** Caveat texts, as signed. */
  texts: readonly string[];
  /** The presented token (absent for a signed webhook's grant). */
  token?: Macaroon;
  /** One database counter per `uses` caveat: sha256 of the chain signature after it. */
  counters: readonly { key: string; max: number; caveat: string }[];
  /** One database counter per `tokens <= N` and `cost <= X` caveat, keyed like `counters` (src/auth/spend.ts). */
  budgets: readonly Budget[];
  task?: string;
  agent?: string;
  read: ReadScope;
  powers: ReadonlySet<Power>;
}>;

type AuthGrant = Grant;

export type Budget = Readonly<{ key: string; unit: 'tokens' | 'cost'; max: string; caveat: string }>;

declare module '../context/request.ts' {
  /** The request context carries this Grant (src/context/request.ts). */
  interface GrantCarrier {
    grant: AuthGrant;
  }
}

/** `origin`: a browser page of another site opening a WebSocket (doors/cors.ts). */
export type RefusalLimit = CaveatKind | 'credential' | 'power' | 'rate' | 'revoked' | 'origin';

export type Refusal = Readonly<{
  limit: RefusalLimit;
  /** The caveat that refused, as signed. */
  caveat?: string;
  door: Door;
  tool?: string;
  /** The whole reason, for the ledger. */
  reason: string;
  /** What the caller is told: plain for a bad credential, the limit for a caveat. */
  message: string;
  status: 400 | 401 | 403 | 429;
  retryAfterSeconds?: number;
  tokenId?: string;
}>;

export type Checked = { ok: true; grant: Grant } | { ok: false; refusal: Refusal };

/** What the ledger may show a holder: everything, one task's events, or nothing. */
export type ReadLimit = { kind: 'all' } | { kind: 'task'; task: string } | { kind: 'none' };

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

/** Uses taken under each counter; bpchar[] so the char(64) primary key is used (text[] would scan the table). */
export const usesOfSql = 'SELECT counter, uses FROM token_uses WHERE counter = ANY($1::bpchar[])';

/** The short id of a root key that every token it signs names, so a token of another key is told apart. */
const keyIdOf = (rootKey: Buffer) => createHash('sha256').update('dirledger key id').update(rootKey).digest('hex').slice(0, 8);

function mintWithId(rootKey: Buffer, keyId: string, caveats: readonly string[], issuers: readonly string[] = []): { token: string; tokenId: string } {
  for (const caveat of caveats) parseCaveat(caveat);
  const tokenId = randomBytes(16).toString('hex');
  const identifier = [`dl1:${keyId}`, tokenId, ...issuers].join(':');
  return { token: serialize(mint(rootKey, TOKEN_LOCATION, identifier, caveats)), tokenId };
}

/** A token signed with the root key, without an Authority (nothing but the key is needed to mint): the CLI, benchmarks, tests. */
export function mintWithRootKey(rootKey: Buffer, caveats: readonly string[] = []): string {
  return mintWithId(rootKey, keyIdOf(rootKey), caveats).token;
}

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
  expiryOf(grant: Grant): Date | undefined {
    let at: Date | undefined;
    for (const caveat of grant.caveats) if (caveat.kind === 'expires' && (!at || caveat.at < at)) at = caveat.at;
    return at;
  }

  /** What can change about a verified grant while a connection stays open: its expiry and revocation. */
  recheck(grant: Grant, door: Door): Refusal | null {
    const revoked = this.options.revocations?.revokedIn(grant.lineage);
    if (revoked !== undefined) {
      const reason = revoked === grant.tokenId ? 'the token was revoked' : `the token was issued under token ${revoked}, which was revoked`;
      return { limit: 'revoked', door, reason, message: 'This token was revoked.', status: 401, tokenId: grant.tokenId };
    }
    const now = this.now();
    for (const [i, caveat] of grant.caveats.entries()) {
      if (caveat.kind === 'expires' && now >= caveat.at) {
        return {
          limit: 'expires',
          caveat: grant.texts[i],
          door,
          reason: `used at ${now.toISOString()}, after it expired at ${caveat.at.toISOString()}`,
          message: `This token expired at ${caveat.at.toISOString()}.`,
          status: 403,
          tokenId: grant.tokenId,
        };
      }
    }
    return null;
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
    const power = this.requirePower(grant, 'call', door, tool);
    if (power) return power;
    for (const [i, caveat] of grant.caveats.entries()) {
      if (caveat.kind === 'tools' && !toolAllowed(caveat.names, tool)) {
        return {
          limit: 'tools',
          caveat: grant.texts[i],
          door,
          tool,
          reason: `tool ${tool} is not among ${caveat.names.join(', ')}`,
          message: `This token may not call ${JSON.stringify(tool)}.`,
          status: 403,
          tokenId: grant.tokenId,
        };
      }
    }
    return null;
  }

  /** The folders caveats against a file row's path and every path-like argument. */
  allowsPaths(grant: Grant, door: Door, tool: string, paths: readonly { where: string; path: string }[]): Refusal | null {
    for (const [i, caveat] of grant.caveats.entries()) {
      if (caveat.kind !== 'folders') continue;
      const outside = paths.find((p) => !pathAllowed(caveat.folders, p.path));
      if (outside) {
        return {
          limit: 'folders',
          caveat: grant.texts[i],
          door,
          tool,
          reason: `${outside.where} ${JSON.stringify(outside.path)} is outside ${caveat.folders.join(', ')}`,
          message: `This token may not reach ${outside.where} ${JSON.stringify(outside.path)}: it is outside the token's folders.`,
          status: 403,
          tokenId: grant.tokenId,
        };
      }
    }
    return null;
  }

  /**
   * Appending a batch: the ingest power, then every `collector` caveat against the batch's collector
   * and every `tools` caveat against each tool its events name (a token may not record calls it
   * could never make). Events naming no tool are not limited by `tools`.
   */
  allowsIngest(grant: Grant, door: Door, batch: { collector: string; events: readonly { tool?: string | undefined }[] }): Refusal | null {
    const power = this.requirePower(grant, 'ingest', door);
    if (power) return power;
    for (const [i, caveat] of grant.caveats.entries()) {
      const refuse = (reason: string, message: string, tool?: string): Refusal => ({
        limit: caveat.kind,
        caveat: grant.texts[i],
        door,
        ...(tool && { tool }),
        reason,
        message,
        status: 403,
        tokenId: grant.tokenId,
      });
      if (caveat.kind === 'collector' && !toolAllowed(caveat.names, batch.collector)) {
        return refuse(
          `collector ${batch.collector} is not among ${caveat.names.join(', ')}`,
          `This token may not append batches of collector ${JSON.stringify(batch.collector)}.`,
        );
      }
      if (caveat.kind === 'tools') {
        const outside = batch.events.find((e) => e.tool !== undefined && !toolAllowed(caveat.names, e.tool));
        if (outside) {
          return refuse(
            `an ingested event names tool ${outside.tool}, which is not among ${caveat.names.join(', ')}`,
            `This token may not append events naming the tool ${JSON.stringify(outside.tool)}.`,
            outside.tool,
          );
        }
      }
    }
    return null;
  }

  requirePower(grant: Grant, power: Power, door: Door, tool?: string): Refusal | null {
    if (grant.powers.has(power)) return null;
    const i = grant.caveats.findLastIndex((c) => c.kind === 'powers');
    const words = powerWords[power];
    return {
      limit: 'power',
      caveat: grant.texts[i],
      door,
      ...(tool && { tool }),
      reason: `the token lacks the ${power} power`,
      message: `This token may not ${words}.`,
      status: 403,
      tokenId: grant.tokenId,
    };
  }

  /**
   * Takes one use from every `uses` counter of the token, all or none, in the database: exact under
   * any concurrency (a conditional upsert per counter, in one transaction, counters in a fixed order).
   */
  async consumeUse(grant: Grant, door: Door, tool?: string): Promise<Refusal | null> {
    if (grant.counters.length === 0) return null;
    const counters = [...grant.counters].sort((a, b) => (a.key < b.key ? -1 : 1));
    const take = async (db: SqlQueryable, counter: (typeof counters)[number]) => {
      const rows = await db.query(
        `INSERT INTO token_uses (counter, token_id, uses, max_uses) VALUES ($1, $2, 1, $3)
         ON CONFLICT (counter) DO UPDATE SET uses = token_uses.uses + 1, last_used_at = now()
         WHERE token_uses.uses < token_uses.max_uses
         RETURNING uses`,
        [counter.key, grant.tokenId, counter.max],
      );
      if (rows.length === 0) throw new Exhausted(counter);
    };
    // One counter: one statement (its row lock makes it exact); several: all or none, in one transaction.
    const work =
      counters.length === 1
        ? take(this.options.sql, counters[0]!)
        : this.options.sql.transaction(async (tx) => {
            for (const counter of counters) await take(tx, counter);
          });
    const spent = await work.then(
      () => null,
      (error) => {
        if (error instanceof Exhausted) return error.counter;
        throw error;
      },
    );
    if (!spent) return null;
    return {
      limit: 'uses',
      caveat: spent.caveat,
      door,
      ...(tool && { tool }),
      reason: `all ${spent.max} uses are spent`,
      message: `This token's ${spent.max} use${spent.max === 1 ? ' is' : 's are'} spent.`,
      status: 403,
      tokenId: grant.tokenId,
    };
  }

  /** Uses taken so far under each counter of the token. */
  async usesOf(grant: Grant): Promise<{ caveat: string; used: number; max: number }[]> {
    if (grant.counters.length === 0) return [];
    const rows = await this.options.sql.query<{ counter: string; uses: number }>(usesOfSql, [grant.counters.map((c) => c.key)]);
    const used = new Map(rows.map((r) => [r.counter, Number(r.uses)]));
    return grant.counters.map((c) => ({ caveat: c.caveat, used: used.get(c.key) ?? 0, max: c.max }));
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
    return grant ? this.readLimit(grant) : { kind: 'all' };
  }

  /** A read refused (the token may read nothing of the ledger): its message, and recording its REFUSAL. */
  refuseRead(grant: Grant, door: Door, what: string): { message: string; record(fields: Parameters<typeof refusalEvent>[1]): Promise<void> } {
    const refusal = readRefusal(grant, door, what);
    return { message: refusal.message, record: (fields) => this.record(refusal, fields) };
  }

  /** What the holder may read of the ledger. */
  readLimit(grant: Grant): ReadLimit {
    if (grant.read === 'all') return { kind: 'all' };
    if (grant.read === 'task' && grant.task !== undefined) return { kind: 'task', task: grant.task };
    return { kind: 'none' };
  }

  /**
   * Issues a token. An admin token mints one with exactly the caveats asked; an issuing token's
   * new token also carries every limit of the issuer except its powers and use counts, so it is
   * never wider than the issuer in tools, doors, time, task, agent, folders, audience or reads.
   */
  issue(grant: Grant, door: Door, input: unknown, extra: readonly string[] = []): Issue {
    const refusal = this.requirePower(grant, 'issue', door);
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
    return { ok: true, ...mintWithId(this.options.rootKey, this.keyId, texts, grant.lineage), caveats: texts, limits: describeLimits(texts) };
  }

  /**
   * Issues a token as the issueToken mutation does: a `uses` issuer spends one use per token issued
   * (consumeUse: exact under concurrency) and the new token gets at most the uses the issuer had
   * left; only a holder of the revoke power may pass it on. Time, tools and every other limit are
   * inherited (issue()), so they are never wider than the issuer's.
   */
  async issueCounted(grant: Grant, door: Door, input: unknown): Promise<Issue> {
    const power = this.requirePower(grant, 'issue', door);
    if (power) return { ok: false, refusal: power };
    const asked = (input && typeof input === 'object' ? input : {}) as { uses?: unknown; powers?: unknown };
    if (Array.isArray(asked.powers) && asked.powers.includes('revoke') && !grant.powers.has('revoke')) {
      return { ok: false, refusal: { ...this.requirePower(grant, 'revoke', door)!, reason: 'the token lacks the revoke power it asked to pass on' } };
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
    if (grant.counters.length === 0) return this.issue(grant, door, input);
    const left = Math.min(...(await this.usesOf(grant)).map((u) => u.max - u.used));
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
    const issued = this.issue(grant, door, input, left > 0 && asked.uses === undefined ? [`uses <= ${left}`] : []);
    if (!issued.ok) return issued;
    const spent = await this.consumeUse(grant, door);
    return spent ? { ok: false, refusal: { ...spent, reason: `${spent.reason}: no token issued` } } : issued;
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

export type Issue =
  | { ok: true; token: string; tokenId: string; caveats: string[]; limits: string[] }
  | { ok: false; refusal: Refusal }
  | { ok: false; invalid: string };

class Exhausted extends Error {
  readonly counter: { key: string; max: number; caveat: string };
  constructor(counter: { key: string; max: number; caveat: string }) {
    super('uses spent');
    this.counter = counter;
  }
}

const readOrder: Record<ReadScope, number> = { none: 0, task: 1, all: 2 };
const narrowerRead = (a: ReadScope, b: ReadScope): ReadScope => (readOrder[a] <= readOrder[b] ? a : b);

/** Each limit in words, in signing order; a token without caveats says so. */
export function describeLimits(texts: readonly string[]): string[] {
  if (texts.length === 0) return ['No limits: an admin token.'];
  return texts.map((text) => {
    try {
      return describeCaveat(parseCaveat(text));
    } catch (error) {
      return `A caveat this server cannot check (${(error as Error).message}): the token is refused.`;
    }
  });
}

/** What anyone can read of a token without the key: its id and limits. Throws MalformedToken. */
export function inspect(tokenText: string): { tokenId: string | null; issuedBy: string[]; caveats: string[]; limits: string[] } {
  const token = parse(tokenText);
  const id = IDENTIFIER.exec(token.identifier);
  const lineage = id ? lineageOf(id) : [];
  return { tokenId: lineage[0] ?? null, issuedBy: lineage.slice(1), caveats: token.caveats, limits: describeLimits(token.caveats) };
}

/** The REFUSAL event for a refusal, linked to its action. */
export function refusalEvent(
  refusal: Refusal,
  fields: { actionId: string; session?: string; turn?: string; task?: string; agent?: string; method?: string; url?: string },
): EventInput {
  const { actionId, method, url, ...rest } = fields;
  return {
    id: `${actionId}:refusal`,
    actionId,
    ...rest,
    kind: 'REFUSAL',
    direction: 'IN',
    status: 'REFUSED',
    ...(refusal.tool && { tool: refusal.tool.slice(0, 512) }),
    ...(method && { method }),
    ...(url && { url: url.slice(0, 16_384) }),
    occurredAt: new Date(),
    payload: { state: 'NONE' },
    metadata: {
      capture: 'authority',
      limit: refusal.limit,
      door: refusal.door,
      reason: refusal.reason,
      ...(refusal.caveat && { caveat: refusal.caveat }),
      ...(refusal.tool && { tool: refusal.tool }),
      ...(refusal.tokenId && { tokenId: refusal.tokenId }),
    },
  };
}

/** The refusal of a read by a token that may read nothing of the ledger. */
export function readRefusal(grant: Grant, door: Door, what: string): Refusal {
  // The caveat that narrowed reads to nothing: `read = none`, else `read = task` on a token without a task.
  const none = grant.caveats.findIndex((c) => c.kind === 'read' && c.scope === 'none');
  const i = none >= 0 ? none : grant.caveats.findIndex((c) => c.kind === 'read');
  const reason =
    none >= 0 || i < 0 ? `the token may read nothing of the ledger (${what})` : `the token may read only its own task's events but names no task (${what})`;
  return {
    limit: 'read',
    ...(i >= 0 && { caveat: grant.texts[i] }),
    door,
    reason,
    message: 'This token may not read the ledger.',
    status: 403,
    tokenId: grant.tokenId,
  };
}
