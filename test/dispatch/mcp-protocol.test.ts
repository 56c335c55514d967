// MCP to the letter of the 2025-11-25 spec, on both doors: protocol errors for an unknown tool and
// malformed params (-32602, one clear message), parse errors (-32700) answered, a 401 that names its
// resource metadata (RFC 9728), a refused token ending the stdio relay with exit 4, nothing but
// protocol on stdout, and the names-only catalog (find + call, names as a resource).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { deepJson } from '../helpers/hostile.ts';
import { childFlags, cliBin, repoRoot } from '../helpers/process.ts';

/** Names no column can hold or no row has: NUL, a lone surrogate, 100 KiB, a canary-like secret. */
const hostileStrings = ['A\u0000B', 'X\ud800', 'Y'.repeat(100_000), 'sk-canary-0123456789abcdef'];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp('pglite');
});
afterAll(async () => {
  await t?.stop();
});

const rpc = (body: string | Uint8Array<ArrayBuffer>, path = '/mcp', headers: Record<string, string> = t.auth) =>
  fetch(`${t.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });

async function client(path = '/mcp'): Promise<Client> {
  const c = new Client({ name: 'dirledger-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(path, t.origin), { requestInit: { headers: t.auth } }));
  return c;
}

/** Runs `dirledger mcp` relaying to the test app, writes `lines` and closes stdin; every stdout line parsed. */
function stdio(lines: (string | Buffer)[], env: Record<string, string> = {}, args: string[] = []) {
  const child = spawn(process.execPath, [...childFlags, cliBin, 'mcp', ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', XDG_CONFIG_HOME: os.tmpdir(), DIRLEDGER_URL: t.origin, DIRLEDGER_TOKEN: t.token, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.on('error', () => {});
  for (const line of lines) child.stdin.write(line);
  child.stdin.end();
  return new Promise<{ code: number | null; answers: any[]; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) =>
      resolve({
        code,
        stdout,
        stderr,
        answers: stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      }),
    ),
  );
}

describe('MCP over HTTP: protocol errors', () => {
  it('an unknown tool is JSON-RPC -32602 with "did you mean", once-prefixed through the SDK client', async () => {
    const raw = (await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ECH0', arguments: {} } }))).json()) as any;
    expect(raw).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32602, message: 'Unknown tool: No Directory row is called "ECH0". Did you mean "ECHO"?' },
    });
    const dispatched = await fetch(`${t.origin}/api/dispatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.auth },
      body: JSON.stringify({ tool: 'ECH0', args: {} }),
    });
    expect(dispatched.status).toBe(404);
    expect(((await dispatched.json()) as any).error).toEqual({ code: 'TOOL_NOT_FOUND', message: 'No Directory row is called "ECH0". Did you mean "ECHO"?' });
    const c = await client();
    try {
      const error = await c.callTool({ name: 'NO_SUCH_TOOL_AT_ALL', arguments: {} }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32602);
      expect((error as McpError).message).toMatch(/^MCP error -32602: Unknown tool: No Directory row is called "NO_SUCH_TOOL_AT_ALL"\./);
      const cursor = await c.listTools({ cursor: 'bm90LW91cnM' }).catch((e: unknown) => e);
      expect((cursor as McpError).message).toBe('MCP error -32602: Invalid cursor: expected a nextCursor from tools/list, got "bm90LW91cnM".');
    } finally {
      await c.close();
    }
  });

  it('malformed tools/call params are -32602 naming the field, never -32603 or a schema dump', async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: 42 }, /^Invalid params of tools\/call: params\.name: expected string, got 42\.$/],
      [{ arguments: {} }, /params\.name: expected string, got nothing/],
      [{ name: 'ECHO', arguments: 'text' }, /params\.arguments: expected record, got "text"/],
    ];
    for (const [params, message] of cases) {
      const response = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'tools/call', params }));
      const body = (await response.json()) as any;
      expect(body.id).toBe('p');
      expect(body.error.code).toBe(-32602);
      expect(body.error.message).toMatch(message);
      expect(body.error.message).not.toMatch(/"code":|invalid_type/);
    }
  });

  it('garbage is -32700, a non-JSON-RPC value -32600, hostile bytes and deep JSON a 4xx', async () => {
    const garbage = await rpc('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as any).error.code).toBe(-32700);
    const notRpc = await rpc(JSON.stringify({ hello: 'world' }));
    expect(((await notRpc.json()) as any).error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/^Invalid Request: expected one JSON-RPC 2.0 request, notification or response/),
    });
    expect(((await (await rpc(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]))).json()) as any).error.code).toBe(-32700);
    expect(((await (await rpc(deepJson(10_000))).json()) as any).error.code).toBe(-32600);
    for (const name of hostileStrings) {
      const response = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name, arguments: {} } }));
      expect(response.status).toBeLessThan(500);
      const body = (await response.json()) as any;
      expect(body.error?.code ?? body.result?.isError).toBeTruthy();
    }
  });

  it('a 401 carries WWW-Authenticate with resource_metadata (RFC 9728), and the metadata is served without a token', async () => {
    const refused = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), '/mcp', {});
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get('www-authenticate')!;
    expect(challenge).toBe(`Bearer realm="dirledger", resource_metadata="${t.origin}/.well-known/oauth-protected-resource/mcp"`);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    const metadata = await fetch(metadataUrl);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: `${t.origin}/mcp`, bearer_methods_supported: ['header'], authorization_servers: [] });
    const api = await fetch(`${t.origin}/api/directory`);
    expect(api.headers.get('www-authenticate')).toContain(`resource_metadata="${t.origin}/.well-known/oauth-protected-resource"`);
    expect(((await (await fetch(`${t.origin}/.well-known/oauth-protected-resource`)).json()) as any).resource).toBe(t.origin);
    expect((await fetch(`${t.origin}/.well-known/oauth-protected-resource/%00`)).status).toBe(404);
  });
});

