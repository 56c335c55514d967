// The inline codecs are standard formats: what the ledger stores as zstd the zstd command reads,
// and what that command writes the ledger reads, so a blob can be checked without this server.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SYNC_DEFLATE_MAX_BYTES, decodeInline, encodeInline, encodeSmallInline, smallPayloadCodec } from '../../src/ledger/payload.ts';

const payload = Buffer.from(
  JSON.stringify({
    messages: Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}: read the file and summarise it` })),
  }),
);
const require = createRequire(import.meta.url);
const zstdCommand = spawnSync('zstd', ['--version']).status === 0;

describe('inline codecs', () => {
  it('small payloads use zstd when the optional native package is installed, deflate-raw when not', () => {
    let built = false;
    try {
      built = existsSync(path.join(path.dirname(require.resolve('zstd-napi/package.json')), 'build/Release/binding.node'));
    } catch {
      // not installed: an optional dependency that could not be built here
    }
    expect(smallPayloadCodec).toBe(built ? 'zstd' : 'deflate-raw');
  });

  it('the synchronous small-payload encoder matches encodeInline up to its limit and refuses past it, naming both sizes', async () => {
    for (const bytes of [Buffer.from('tiny'), payload, Buffer.alloc(SYNC_DEFLATE_MAX_BYTES, 'ab')]) {
      const sync = encodeSmallInline(bytes);
      const async = await encodeInline(bytes);
      expect(sync.codec).toBe(async.codec);
      expect(sync.data.equals(async.data)).toBe(true);
      expect((await decodeInline(sync.codec, sync.data)).equals(bytes)).toBe(true);
    }
    expect(() => encodeSmallInline(Buffer.alloc(SYNC_DEFLATE_MAX_BYTES + 1))).toThrow(
      `encodeSmallInline takes at most ${SYNC_DEFLATE_MAX_BYTES} bytes, got ${SYNC_DEFLATE_MAX_BYTES + 1}`,
    );
    const large = await encodeInline(Buffer.alloc(SYNC_DEFLATE_MAX_BYTES + 1, 'ab'));
    expect(large.codec).toBe('deflate-raw');
  });

  it('round-trips every codec it writes, and reads deflate-raw written before zstd', async () => {
    const encoded = await encodeInline(payload);
    expect(encoded.codec).toBe(smallPayloadCodec);
    expect((await decodeInline(encoded.codec, encoded.data)).equals(payload)).toBe(true);
    expect((await decodeInline('deflate-raw', deflateRawSync(payload))).equals(payload)).toBe(true);
    expect((await decodeInline('identity', payload)).equals(payload)).toBe(true);
  });

  it('refuses an unknown codec by name', async () => {
    await expect(decodeInline('lzma', payload)).rejects.toThrow('unknown blob codec "lzma"');
  });

  it.skipIf(!zstdCommand || smallPayloadCodec !== 'zstd')('agrees with the zstd command in both directions', async () => {
    const ours = await encodeInline(payload);
    const decompressed = spawnSync('zstd', ['-d', '-c'], { input: ours.data });
    expect(decompressed.status, decompressed.stderr.toString()).toBe(0);
    expect(decompressed.stdout.equals(payload)).toBe(true);
    const theirs = spawnSync('zstd', ['-19', '-c'], { input: payload });
    expect(theirs.status).toBe(0);
    expect((await decodeInline('zstd', theirs.stdout)).equals(payload)).toBe(true);
  });
});
