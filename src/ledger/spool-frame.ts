// The spool's framing. A segment begins with a header (magic, its number, a checksum of both); each
// record is u32 LE length, u32 LE crc32 of the body, u32 LE the segment number, then the body: the
// event as JSON, or (an event whose payload is text) a byte RAW_TEXT, the JSON's length (u32 LE), the
// event as JSON without its payload text, then the text's UTF-8 bytes as they are. Segments are zero-filled when new and recycled once their events committed, so on
// replay the records end at a zero tail or at a record of an earlier number (the clean end: space
// never written, or a recycled segment's previous life), or at a record of this number that is short
// or fails its checksum (a torn write: reported, the rest ignored).
//
// A spare (committed, waiting to be recycled) has the header of number 0, which no record carries.
// A segment without the header is the first format (u32 length, u32 crc32, body; zero-filled, never
// recycled), still replayed.
import { crc32 } from 'node:zlib';
import { parseSpooledEvent, textBytesOf, type EventInput } from './input.ts';

const MAGIC = Buffer.from('DLSPOOL2', 'latin1');
/** Bytes of a segment's header: where its first record goes. */
export const SEGMENT_HEADER = 16;
const RECORD_HEADER = 12;
const LEGACY_RECORD_HEADER = 8;
/**
 * The first byte of a body whose payload text follows its JSON as bytes (a JSON body begins with `{`):
 * a recorded answer is kilobytes of JSON, and escaping it into a JSON string was most of its framing
 * (25 → ~6 µs for a 10 KB GraphQL answer; issue 17).
 */
const RAW_TEXT = 0x01;
const RAW_TEXT_HEADER = 5;

/** The header of segment `segment`. */
export function segmentHeader(segment: number): Buffer {
  const header = Buffer.alloc(SEGMENT_HEADER);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(segment, 8);
  header.writeUInt32LE(crc32(header.subarray(0, 12)), 12);
  return header;
}

/** The segment number in a header, or undefined when the bytes do not begin with a valid one. */
export function readSegmentHeader(bytes: Buffer): number | undefined {
  if (bytes.length < SEGMENT_HEADER || !bytes.subarray(0, 8).equals(MAGIC)) return undefined;
  if (crc32(bytes.subarray(0, 12)) !== bytes.readUInt32LE(12)) return undefined;
  return bytes.readUInt32LE(8);
}

/** One event as a framed record; `stamp` gives it the segment it is written to. */
export function frame(event: EventInput): Buffer {
  const { text, ...payload } = event.payload;
  // The time as the text JSON.stringify gives a Date: a Date (its toJSON) takes the whole event off V8's fast path
  // (a dispatched call's four events framed in 21 µs with it, 10 without).
  const occurredAt = event.occurredAt.toISOString();
  if (text === undefined) return framed(JSON.stringify({ ...event, occurredAt }));
  // The bytes the text was decoded from where the capture kept them (the same bytes the spool's redaction read).
  const bytes = textBytesOf(event.payload) ?? Buffer.from(text, 'utf8');
  return framed(JSON.stringify({ ...event, occurredAt, payload }), bytes);
}

/** The record of a body: `json`, or RAW_TEXT, its length, `json` and `rawText`; encoded straight into the record, no intermediate buffer. */
function framed(json: string, rawText?: Buffer): Buffer {
  const jsonAt = rawText ? RECORD_HEADER + RAW_TEXT_HEADER : RECORD_HEADER;
  const jsonLength = Buffer.byteLength(json, 'utf8');
  const length = jsonAt - RECORD_HEADER + jsonLength + (rawText?.length ?? 0);
  const record = Buffer.allocUnsafe(RECORD_HEADER + length);
  record.write(json, jsonAt, 'utf8');
  if (rawText) {
    record[RECORD_HEADER] = RAW_TEXT;
    record.writeUInt32LE(jsonLength, RECORD_HEADER + 1);
    rawText.copy(record, jsonAt + jsonLength);
  }
  record.writeUInt32LE(length, 0);
  record.writeUInt32LE(crc32(record.subarray(RECORD_HEADER)), 4);
  record.writeUInt32LE(0, 8);
  return record;
}

/** Writes the segment number into each framed record in `bytes` (records laid end to end). */
export function stamp(bytes: Buffer, segment: number): void {
  for (let at = 0; at + RECORD_HEADER <= bytes.length; at += RECORD_HEADER + bytes.readUInt32LE(at)) bytes.writeUInt32LE(segment, at + 8);
}

export type Unframed = {
  /** The segment's number from its header; undefined for the first format. */
  segment: number | undefined;
  events: EventInput[];
  /** Bytes of the header and whole, valid records from the start: where the next record would go. */
  validBytes: number;
  /** Bytes after them that are not a clean end: a torn or corrupt write (0 when the records end cleanly). */
  tornBytes: number;
  /** Bytes after them that are a clean end: zeros never written, or records of the segment's previous life. */
  zeroBytes: number;
};

/** The events of a segment's bytes, up to the clean end or the first record that is torn or fails its checksum. */
export function unframe(bytes: Buffer): Unframed {
  const segment = readSegmentHeader(bytes);
  // A spare: every record in it is of an earlier life.
  if (segment === 0) return { segment, events: [], validBytes: SEGMENT_HEADER, tornBytes: 0, zeroBytes: bytes.length - SEGMENT_HEADER };
  const header = segment === undefined ? LEGACY_RECORD_HEADER : RECORD_HEADER;
  const events: EventInput[] = [];
  let offset = segment === undefined ? 0 : SEGMENT_HEADER;
  let earlierLife = false;
  while (offset + header <= bytes.length) {
    const length = bytes.readUInt32LE(offset);
    if (segment !== undefined && bytes.readUInt32LE(offset + 8) !== segment) {
      // Written in an earlier life of this file (a record of this one begins with this number, once its header is whole).
      earlierLife = bytes.readUInt32LE(offset + 8) < segment && length !== 0;
      break;
    }
    const end = offset + header + length;
    if (length === 0 || end > bytes.length) break;
    const body = bytes.subarray(offset + header, end);
    if (crc32(body) !== bytes.readUInt32LE(offset + 4)) break;
    let parsed: ReturnType<typeof parseSpooledEvent>;
    try {
      parsed = parseSpooledEvent(bodyEvent(body));
    } catch {
      break;
    }
    if (!parsed.success) break;
    events.push(parsed.data);
    offset = end;
  }
  const rest = bytes.length - offset;
  const clean = earlierLife || allZero(bytes.subarray(offset));
  return { segment, events, validBytes: offset, tornBytes: clean ? 0 : rest, zeroBytes: clean ? rest : 0 };
}

/** The event a record's body holds, unparsed; throws when the body is not one. */
function bodyEvent(body: Buffer): unknown {
  if (body[0] !== RAW_TEXT) return JSON.parse(body.toString('utf8'));
  const jsonEnd = RAW_TEXT_HEADER + body.readUInt32LE(1);
  if (jsonEnd > body.length) throw new RangeError('a record whose JSON runs past its end');
  const event = JSON.parse(body.toString('utf8', RAW_TEXT_HEADER, jsonEnd)) as { payload?: Record<string, unknown> };
  if (typeof event.payload !== 'object' || event.payload === null) throw new TypeError('a record of payload text without a payload');
  event.payload.text = body.toString('utf8', jsonEnd);
  return event;
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
