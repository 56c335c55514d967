// The runner's HTTP step on the wire (undici.request on its own Agent): what the upstream receives
// is what Node's fetch sent before, and the answer is read the way fetch read it.
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHttp } from '../../src/dispatch/runners.ts';
import { readBody, startServer, type TestServer } from '../capture/helpers.ts';

describe('runHttp on the wire', () => {
  let upstream: TestServer;
  const seen: { method: string; url: string; rawHeaders: string[]; body: string }[] = [];
  const limits = (ms = 5_000, maxBytes = 100_000) => ({ signal: AbortSignal.timeout(ms), maxBytes });

  beforeAll(async () => {
    upstream = await startServer(async (request, response) => {
      const body = (await readBody(request)).toString('utf8');
      seen.push({ method: request.method!, url: request.url!, rawHeaders: request.rawHeaders, body });
      const coded: Record<string, Buffer> = {
        '/gzip': zlib.gzipSync('plain gzip'),
        '/deflate': zlib.deflateSync('plain deflate'),
        '/deflate-raw': zlib.deflateRawSync('plain raw deflate'),
        '/br': zlib.brotliCompressSync('plain br'),
        '/bomb': zlib.gzipSync(Buffer.alloc(1_000_000, 97)),
      };
      const path = request.url!.split('?')[0]!;
      if (coded[path]) {
        response.writeHead(200, {
          'content-type': 'text/plain',
          'content-encoding': path === '/deflate-raw' ? 'deflate' : path === '/bomb' ? 'gzip' : path.slice(1),
        });
        response.end(coded[path]);
      } else if (path === '/zstd') {
        response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'zstd' });
        response.end('left as it came');
      } else if (path === '/cookies') {
        response.setHeader('set-cookie', ['a=1', 'b=2']);
        response.end('ok');
      } else if (path === '/events') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: 1\n\n');
        setTimeout(() => response.end('data: 2\n\n'), 30);
      } else if (path === '/stalls') {
        response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
        response.write('12345');
      } else {
        response.writeHead(201, { 'content-type': 'application/json' });
        response.end('{"ok":true}');
      }
    });
  });
  afterAll(async () => {
    await upstream?.stop();
  });

  const headersOf = (raw: string[]) => raw.flatMap((v, i) => (i % 2 === 0 ? [`${v}: ${raw[i + 1]}`] : [])).filter((h) => !h.startsWith('host:'));

  it('sends the rendered request, then the headers fetch added when the contract does not set them', async () => {
    seen.length = 0;
    const answer = await runHttp(
      { method: 'POST', url: `${upstream.origin}/echo?q=a%20b`, headers: { 'X-Key': 'v', Accept: 'text/html' }, body: { q: 1 } },
      limits(),
    );
    expect(answer.status).toBe(201);
    expect(answer.bytes!.toString()).toBe('{"ok":true}');
    expect(answer.contentType).toBe('application/json');
    expect(seen[0]!.url).toBe('/echo?q=a%20b');
    expect(seen[0]!.body).toBe('{"q":1}');
    expect(headersOf(seen[0]!.rawHeaders)).toEqual([
      'connection: keep-alive',
      'X-Key: v',
      'Accept: text/html',
      'content-type: application/json',
      'accept-language: *',
      'sec-fetch-mode: cors',
      'user-agent: node',
      'accept-encoding: gzip, deflate',
      'content-length: 7',
    ]);
    await runHttp({ method: 'PUT', url: `${upstream.origin}/text`, headers: {}, body: 'a string' }, limits());
    expect(headersOf(seen[1]!.rawHeaders)).toContain('content-type: text/plain;charset=UTF-8');
    expect(seen[1]!.body).toBe('a string');
  });

  it('undoes gzip, deflate (wrapped or raw) and br as fetch did, leaves an unknown coding as it came, and bounds the decoded size', async () => {
    for (const [path, text] of [
      ['/gzip', 'plain gzip'],
      ['/deflate', 'plain deflate'],
      ['/deflate-raw', 'plain raw deflate'],
      ['/br', 'plain br'],
      ['/zstd', 'left as it came'],
    ] as const) {
      const answer = await runHttp({ method: 'GET', url: `${upstream.origin}${path}`, headers: {} }, limits());
      expect(answer.bytes!.toString(), path).toBe(text);
    }
    await expect(runHttp({ method: 'GET', url: `${upstream.origin}/bomb`, headers: {} }, limits())).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });

  it('refuses what fetch refused before sending anything: a body on GET, credentials in the URL, a bad port', async () => {
    seen.length = 0;
    await expect(runHttp({ method: 'GET', url: `${upstream.origin}/x`, headers: {}, body: 'no' }, limits())).rejects.toThrow(
      /GET\/HEAD method cannot have body/,
    );
    await expect(runHttp({ method: 'GET', url: upstream.origin.replace('://', '://user:pw@'), headers: {} }, limits())).rejects.toThrow(/credentials/);
    await expect(runHttp({ method: 'GET', url: 'http://127.0.0.1:6667/', headers: {} }, limits())).rejects.toThrow(/port 6667 is blocked/);
    expect(seen).toHaveLength(0);
  });

  it('keeps repeated answer headers as lists', async () => {
    const answer = await runHttp({ method: 'GET', url: `${upstream.origin}/cookies`, headers: {} }, limits());
    expect(answer.headers!['set-cookie']).toEqual(['a=1', 'b=2']);
  });

  it('hands a streamed answer back unread as a web stream, and aborts a body that stalls past the signal', async () => {
    const answer = await runHttp({ method: 'GET', url: `${upstream.origin}/events`, headers: {} }, { ...limits(), streaming: true });
    expect(answer.bytes).toBeUndefined();
    expect(answer.body).toBeInstanceOf(ReadableStream);
    expect(await new Response(answer.body).text()).toBe('data: 1\n\ndata: 2\n\n');
    await expect(runHttp({ method: 'GET', url: `${upstream.origin}/stalls`, headers: {} }, limits(300))).rejects.toThrow();
  });
});
