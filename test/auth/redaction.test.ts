// A bearer token is a credential: wherever it appears (header value, URL query, JSON body, bytes
// sent as base64 inside a JSON batch) it is stored as [DIRLEDGER_TOKEN] with the name kept, and no
// log line carries it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authority } from '../../src/auth/authority.ts';
import { mintWithRootKey } from '../../src/auth/tokens.ts';
import type { SqlExecutor } from '../../src/db/sql.ts';
import { SecretRedactor } from '../../src/secrets/redact.ts';
import { TOKEN_SECRET_NAME } from '../../src/secrets/tokens.ts';
import { databaseKinds } from '../helpers/database.ts';
import { batch, createTestLedger, event, type TestLedger } from '../helpers/ledger.ts';
import { rawSql } from '../helpers/sql.ts';

const noDatabase: SqlExecutor = {
  query: () => Promise.reject(new Error('minting must not query the database')),
  transaction: () => Promise.reject(new Error('minting must not query the database')),
};
const authority = new Authority({ rootKey: randomBytes(32), audience: 'dirledger', sql: noDatabase, record: () => {}, ratePerSecond: 0, rateBurst: 1 });
const admin = authority.mintToken();
const narrow = Authority.narrow(
  authority.mintToken(['tools = ECHO', 'uses <= 3']),
  Array.from({ length: 20 }, (_, i) => `agent = a${i}`),
);
const tokens = [admin, narrow];
const MARK = `[${TOKEN_SECRET_NAME}]`;
const API_KEY = 'sk-live-4f9Qz7Wb2Kx8';

/** Any stretch of any token that would let a reader rebuild it. */
function leaks(haystack: Buffer | string): string[] {
  const text = Buffer.isBuffer(haystack) ? haystack.toString('latin1') : haystack;
  return tokens.filter((t) => text.includes(t.slice(0, 24)) || text.includes(t.slice(-24)));
}

describe('SecretRedactor and tokens', () => {
  const redactor = new SecretRedactor({ API_KEY });

  it.each([
    ['an authorization header value', (t: string) => `Bearer ${t}`, `Bearer ${MARK}`],
    ['a URL query', (t: string) => `https://h.example/api/tools/ECHO?token=${t}&x=1`, `https://h.example/api/tools/ECHO?token=${MARK}&x=1`],
    ['a JSON body', (t: string) => JSON.stringify({ auth: { token: t }, list: [t, 'safe'] }), JSON.stringify({ auth: { token: MARK }, list: [MARK, 'safe'] })],
    ['padding after it', (t: string) => `${t}==;`, `${MARK}==;`],
    ['two in a row', (t: string) => `${t} ${t}`, `${MARK} ${MARK}`],
    ['the whole value', (t: string) => t, MARK],
  ])('text: %s', (_where, build, expected) => {
    for (const token of tokens) {
      const found = new Set<string>();
      expect(redactor.text(build(token), found)).toBe(expected);
      expect([...found]).toEqual([TOKEN_SECRET_NAME]);
    }
  });

  it('text: a fixed start alone, as short as a token run can be, is replaced; one character short of it is left', () => {
    const start = admin.slice(0, 16);
    const encoded = Buffer.from(admin).toString('base64').slice(0, 20);
    for (const run of [start, encoded]) {
      const found = new Set<string>();
      expect(redactor.text(run, found)).toBe(MARK);
      expect([...found]).toEqual([TOKEN_SECRET_NAME]);
      expect(redactor.text(run.slice(0, -1), new Set())).toBe(run.slice(0, -1));
    }
  });

  it('bytes: a raw HTTP request with the token in the query, a header and the body', () => {
    for (const token of tokens) {
      const raw = Buffer.from(
        `POST /api/tools/ECHO?token=${token}&a=1 HTTP/1.1\r\nauthorization: Bearer ${token}\r\nx-key: ${API_KEY}\r\n\r\n{"token":"${token}","bin":"\u0000\u00ff"}`,
        'latin1',
      );
      const found = new Set<string>();
      const out = redactor.bytes(raw, found);
      expect(out.toString('latin1')).toBe(
        `POST /api/tools/ECHO?token=${MARK}&a=1 HTTP/1.1\r\nauthorization: Bearer ${MARK}\r\nx-key: [API_KEY]\r\n\r\n{"token":"${MARK}","bin":"\u0000\u00ff"}`,
      );
      expect([...found].sort()).toEqual(['API_KEY', TOKEN_SECRET_NAME]);
      expect(leaks(out)).toEqual([]);
    }
  });

  it('json: header objects, arrays and keys', () => {
    const found = new Set<string>();
    const out = redactor.json(
      { authorization: `Bearer ${narrow}`, 'x-forwarded': ['safe', `t=${admin}`], [`x-${admin}`]: 'key in a name', n: 3, nil: null },
      found,
    );
    expect(out).toEqual({ authorization: `Bearer ${MARK}`, 'x-forwarded': ['safe', `t=${MARK}`], [`x-${MARK}`]: 'key in a name', n: 3, nil: null });
    expect([...found]).toEqual([TOKEN_SECRET_NAME]);
  });

  it('json: hands back the value itself when nothing is replaced, and a copy in the same key order (the input untouched) when something is', () => {
    const clean = { a: 'safe', list: [1, 'two', { deep: null }], n: 3 };
    const found = new Set<string>();
    expect(redactor.json(clean, found)).toBe(clean);
    expect(found.size).toBe(0);
    const input = { first: 'safe', list: ['x', `k=${API_KEY}`, { deep: 'y' }], [API_KEY]: 1, last: { keep: true } };
    const snapshot = structuredClone(input);
    const out = redactor.json(input, found);
    expect(Object.keys(out)).toEqual(['first', 'list', '[API_KEY]', 'last']);
    expect(out).toEqual({ first: 'safe', list: ['x', 'k=[API_KEY]', { deep: 'y' }], '[API_KEY]': 1, last: { keep: true } });
    expect(out.last).toBe(input.last);
    expect(input).toEqual(snapshot);
    expect([...found]).toEqual(['API_KEY']);
  });

  it('leaves everything else alone and reports nothing when there is no token', () => {
    const found = new Set<string>();
    const bytes = Buffer.from('AgEJ and dirledger and ZGlybGVkZ2Vy, but no token');
    expect(redactor.bytes(bytes, found)).toBe(bytes);
    expect(redactor.text('AgEJZGlybGVkZ2V', found)).toBe('AgEJZGlybGVkZ2V');
    expect(found.size).toBe(0);
  });
});

