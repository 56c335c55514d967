// readBody: a body with a declared length is read whole, one without is streamed, and either past the limit is refused (413).
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.ts';
import { readBody } from '../../src/limits.ts';

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request('http://test/', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
const streamed = (chunks: string[]) => Readable.toWeb(Readable.from(chunks.map((c) => Buffer.from(c)))) as ReadableStream<Uint8Array>;

describe('readBody', () => {
  it('gives back the exact bytes, declared or streamed, NUL and invalid UTF-8 included', async () => {
    const bytes = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x7d]);
    expect(await readBody(post(bytes, { 'content-length': String(bytes.length) }), 100)).toEqual(bytes);
    expect(await readBody(post(streamed(['{"a"', ':1}'])), 100)).toEqual(Buffer.from('{"a":1}'));
    expect(await readBody(post(new Uint8Array(0), { 'content-length': '0' }), 100)).toEqual(Buffer.alloc(0));
  });

  it('refuses past the limit: declared, streamed, and a body longer than it declared', async () => {
    const tooLarge = expect.objectContaining({ code: ErrorCode.PAYLOAD_TOO_LARGE, details: { limit: 10 } });
    await expect(readBody(post('x'.repeat(11), { 'content-length': '11' }), 10)).rejects.toEqual(tooLarge);
    await expect(readBody(post(streamed(['x'.repeat(6), 'x'.repeat(6)])), 10)).rejects.toEqual(tooLarge);
    // Over HTTP Node's parser ends a body at its declared length; in process nothing does, so the length read is checked.
    await expect(readBody(post('x'.repeat(50), { 'content-length': '5' }), 10)).rejects.toEqual(tooLarge);
  });
});
