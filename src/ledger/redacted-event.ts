// An event's secrets are replaced once: the spool redacts an event on the request path before it
// touches the disk, and Ledger.append stores the columns that pass computed instead of scanning the
// same url, headers, metadata and payload again (issue 17: redacting twice was a measured part of
// every recorded Directory read). What the Ledger takes is kept in a WeakMap only this module writes,
// computed here from the event with the redactor that will read it back, so no caller can hand the
// Ledger a claim that something is redacted: it can only hand it the event, which is then redacted.
import type { SecretRedactor } from '../secrets/redact.ts';
import { textBytesOf, type EventInput } from './input.ts';
import { encodeJson, encodeText } from './storable.ts';

/** url, headers and metadata as the Ledger stores them: escaped (storable.ts) and redacted; null when absent. */
export type StoredColumns = { url: string | null; headers: string | null; metadata: string | null };

/** A payload's bytes after redaction, its size before, and the names replaced in it. */
export type RedactedPayload = { size: number; bytes: Buffer; found: readonly string[] };

/** What the spool's pass computed: the columns, the names replaced in them, and the payload when it was small enough to keep. */
export type RedactedEvent = StoredColumns & { found: readonly string[]; payload: RedactedPayload | undefined };

/** Payloads up to this size are kept between the two passes (a bound on the memory held while a batch waits). */
export const KEPT_PAYLOAD_MAX_BYTES = 16 * 1024;

/** The event's own short texts, each a column the Ledger redacts. */
const identifierKeys = ['id', 'kind', 'actionId', 'tool', 'session', 'turn', 'task', 'agent', 'model', 'status', 'method'] as const;

const sealed = new WeakMap<EventInput, { redactor: SecretRedactor; redacted: RedactedEvent }>();

/**
 * The stored columns, redacted here (the Ledger's own pass). Escaped before they are redacted: the
 * escape leaves every character a secret can be spelled with as it was, so the redactor sees what is stored.
 */
export function storedColumns(event: EventInput, redactor: SecretRedactor, found: Set<string>): StoredColumns {
  return {
    url: event.url === undefined ? null : encodeText(redactor.text(event.url, found)),
    headers: event.headers === undefined ? null : redactor.jsonText(encodeJson(event.headers), found),
    metadata: event.metadata === undefined ? null : redactor.jsonText(encodeJson(event.metadata), found),
  };
}

/** A JSON column from its value redacted string by string (`redacted`, from `raw`): the same text storedColumns gives, without a second pass. */
function storedJson(raw: Record<string, unknown>, redacted: Record<string, unknown>, redactor: SecretRedactor, found: Set<string>): string {
  // Nothing to escape (the common case): the value redacted is the one the Ledger would redact; it only needs its whole-text scan.
  return encodeJson(raw) === raw ? redactor.jsonTextOfRedacted(redacted, found) : redactor.jsonText(encodeJson(raw), found);
}

/**
 * The event as the spool may write it to disk (every registered secret value replaced in its names and ids, url,
 * headers, metadata, payload and artifact URI), and, for `takeRedacted`, the Ledger's columns of the
 * same values: one scan of each for both.
 */
export function redactForSpool(event: EventInput, redactor: SecretRedactor): EventInput {
  const found = new Set<string>();
  const out: EventInput = { ...event };
  // The names and ids, as the Ledger stores them too: they may be longer once redacted (parseSpooledEvent reads them back).
  const inNames = new Set<string>();
  for (const key of identifierKeys) {
    const value = event[key];
    if (value !== undefined) out[key] = redactor.text(value, inNames);
  }
  if (event.contract) out.contract = { ...event.contract, form: redactor.text(event.contract.form, inNames) };
  const columns: StoredColumns = { url: null, headers: null, metadata: null };
  if (event.url !== undefined) {
    out.url = redactor.text(event.url, found);
    columns.url = encodeText(out.url);
  }
  if (event.headers !== undefined) {
    out.headers = redactor.json(event.headers, found);
    columns.headers = storedJson(event.headers, out.headers, redactor, found);
  }
  if (event.metadata !== undefined) {
    out.metadata = redactor.json(event.metadata, found);
    columns.metadata = storedJson(event.metadata, out.metadata, redactor, found);
  }
  const columnNames = [...found];
  const p = event.payload;
  let payload: RedactedPayload | undefined;
  if (p.text !== undefined || p.base64 !== undefined) {
    const raw = p.text !== undefined ? (textBytesOf(p) ?? Buffer.from(p.text, 'utf8')) : Buffer.from(p.base64!, 'base64');
    const inPayload = new Set<string>();
    const bytes = redactor.bytes(raw, inPayload);
    if (raw.length <= KEPT_PAYLOAD_MAX_BYTES) payload = { size: raw.length, bytes, found: [...inPayload] };
    for (const name of inPayload) found.add(name);
    if (bytes !== raw) out.payload = { ...p, text: undefined, base64: bytes.toString('base64') };
  }
  // The Ledger redacts an artifact's URI itself (a rare event, and not one of the columns above).
  if (p.artifactUri !== undefined) out.payload = { ...out.payload, artifactUri: redactor.text(p.artifactUri, found) };
  sealed.set(event, { redactor, redacted: { ...columns, found: columnNames, payload } });
  return found.size || inNames.size ? out : event;
}

/**
 * What `redactForSpool` computed for this very event object with this redactor, once (a second
 * append of it, a retry, redacts again); undefined otherwise. `found`: the names replaced in the
 * columns; `payload` is undefined when the payload was too large to keep: the Ledger redacts its bytes itself.
 */
export function takeRedacted(event: EventInput, redactor: SecretRedactor): RedactedEvent | undefined {
  const kept = sealed.get(event);
  if (!kept || kept.redactor !== redactor) return undefined;
  sealed.delete(event);
  return kept.redacted;
}