describe.each(databaseKinds)('tokens never reach a stored byte on %s', (kind) => {
  let t: TestLedger;
  const large = Buffer.from(`{"token":"${narrow}","pad":"${'z'.repeat(300_000)}"}`);
  beforeAll(async () => {
    t = await createTestLedger(kind, { secrets: { API_KEY } });
    await t.ledger.append(
      batch('token-redaction', [
        event('tok-url', { method: 'GET', url: `https://h.example/api/tools/ECHO?token=${admin}&x=1`, payload: { state: 'NONE' } }),
        event('tok-header', { headers: { authorization: `Bearer ${narrow}`, 'x-list': ['safe', admin] }, payload: { state: 'NONE' } }),
        event('tok-body', { payload: { state: 'COMPLETE', text: JSON.stringify({ token: admin, nested: { auth: `Bearer ${narrow}` } }) } }),
        event('tok-base64', { payload: { state: 'COMPLETE', base64: Buffer.from(`raw ${narrow} bytes \u0000 ${API_KEY}`).toString('base64') } }),
        event('tok-large', { payload: { state: 'COMPLETE', base64: large.toString('base64') } }),
        event('tok-metadata', { metadata: { note: `issued ${admin}`, deep: [1, { t: narrow }] }, payload: { state: 'NONE' } }),
        event('tok-none', { payload: { state: 'COMPLETE', text: 'nothing to hide' } }),
      ]),
    );
  });
  afterAll(async () => t?.stop());

  it('rows keep [DIRLEDGER_TOKEN] and name it; payload bytes, inline or in the object store, hold no token', async () => {
    const sql = await rawSql(t.db);
    try {
      const rows = await sql.query<{
        id: string;
        url: string | null;
        headers: unknown;
        metadata: unknown;
        redacted_secrets: string[];
        payload_sha256: string | null;
      }>(`SELECT id, url, headers, metadata, redacted_secrets, payload_sha256 FROM ledger_event WHERE id LIKE 'tok-%' ORDER BY id`);
      const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
      expect(Object.keys(byId).sort()).toEqual(['tok-base64', 'tok-body', 'tok-header', 'tok-large', 'tok-metadata', 'tok-none', 'tok-url']);
      expect(byId['tok-url']!.url).toBe(`https://h.example/api/tools/ECHO?token=${MARK}&x=1`);
      expect(byId['tok-header']!.headers).toEqual({ authorization: `Bearer ${MARK}`, 'x-list': ['safe', MARK] });
      expect(byId['tok-metadata']!.metadata).toEqual({ note: `issued ${MARK}`, deep: [1, { t: MARK }] });
      for (const id of ['tok-url', 'tok-header', 'tok-body', 'tok-large', 'tok-metadata']) expect(byId[id]!.redacted_secrets, id).toEqual([TOKEN_SECRET_NAME]);
      expect(byId['tok-base64']!.redacted_secrets).toEqual(['API_KEY', TOKEN_SECRET_NAME]);
      expect(byId['tok-none']!.redacted_secrets).toEqual([]);

      const body = await t.ledger.readBlob(byId['tok-body']!.payload_sha256!);
      expect(JSON.parse(body!.toString())).toEqual({ token: MARK, nested: { auth: `Bearer ${MARK}` } });
      expect((await t.ledger.readBlob(byId['tok-base64']!.payload_sha256!))!.toString()).toBe(`raw ${MARK} bytes \u0000 [API_KEY]`);
      const big = await t.ledger.readBlob(byId['tok-large']!.payload_sha256!);
      expect(big!.subarray(0, 40).toString()).toBe(`{"token":"${MARK}","pad":"zzzz`);

      for (const row of rows) expect(leaks(JSON.stringify(row)), row.id).toEqual([]);
      const files = await readdir(t.blobDir, { recursive: true, withFileTypes: true });
      const stored = files.filter((f) => f.isFile());
      expect(stored.length).toBeGreaterThan(0);
      for (const f of stored) expect(leaks(await readFile(path.join(f.parentPath, f.name))), f.name).toEqual([]);
    } finally {
      await sql.close();
    }
  });
});

