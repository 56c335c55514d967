// The MCP doors through the official SDK client: /mcp over streamable HTTP and `dirledger mcp` over stdio,
// each with a token: tools/list lists only what the token may call, and `dirledger mcp` refuses to start without one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintWithRootKey } from '../../src/auth/tokens.ts';
import { openDatabase } from '../../src/db/client.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds, seedPgliteFolder } from '../helpers/database.ts';
import { childFlags, cliBin, dirledgerEnv, repoRoot } from '../helpers/process.ts';
import { boundaryPair, eventsOf } from './door-helpers.ts';

const echoSchema = { type: 'object', properties: { text: { type: 'string', examples: ['hello'] } }, required: ['text'] };

async function httpClient(t: TestApp, token = t.token): Promise<Client> {
  const client = new Client({ name: 'dirledger-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', t.origin), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** A fresh DATA_DIR with its own root key, and a minter for tokens that key signs (as the first start would print). */
async function keyedDataDir(): Promise<{ dataDir: string; mint(...caveats: string[]): string }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-stdio-'));
  const key = randomBytes(32).toString('hex');
  await writeFile(path.join(dataDir, 'root.key'), `${key}\n`, { mode: 0o600 });
  return { dataDir, mint: (...caveats) => mintWithRootKey(Buffer.from(key, 'hex'), caveats) };
}

/** Runs `dirledger mcp` in process with no token until it exits. */
function stdioExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...childFlags, cliBin, 'mcp'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', XDG_CONFIG_HOME: os.tmpdir(), ...dirledgerEnv(), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

function stdioClient(env: Record<string, string>): { client: Client; connect(): Promise<void>; stderr(): string } {
  const client = new Client({ name: 'dirledger-test', version: '1.0.0' });
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...childFlags, cliBin, 'mcp'],
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', XDG_CONFIG_HOME: os.tmpdir(), ...dirledgerEnv(), ...env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { client, connect: () => client.connect(transport), stderr: () => stderr };
}

