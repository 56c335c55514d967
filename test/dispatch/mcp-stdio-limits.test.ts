// `dirledger mcp` in process under hostile input, written to its stdin as raw bytes: every line that
// breaks a limit of the MCP doors (size, UTF-8, JSON depth, JSON syntax, message shape, params, the
// token's rate) gets a JSON-RPC error naming the limit, and the session goes on to answer the next.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintWithRootKey } from '../../src/auth/tokens.ts';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { createTestDatabase, seedPgliteFolder } from '../helpers/database.ts';
import { childFlags, cliBin, dirledgerEnv, repoRoot } from '../helpers/process.ts';

type Answer = { jsonrpc: '2.0'; id: string | number | null; result?: any; error?: { code: number; message: string; data?: any } };

/** `dirledger mcp` on a fresh keyed DATA_DIR, spoken to line by line. */
class RawStdio {
  readonly answers: Answer[] = [];
  stderr = '';
  private readonly child: ChildProcessWithoutNullStreams;
  private pending = '';
  private waiters: (() => void)[] = [];
  readonly exited: Promise<number | null>;
  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, [...childFlags, cliBin, 'mcp'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', XDG_CONFIG_HOME: os.tmpdir(), ...dirledgerEnv(), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdin.on('error', () => {});
    this.child.stderr.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.child.stdout.on('data', (c: Buffer) => {
      this.pending += c.toString();
      for (let nl = this.pending.indexOf('\n'); nl !== -1; nl = this.pending.indexOf('\n')) {
        this.answers.push(JSON.parse(this.pending.slice(0, nl)) as Answer);
        this.pending = this.pending.slice(nl + 1);
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.exited = new Promise((resolve) => this.child.on('exit', resolve));
  }

  write(bytes: string | Buffer): void {
    this.child.stdin.write(bytes);
  }

  /** The `count`th answer from now on. */
  async next(count = 1): Promise<Answer> {
    const want = this.answers.length + count;
    const deadline = Date.now() + 110_000;
    while (this.answers.length < want) {
      if (Date.now() > deadline) throw new Error(`no answer within 110 s; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 500);
      });
    }
    return this.answers[want - 1]!;
  }

  async request(id: number, method: string, params: unknown = {}): Promise<Answer> {
    this.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return this.next();
  }

  async end(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }
}

type KeyedDataDir = {
  token: string;
  /** DATA_DIR, and DATABASE_URL when the database is PostgreSQL. */
  env: Record<string, string>;
  /** The process's database, opened here once it has let go of it. */
  open(): Promise<Database>;
  remove(): Promise<void>;
};

/**
 * A data folder with its root key and a migrated database: PostgreSQL when the suite has one (these tests are about
 * the stdio door, and a child on PostgreSQL starts on ~4 s less CPU than on PGlite), else a PGlite folder (the
 * suite's template: a new folder's first start is test/server/lifecycle.test.ts's).
 */
async function keyedDataDir(): Promise<KeyedDataDir> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-stdio-limits-'));
  const key = randomBytes(32).toString('hex');
  await writeFile(path.join(dataDir, 'root.key'), `${key}\n`, { mode: 0o600 });
  const token = mintWithRootKey(Buffer.from(key, 'hex'), []);
  const removeDir = () => rm(dataDir, { recursive: true, force: true });
  if (process.env.TEST_DATABASE_URL) {
    const db = await createTestDatabase('postgres');
    return {
      token,
      env: { DATA_DIR: dataDir, DATABASE_URL: db.url! },
      open: async () => ({ ...db, close: async () => {} }),
      remove: async () => {
        await db.drop();
        await removeDir();
      },
    };
  }
  await seedPgliteFolder(path.join(dataDir, 'pglite'));
  return { token, env: { DATA_DIR: dataDir }, open: () => openDatabase({ dataDir: path.join(dataDir, 'pglite') }), remove: removeDir };
}

const initialize = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
const MAX = 65_536;

describe('`dirledger mcp` in process, hostile input on stdin', () => {
  let dir: KeyedDataDir;
  let mcp: RawStdio;
  beforeAll(async () => {
    dir = await keyedDataDir();
    mcp = new RawStdio({ ...dir.env, DIRLEDGER_TOKEN: dir.token, PAYLOAD_MAX_BYTES: String(MAX), AUTH_RATE_PER_SECOND: '0' });
    const init = await mcp.request(0, 'initialize', initialize);
    expect(init.result?.serverInfo?.name, mcp.stderr).toBe('dirledger');
    mcp.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  }, 120_000);
  afterAll(async () => {
    await mcp?.end();
    await dir?.remove();
  });

  it('a line past the size limit is answered -32600 naming the limit at once, its rest is dropped unbuffered, and the next message is served', async () => {
    const huge = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ECHO","arguments":{"text":"${'x'.repeat(4 * MAX)}`;
    mcp.write(huge);
    const answer = await mcp.next();
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: `Request too large: expected a JSON-RPC message of at most ${MAX} bytes, got more bytes.`,
        data: { limit: 'size', max: MAX },
      },
    });
    mcp.write(`${'y'.repeat(3 * MAX)}"}}}\n`);
    const echoed = await mcp.request(2, 'tools/call', { name: 'ECHO', arguments: { text: 'after the huge line' } });
    expect(echoed.result?.structuredContent).toMatchObject({ outcome: 'OK', output: { text: 'after the huge line' } });
    expect(mcp.stderr).toContain('refused a message (size)');
  });

  it('10,000-deep JSON is answered -32600 naming the depth limit, before it is parsed', async () => {
    const deep = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ECHO","arguments":{"text":${'['.repeat(10_000)}${']'.repeat(10_000)}}}}\n`;
    mcp.write(deep);
    expect(await mcp.next()).toMatchObject({ id: null, error: { code: -32600, data: { limit: 'depth', max: 512 } } });
    expect((await mcp.request(4, 'ping')).result).toEqual({});
  });

  it('bytes that are not UTF-8 are answered -32700 naming UTF-8', async () => {
    mcp.write(
      Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}}\n')]),
    );
    expect(await mcp.next()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: expected JSON in UTF-8, got bytes that are not valid UTF-8.', data: { limit: 'utf8' } },
    });
  });

  it('a raw NUL byte inside a string is not JSON: -32700 naming the syntax error', async () => {
    mcp.write('{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"a\u0000b"}}\n');
    const answer = await mcp.next();
    expect(answer).toMatchObject({ id: null, error: { code: -32700, data: { limit: 'json' } } });
    expect(answer.error!.message).toMatch(/^Parse error: expected JSON, got invalid JSON \(/);
  });

  it('an escaped NUL or a lone surrogate in a tool name is refused by the runner as BAD_INPUT, as on the HTTP door', async () => {
    for (const [id, name] of [
      [7, 'EC\u0000HO'],
      [8, 'EC\ud800HO'],
    ] as const) {
      const answer = await mcp.request(id, 'tools/call', { name, arguments: {} });
      expect(answer.id).toBe(id);
      expect(answer.result?.isError, JSON.stringify(answer)).toBe(true);
      expect(answer.result?.content?.[0]?.text).toMatch(/^BAD_INPUT: /);
    }
  });

  it('a lone surrogate and a NUL in arguments are content: the tool runs and echoes them', async () => {
    const answer = await mcp.request(9, 'tools/call', { name: 'ECHO', arguments: { text: 'a\u0000b\udc00c' } });
    expect(answer.result?.structuredContent).toMatchObject({ outcome: 'OK' });
  });

  it('a message that is not JSON-RPC, and params the SDK refuses, are answered naming what was wrong', async () => {
    mcp.write('{"id":10,"method":"tools/list"}\n');
    expect(await mcp.next()).toMatchObject({ id: 10, error: { code: -32600, data: { limit: 'shape' } } });
    mcp.write('[{"jsonrpc":"2.0","id":11,"method":"ping"}]\n');
    expect((await mcp.next()).error).toMatchObject({ code: -32600, message: expect.stringContaining('a batch (not supported over stdio)') });
    const params = await mcp.request(12, 'tools/call', { name: 42 });
    expect(params).toMatchObject({ id: 12, error: { code: -32602, data: { limit: 'params' } } });
    expect(params.error!.message).toMatch(/^Invalid params of tools\/call: params\.name/);
    // Blank lines and CRLF endings are not messages of their own.
    mcp.write('\n\r\n{"jsonrpc":"2.0","id":13,"method":"ping"}\r\n');
    expect(await mcp.next()).toEqual({ jsonrpc: '2.0', id: 13, result: {} });
  });
});

