// Every rendered form of the demo ECHO tool, run as written, through the real transport: curl for the
// web calls, sh for command lines, node/python3 for the snippets, the MCP SDK client for the MCP
// forms. Each carries the credential as the placeholder [DIRLEDGER_TOKEN]; filled with a real token
// it must reach ECHO with its own args (the echo proves they arrived unchanged) and be recorded at the
// boundary (request IN and answer OUT under the answer's action id); run as rendered, unfilled, its
// door must refuse it (401) and record a REFUSAL. The three credential-free links (LINK_URL,
// LINK_REST, LINK_MCP) run with a 3-use token inside, and the fourth use is refused. A form whose
// door or toolchain is missing is skipped with the reason printed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractForms, LinkForms, renderForms, TokenPlaceholder, type ContractForm, type RenderedForm } from '../../src/directory/forms.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/database.ts';
import { cliBin, compileCacheEnv, dirledgerEnv, repoRoot } from '../helpers/process.ts';
import { boundaryPair, eventsOf } from './door-helpers.ts';

type Ran = { code: number | null; stdout: string; stderr: string };

function run(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? repoRoot, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    options.signal?.addEventListener('abort', () => child.kill('SIGKILL'), { once: true });
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

/** Asked once per process, not once per form. */
function once<T>(compute: () => T): () => T {
  let value: { v: T } | undefined;
  return () => {
    value ??= { v: compute() };
    return value.v;
  };
}

/** The interpreter `python3` runs, resolved once: a version manager's shim on PATH (pyenv's is a bash script) costs more than the interpreter. */
const python3 = once(() => {
  const found = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined;
});

const hasClientModule = once(() => spawnSync(process.execPath, ['-e', "await import('dirledger/client')"], { cwd: repoRoot }).status === 0);

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
  LINK_URL: 'URL',
  LINK_REST: 'REST',
  LINK_MCP: 'MCP',
};

/** The form with every [DIRLEDGER_TOKEN] replaced by the token, as a holder pastes it in. */
function fill(rendered: RenderedForm, token: string): RenderedForm {
  return JSON.parse(JSON.stringify(rendered).replaceAll(TokenPlaceholder, token)) as RenderedForm;
}

/** `NAME=value … command` → the environment and the command (the MCP_STDIO form's server). */
function envAndCommand(line: string): { env: Record<string, string>; argv: string[] } {
  const words = line.split(' ');
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0] ?? '')) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  return { env, argv: words };
}