describe.each(databaseKinds)('MCP doors on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('lists every runnable tool with its args schema, and find; leaves out rows that cannot run', async () => {
    const client = await httpClient(t);
    try {
      const { tools, nextCursor } = await client.listTools();
      expect(nextCursor).toBeUndefined();
      const names = tools.map((tool) => tool.name);
      expect(names[0]).toBe('find');
      expect(names).toEqual(expect.arrayContaining(['ECHO', 'CLOCK', 'CLOCK_THEN_ECHO', 'MCP_ECHO', 'HTTPBIN_ANYTHING']));
      expect(names).not.toContain('WEATHER_NOW'); // its secret is unbound
      const echo = tools.find((tool) => tool.name === 'ECHO')!;
      expect(echo.inputSchema).toEqual(echoSchema);
      expect(echo.description).toMatch(/Answers with the arguments/);
      const clock = tools.find((tool) => tool.name === 'CLOCK')!;
      expect(clock.inputSchema).toEqual({ type: 'object', properties: {} });
    } finally {
      await client.close();
    }
  });

  it('tools/list lists only the tools a scoped token may call (and find); tools/call of another is refused by the runner', async () => {
    const client = await httpClient(t, t.mint('tools = ECHO,CLOCK'));
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['find', 'ECHO', 'CLOCK']);
      const other = await client.callTool({ name: 'MCP_ECHO', arguments: { text: 'x' } });
      expect(other.isError).toBe(true);
      expect((other.content as any)[0].text).toBe('FORBIDDEN: This token may not call "MCP_ECHO".');
    } finally {
      await client.close();
    }
    const none = await httpClient(t, t.mint('powers = ingest'));
    try {
      expect((await none.listTools()).tools.map((tool) => tool.name)).toEqual(['find']);
    } finally {
      await none.close();
    }
  });

  it('refuses a request without a token (401) and records the refusal at door MCP', async () => {
    const response = await fetch(`${t.origin}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-dirledger-action': `mcp-no-token-${kind}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as any).error).toEqual({ code: 'UNAUTHENTICATED', message: 'Missing or invalid credential.' });
    await t.app.services.writer.flush();
    const refusal = await t.app.services.db.prisma.ledgerEvent.findFirst({ where: { actionId: `mcp-no-token-${kind}`, kind: 'REFUSAL' } });
    expect(refusal).toMatchObject({ status: 'REFUSED', metadata: { door: 'MCP', limit: 'credential' } });
  });

  it('tools/call dispatches through the runner, and the HTTP exchange is recorded (request IN, answer OUT)', async () => {
    const client = await httpClient(t);
    try {
      const result = await client.callTool({ name: 'ECHO', arguments: { text: 'over mcp http' } });
      expect(result.isError).toBeFalsy();
      const structured = result.structuredContent as any;
      expect(structured).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'over mcp http' } });
      expect(JSON.parse((result.content as any)[0].text)).toEqual({ text: 'over mcp http' });
      const events = await eventsOf(t, structured.actionId);
      const { request, answer } = boundaryPair(events);
      expect(request).toMatchObject({ tool: 'ECHO', metadata: { door: 'MCP' } });
      expect(answer).toMatchObject({ status: '200', metadata: { door: 'MCP' } });
    } finally {
      await client.close();
    }
  });

  it('a refusal is an MCP tool error naming the field; an unknown tool is a protocol error (-32602)', async () => {
    const client = await httpClient(t);
    try {
      const missing = await client.callTool({ name: 'ECHO', arguments: {} });
      expect(missing.isError).toBe(true);
      expect((missing.content as any)[0].text).toMatch(/text/);
      await expect(client.callTool({ name: 'NO_SUCH_TOOL', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });

  it('find answers exactly what GET /api/directory/resolve answers', async () => {
    const client = await httpClient(t);
    try {
      for (const query of ['echo', 'what time is it', 'send an imessge', 'tiktok']) {
        const viaMcp = await client.callTool({ name: 'find', arguments: { query, limit: 5 } });
        const viaHttp = await (await fetch(`${t.origin}/api/directory/resolve?q=${encodeURIComponent(query)}&limit=5`, { headers: t.auth })).json();
        expect(viaMcp.structuredContent).toEqual(viaHttp);
        expect(JSON.parse((viaMcp.content as any)[0].text)).toEqual(viaHttp);
      }
      const bad = await client.callTool({ name: 'find', arguments: { query: 'echo', limit: 'many' } });
      expect(bad.isError).toBe(true);
      expect((bad.content as any)[0].text).toMatch(/^BAD_INPUT: .*limit: expected number, got "many"/);
    } finally {
      await client.close();
    }
  });

  it('records the invocation headers, and refuses a cursor it did not give', async () => {
    const client = new Client({ name: 'dirledger-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', t.origin), {
        requestInit: { headers: { 'x-dirledger-session': 'mcp-session', 'x-dirledger-agent': 'tester', ...t.auth } },
      }),
    );
    try {
      const result = await client.callTool({ name: 'ECHO', arguments: { text: 'with a session' } });
      const actionId = (result.structuredContent as any).actionId;
      await eventsOf(t, actionId);
      const events = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId } });
      expect(events.length).toBeGreaterThanOrEqual(3);
      expect(events.every((e) => e.session === 'mcp-session' && e.agent === 'tester')).toBe(true);
      await expect(client.listTools({ cursor: 'bm90LW91cnM' })).rejects.toThrow(/Invalid cursor: expected a nextCursor from tools\/list/);
    } finally {
      await client.close();
    }
  });

  it('a lone tools/call without initialize is answered (stateless); GET and DELETE are 405', async () => {
    const response = await fetch(`${t.origin}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...t.auth },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ECHO', arguments: { text: 'lone' } } }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.id).toBe(7);
    expect(body.result.structuredContent).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'lone' } });
    for (const method of ['GET', 'DELETE']) {
      const other = await fetch(`${t.origin}/mcp`, { method, headers: { accept: 'text/event-stream', ...t.auth } });
      expect(other.status).toBe(405);
      expect(other.headers.get('allow')).toBe('POST');
    }
  });

  it('`dirledger mcp` with DIRLEDGER_URL relays stdio to this server with DIRLEDGER_TOKEN: the server runs and records the call', async () => {
    const { client, connect, stderr } = stdioClient({ DIRLEDGER_URL: t.origin, DIRLEDGER_TOKEN: t.token });
    await connect().catch((error) => {
      throw new Error(`${error.message}\n${stderr()}`);
    });
    try {
      const { tools } = await client.listTools();
      expect(tools.find((tool) => tool.name === 'ECHO')?.inputSchema).toEqual(echoSchema);
      const result = await client.callTool({ name: 'ECHO', arguments: { text: 'over stdio relay' } });
      const structured = result.structuredContent as any;
      expect(structured).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'over stdio relay' } });
      const { request, answer } = boundaryPair(await eventsOf(t, structured.actionId));
      expect(request).toMatchObject({ tool: 'ECHO', metadata: { door: 'MCP' } });
      expect(answer).toBeDefined();
    } finally {
      await client.close();
    }
  });

  it('`dirledger mcp` relaying without a token: the server refuses (401) and the client is told so', async () => {
    const { client, connect, stderr } = stdioClient({ DIRLEDGER_URL: t.origin });
    await expect(connect()).rejects.toThrow(/UNAUTHENTICATED/);
    expect(stderr()).toContain('Missing or invalid credential.');
    await client.close();
  });
});

describe('the /mcp body limit', () => {
  it('a body over PAYLOAD_MAX_BYTES is answered 413 (JSON-RPC error) and recorded as MISSING, unread', async () => {
    const t = await startTestApp('pglite', { PAYLOAD_MAX_BYTES: '1024', INLINE_MAX_BYTES: '1024' });
    try {
      const response = await fetch(`${t.origin}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-dirledger-action': 'mcp-too-large', ...t.auth },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ECHO', arguments: { text: 'x'.repeat(2000) } } }),
      });
      expect(response.status).toBe(413);
      expect(((await response.json()) as any).error.message).toMatch(/expected at most 1024 bytes/);
      const { request, answer } = boundaryPair(await eventsOf(t, 'mcp-too-large'));
      expect(request).toMatchObject({ payloadState: 'MISSING', metadata: { door: 'MCP' } });
      expect(answer).toMatchObject({ status: '413' });
    } finally {
      await t.stop();
    }
  });
});