describe('`dirledger mcp` in process, the token rate', () => {
  it('over AUTH_RATE_PER_SECOND a request is answered -32000 naming the rate limit with its retry-after, recorded as a REFUSAL, and later ones are served', async () => {
    const dir = await keyedDataDir();
    try {
      const mcp = new RawStdio({ ...dir.env, DIRLEDGER_TOKEN: dir.token, AUTH_RATE_PER_SECOND: '1', AUTH_RATE_BURST: '2' });
      expect((await mcp.request(0, 'initialize', initialize)).result?.serverInfo?.name, mcp.stderr).toBe('dirledger');
      expect((await mcp.request(1, 'ping')).result).toEqual({});
      const refused = await mcp.request(2, 'ping');
      expect(refused).toEqual({
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32000, message: 'Too many requests for this token; retry after 1 s.', data: { limit: 'rate', retryAfterSeconds: 1 } },
      });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect((await mcp.request(3, 'ping')).result).toEqual({});
      expect(await mcp.end()).toBe(0);
      const db = await dir.open();
      try {
        const refusals = await db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' } });
        expect(refusals.map((r) => r.metadata)).toEqual([expect.objectContaining({ door: 'MCP_STDIO', limit: 'rate' })]);
      } finally {
        await db.close();
      }
    } finally {
      await dir.remove();
    }
  }, 120_000);
});
