// A streamed answer is redacted chunk by chunk before it leaves (to the caller, to live
// subscribers): a secret split across chunks must be caught as if the stream were one buffer.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mintWithRootKey } from '../../src/auth/tokens.ts';
import { SecretRedactor, StreamRedactor } from '../../src/secrets/redact.ts';
import { TOKEN_SECRET_NAME } from '../../src/secrets/tokens.ts';
import { Prng } from '../../bench/lib/prng.ts';

const API_KEY = 'sk-live-4f9Qz7Wb2Kx8';
const DB_PASSWORD = 'pa$$ w/rd:"quoted"&more';
const forms = (value: string) => [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1), Buffer.from(value).toString('base64')];
const token = mintWithRootKey(randomBytes(32), ['tools = ECHO']);
const redactor = new SecretRedactor({ API_KEY, DB_PASSWORD });

/** Runs the chunks through one stream redactor; the output as one buffer, and the names found. */
function streamed(chunks: Buffer[], holdMax?: number) {
  const stream = holdMax === undefined ? redactor.stream() : new StreamRedactor(redactor, new Set(), holdMax);
  const out = [...chunks.map((c) => stream.push(c)), stream.end()];
  return { out, bytes: Buffer.concat(out), found: [...stream.found].sort() };
}

/** Any secret in any form, or any stretch of the token that would let a reader rebuild it. */
function leaks(bytes: Buffer): string[] {
  const text = bytes.toString('latin1');
  const secrets = [...forms(API_KEY), ...forms(DB_PASSWORD)].filter((n) => text.includes(n));
  return [...secrets, ...(text.includes(token.slice(20, 40)) || text.includes(token.slice(-20)) ? ['token'] : [])];
}

/** Every way to cut `bytes` in two. */
const splits = (bytes: Buffer) => Array.from({ length: bytes.length + 1 }, (_, at) => [bytes.subarray(0, at), bytes.subarray(at)]);

