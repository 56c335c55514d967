// Signed checkpoints: the chain's head at one batch, signed with an Ed25519 key derived from the root
// key, in the manner of Certificate Transparency's signed tree heads. Anyone holding the public key
// can check a checkpoint; only the holder of the root key can make one. Kept outside the database, a
// checkpoint later shows whether the chain up to it was rewritten, even consistently.
import { createPrivateKey, createPublicKey, hkdfSync, sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import type { SqlExecutor } from '../db/sql.ts';
import { GENESIS_LINK, netstring, parseDigests } from './chain.ts';
import { verifyLedger, type LedgerVerification } from './verify.ts';

export const CHECKPOINT_VERSION = 'dirledger-checkpoint-v1';

export type Checkpoint = {
  version: typeof CHECKPOINT_VERSION;
  /** The batch (chain_seq) whose link is signed. */
  seq: string;
  /** The highest event position that batch and those before it cover ("0" when none). */
  position: string;
  /** Its chain link, hex. */
  link: string;
  createdAt: string;
  /** The signer's Ed25519 public key (raw 32 bytes, base64url). */
  publicKey: string;
  /** Ed25519 over `signedBytes`, base64url. */
  signature: string;
};

const CheckpointJson = z.strictObject({
  version: z.literal(CHECKPOINT_VERSION),
  seq: z.string().regex(/^\d{1,19}$/),
  position: z.string().regex(/^\d{1,19}$/),
  link: z.string().regex(/^[0-9a-f]{64}$/),
  createdAt: z.string().min(1).max(64),
  publicKey: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  signature: z.string().regex(/^[A-Za-z0-9_-]{86}$/),
});

/** The bytes signed: netstrings of version, seq, position, link and createdAt, in that order. */
export const signedBytes = (c: Omit<Checkpoint, 'publicKey' | 'signature'>) =>
  Buffer.from([c.version, c.seq, c.position, c.link, c.createdAt].map(netstring).join(''), 'utf8');

const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

export type CheckpointKey = { privateKey: KeyObject; publicKey: KeyObject; publicRaw: string };

/** The checkpoint signing key: HKDF-SHA256 of the root key, info "dirledger checkpoint ed25519 v1", as an Ed25519 seed. */
export function checkpointKey(rootKey: Buffer): CheckpointKey {
  const seed = Buffer.from(hkdfSync('sha256', rootKey, Buffer.alloc(0), 'dirledger checkpoint ed25519 v1', 32));
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, publicRaw: rawPublic(publicKey) };
}

const rawPublic = (key: KeyObject) => (key.export({ format: 'jwk' }) as { x: string }).x;
const publicFromRaw = (raw: string) => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw }, format: 'jwk' });

export class CheckpointError extends Error {}

/** Signs the chain's current head. */
export async function exportCheckpoint(sql: SqlExecutor, key: CheckpointKey, now = new Date()): Promise<Checkpoint> {
  const [head] = await sql.query<{ seq: bigint; link: Uint8Array }>('SELECT seq, link FROM ledger_chain WHERE id');
  if (!head) throw new CheckpointError('The ledger has no chain head (ledger_chain is empty): run the migrations.');
  const [last] = await sql.query<{ event_digests: Uint8Array | null }>(
    'SELECT event_digests FROM ledger_batch WHERE chain_seq <= $1 AND inserted > 0 ORDER BY chain_seq DESC LIMIT 1',
    [head.seq],
  );
  const position = (last?.event_digests && parseDigests(Buffer.from(last.event_digests))?.at(-1)?.position) || 0n;
  const body = {
    version: CHECKPOINT_VERSION,
    seq: String(head.seq),
    position: String(position),
    link: Buffer.from(head.link).toString('hex'),
    createdAt: now.toISOString(),
  } as const;
  return { ...body, publicKey: key.publicRaw, signature: sign(null, signedBytes(body), key.privateKey).toString('base64url') };
}

export type CheckpointCheck = {
  ok: boolean;
  /** What was found, in one sentence. */
  message: string;
  checkpoint: Checkpoint | null;
  /** The chain recomputed from its start up to the checkpoint's batch. */
  verification: LedgerVerification | null;
};

/**
 * Checks a checkpoint: its signature (by `trustedKey` when given: a checkpoint signed by any other key
 * is refused), then the database: the chain up to its batch recomputes from the rows, and that
 * batch's link is still the one signed.
 */
export async function checkCheckpoint(sql: SqlExecutor, text: string, trustedKey?: string): Promise<CheckpointCheck> {
  let checkpoint: Checkpoint;
  try {
    checkpoint = CheckpointJson.parse(JSON.parse(text)) as Checkpoint;
  } catch (error) {
    const why =
      error instanceof z.ZodError ? error.issues.map((i) => `${i.path.join('.') || 'checkpoint'}: ${i.message}`).join('; ') : (error as Error).message;
    return { ok: false, message: `Not a dirledger checkpoint: ${why}.`, checkpoint: null, verification: null };
  }
  const fail = (message: string, verification: LedgerVerification | null = null) => ({ ok: false, message, checkpoint, verification });
  if (trustedKey !== undefined && trustedKey !== checkpoint.publicKey) {
    return fail(`The checkpoint was signed by key ${checkpoint.publicKey}, not by the trusted key ${trustedKey}.`);
  }
  if (!verify(null, signedBytes(checkpoint), publicFromRaw(checkpoint.publicKey), Buffer.from(checkpoint.signature, 'base64url'))) {
    return fail("The checkpoint's signature does not verify: it was altered after signing.");
  }
  const seq = BigInt(checkpoint.seq);
  const verification = await verifyLedger(sql, { throughSeq: seq });
  // Batch 0 is the chain before its first batch: its link is the genesis link.
  const [row] =
    seq === 0n
      ? [{ chain_link: GENESIS_LINK }]
      : await sql.query<{ chain_link: Uint8Array | null }>('SELECT chain_link FROM ledger_batch WHERE chain_seq = $1', [seq]);
  if (!row) return fail(`Batch ${seq}, whose link the checkpoint signs, is no longer in the ledger.`, verification);
  if (!Buffer.from(row.chain_link ?? []).equals(Buffer.from(checkpoint.link, 'hex'))) {
    return fail(`Batch ${seq}'s link is no longer the one signed: the history up to position ${checkpoint.position} was rewritten.`, verification);
  }
  if (!verification.ok) {
    return fail(`The chain up to batch ${seq} no longer recomputes from the rows: ${verification.problems[0]?.message ?? 'see problems'}`, verification);
  }
  return {
    ok: true,
    message: `The ledger up to batch ${seq} (position ${checkpoint.position}) is as signed at ${checkpoint.createdAt}.`,
    checkpoint,
    verification,
  };
}
