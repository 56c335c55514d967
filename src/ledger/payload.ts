// Payload bytes: hashing, the UTF-8 label and the inline codec.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

export type PayloadEncoding = 'UTF8' | 'BINARY';
export type Codec = 'deflate-raw' | 'identity';

const deflateRaw = promisify(zlib.deflateRaw);
const inflateRaw = promisify(zlib.inflateRaw);

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** UTF8 only when strict decoding gives back the identical bytes; anything else is BINARY. */
export function labelEncoding(bytes: Uint8Array): PayloadEncoding {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return 'BINARY';
  }
  return Buffer.from(text, 'utf8').equals(bytes) ? 'UTF8' : 'BINARY';
}

/** Compresses for inline storage; keeps the bytes as they are when compression would not save space. */
export async function encodeInline(bytes: Buffer): Promise<{ codec: Codec; data: Buffer }> {
  if (bytes.length < 64) return { codec: 'identity', data: bytes };
  const data = await deflateRaw(bytes, { level: 1 });
  return data.length < bytes.length ? { codec: 'deflate-raw', data } : { codec: 'identity', data: bytes };
}

export async function decodeInline(codec: string, data: Uint8Array): Promise<Buffer> {
  if (codec === 'identity') return Buffer.from(data);
  if (codec === 'deflate-raw') return inflateRaw(data);
  throw new Error(`unknown blob codec ${JSON.stringify(codec)}`);
}
