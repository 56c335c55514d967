// The shape of an appended batch, validated with zod at every door.
import { z } from 'zod';

export const Direction = z.enum(['IN', 'OUT']);
export const PayloadState = z.enum(['COMPLETE', 'PARTIAL', 'NONE', 'ARTIFACT', 'MISSING']);
export type PayloadState = z.output<typeof PayloadState>;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 as 64 lowercase hex digits');
// PostgreSQL text and jsonb cannot hold U+0000, and a lone surrogate has no UTF-8 form:
// refuse both at the door instead of failing in the database or storing U+FFFD.
const storable = (s: string) => !s.includes('\u0000') && s.isWellFormed();
const storableMessage = 'text without NUL characters or unpaired surrogates';
const storableText = () => z.string().refine(storable, storableMessage);
const shortText = (max = 512) => storableText().pipe(z.string().min(1).max(max));
const storableJson = (value: unknown): boolean =>
  typeof value === 'string'
    ? storable(value)
    : Array.isArray(value)
      ? value.every(storableJson)
      : value !== null && typeof value === 'object'
        ? Object.entries(value).every(([k, v]) => storable(k) && storableJson(v))
        : true;
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64 text').refine((s) => s.length % 4 === 0, 'base64 text (length a multiple of 4)');
const decimal = z.union([z.string(), z.number()]).transform(String).pipe(
  z.string().regex(/^-?\d{1,10}(\.\d{1,10})?$/, 'an exact decimal with up to 10 digits before and after the point'),
);
const headerValue = z.union([storableText(), z.array(storableText())]);

export const PayloadInput = z
  .object({
    state: PayloadState,
    text: z.string().refine((t) => t.isWellFormed(), 'UTF-8 text without unpaired surrogates (send binary as base64)').optional(),
    base64: base64.optional(),
    size: z.number().int().nonnegative().optional(),
    artifactUri: storableText().pipe(z.string().min(1).max(4096)).optional(),
    artifactSha256: sha256.optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    const bodies = Number(p.text !== undefined) + Number(p.base64 !== undefined);
    const carries = p.state === 'COMPLETE' || p.state === 'PARTIAL';
    if (carries && bodies !== 1) {
      ctx.addIssue({ code: 'custom', path: ['text'], message: `exactly one of text or base64 for a ${p.state} payload` });
    }
    if (!carries && bodies > 0) {
      ctx.addIssue({ code: 'custom', path: [p.text !== undefined ? 'text' : 'base64'], message: `no bytes for a ${p.state} payload` });
    }
    if (p.state === 'ARTIFACT' && !p.artifactUri) {
      ctx.addIssue({ code: 'custom', path: ['artifactUri'], message: 'a URI for an ARTIFACT payload' });
    }
    if (p.state !== 'ARTIFACT' && (p.artifactUri || p.artifactSha256)) {
      ctx.addIssue({ code: 'custom', path: ['artifactUri'], message: 'an artifact reference only with state ARTIFACT' });
    }
  });
export type PayloadInput = z.output<typeof PayloadInput>;

export const EventInput = z
  .object({
    id: shortText(256),
    kind: shortText(128),
    direction: Direction,
    actionId: shortText(256),
    tool: shortText().optional(),
    session: shortText().optional(),
    turn: shortText().optional(),
    task: shortText().optional(),
    agent: shortText().optional(),
    model: shortText().optional(),
    status: shortText(128).optional(),
    method: shortText(32).optional(),
    url: storableText().pipe(z.string().min(1).max(16_384)).optional(),
    headers: z.record(storableText(), headerValue).optional(),
    costUsd: decimal.optional(),
    inputTokens: z.number().int().nonnegative().optional(),
    outputTokens: z.number().int().nonnegative().optional(),
    occurredAt: z.union([z.iso.datetime({ offset: true }), z.date()]).transform((v) => new Date(v)),
    payload: PayloadInput.default({ state: 'NONE' }),
    metadata: z.record(z.string(), z.unknown()).refine(storableJson, `JSON whose strings are ${storableMessage}`).optional(),
    /** The Directory contract this event ran: its form (or way column) and the sha256 of its canonical JSON. */
    contract: z.object({ form: shortText(128), sha256 }).strict().optional(),
  })
  .strict();
export type EventInput = z.output<typeof EventInput>;

export const BatchInput = z
  .object({
    collector: shortText(256),
    position: z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,19}$/, 'a whole number')]).transform((v) => BigInt(v)).optional(),
    events: z.array(EventInput).min(1).max(10_000),
  })
  .strict();
export type BatchInput = z.output<typeof BatchInput>;