describe('the names-only catalog (?catalog=names, MCP_CATALOG=names, --catalog names)', () => {
  it('lists only find and call; the names are a resource; call runs a row by name', async () => {
    const c = await client('/mcp?catalog=names');
    try {
      expect((await c.listTools()).tools.map((tool) => tool.name)).toEqual(['find', 'call']);
      const { resources } = await c.listResources();
      expect(resources.map((r) => r.uri)).toEqual(['dirledger://directory/names']);
      const read = await c.readResource({ uri: 'dirledger://directory/names' });
      const names = (read.contents[0] as { text: string }).text.split('\n');
      expect(names).toEqual(expect.arrayContaining(['ECHO', 'CLOCK']));
      expect(names.every((n) => /^[A-Z0-9_]*$/.test(n))).toBe(true);
      const ran = await c.callTool({ name: 'call', arguments: { name: 'ECHO', args: { text: 'by name' } } });
      expect(ran.structuredContent).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'by name' } });
      const bad = await c.callTool({ name: 'call', arguments: { args: {} } });
      expect(bad.isError).toBe(true);
      expect((bad.content as any)[0].text).toMatch(/^BAD_INPUT: Invalid call arguments: name: expected string, got nothing/);
      const unknown = await c.callTool({ name: 'call', arguments: { name: 'ECH0' } }).catch((e: unknown) => e);
      expect((unknown as McpError).code).toBe(-32602);
      const missing = await c.readResource({ uri: 'dirledger://nothing' }).catch((e: unknown) => e);
      expect((missing as McpError).code).toBe(-32002);
    } finally {
      await c.close();
    }
  });
});

describe('`dirledger mcp` relaying over stdio', () => {
  it('answers garbage lines with -32700, bad params with -32602, and writes nothing but JSON-RPC on stdout', async () => {
    const { code, answers, stdout } = await stdio([
      'this is not json\n',
      Buffer.from([0xff, 0xfe, 0x0a]),
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 7 } })}\n`,
      `${deepJson(10_000)}\n`,
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ECHO', arguments: { text: 'after garbage' } } })}\n`,
    ]);
    expect(code).toBe(0);
    expect(stdout.endsWith('\n')).toBe(true);
    expect(answers.map((a) => a.error?.code ?? 'ok')).toEqual([-32700, -32700, -32602, -32600, 'ok']);
    expect(answers[0]).toMatchObject({ jsonrpc: '2.0', id: null });
    expect(answers[2]).toMatchObject({ id: 1, error: { message: 'Invalid params of tools/call: params.name: expected string, got 7.' } });
    expect(answers[4].result.structuredContent).toMatchObject({ outcome: 'OK', output: { text: 'after garbage' } });
  });

  it('a refused token: the request is told why, stderr says so, and the process exits 4 (as in process)', async () => {
    const { code, answers, stderr } = await stdio(
      [`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`, `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`],
      { DIRLEDGER_TOKEN: 'not-a-token' },
    );
    expect(code).toBe(4);
    expect(answers[0]).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'UNAUTHENTICATED: Missing or invalid credential.' } });
    expect(stderr).toContain('dirledger mcp: UNAUTHENTICATED: Missing or invalid credential.');
  });

  it('--catalog names relays the names-only catalog', async () => {
    const { answers } = await stdio([`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`], {}, ['--catalog', 'names']);
    expect(answers[0].result.tools.map((tool: { name: string }) => tool.name)).toEqual(['find', 'call']);
  });

  it('run by npm without -s (its banner on stdout) it refuses to start and says how to run it', async () => {
    const { code, stdout, stderr } = await stdio([], { npm_lifecycle_event: 'dirledger', npm_config_loglevel: 'notice' });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('npm run -s dirledger -- mcp');
  });
});