const actionIdOf = (text: string) => /["']?actionId["']?\s*:\s*["']([^"']+)["']/.exec(text)?.[1];

type RunnableForm = Exclude<ContractForm, 'UPSTREAM' | 'IN_PROCESS'>;

/** A form run as written, npx and npm included: a couple of seconds alone, a minute and more at nice 19 on a loaded machine. */
const FORM_MS = 180_000;

describe.each(databaseKinds)('every form of ECHO, run as written, on %s', (kind) => {
  let t: TestApp;
  let work: string;
  let binDir: string;
  const missingDoors = new Map<string, string>();
  const marker = (form: ContractForm) => `hello via ${form}`;
  /** The form as rendered: the credential is the placeholder. */
  const rawFormOf = (form: ContractForm, tool = 'ECHO', args: Record<string, unknown> = { text: marker(form) }): RenderedForm =>
    renderForms({ tool, args }, { baseUrl: t.origin }, [form])[0]!;
  /** The form as a holder of the admin token runs it. */
  const formOf = (form: ContractForm, tool?: string, args?: Record<string, unknown>): RenderedForm => fill(rawFormOf(form, tool, args), t.token);
  // No token file of this machine's user is read by the CLI under test. Node's compile cache: a snippet's, npm's and
  // the CLI's modules are compiled once, not at every form's start (the typescript snippet: ~0.45 s of CPU against
  // ~0.6 s, the SDK's ~0.34 s against ~0.45 s; the text run is unchanged).
  const env = () => ({
    PATH: `${binDir}${path.delimiter}${process.env.PATH}`,
    LOG_LEVEL: 'warn',
    XDG_CONFIG_HOME: work,
    DIRLEDGER_TOKEN: '',
    ...compileCacheEnv(),
  });

  beforeAll(async () => {
    t = await startTestApp(kind);
    work = await mkdtemp(path.join(repoRoot, 'test/dispatch/.forms-'));
    binDir = path.join(work, 'bin');
    await mkdir(binDir);
    await symlink(cliBin, path.join(binDir, 'dirledger'));
    // npx runs the dirledger a project has installed. Run from the repository, whose own package is dirledger,
    // npx installed that into its cache (the project's postinstall, ~10 s of CPU, rebuilt dist/ mid-suite) and
    // walked its whole dependency tree at every later run (3-6 s of CPU each).
    await mkdir(path.join(work, 'npx/node_modules/.bin'), { recursive: true });
    await symlink(cliBin, path.join(work, 'npx/node_modules/.bin/dirledger'));
    await mkdir(path.join(work, 'ts/gql'), { recursive: true });
    // graphql-codegen's client preset returns the parsed document for a known operation; parse is the same at run time.
    await writeFile(path.join(work, 'ts/gql/index.ts'), `import { parse } from 'graphql';\nexport const graphql = (source: string) => parse(source);\n`);
    // A door that is not built yet answers the app's own 404 "No route".
    const probes: [string, RequestInit, string][] = [
      ['/api/tools/ECHO', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"probe"}' }, 'POST /api/tools/:name'],
      ['/api/tools/ECHO?text=probe', { method: 'GET' }, 'GET /api/tools/:name'],
      [
        '/api/dispatch',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"tool":"ECHO","args":{"text":"probe"}}' },
        'POST /api/dispatch',
      ],
      ['/hooks/ECHO', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"probe"}' }, 'POST /hooks/:name'],
    ];
    for (const [url, init, door] of probes) {
      const response = await fetch(`${t.origin}${url}`, { ...init, headers: { ...(init.headers as Record<string, string>), ...t.auth } });
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
    const door = rawFormOf(form).door;
    // SSE shares the path of POST /api/dispatch but is its own door (accept: text/event-stream).
    for (const [name, why] of missingDoors) if (door.includes(name) && form !== 'SSE') return `${name} ${why}`;
    return undefined;
  }

  /** The toolchain a form needs, if it is missing on this machine: the reason to skip. */
  function noToolchain(form: RunnableForm): string | undefined {
    if (form === 'HTTPIE' && !has('http')) return 'HTTPie (`http`) is not installed on this machine';
    if (form === 'SSH') return 'no SSH server to log in to on this machine (the form is `dirledger call` on the remote host, which the CLI test covers)';
    if (form === 'PYTHON' && !python3()) return 'python3 is not installed';
    if (form === 'GO' && !has('go')) return 'Go (`go`) is not installed on this machine';
    if (form === 'POWERSHELL' && !has('pwsh')) return 'PowerShell (`pwsh`) is not installed on this machine';
    if (form === 'SDK' && !hasClientModule()) return 'there is no `dirledger/client` module to import yet';
    return missing(form);
  }

  /** An MCP SDK client over streamable HTTP calls one tool; a refused connection is its stderr. */
  async function mcpOverHttp(url: string, headers: Record<string, string>, tool: string, args: Record<string, unknown>): Promise<Ran> {
    const client = new Client({ name: 'forms-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
      const result = await client.callTool({ name: tool, arguments: args });
      return { code: 0, stdout: JSON.stringify(result.structuredContent), stderr: '' };
    } catch (error) {
      return { code: 1, stdout: '', stderr: (error as Error).message };
    } finally {
      await client.close();
    }
  }

  /** Runs one rendered form exactly as written, with the program its shape calls for. */
  async function execute(form: RunnableForm, rendered: RenderedForm, signal?: AbortSignal): Promise<Ran> {
    const options = { env: env(), signal };
    if (rendered.shape === 'HTTP') return run('curl', curlArgv(rendered.json as never), options);
    if (rendered.shape === 'CLI' && form !== 'MCP_CLIENT_CONFIG') {
      const command = (rendered.json as { command: string }).command;
      return run('sh', ['-c', command], {
        ...options,
        ...(form === 'NPX' && { cwd: path.join(work, 'npx') }),
        env: { ...env(), npm_config_offline: 'true', ...(command.includes('dirledger ') && dirledgerEnv()) },
        timeoutMs: FORM_MS - 30_000,
      });
    }
    const file = (name: string) => path.join(work, name);
    switch (form) {
      case 'JAVASCRIPT':
        await writeFile(file('javascript.mjs'), rendered.text!);
        return run(process.execPath, [file('javascript.mjs')], options);
      case 'WEBSOCKET':
      case 'GRAPHQL_WS':
        // Node 20 has the WHATWG WebSocket behind a flag (on by default from Node 22).
        await writeFile(file(`${form}.mjs`), rendered.text!);
        return run(process.execPath, ['--experimental-websocket', '--no-warnings', file(`${form}.mjs`)], options);
      case 'PYTHON':
        await writeFile(file('snippet.py'), rendered.text!);
        return run(python3()!, [file('snippet.py')], options);
      case 'GO':
        await mkdir(file('go'), { recursive: true });
        await writeFile(file('go/main.go'), rendered.text!);
        return run('go', ['run', 'main.go'], { ...options, cwd: file('go'), timeoutMs: 120_000 });
      case 'POWERSHELL':
        return run('pwsh', ['-NoProfile', '-Command', `${rendered.text!} | ConvertTo-Json -Depth 10`], options);
      case 'TYPESCRIPT':
        // Beside a ./gql/index.ts that stands in for the caller's codegen output.
        await writeFile(file('ts/snippet.ts'), rendered.text!);
        return run(process.execPath, [file('ts/snippet.ts')], options);
      case 'SDK':
        await mkdir(file('sdk'), { recursive: true });
        await writeFile(file('sdk/snippet.ts'), `${rendered.text!}\nconsole.log(JSON.stringify(result));\n`);
        return run(process.execPath, [file('sdk/snippet.ts')], options);
      case 'MCP_HTTP': {
        const json = rendered.json as { server: string; headers: Record<string, string>; tool: string; arguments: Record<string, unknown> };
        return mcpOverHttp(json.server, json.headers, json.tool, json.arguments);
      }
      case 'MCP_CLIENT_CONFIG': {
        const [configText, note] = rendered.text!.split('\n# then call the tool ');
        const server = JSON.parse(configText!).mcpServers.dirledger as { type: string; url: string; headers: Record<string, string> };
        expect(server.type).toBe('http');
        const [, name, args] = /^("[^"]+") with (.*)$/.exec(note!)!;
        return mcpOverHttp(server.url, server.headers, JSON.parse(name!), JSON.parse(args!));
      }
      case 'MCP_STDIO': {
        // The MCP SDK client spawns `dirledger mcp` with the form's environment, relaying to this server via DIRLEDGER_URL.
        const json = rendered.json as { server: string; tool: string; arguments: Record<string, unknown> };
        const { env: formEnv, argv } = envAndCommand(json.server);
        const client = new Client({ name: 'forms-test', version: '1.0.0' });
        let stderr = '';
        const transport = new StdioClientTransport({
          command: argv[0]!,
          args: argv.slice(1),
          cwd: repoRoot,
          env: { ...env(), ...dirledgerEnv(), DIRLEDGER_URL: t.origin, ...formEnv },
          stderr: 'pipe',
        });
        transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
        try {
          await client.connect(transport);
          const result = await client.callTool({ name: json.tool, arguments: json.arguments });
          return { code: 0, stdout: JSON.stringify(result.structuredContent), stderr };
        } catch (error) {
          return { code: 1, stdout: '', stderr: `${(error as Error).message}\n${stderr}` };
        } finally {
          await client.close();
        }
      }
      default:
        throw new Error(`no way to run ${form}`);
    }
  }

  /** Asserts the answer echoes this form's args and the boundary recorded the exchange under the door. */
  async function assertReachedAndRecorded(form: RunnableForm, output: string, expected = marker(form)) {
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

  const refusalsAt = async (door: string) => {
    await t.app.services.writer.flush();
    const rows = await t.app.services.db.prisma.ledgerEvent.findMany({
      where: { kind: 'REFUSAL' },
      orderBy: { position: 'asc' },
      select: { id: true, status: true, tool: true, metadata: true },
    });
    return rows.filter((r) => (r.metadata as { door?: string }).door === door);
  };

  /**
   * Runs the form and waits until its door has recorded one more REFUSAL; a client that would retry
   * (graphql-ws reconnects after 4403) is stopped then. Returns what it printed and the refusal.
   */
  async function runRefused(form: RunnableForm, rendered: RenderedForm, door = expectedDoor[form]) {
    const before = (await refusalsAt(door)).length;
    const stop = new AbortController();
    const ran = execute(form, rendered, stop.signal);
    let refusals = await refusalsAt(door);
    for (let i = 0; i < 400 && refusals.length === before; i++) {
      await Promise.race([ran, new Promise((resolve) => setTimeout(resolve, 50))]);
      refusals = await refusalsAt(door);
    }
    // A client that gives up by itself exits soon after; one that retries is stopped.
    const timer = setTimeout(() => stop.abort(), 5_000);
    const output = await ran;
    clearTimeout(timer);
    expect(refusals.length, `${form}: no REFUSAL at door ${door}\n${output.stdout}\n${output.stderr}`).toBe(before + 1);
    return { output, refusal: refusals.at(-1)! };
  }

  const skipWith = (ctx: { skip: (note?: string) => void }, form: ContractForm, reason: string) => {
    process.stdout.write(`[forms] ${form} skipped: ${reason}\n`);
    ctx.skip(reason);
  };

  it('renders every form for ECHO (no upstream, no links without a token)', () => {
    const forms = renderForms({ tool: 'ECHO', args: { text: 'x' } }, { baseUrl: t.origin }).map((f) => f.form);
    expect(forms).toEqual(ContractForms.filter((f) => f !== 'UPSTREAM'));
  });

  const runnable = ContractForms.filter((f) => f !== 'UPSTREAM' && f !== 'IN_PROCESS') as RunnableForm[];
  for (const form of runnable) {
    it(
      `${form}: filled with a token, runs as written, reaches ECHO and is recorded`,
      async (ctx) => {
        const why = noToolchain(form);
        if (why) return skipWith(ctx, form, why);
        const rendered = rawFormOf(form);
        if (form !== 'MCP_CLIENT_CONFIG') expect(JSON.stringify(rendered), `${form} carries the placeholder`).toContain(TokenPlaceholder);
        const ran = await execute(form, fill(rendered, t.token));
        if (form === 'NPX' && ran.code !== 0 && /ENOTCACHED|E404|ENOTFOUND|EAI_AGAIN/.test(ran.stderr)) {
          return skipWith(ctx, form, `npx could not resolve the dirledger package without the registry: ${ran.stderr.split('\n')[0]}`);
        }
        expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
        if (form === 'DRY_RUN') expect(JSON.parse(ran.stdout)).toMatchObject({ tool: 'ECHO', outcome: 'DRY_RUN', dryRun: true });
        if (form === 'WEBSOCKET')
          expect(JSON.parse(ran.stdout)).toMatchObject({ type: 'result', result: { tool: 'ECHO', outcome: 'OK', output: { text: marker('WEBSOCKET') } } });
        if (form === 'GRAPHQL_WS') expect(JSON.parse(ran.stdout).errors).toBeUndefined();
        await assertReachedAndRecorded(form, ran.stdout);
      },
      FORM_MS,
    );

    it(
      `${form}: as rendered, without a token, is refused by its door (401) and the refusal recorded`,
      async (ctx) => {
        const why = noToolchain(form);
        if (why) return skipWith(ctx, form, why);
        const { output, refusal } = await runRefused(form, rawFormOf(form));
        expect(refusal).toMatchObject({ status: 'REFUSED', metadata: { limit: 'credential', door: expectedDoor[form] } });
        expect(refusal.metadata).toMatchObject({ reason: expect.stringMatching(/not a token|no credential/) });
        const printed = `${output.stdout}\n${output.stderr}`;
        expect(printed).not.toContain(marker(form));
        if (rawFormOf(form).shape === 'HTTP' || ['CURL', 'HTTPIE', 'JAVASCRIPT', 'TYPESCRIPT', 'POWERSHELL'].includes(form)) {
          expect(printed).toContain('UNAUTHENTICATED');
          expect(printed).toContain('Missing or invalid credential.');
        }
        if (form === 'CLI' || form === 'NPX') {
          expect(output.code).toBe(4);
          expect(output.stderr).toContain('UNAUTHENTICATED: Missing or invalid credential.');
        }
        if (form === 'PYTHON') expect(output.stderr).toContain('HTTP Error 401');
        if (form === 'SDK') expect(output.stderr).toContain('Missing or invalid credential.');
        if (form === 'MCP_HTTP' || form === 'MCP_CLIENT_CONFIG' || form === 'MCP_STDIO') expect(output.stderr).toContain('UNAUTHENTICATED');
      },
      FORM_MS,
    );
  }

  it('MCP_STDIO: the form’s text, one JSON-RPC line, piped into `dirledger mcp` is answered before it exits', async () => {
    const form = formOf('MCP_STDIO');
    const ran = await run('sh', ['-c', `printf '%s\\n' "$LINE" | ${(form.json as { server: string }).server}`], {
      env: { ...env(), ...dirledgerEnv(), DIRLEDGER_URL: t.origin, LINE: form.text! },
    });
    expect(ran.code, ran.stderr).toBe(0);
    const reply = JSON.parse(ran.stdout);
    expect(reply).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { structuredContent: { tool: 'ECHO', outcome: 'OK', output: { text: marker('MCP_STDIO') } } },
    });
    await assertReachedAndRecorded('MCP_STDIO', ran.stdout);
  });

  it('IN_PROCESS: the snippet runs against the app itself (no credential) and the runner records the call', async () => {
    const code = rawFormOf('IN_PROCESS').text!;
    expect(code).not.toContain(TokenPlaceholder);
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<any>;
    const result = await new AsyncFunction('app', `${code}\nreturn result;`)(t.app);
    expect(result).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: marker('IN_PROCESS') } });
    await t.app.services.writer.flush();
    const events = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId: result.actionId } });
    expect(events.some((e) => e.tool === 'ECHO')).toBe(true);
  });

  // The other local demo tools (a CLI contract; a sequence: the clock, then ECHO over this server's /mcp) through one form of each door family.
  for (const tool of ['CLOCK', 'CLOCK_THEN_ECHO'] as const) {
    for (const form of ['DISPATCH', 'CURL', 'CLI', 'SSE', 'WEBSOCKET', 'MCP_HTTP'] as const) {
      it(`${tool} through ${form}, as written`, async (ctx) => {
        const why = missing(form);
        if (why) return skipWith(ctx, form, why);
        const args = tool === 'CLOCK' ? {} : { text: `after the clock via ${form}` };
        const output = (await execute(form, formOf(form, tool, args))).stdout;
        if (tool === 'CLOCK') {
          expect(output).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/);
          expect(output).toMatch(/"?outcome"?\s*:\s*"OK"/);
        } else {
          // Both steps run: the clock, then ECHO through this server's own MCP endpoint with the caller's token.
          expect(output).toMatch(/"?outcome"?\s*:\s*"OK"/);
          expect(output).toContain(`after the clock via ${form}`);
        }
        await assertReachedAndRecorded(form, output, tool);
      });
    }
  }

  describe('the three credential-free links, with a token minted `tools = ECHO`, `uses <= 3`', () => {
    let token: string;
    let links: Record<string, RenderedForm>;
    const actions: string[] = [];
    beforeAll(async () => {
      token = t.mint('tools = ECHO', 'uses <= 3');
      const r = await t.gql(
        `query($token: String!, $args: JSON) { tool(name: "ECHO") { contracts(token: $token, args: $args, forms: [LINK_URL, LINK_REST, LINK_MCP]) { form shape door json text secretNames } } }`,
        { token, args: { text: 'via a link' } },
      );
      expect(r.errors).toBeUndefined();
      links = Object.fromEntries(r.data.tool.contracts.map((f: RenderedForm) => [f.form, f]));
      expect(Object.keys(links)).toEqual([...LinkForms]);
    });

    it('each link carries the token itself and no other credential', () => {
      for (const form of LinkForms) {
        expect(JSON.stringify(links[form]!.json), form).toContain(`token=${token}`);
        expect(JSON.stringify(links[form]!.json), form).not.toMatch(/authorization|DIRLEDGER_TOKEN/i);
      }
    });

    it('LINK_URL: curl GETs the one-line URL; it reaches ECHO and is recorded at the URL door', async () => {
      const ran = await run('curl', ['-sS', links.LINK_URL!.text!]);
      expect(ran.code, ran.stderr).toBe(0);
      expect(JSON.parse(ran.stdout)).toMatchObject({ tool: 'ECHO', outcome: 'OK', output: { text: 'via a link' } });
      await assertReachedAndRecorded('LINK_URL', ran.stdout, 'via a link');
      actions.push(actionIdOf(ran.stdout)!);
    });

    it('LINK_REST: its curl line (no Authorization header) reaches ECHO and is recorded at the REST door', async () => {
      expect(links.LINK_REST!.text).not.toMatch(/authorization/i);
      const ran = await run('sh', ['-c', links.LINK_REST!.text!], { env: env() });
      expect(ran.code, ran.stderr).toBe(0);
      await assertReachedAndRecorded('LINK_REST', ran.stdout, 'via a link');
      actions.push(actionIdOf(ran.stdout)!);
    });

    it('LINK_MCP: an MCP SDK client configured from the mcpServers JSON calls ECHO, and lists only ECHO (and find)', async () => {
      const [configText, note] = links.LINK_MCP!.text!.split('\n# then call the tool ');
      const server = JSON.parse(configText!).mcpServers.dirledger as { type: string; url: string };
      expect(server).toEqual({ type: 'http', url: (links.LINK_MCP!.json as { server: string }).server });
      const [, name, args] = /^("[^"]+") with (.*)$/.exec(note!)!;
      const client = new Client({ name: 'forms-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['find', 'ECHO']);
        const result = await client.callTool({ name: JSON.parse(name!), arguments: JSON.parse(args!) });
        const output = JSON.stringify(result.structuredContent);
        await assertReachedAndRecorded('LINK_MCP', output, 'via a link');
        actions.push(actionIdOf(output)!);
      } finally {
        await client.close();
      }
    });

    it('a fourth use is refused (403, uses) and recorded; the link is no longer rendered', async () => {
      expect(actions).toHaveLength(3);
      const before = (await refusalsAt('URL')).length;
      const ran = await run('curl', ['-sS', '-w', '\n%{http_code}', links.LINK_URL!.text!]);
      const [body, status] = ran.stdout.trimEnd().split('\n');
      expect(status).toBe('403');
      expect(JSON.parse(body!)).toMatchObject({ tool: 'ECHO', outcome: 'REFUSED', error: { code: 'FORBIDDEN', message: "This token's 3 uses are spent." } });
      const refusals = await refusalsAt('URL');
      expect(refusals).toHaveLength(before + 1);
      expect(refusals.at(-1)).toMatchObject({ tool: 'ECHO', metadata: { limit: 'uses', caveat: 'uses <= 3' } });
      const again = await t.gql(`query($token: String!) { tool(name: "ECHO") { contracts(token: $token) { form } } }`, { token });
      expect(again.errors?.[0]).toMatchObject({
        message: expect.stringContaining('all 3 of its uses are spent'),
        extensions: { code: 'FORBIDDEN', limit: 'uses' },
      });
    });

    it('the ledger holds every link call with the token redacted, in URLs and in stored bytes', async () => {
      await t.app.services.writer.flush();
      for (const actionId of actions) {
        const events = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { actionId } });
        expect(JSON.stringify(events, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(token);
        const request = events.find((e) => e.kind === 'REQUEST' && e.direction === 'IN' && (e.metadata as { capture?: string }).capture === 'boundary')!;
        expect(request.url).toContain('token=[DIRLEDGER_TOKEN]');
        expect(request.redactedSecrets).toContain('DIRLEDGER_TOKEN');
        for (const e of events) {
          if (!e.payloadSha256) continue;
          const bytes = await t.app.services.ledger.readBlob(e.payloadSha256);
          expect(bytes?.toString('latin1')).not.toContain(token);
        }
      }
    });
  });
});
