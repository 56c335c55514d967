// The spool's record framing: u32 LE length, u32 LE crc32 of the body, the body (the event as JSON).
// Segments are zero-filled ahead of need, so on replay the records end either at a zero tail (the
// clean end: never written) or at a record that is short, fails its checksum or does not parse,
// followed by anything but zeros (a torn write: reported, the rest ignored).
import { crc32 } from 'node:zlib';
import type { SecretRedactor } from '../secrets/redact.ts';
import { parseEvent, type EventInput } from './input.ts';

const HEADER = 8;

/** One event as a framed record. */
export function frame(event: EventInput): Buffer {
  const body = Buffer.from(JSON.stringify(event), 'utf8');
  const record = Buffer.allocUnsafe(HEADER + body.length);
  record.writeUInt32LE(body.length, 0);
  record.writeUInt32LE(crc32(body), 4);
  body.copy(record, HEADER);
  return record;
}

/** The event with every registered secret value replaced by its name, in the fields the Ledger redacts. */
export function redactEvent(event: EventInput, redactor: SecretRedactor): EventInput {
  const found = new Set<string>();
  const out: EventInput = { ...event };
  if (event.url !== undefined) out.url = redactor.text(event.url, found);
  if (event.headers !== undefined) out.headers = redactor.json(event.headers, found);
  if (event.metadata !== undefined) out.metadata = redactor.json(event.metadata, found);
  const p = event.payload;
  if (p.text !== undefined || p.base64 !== undefined) {
    const raw = p.text !== undefined ? Buffer.from(p.text, 'utf8') : Buffer.from(p.base64!, 'base64');
    const inPayload = new Set<string>();
    const bytes = redactor.bytes(raw, inPayload);
    // The Ledger's pass over this same payload takes this result (SecretRedactor.recall) instead of scanning again.
    redactor.remember(p, raw, bytes, inPayload);
    for (const name of inPayload) found.add(name);
    if (bytes !== raw) out.payload = { ...p, text: undefined, base64: bytes.toString('base64') };
  }
  if (p.artifactUri !== undefined) out.payload = { ...out.payload, artifactUri: redactor.text(p.artifactUri, found) };
  return found.size ? out : event;
}

export type Unframed = {
  events: EventInput[];
  /** Bytes of whole, valid records from the start. */
  validBytes: number;
  /** Bytes after them that are not a clean zero tail: a torn or corrupt write (0 when the records end cleanly). */
  tornBytes: number;
  /** Zero bytes after them: preallocated space never written. */
  zeroBytes: number;
};

/** The events of a segment's bytes, up to the first record that is torn or fails its checksum, or the zero tail. */
export function unframe(bytes: Buffer): Unframed {
  const events: EventInput[] = [];
  let offset = 0;
  while (offset + HEADER <= bytes.length) {
    const length = bytes.readUInt32LE(offset);
    const end = offset + HEADER + length;
    if (length === 0 || end > bytes.length) break;
    const body = bytes.subarray(offset + HEADER, end);
    if (crc32(body) !== bytes.readUInt32LE(offset + 4)) break;
    let parsed: ReturnType<typeof parseEvent>;
    try {
      parsed = parseEvent(JSON.parse(body.toString('utf8')));
    } catch {
      break;
    }
    if (!parsed.success) break;
    events.push(parsed.data);
    offset = end;
  }
  const rest = bytes.length - offset;
  const clean = allZero(bytes.subarray(offset));
  return { events, validBytes: offset, tornBytes: clean ? 0 : rest, zeroBytes: clean ? rest : 0 };
}

const zeros = Buffer.alloc(256 * 1024);

/** Whether every byte is zero. */
export function allZero(bytes: Buffer): boolean {
  for (let at = 0; at < bytes.length; at += zeros.length) {
    const piece = bytes.subarray(at, at + zeros.length);
    if (!piece.equals(zeros.subarray(0, piece.length))) return false;
  }
  return true;
}

/** A zeroed buffer to fill segments with, shared (never written to). */
export const zeroChunk = zeros;