describe('`dirledger mcp` in process (no URL): the cores on the configured database', () => {
  it.runIf(process.env.TEST_DATABASE_URL)(
    'on PostgreSQL: runs the tool and records MCP_STDIO request IN and answer OUT in that database',
    async () => {
      const { createTestDatabase } = await import('../helpers/database.ts');
      const db = await createTestDatabase('postgres');
      const { dataDir, mint } = await keyedDataDir();
      try {
        const { client, connect, stderr } = stdioClient({ DATABASE_URL: db.url!, DATA_DIR: dataDir, DIRLEDGER_TOKEN: mint() });
        await connect().catch((error) => {
          throw new Error(`${error.message}\n${stderr()}`);
        });
        const result = await client.callTool({ name: 'ECHO', arguments: { text: 'in process' } });
        const structured = result.structuredContent as any;
        expect(structured).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'in process' } });
        await client.close();
        const events = await db.prisma.ledgerEvent.findMany({ where: { actionId: structured.actionId }, orderBy: { position: 'asc' } });
        expect(events.find((e) => e.kind === 'REQUEST' && e.direction === 'IN')).toMatchObject({ tool: 'ECHO', metadata: { door: 'MCP_STDIO' } });
        expect(events.find((e) => e.kind === 'RESPONSE' && e.direction === 'OUT')).toMatchObject({ tool: 'ECHO', status: '200' });
      } finally {
        await db.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );

  it.runIf(process.env.TEST_DATABASE_URL)(
    'on PostgreSQL: without DIRLEDGER_TOKEN it records the refusal, says why on stderr and exits 4',
    async () => {
      const { createTestDatabase } = await import('../helpers/database.ts');
      const db = await createTestDatabase('postgres');
      const { dataDir } = await keyedDataDir();
      try {
        const { code, stderr } = await stdioExit({ DATABASE_URL: db.url!, DATA_DIR: dataDir });
        expect(code).toBe(4);
        expect(stderr).toContain('dirledger mcp: UNAUTHENTICATED: Missing or invalid credential. No token was sent');
        const refusals = await db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' } });
        expect(refusals).toHaveLength(1);
        expect(refusals[0]).toMatchObject({
          status: 'REFUSED',
          url: 'stdio:dirledger mcp',
          metadata: { door: 'MCP_STDIO', limit: 'credential', reason: 'no credential was presented' },
        });
      } finally {
        await db.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );

  it('on PGlite: a token signed by another key is refused and recorded, and the process exits 4 without serving', async () => {
    const { dataDir } = await keyedDataDir();
    const other = await keyedDataDir();
    try {
      // A migrated folder (the suite's template): a new folder's first start is test/server/lifecycle.test.ts's.
      await seedPgliteFolder(path.join(dataDir, 'pglite'));
      const { code, stderr } = await stdioExit({ DATA_DIR: dataDir, DIRLEDGER_TOKEN: other.mint() });
      expect(code).toBe(4);
      expect(stderr).toContain('dirledger mcp: UNAUTHENTICATED: Missing or invalid credential.');
      expect(stderr).not.toContain('No token was sent');
      const db = await openDatabase({ dataDir: path.join(dataDir, 'pglite') });
      try {
        const refusals = await db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' } });
        expect(refusals.map((r) => r.metadata)).toEqual([
          expect.objectContaining({ door: 'MCP_STDIO', limit: 'credential', reason: 'the token was signed by another root key' }),
        ]);
      } finally {
        await db.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await rm(other.dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('on PGlite in DATA_DIR: under a `tools = ECHO` token it lists and runs ECHO only, and the events are in that database after the process ends', async () => {
    const { dataDir, mint } = await keyedDataDir();
    try {
      await seedPgliteFolder(path.join(dataDir, 'pglite'));
      const { client, connect, stderr } = stdioClient({ DATA_DIR: dataDir, DIRLEDGER_TOKEN: mint('tools = ECHO') });
      await connect().catch((error) => {
        throw new Error(`${error.message}\n${stderr()}`);
      });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['find', 'ECHO']);
      const clock = await client.callTool({ name: 'CLOCK', arguments: {} });
      expect(clock.isError).toBe(true);
      expect((clock.content as any)[0].text).toBe('FORBIDDEN: This token may not call "CLOCK".');
      const result = await client.callTool({ name: 'ECHO', arguments: { text: 'in process on pglite' } });
      const structured = result.structuredContent as any;
      expect(structured).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'in process on pglite' } });
      await client.close();
      const db = await openDatabase({ dataDir: path.join(dataDir, 'pglite') });
      try {
        const events = await db.prisma.ledgerEvent.findMany({ where: { actionId: structured.actionId } });
        expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(expect.arrayContaining(['REQUEST/IN', 'RESPONSE/OUT']));
      } finally {
        await db.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('`dirledger mcp` over stdio', () => {
  it('answers a line past PAYLOAD_MAX_BYTES without buffering it (a JSON-RPC error naming the size limit) and says why on stderr', async () => {
    // Relaying to a port nothing listens on: the bound is the stdio side's, reached before anything is sent.
    const child = spawn(process.execPath, [...childFlags, cliBin, 'mcp'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', DIRLEDGER_URL: 'http://127.0.0.1:9', XDG_CONFIG_HOME: os.tmpdir(), ...dirledgerEnv() },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stdin.on('error', () => {}); // EPIPE once it has stopped reading
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const mib = Buffer.alloc(1024 * 1024, 'x');
    for (let i = 0; i < 12 && child.exitCode === null; i++) {
      if (!child.stdin.write(mib)) await Promise.race([new Promise((resolve) => child.stdin.once('drain', resolve)), exited]);
    }
    child.stdin.end();
    await exited;
    expect(stderr).toContain('dirledger mcp: refused a message (size): Request too large: expected a JSON-RPC message of at most 8388608 bytes');
    expect(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([{ jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600, data: { limit: 'size', max: 8_388_608 } }) }]);
  });
});
