// Every rendered form of the demo ECHO tool, run as written, through the real transport: curl for the
// web calls, sh for command lines, node/python3 for the snippets, the MCP SDK client for the MCP
// forms. Each must reach ECHO with its own args (the echo proves they arrived unchanged) and be
// recorded at the boundary (request IN and answer OUT under the answer's action id). A form whose
// door or toolchain is missing is skipped with the reason printed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractForms, renderForms, type ContractForm, type RenderedForm } from '../../src/directory/forms.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { cliBin, repoRoot } from '../helpers/process.ts';
import { boundaryPair, eventsOf } from './door-helpers.ts';

type Ran = { code: number | null; stdout: string; stderr: string };

function run(command: string, args: string[], options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? repoRoot, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const has = (program: string) => spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;

/** curl's argument vector for an HTTP contract, exactly as the contract states it. */
function curlArgv(json: { method: string; url: string; headers?: Record<string, string>; body?: unknown }): string[] {
  const argv = ['-sS', '-X', json.method, json.url];
  for (const [name, value] of Object.entries(json.headers ?? {})) argv.push('-H', `${name}: ${value}`);
  if (json.body !== undefined) argv.push('--data-binary', JSON.stringify(json.body));
  return argv;
}

/** The boundary door each form comes in through. */
const expectedDoor: Record<Exclude<ContractForm, 'UPSTREAM' | 'IN_PROCESS'>, string> = {
  REST: 'REST',
  URL: 'URL',
  DISPATCH: 'DISPATCH',
  DRY_RUN: 'DISPATCH',
  GRAPHQL_HTTP: 'GRAPHQL',
  GRAPHQL_WS: 'GRAPHQL_WS',
  GRAPHQL_SSE: 'GRAPHQL_SSE',
  MCP_HTTP: 'MCP',
  MCP_STDIO: 'MCP',
  MCP_CLIENT_CONFIG: 'MCP',
  CURL: 'REST',
  CLI: 'DISPATCH',
  HTTPIE: 'REST',
  WEBHOOK: 'WEBHOOK',
  JAVASCRIPT: 'DISPATCH',
  TYPESCRIPT: 'GRAPHQL',
  PYTHON: 'DISPATCH',
  GO: 'DISPATCH',
  SDK: 'DISPATCH',
  NPX: 'DISPATCH',
  SSH: 'DISPATCH',
  APPLE_SHORTCUT: 'REST',
  WEBSOCKET: 'WEBSOCKET',
  SSE: 'SSE',
  POWERSHELL: 'REST',
};

const actionIdOf = (text: string) => /["']?actionId["']?\s*:\s*["']([^"']+)["']/.exec(text)?.[1];

describe.each(databaseKinds)('every form of ECHO, run as written, on %s', (kind) => {
  let t: TestApp;
  let work: string;
  let binDir: string;
  const missingDoors = new Map<string, string>();
  const marker = (form: ContractForm) => `hello via ${form}`;
  const formOf = (form: ContractForm): RenderedForm => renderForms({ tool: 'ECHO', args: { text: marker(form) } }, { baseUrl: t.origin }, [form])[0]!;
  const env = () => ({ PATH: `${binDir}${path.delimiter}${process.env.PATH}`, LOG_LEVEL: 'warn' });

  beforeAll(async () => {
    t = await startTestApp(kind);
    work = await mkdtemp(path.join(repoRoot, 'test/dispatch/.forms-'));
    binDir = path.join(work, 'bin');
    await mkdir(binDir);
    await symlink(cliBin, path.join(binDir, 'dirledger'));
    // A door that is not built yet answers the app's own 404 "No route".
    const probes: [string, RequestInit, string][] = [
      ['/api/tools/ECHO', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"probe"}' }, 'POST /api/tools/:name'],
      ['/api/tools/ECHO?text=probe', { method: 'GET' }, 'GET /api/tools/:name'],
      ['/api/dispatch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"tool":"ECHO","args":{"text":"probe"}}' }, 'POST /api/dispatch'],
      ['/hooks/ECHO', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"probe"}' }, 'POST /hooks/:name'],
    ];
    for (const [url, init, door] of probes) {
      const response = await fetch(`${t.origin}${url}`, init);
      const text = await response.text();
      if (response.status === 404 && text.includes('No route')) missingDoors.set(door, 'not built yet');
    }
    const mutation = await t.gql<{ __type: { fields: { name: string }[] } | null }>('{ __type(name: "Mutation") { fields { name } } }');
    if (!mutation.data?.__type?.fields.some((f) => f.name === 'dispatch')) missingDoors.set('mutation dispatch', 'not in the schema yet');
  });
  afterAll(async () => {
    await t?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** The door the form needs, if it is missing: the reason to skip. */
  function missing(form: ContractForm): string | undefined {
    const door = formOf(form).door;
    // SSE shares the path of POST /api/dispatch but is its own door (accept: text/event-stream).
    for (const [name, why] of missingDoors) if (door.includes(name) && form !== 'SSE') return `${name} ${why}`;
    return undefined;
  }

  /** Asserts the answer echoes this form's args and the boundary recorded the exchange under the door. */
  async function assertReachedAndRecorded(form: Exclude<ContractForm, 'UPSTREAM' | 'IN_PROCESS'>, output: string, expected = marker(form)) {
    expect(output).toContain(expected);
    const actionId = actionIdOf(output);
    expect(actionId, `no actionId in the answer of ${form}:\n${output}`).toBeTruthy();
    const events = await eventsOf(t, actionId!);
    const { request, answer } = boundaryPair(events);
    expect(request, `${form}: request IN`).toMatchObject({ metadata: { door: expectedDoor[form] } });
    expect(answer, `${form}: answer OUT`).toMatchObject({ metadata: { door: expectedDoor[form] } });
    // The runner's own events name the tool it ran.
    expect(events.some((e) => e.tool !== null && e.metadata?.capture !== 'boundary')).toBe(true);
  }

  const skipWith = (ctx: { skip: (note?: string) => void }, form: ContractForm, reason: string) => {
    process.stdout.write(`[forms] ${form} skipped: ${reason}\n`);
    ctx.skip(reason);
  };

  it('renders every form for ECHO (no upstream)', () => {
    const forms = renderForms({ tool: 'ECHO', args: { text: 'x' } }, { baseUrl: t.origin }).map((f) => f.form);
    expect(forms).toEqual(ContractForms.filter((f) => f !== 'UPSTREAM'));
  });

  // The web-call forms: curl with the contract's method, URL, headers and body.
  for (const form of ['REST', 'URL', 'DISPATCH', 'WEBHOOK', 'APPLE_SHORTCUT', 'GRAPHQL_HTTP', 'GRAPHQL_SSE', 'SSE'] as const) {
    it(`${form}: curl with the contract`, async (ctx) => {
      const why = missing(form);
      if (why) return skipWith(ctx, form, why);
      const rendered = formOf(form);
      const ran = await run('curl', curlArgv(rendered.json as never));
      expect(ran.code, ran.stderr).toBe(0);
      await assertReachedAndRecorded(form, ran.stdout);
    });
  }

  it('DRY_RUN: curl with the contract renders the call and sends nothing', async (ctx) => {
    const why = missing('DRY_RUN');
    if (why) return skipWith(ctx, 'DRY_RUN', why);
    const ran = await run('curl', curlArgv(formOf('DRY_RUN').json as never));
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ tool: 'ECHO', outcome: 'DRY_RUN', dryRun: true });
    await assertReachedAndRecorded('DRY_RUN', ran.stdout);
  });

  // The command-line forms, pasted into a shell as written.
  for (const form of ['CURL', 'CLI', 'HTTPIE', 'NPX', 'SSH'] as const) {
    it(`${form}: sh -c with the command as written`, async (ctx) => {
      const command = (formOf(form).json as { command: string }).command;
      const program = command.split(' ')[0]!;
      if (form === 'HTTPIE' && !has('http')) return skipWith(ctx, form, 'HTTPie (`http`) is not installed on this machine');
      if (form === 'SSH') return skipWith(ctx, form, 'no SSH server to log in to on this machine (the form is `dirledger call` on the remote host, which the CLI test covers)');
      if (program !== 'dirledger' && program !== 'npx' && !has(program)) return skipWith(ctx, form, `${program} is not installed`);
      const why = missing(form);
      if (why) return skipWith(ctx, form, why);
      const ran = await run('sh', ['-c', command], { env: { ...env(), npm_config_offline: 'true' }, timeoutMs: 60_000 });
      if (form === 'NPX' && ran.code !== 0 && /ENOTCACHED|E404|ENOTFOUND|EAI_AGAIN/.test(ran.stderr)) {
        return skipWith(ctx, form, `npx could not resolve the dirledger package without the registry: ${ran.stderr.split('\n')[0]}`);
      }
      expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
      await assertReachedAndRecorded(form, ran.stdout);
    });
  }

  it('JAVASCRIPT: node runs the snippet', async (ctx) => {
    const why = missing('JAVASCRIPT');
    if (why) return skipWith(ctx, 'JAVASCRIPT', why);
    const file = path.join(work, 'javascript.mjs');
    await writeFile(file, formOf('JAVASCRIPT').text!);
    const ran = await run(process.execPath, [file]);
    expect(ran.code, ran.stderr).toBe(0);
    await assertReachedAndRecorded('JAVASCRIPT', ran.stdout);
  });

  it('PYTHON: python3 runs the snippet', async (ctx) => {
    if (!has('python3')) return skipWith(ctx, 'PYTHON', 'python3 is not installed');
    const why = missing('PYTHON');
    if (why) return skipWith(ctx, 'PYTHON', why);
    const file = path.join(work, 'snippet.py');
    await writeFile(file, formOf('PYTHON').text!);
    const ran = await run('python3', [file]);
    expect(ran.code, ran.stderr).toBe(0);
    await assertReachedAndRecorded('PYTHON', ran.stdout);
  });

  it('GO: go run the snippet', async (ctx) => {
    if (!has('go')) return skipWith(ctx, 'GO', 'Go (`go`) is not installed on this machine');
    const why = missing('GO');
    if (why) return skipWith(ctx, 'GO', why);
    const dir = path.join(work, 'go');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'main.go'), formOf('GO').text!);
    const ran = await run('go', ['run', 'main.go'], { cwd: dir, timeoutMs: 120_000 });
    expect(ran.code, ran.stderr).toBe(0);
    await assertReachedAndRecorded('GO', ran.stdout);
  });

  it('POWERSHELL: pwsh runs the command', async (ctx) => {
    if (!has('pwsh')) return skipWith(ctx, 'POWERSHELL', 'PowerShell (`pwsh`) is not installed on this machine');
    const why = missing('POWERSHELL');
    if (why) return skipWith(ctx, 'POWERSHELL', why);
    const ran = await run('pwsh', ['-NoProfile', '-Command', `${formOf('POWERSHELL').text!} | ConvertTo-Json -Depth 10`]);
    expect(ran.code, ran.stderr).toBe(0);
    await assertReachedAndRecorded('POWERSHELL', ran.stdout);
  });

  it('WEBSOCKET: node runs the snippet against /api/ws', async () => {
    const file = path.join(work, 'websocket.mjs');
    await writeFile(file, formOf('WEBSOCKET').text!);
    // Node 20 has the WHATWG WebSocket behind a flag (on by default from Node 22).
    const ran = await run(process.execPath, ['--experimental-websocket', '--no-warnings', file]);
    expect(ran.code, ran.stderr).toBe(0);
    const reply = JSON.parse(ran.stdout);
    expect(reply).toMatchObject({ type: 'result', result: { tool: 'ECHO', outcome: 'OK', output: { text: marker('WEBSOCKET') } } });
    await assertReachedAndRecorded('WEBSOCKET', ran.stdout);
  });

  it('GRAPHQL_WS: node runs the graphql-ws snippet', async (ctx) => {
    const why = missing('GRAPHQL_WS');
    if (why) return skipWith(ctx, 'GRAPHQL_WS', why);
    const file = path.join(work, 'graphql-ws.mjs');
    await writeFile(file, formOf('GRAPHQL_WS').text!);
    const ran = await run(process.execPath, ['--experimental-websocket', '--no-warnings', file]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout).errors).toBeUndefined();
    await assertReachedAndRecorded('GRAPHQL_WS', ran.stdout);
  });

  it('TYPESCRIPT: tsx runs the snippet beside a ./gql/index.ts that stands in for the caller’s codegen output', async (ctx) => {
    const why = missing('TYPESCRIPT');
    if (why) return skipWith(ctx, 'TYPESCRIPT', why);
    const dir = path.join(work, 'ts');
    await mkdir(path.join(dir, 'gql'), { recursive: true });
    // graphql-codegen's client preset returns the parsed document for a known operation; parse is the same at run time.
    await writeFile(path.join(dir, 'gql/index.ts'), `import { parse } from 'graphql';\nexport const graphql = (source: string) => parse(source);\n`);
    await writeFile(path.join(dir, 'snippet.ts'), formOf('TYPESCRIPT').text!);
    const ran = await run(process.execPath, ['--import', 'tsx', path.join(dir, 'snippet.ts')]);
    expect(ran.code, ran.stderr).toBe(0);
    await assertReachedAndRecorded('TYPESCRIPT', ran.stdout);
  });

  it('MCP_HTTP: the MCP SDK client calls the contract’s tool on its server', async () => {
    const json = formOf('MCP_HTTP').json as { server: string; headers: Record<string, string>; tool: string; arguments: Record<string, unknown> };
    const client = new Client({ name: 'forms-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(json.server), { requestInit: { headers: json.headers } }));
    try {
      const result = await client.callTool({ name: json.tool, arguments: json.arguments });
      await assertReachedAndRecorded('MCP_HTTP', JSON.stringify(result.structuredContent));
    } finally {
      await client.close();
    }
  });

  it('MCP_CLIENT_CONFIG: an MCP client configured from the mcpServers JSON calls the tool named in the text', async () => {
    const rendered = formOf('MCP_CLIENT_CONFIG');
    const [configText, note] = rendered.text!.split('\n# then call the tool ');
    const server = JSON.parse(configText!).mcpServers.dirledger as { type: string; url: string };
    expect(server.type).toBe('http');
    const [, name, args] = /^("[^"]+") with (.*)$/.exec(note!)!;
    const client = new Client({ name: 'forms-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const result = await client.callTool({ name: JSON.parse(name!), arguments: JSON.parse(args!) });
      await assertReachedAndRecorded('MCP_CLIENT_CONFIG', JSON.stringify(result.structuredContent));
    } finally {
      await client.close();
    }
  });

  it('MCP_STDIO: the MCP SDK client spawns `dirledger mcp` (relaying to this server via DIRLEDGER_URL)', async () => {
    const json = formOf('MCP_STDIO').json as { server: string; tool: string; arguments: Record<string, unknown> };
    const [command, ...args] = json.server.split(' ');
    const client = new Client({ name: 'forms-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: command!, args, cwd: repoRoot, env: { ...env(), DIRLEDGER_URL: t.origin } }));
    try {
      const result = await client.callTool({ name: json.tool, arguments: json.arguments });
      await assertReachedAndRecorded('MCP_STDIO', JSON.stringify(result.structuredContent));
    } finally {
      await client.close();
    }
  });

  it('MCP_STDIO: the form’s text, one JSON-RPC line, piped into `dirledger mcp` is answered before it exits', async () => {
    const rendered = formOf('MCP_STDIO');
    const ran = await run('sh', ['-c', `printf '%s\\n' "$LINE" | ${(rendered.json as { server: string }).server}`], { env: { ...env(), DIRLEDGER_URL: t.origin, LINE: rendered.text! } });
    expect(ran.code, ran.stderr).toBe(0);
    const reply = JSON.parse(ran.stdout);
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: 1, result: { structuredContent: { tool: 'ECHO', outcome: 'OK', output: { text: marker('MCP_STDIO') } } } });
    await assertReachedAndRecorded('MCP_STDIO', ran.stdout);
  });

  it('IN_PROCESS: the snippet runs against the app itself and the runner records the call', async () => {
    const code = formOf('IN_PROCESS').text!;
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<any>;
    const result = await new AsyncFunction('app', `${code}\nreturn result;`)(t.app);
    expect(result).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: marker('IN_PROCESS') } });
    await t.app.services.writer.flush();
    const events = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId: result.actionId } });
    expect(events.some((e) => e.tool === 'ECHO')).toBe(true);
  });

  // The other local demo tools (a CLI contract; a sequence ending in CODE) through one form of each door family.
  for (const tool of ['CLOCK', 'CLOCK_THEN_ECHO'] as const) {
    for (const form of ['DISPATCH', 'CURL', 'CLI', 'SSE', 'WEBSOCKET', 'MCP_HTTP'] as const) {
      it(`${tool} through ${form}, as written`, async (ctx) => {
        const why = missing(form);
        if (why) return skipWith(ctx, form, why);
        const args = tool === 'CLOCK' ? {} : { text: `after the clock via ${form}` };
        const rendered = renderForms({ tool, args }, { baseUrl: t.origin }, [form])[0]!;
        let output: string;
        if (rendered.shape === 'HTTP') output = (await run('curl', curlArgv(rendered.json as never))).stdout;
        else if (form === 'CURL' || form === 'CLI') output = (await run('sh', ['-c', (rendered.json as { command: string }).command], { env: env() })).stdout;
        else if (form === 'WEBSOCKET') {
          const file = path.join(work, `${tool}-ws.mjs`);
          await writeFile(file, rendered.text!);
          output = (await run(process.execPath, ['--experimental-websocket', '--no-warnings', file])).stdout;
        } else {
          const json = rendered.json as { server: string; tool: string; arguments: Record<string, unknown> };
          const client = new Client({ name: 'forms-test', version: '1.0.0' });
          await client.connect(new StreamableHTTPClientTransport(new URL(json.server)));
          output = JSON.stringify((await client.callTool({ name: json.tool, arguments: json.arguments })).structuredContent);
          await client.close();
        }
        if (tool === 'CLOCK') {
          expect(output).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/);
          expect(output).toMatch(/"?outcome"?\s*:\s*"OK"/);
        } else {
          // Its second step is a CODE cell, which the runner never executes: the same refusal by every door.
          expect(output).toMatch(/"?outcome"?\s*:\s*"REFUSED"/);
          expect(output).toContain('CODE_NOT_EXECUTED');
        }
        await assertReachedAndRecorded(form, output, tool);
      });
    }
  }

  it('SDK: tsx runs the snippet, importing dirledger/client', async (ctx) => {
    const exists = spawnSync(process.execPath, ['--import', 'tsx', '-e', "await import('dirledger/client')"], { cwd: repoRoot }).status === 0;
    if (!exists) return skipWith(ctx, 'SDK', 'there is no `dirledger/client` module to import yet');
    const dir = path.join(work, 'sdk');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'snippet.ts'), `${formOf('SDK').text!}\nconsole.log(JSON.stringify(result));\n`);
    const ran = await run(process.execPath, ['--import', 'tsx', path.join(dir, 'snippet.ts')]);
    expect(ran.code, ran.stderr).toBe(0);
    await assertReachedAndRecorded('SDK', ran.stdout);
  });
});
