// Bytes as they pass, bounded: what the capture hands the ledger as an event's payload.
import { isUtf8 } from 'node:buffer';
import type { PayloadInput } from '../ledger/input.ts';

/** Collects chunks up to a limit; past it keeps only the count, and the payload is MISSING. */
export class BoundedBytes {
  private chunks: Buffer[] = [];
  size = 0;

  private readonly maxBytes: number;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get overflowed(): boolean {
    return this.size > this.maxBytes;
  }

  push(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.size += bytes.length;
    if (this.overflowed) this.chunks = [];
    // Copied: the sender may reuse its buffer once the chunk has passed.
    else this.chunks.push(Buffer.from(bytes));
  }

  bytes(): Buffer | null {
    return this.overflowed ? null : Buffer.concat(this.chunks, this.size);
  }

  /** The ledger payload: the exact bytes (UTF-8 text when they are UTF-8, else base64), or MISSING with the size. */
  payload(state: 'COMPLETE' | 'PARTIAL' = 'COMPLETE'): PayloadInput {
    const bytes = this.bytes();
    return bytes ? bytesPayload(bytes, state) : { state: 'MISSING', size: this.size };
  }
}

export function bytesPayload(bytes: Buffer, state: 'COMPLETE' | 'PARTIAL' = 'COMPLETE'): PayloadInput {
  return isUtf8(bytes) ? { state, text: bytes.toString('utf8') } : { state, base64: bytes.toString('base64') };
}