describe('StreamRedactor', () => {
  it.each(forms(API_KEY).map((form, i) => [['raw', 'URL-encoded', 'JSON-escaped', 'base64'][i]!, form]))(
    'catches a secret (%s) cut at every byte, exactly as redacting the whole would',
    (_form, form) => {
      const whole = Buffer.from(`data: {"key":"${form}","n":1}\n\ndata: after\n\n`);
      const expected = redactor.bytes(whole, new Set());
      expect(leaks(expected)).toEqual([]);
      for (const chunks of splits(whole)) {
        const { bytes, found } = streamed(chunks);
        expect(bytes.toString(), `cut at ${chunks[0]!.length}`).toBe(expected.toString());
        expect(found).toEqual(['API_KEY']);
      }
    },
  );

  it('catches secrets sent one byte at a time, and two secrets that overlap a chunk edge together', () => {
    const whole = Buffer.from(`x${API_KEY}${DB_PASSWORD}${API_KEY}y`);
    const { bytes, found } = streamed([...whole].map((b) => Buffer.from([b])));
    expect(bytes.toString()).toBe('x[API_KEY][DB_PASSWORD][API_KEY]y');
    expect(found).toEqual(['API_KEY', 'DB_PASSWORD']);
  });

  it('sends a chunk on at once when its end cannot begin a secret (an SSE event), and holds only a possible beginning', () => {
    const stream = redactor.stream();
    const event = Buffer.from('data: {"delta":"hello"}\n\n');
    expect(stream.push(event)).toEqual(event);
    // "sk-li" may be the beginning of API_KEY: held until the next chunk says otherwise.
    expect(stream.push(Buffer.from('data: sk-li')).toString()).toBe('data: ');
    expect(stream.push(Buffer.from('ke a fish\n\n')).toString()).toBe('sk-like a fish\n\n');
    expect(stream.push(Buffer.from('tail: sk-'))).toEqual(Buffer.from('tail: '));
    expect(stream.end().toString()).toBe('sk-');
    expect(stream.found.size).toBe(0);
  });

  // Base64 before an encoded token's fixed start encodes what came before the token (here "user:"),
  // so a cut there may send those characters on before the token is recognised; never the token.
  it('holds a dirledger token until its run ends, cut anywhere, plain and base64-encoded (Basic auth)', () => {
    const plain = Buffer.from(`authorization: Bearer ${token}\r\nnext: 1\r\n`);
    const basic = Buffer.from(`authorization: Basic ${Buffer.from(`user:${token}`).toString('base64')}\r\nnext: 1\r\n`);
    for (const whole of [plain, basic]) {
      for (const chunks of splits(whole)) {
        const { bytes, found } = streamed(chunks);
        expect(leaks(bytes), `cut at ${chunks[0]!.length}`).toEqual([]);
        const [, scheme, before] = /^authorization: (Bearer|Basic) ([A-Za-z0-9+/]*)\[DIRLEDGER_TOKEN\]\r\nnext: 1\r\n$/.exec(bytes.toString()) ?? [];
        expect(scheme, bytes.toString()).toBe(whole === plain ? 'Bearer' : 'Basic');
        // At most the encoding of "user:" and of the token's public first byte (dXNlcjpB); nothing after.
        expect('dXNlcjpB'.startsWith(before!) && (whole === basic || before === '')).toBe(true);
        expect(found).toEqual([TOKEN_SECRET_NAME]);
      }
    }
  });

  it('lets a token run held past its bound out as [DIRLEDGER_TOKEN], and drops the rest of the run as it arrives', () => {
    const whole = Buffer.from(`t=${token} done`);
    const chunks = Array.from({ length: Math.ceil(whole.length / 7) }, (_, i) => whole.subarray(i * 7, i * 7 + 7));
    const { out, bytes, found } = streamed(chunks, 32);
    expect(bytes.toString()).toBe(`t=[${TOKEN_SECRET_NAME}] done`);
    expect(found).toEqual([TOKEN_SECRET_NAME]);
    // It went out before the run ended (bounded memory), not only at the end.
    const marked = out.findIndex((b) => b.includes('[DIRLEDGER_TOKEN]'));
    expect(marked).toBeGreaterThan(0);
    expect(marked).toBeLessThan(out.length - 2);
  });

  it('gives the same bytes as redacting the whole, over random text and random chunk edges', () => {
    const prng = new Prng(7);
    const random = () => prng.next();
    const pieces = [
      'data: ',
      '\n\n',
      'sk-',
      'pa$$',
      '"quoted"',
      'plain words ',
      '%22',
      API_KEY,
      DB_PASSWORD,
      encodeURIComponent(DB_PASSWORD),
      Buffer.from(API_KEY).toString('base64'),
      '\u00e9\u4e2d',
    ];
    for (let round = 0; round < 300; round++) {
      const whole = Buffer.from(Array.from({ length: 1 + Math.floor(random() * 30) }, () => pieces[Math.floor(random() * pieces.length)]).join(''));
      const chunks: Buffer[] = [];
      for (let at = 0; at < whole.length; ) {
        const size = 1 + Math.floor(random() * 12);
        chunks.push(whole.subarray(at, at + size));
        at += size;
      }
      const expected = redactor.bytes(whole, new Set());
      const { bytes } = streamed(chunks);
      expect(bytes.toString('latin1'), whole.toString()).toBe(expected.toString('latin1'));
      expect(leaks(bytes)).toEqual([]);
    }
  });

  it('a chunk that ends a line of text goes out whole (SSE events and NDJSON records are not held for base64 that might wrap)', () => {
    for (const chunk of ['data: first\n\n', '{"line":1}\n', 'hello\n', 'x\n', 'data: {"n":1}\r\n\r\n', '\n']) {
      const stream = redactor.stream();
      expect(stream.push(Buffer.from(chunk)).toString(), JSON.stringify(chunk)).toBe(chunk);
      expect(stream.end().length).toBe(0);
    }
  });

  it.each(['\n', '\r\n'])('raw wrapped base64 (MIME, %j) cut at every byte, right after each line break too, is caught as the whole is', (eol) => {
    const doc = Buffer.concat([Buffer.from('m'.repeat(47)), Buffer.from(API_KEY), Buffer.from(' and the rest of the mail body, long enough to wrap again')]);
    const wrapped = (doc.toString('base64').match(/.{1,76}/g) ?? []).join(eol);
    const whole = Buffer.from(`Content-Transfer-Encoding: base64${eol}${eol}${wrapped}${eol}`);
    const expected = redactor.bytes(whole, new Set());
    expect(expected.toString('latin1')).toContain('[API_KEY]');
    for (const chunks of splits(whole)) {
      const { bytes, found } = streamed(chunks);
      expect(bytes.toString('latin1'), `cut at ${chunks[0]!.length}`).toBe(expected.toString('latin1'));
      expect(found).toEqual(['API_KEY']);
    }
  });

  it('a secret that holds a line break (a PEM key) is held across a chunk that ends after its first line', () => {
    const pem = '-----BEGIN TEST KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END TEST KEY-----';
    const withKey = new SecretRedactor({ PEM_KEY: pem });
    const whole = Buffer.from(`key:\n${pem}\nafter\n`);
    const expected = withKey.bytes(whole, new Set());
    expect(expected.toString()).toBe('key:\n[PEM_KEY]\nafter\n');
    for (const chunks of splits(whole)) {
      const stream = withKey.stream();
      const out = Buffer.concat([...chunks.map((c) => stream.push(c)), stream.end()]);
      expect(out.toString(), `cut at ${chunks[0]!.length}`).toBe(expected.toString());
    }
  });
});