describe('the logger', () => {
  /** Runs createLogger in a child process and returns what it wrote to the given stream. */
  function logLines(fd: 1 | 2): Promise<string> {
    const script = `
      import { createLogger } from './src/logger.ts';
      const { TOKEN: t, NARROW: n } = process.env;
      const logger = createLogger('info', { API_KEY: process.env.API_KEY }, ${fd});
      logger.info({ headers: { authorization: 'Bearer ' + t }, url: 'https://h.example/x?token=' + t, nested: { list: [n] } }, 'presented ' + n);
      logger.error({ err: new Error('refused token ' + t + ' with key ' + process.env.API_KEY) }, 'refusal');
      logger.warn({ ['k-' + t]: 1 }, 'a token in a key');
      logger.flush?.();
    `;
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        env: { ...process.env, TOKEN: admin, NARROW: narrow, API_KEY },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.stderr.on('data', (c: Buffer) => err.push(c));
      child.once('error', reject);
      child.once('exit', (code) => {
        const text = Buffer.concat(fd === 1 ? out : err).toString();
        if (code !== 0) reject(new Error(`the logging child exited with ${code}: ${Buffer.concat(err).toString()}`));
        else resolve(text);
      });
    });
  }

  it.each([1, 2] as const)('redacts tokens from every field, message and error written to fd %i', async (fd) => {
    const text = await logLines(fd);
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.msg)).toEqual([`presented ${MARK}`, 'refusal', 'a token in a key']);
    expect(lines[0]).toMatchObject({ url: `https://h.example/x?token=${MARK}`, nested: { list: [MARK] } });
    expect(lines[0]!.headers).toEqual({ authorization: '[REDACTED]' });
    expect((lines[1]!.err as { message: string }).message).toBe(`refused token ${MARK} with key [API_KEY]`);
    expect(lines[2]).toHaveProperty(`k-${MARK}`, 1);
    expect(leaks(text)).toEqual([]);
    expect(text).not.toContain(API_KEY);
  });
});

describe('a token base64-encoded inside other text', () => {
  const token = mintWithRootKey(randomBytes(32), ['tools = ECHO']);
  it.each(['', 'u:', 'us:', 'use:'])('is replaced whole at every byte alignment (prefix %j), in text and in bytes', (prefix) => {
    const encoded = Buffer.from(`${prefix}${token}`).toString('base64');
    const redactor = new SecretRedactor({});
    const found = new Set<string>();
    expect(redactor.text(`Authorization: Basic ${encoded}`, found)).toBe('Authorization: Basic [DIRLEDGER_TOKEN]');
    expect([...found]).toEqual(['DIRLEDGER_TOKEN']);
    const bytes = redactor.bytes(
      Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.from(` ${encoded.replaceAll('+', '-').replaceAll('/', '_')} `), Buffer.from([0xfe])]),
      new Set(),
    );
    expect(bytes).toEqual(Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.from(' [DIRLEDGER_TOKEN] '), Buffer.from([0xfe])]));
  });
});
