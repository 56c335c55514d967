import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.ts';
import { databaseKinds, refuseConnections } from '../helpers/database.ts';
import { readBody, startServer, until, type TestServer } from '../capture/helpers.ts';
import { startDispatchApp, type DispatchApp } from './helpers.ts';
import { startMcpUpstream, type McpUpstream } from './mcp-upstream.ts';

const CANARY = 'canary-7Qx9-secret-value-31337';
const injections = ['; rm -rf /tmp/nothing-here', '$(touch /tmp/dirledger-pwned)', '`id`', 'line1\nline2', 'it\'s "quoted" && echo no | cat > /tmp/x'];

/** JSON-RPC lines, as a stdio MCP session writes them. */
const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

const blobTextOf = async (app: DispatchApp, sha: string | null) => (sha ? (await app.app.services.ledger.readBlob(sha))!.toString('utf8') : null);
/** The SDK's HTTP exchanges of one action: request OUT and response IN paired by exchange id. */
const wireExchanges = (events: any[]) => {
  const outbound = events.filter((e) => e.metadata?.capture === 'outbound');
  return outbound
    .filter((e) => e.kind === 'REQUEST')
    .map((request) => ({ request, response: outbound.find((e) => e.kind === 'RESPONSE' && e.metadata.exchange === request.metadata.exchange) }));
};
const sseMessages = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));
/** The SDK's POSTs of one action, each with its JSON-RPC body. */
const rpcExchangesOf = (app: DispatchApp, events: any[]) =>
  Promise.all(
    wireExchanges(events)
      .filter((x) => x.request.method === 'POST')
      .map(async (x) => ({ ...x, body: JSON.parse((await blobTextOf(app, x.request.payloadSha256))!) })),
  );
const toolsCallIn = async (app: DispatchApp, events: any[]) => (await rpcExchangesOf(app, events)).find((x) => x.body.method === 'tools/call')!;

/**
 * Calls a tool and leaves once the call is running (its TOOL_CALL is recorded, so the door is
 * listening for a disconnect: a fixed delay could leave before, on a loaded machine); resolves with
 * the action's events once its TOOL_RESULT is written (the call ended, answered or cut off).
 */
async function callAndLeave(app: DispatchApp, tool: string, action: string, args: Record<string, unknown>): Promise<any[]> {
  const gone = new AbortController();
  const sent = fetch(`${app.origin}/api/tools/${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dirledger-action': action, ...app.auth },
    body: JSON.stringify(args),
    signal: gone.signal,
  });
  sent.catch(() => {});
  await until(async () => (await app.events(action)).some((e) => e.kind === 'TOOL_CALL'), 'the TOOL_CALL', 60_000);
  gone.abort();
  await expect(sent).rejects.toThrow();
  await until(async () => (await app.events(action)).some((e) => e.kind === 'TOOL_RESULT'), 'the TOOL_RESULT', 60_000);
  return app.events(action);
}

describe.each(databaseKinds)('the runner (%s)', (kind) => {
  let upstream: TestServer;
  let mcp: McpUpstream;
  let app: DispatchApp;
  const hits: { url: string; headers: Record<string, unknown>; body: string }[] = [];
  /** Every line the server logged, as it would reach stdout. */
  const logLines: string[] = [];

  beforeAll(async () => {
    upstream = await startServer(async (request, response) => {
      const body = (await readBody(request)).toString('utf8');
      hits.push({ url: request.url!, headers: request.headers, body });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ got: body, key: request.headers['x-key'] ?? null }));
    });
    mcp = await startMcpUpstream();
    // A command line: the runner splits it into words and the SDK's stdio client spawns it, no shell.
    const stdioServer = `${process.execPath} ${path.join(import.meta.dirname, 'fixtures', 'mcp-stdio-upstream.mjs')}`;
    // A port that was just listened on and closed: nothing answers there.
    const closed = await startMcpUpstream();
    const closedMcpUrl = closed.url;
    await closed.close();
    const o = upstream.origin;
    app = await startDispatchApp(
      kind,
      [
        {
          name: 'ARGV',
          way: { method: 'CLI', command: `node -e "process.stdout.write(JSON.stringify(process.argv.slice(1)))" -- {{a}} 'literal {{b}}' x{{a}}y` },
          args: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a', 'b'] },
        },
        { name: 'EXIT3', way: { method: 'CLI', command: `node -e "process.exit(3)"` } },
        { name: 'PIPE', way: { method: 'CLI', command: 'date | cat' } },
        {
          name: 'KEYED',
          way: { method: 'POST', url: `${o}/k`, headers: { 'x-key': '[CANARY_KEY]' }, body: { v: '{{v}}', k: 'key=[CANARY_KEY]' } },
          args: { type: 'object', properties: { v: { type: 'string' } } },
        },
        {
          name: 'RELAY',
          way: { method: 'POST', url: `${o}/relay`, body: { target: '{{target}}' } },
          args: { type: 'object', properties: { target: { type: 'string' } } },
        },
        {
          name: 'RELAY_HEADER',
          way: { method: 'GET', url: `${o}/h`, headers: { 'x-forward': '{{to}}' } },
          args: { type: 'object', properties: { to: { type: 'string' } } },
        },
        { name: 'SHELL_RELAY', way: { method: 'CLI', command: 'curl {{url}}' }, args: { type: 'object', properties: { url: { type: 'string' } } } },
        {
          name: 'MCP_ADD',
          way: { method: 'MCP', server: mcp.url, tool: 'add', arguments: { a: '{{a}}', b: '{{b}}' } },
          args: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
        },
        {
          name: 'MCP_STDIO_ADD',
          way: { method: 'MCP', server: stdioServer, tool: 'add', arguments: { a: '{{a}}', b: '{{b}}' } },
          args: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
        },
        {
          name: 'MCP_STDIO_ARGV',
          way: { method: 'MCP', server: `${stdioServer} --flag 'two words' '$(not run)' --name={{name}}`, tool: 'argv', arguments: {} },
          args: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
        { name: 'MCP_STDIO_MISSING', way: { method: 'MCP', server: '/nonexistent/dirledger-no-such-mcp-server --stdio', tool: 'add', arguments: {} } },
        { name: 'MCP_STDIO_SHELL', way: { method: 'MCP', server: `${stdioServer} "$(touch /tmp/dirledger-pwned)"`, tool: 'argv', arguments: {} } },
        { name: 'MCP_FAIL', way: { method: 'MCP', server: mcp.url, tool: 'fail', arguments: {} } },
        { name: 'MCP_DOWN', way: { method: 'MCP', server: closedMcpUrl, tool: 'add', arguments: { a: 1, b: 2 } } },
        {
          name: 'MCP_SLOW',
          way: { method: 'MCP', server: mcp.url, tool: 'slow', arguments: { ms: '{{ms}}' } },
          args: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
        },
        { name: 'HOOKED', way: { method: 'POST', url: `${o}/hook`, body: { n: '{{n}}' } }, args: { type: 'object', properties: { n: { type: 'integer' } } } },
      ],
      { DIRLEDGER_SECRET_CANARY_KEY: CANARY, RETIRED_HOSTS: 'old.retired.example', LOG_LEVEL: 'debug', STREAM_CUTOFF_MS: '1500' },
      { logTo: { write: (line: string) => void logLines.push(line) } },
    );
  });
  afterAll(async () => {
    await app?.stop();
    await upstream?.stop();
    await mcp?.close();
  });

  it('CLI arguments reach the program as literal argv entries, never through a shell', async () => {
    for (const attempt of injections) {
      const r = await app.post('/api/tools/ARGV', { a: attempt, b: attempt });
      expect(r.body.outcome, attempt).toBe('OK');
      expect(r.body.output).toEqual([attempt, `literal ${attempt}`, `x${attempt}y`]);
    }
    await expect(readFile('/tmp/dirledger-pwned')).rejects.toThrow();
    const exit = await app.post('/api/tools/EXIT3', {});
    expect(exit.body).toMatchObject({ outcome: 'ERROR', status: 3, error: { code: 'EXIT_STATUS' } });
    const pipe = await app.post('/api/tools/PIPE', {});
    expect(pipe.body.error.code).toBe('CLI_SYNTAX');
    const events = await app.events(exit.body.actionId);
    expect(events.map((e) => e.kind)).toEqual(['REQUEST', 'TOOL_CALL', 'TOOL_RESULT', 'RESPONSE']);
    expect(events[1]!.method).toBe('CLI');
  });

  const blobText = (sha: string | null) => blobTextOf(app, sha);
  const rpcExchanges = (events: any[]) => rpcExchangesOf(app, events);
  const toolsCallOf = (events: any[]) => toolsCallIn(app, events);

  /**
   * The action's events once every SDK request has its response: the client's GET stream, cut when
   * the client closes, is recorded as it ends, which may be after the caller has its answer.
   */
  const wholeWire = async (actionId: string) => {
    for (let i = 0; i < 100; i++) {
      const events = await app.events(actionId);
      if (wireExchanges(events).every((x) => x.response)) return events;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return app.events(actionId);
  };

  it('an MCP contract runs through the SDK client over streamable HTTP, its wire traffic captured once and tagged with the tool', async () => {
    const r = await app.post('/api/tools/MCP_ADD', { a: 2, b: 40 });
    expect(r.body.outcome).toBe('OK');
    expect(r.body.output).toEqual({ sum: 42 });
    const events = await wholeWire(r.body.actionId);
    expect(events[0]).toMatchObject({ kind: 'REQUEST', direction: 'IN' });
    const doorAnswer = events.findIndex((e) => e.kind === 'RESPONSE' && e.direction === 'OUT');
    // After the door's answer, only the end of the SDK's own traffic.
    expect(events.slice(doorAnswer + 1).every((e) => e.metadata?.capture === 'outbound')).toBe(true);
    const call = events.find((e) => e.kind === 'TOOL_CALL')!;
    const result = events.find((e) => e.kind === 'TOOL_RESULT')!;
    expect(events.filter((e) => e.kind === 'TOOL_CALL' || e.kind === 'TOOL_RESULT')).toHaveLength(2);
    expect(call).toMatchObject({ direction: 'OUT', method: 'MCP', tool: 'MCP_ADD' });
    expect(result).toMatchObject({ direction: 'IN', tool: 'MCP_ADD', status: '0' });

    // Everything else is the SDK's HTTP traffic, exact bytes, each request with its response.
    const wire = wireExchanges(events);
    expect(wire.length * 2 + 4).toBe(events.length);
    for (const { request, response } of wire) {
      expect(response, `response of ${request.method} ${request.url}`).toBeDefined();
      expect(request).toMatchObject({
        direction: 'OUT',
        tool: 'MCP_ADD',
        url: mcp.url,
        metadata: { via: 'MCP', contract: { form: call.contractForm, sha256: call.contractSha256 } },
      });
      expect(request.contractSha256).toBeNull(); // the contract's rendering is the TOOL_CALL's, not this request's
    }
    const rpc = await rpcExchanges(events);
    expect(rpc.map((x) => x.body.method)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    const toolsCall = rpc[2]!;
    expect(toolsCall.body.params).toEqual({ name: 'add', arguments: { a: 2, b: 40 } });
    expect(toolsCall.response).toMatchObject({ status: '200', payloadState: 'COMPLETE' });
    // The answer as the upstream sent it: an event stream carrying the JSON-RPC result.
    expect(toolsCall.response.headers['content-type']).toBe('text/event-stream');
    const answer = (await blobText(toolsCall.response.payloadSha256))!;
    expect(answer).toMatch(/^event: message\ndata: /);
    expect(sseMessages(answer)[0].result.structuredContent).toEqual({ sum: 42 });
  });

  it('an MCP contract whose server is a command line runs over stdio: split into words, never through a shell, its pipes recorded byte for byte', async () => {
    const r = await app.post('/api/tools/MCP_STDIO_ADD', { a: 2, b: 40 });
    expect(r.body).toMatchObject({ outcome: 'OK', status: 0, output: { sum: 42 } });
    const events = await app.events(r.body.actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual([
      'REQUEST/IN',
      'TOOL_CALL/OUT',
      'REQUEST/OUT',
      'RESPONSE/IN',
      'TOOL_RESULT/IN',
      'RESPONSE/OUT',
    ]);
    const [, call, stdin, stdout, result] = events;
    expect(call).toMatchObject({ method: 'MCP', url: null, tool: 'MCP_STDIO_ADD' });
    expect(JSON.parse((await blobText(call.payloadSha256))!)).toMatchObject({ tool: 'add', arguments: { a: 2, b: 40 } });
    expect(result.metadata).toMatchObject({ mcpResult: { structuredContent: { sum: 42 } } });
    // stdin as written: the session's three lines, exactly as the SDK frames them.
    const argv = [process.execPath, path.join(import.meta.dirname, 'fixtures', 'mcp-stdio-upstream.mjs')];
    expect(stdin).toMatchObject({
      method: 'STDIO',
      url: `stdio:${argv.join(' ')}`,
      tool: 'MCP_STDIO_ADD',
      payloadState: 'COMPLETE',
      metadata: { capture: 'stdio', via: 'MCP', argv, contract: { form: call.contractForm, sha256: call.contractSha256 } },
    });
    const written = (await blobText(stdin.payloadSha256))!;
    expect(written.endsWith('\n')).toBe(true);
    expect(jsonLines(written).map((m) => m.method)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    expect(written.split('\n')[2]).toBe(JSON.stringify(jsonLines(written)[2]));
    // stdout as read: the answers, whole; the process ended with 0 once stdin closed.
    expect(stdout).toMatchObject({ status: '0', payloadState: 'COMPLETE', metadata: { capture: 'stdio', exit: { code: 0, signal: null } } });
    const read = jsonLines((await blobText(stdout.payloadSha256))!);
    expect(read.map((m) => m.id)).toEqual([0, 1]);
    expect(read[1].result.structuredContent).toEqual({ sum: 42 });

    for (const attempt of injections) {
      const argv = await app.post('/api/tools/MCP_STDIO_ARGV', { name: attempt });
      expect(argv.body.output, attempt).toEqual(['--flag', 'two words', '$(not run)', `--name=${attempt}`]);
    }
    // A program that does not exist: UPSTREAM_ERROR at once, its (empty) pipes on the record.
    const missing = await app.post('/api/tools/MCP_STDIO_MISSING', {});
    expect(missing.body).toMatchObject({ outcome: 'ERROR', error: { code: 'UPSTREAM_ERROR' } });
    expect(missing.body.error.message).toContain('ENOENT');
    const missingEvents = await app.events(missing.body.actionId);
    expect(missingEvents.map((e) => `${e.kind}/${e.direction}`)).toEqual([
      'REQUEST/IN',
      'TOOL_CALL/OUT',
      'REQUEST/OUT',
      'RESPONSE/IN',
      'TOOL_RESULT/IN',
      'RESPONSE/OUT',
    ]);
    expect(missingEvents[3]).toMatchObject({ method: 'STDIO', status: 'ERROR', payloadState: 'PARTIAL', payloadSize: 0n });

    // Shell syntax in the contract's command line is refused before anything is spawned.
    const shell = await app.post('/api/tools/MCP_STDIO_SHELL', {});
    expect(shell.status).toBe(409);
    expect(shell.body).toMatchObject({ outcome: 'REFUSED', error: { code: 'CLI_SYNTAX' } });
    expect(shell.body.error.message).toContain('a $ expansion inside double quotes');
    await expect(readFile('/tmp/dirledger-pwned')).rejects.toThrow();
    expect((await app.events(shell.body.actionId)).map((e) => e.kind)).toEqual(['REQUEST', 'REFUSAL', 'RESPONSE']);
  });

  it('an MCP tool that answers isError, and an MCP server that is down, are errors on the record, the wire included', async () => {
    const failed = await app.post('/api/tools/MCP_FAIL', {});
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ outcome: 'ERROR', status: 0, error: { code: 'TOOL_ERROR', message: 'The MCP tool answered with isError.' } });
    const failedEvents = await app.events(failed.body.actionId);
    expect(failedEvents.find((e) => e.kind === 'TOOL_RESULT')).toMatchObject({ status: '0', metadata: { mcpResult: { isError: true } } });
    expect((await toolsCallOf(failedEvents)).response).toMatchObject({ status: '200', payloadState: 'COMPLETE' });

    const down = await app.post('/api/tools/MCP_DOWN', {});
    expect(down.status).toBe(502);
    expect(down.body).toMatchObject({ outcome: 'ERROR', error: { code: 'UPSTREAM_ERROR' } });
    expect(down.body.error.message).toMatch(/^The call failed: /);
    const downEvents = await app.events(down.body.actionId);
    expect(downEvents.map((e) => `${e.kind}/${e.direction}`)).toEqual([
      'REQUEST/IN',
      'TOOL_CALL/OUT',
      'REQUEST/OUT',
      'RESPONSE/IN',
      'TOOL_RESULT/IN',
      'RESPONSE/OUT',
    ]);
    // The initialize POST that found nobody: recorded whole before it was sent, and its response IN says ERROR.
    const [attempt] = wireExchanges(downEvents);
    expect(attempt!.request).toMatchObject({ method: 'POST', tool: 'MCP_DOWN', payloadState: 'COMPLETE', metadata: { via: 'MCP' } });
    expect(JSON.parse((await blobText(attempt!.request.payloadSha256))!)).toMatchObject({ method: 'initialize' });
    expect(attempt!.response).toMatchObject({ status: 'ERROR', payloadState: 'NONE' });
    expect(attempt!.response.metadata.error).toMatch(/ECONNREFUSED|connect/i);
    expect(downEvents.find((e) => e.kind === 'TOOL_RESULT')).toMatchObject({ status: 'ERROR', metadata: { code: 'UPSTREAM_ERROR' } });

    // Neither left anything behind: the next call goes through.
    expect((await app.post('/api/tools/MCP_ADD', { a: 1, b: 1 })).body.output).toEqual({ sum: 2 });
  });

  it('an MCP call still running at the stream cut-off after its caller left is cancelled then, and keeps what arrived', async () => {
    // The notification arrives at once; the answer would take 20 s, past the 1.5 s cut-off.
    const cut = await callAndLeave(app, 'MCP_SLOW', `mcp-leave-cut-${kind}`, { ms: 20_000 });
    const cancelled = cut.find((e) => e.kind === 'TOOL_RESULT')!;
    expect(cancelled).toMatchObject({ status: 'ERROR', metadata: { code: 'CANCELLED' } });
    expect(cancelled.metadata.message).toContain('went on for up to 1500 ms more');
    const cutWire = await toolsCallOf(cut);
    expect(cutWire.response).toMatchObject({ status: '200', payloadState: 'PARTIAL' });
    const partial = sseMessages((await blobText(cutWire.response.payloadSha256))!);
    expect(partial).toEqual([{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'started, sleeping 20000 ms' } }]);
  });

  it('the retired build is refused at call time wherever the rendered request hides it', async () => {
    hits.length = 0;
    const attempts: [string, Record<string, unknown>][] = [
      ['RELAY', { target: 'https://old.retired.example/api' }],
      ['RELAY', { target: Buffer.from('https://api.old.retired.example/x').toString('base64') }],
      ['RELAY', { target: encodeURIComponent('http://old.retired.example:8080/') }],
      ['RELAY', { target: JSON.stringify({ jsonrpc: '2.0', method: 'call', params: { url: 'http://old.retired.example' } }) }],
      ['RELAY_HEADER', { to: 'old.retired.example' }],
      ['SHELL_RELAY', { url: 'https://old.retired.example/run' }],
    ];
    for (const [tool, args] of attempts) {
      const r = await app.post(`/api/tools/${tool}`, args);
      expect(r.status, JSON.stringify(args)).toBe(403);
      expect(r.body.error.code).toBe('RETIRED_BUILD');
      const refusal = (await app.events(r.body.actionId)).find((e) => e.kind === 'REFUSAL')!;
      expect((refusal.metadata as any).target).toBe('old.retired.example');
    }
    expect(hits).toHaveLength(0);
  });

  it('GraphQL dispatch returns the same result and records four events', async () => {
    const r = await app.gql(
      'mutation($args: JSON) { dispatch(tool: "KEYED", args: $args, form: GRAPHQL_HTTP) { tool actionId outcome status output error { code message } } }',
      { args: { v: 'gql' } },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.dispatch).toMatchObject({ tool: 'KEYED', outcome: 'OK', status: 200, output: { key: '[CANARY_KEY]' } });
    const events = await app.events(r.data.dispatch.actionId);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
    expect((events[1]!.metadata as any).form).toBe('GRAPHQL_HTTP');
  });

  it('a webhook is written before it is answered: 503 + Retry-After while the ledger is down, then the retry succeeds with nothing lost', async () => {
    const restore = await makeLedgerUnavailable(kind, app);
    let down: Response;
    try {
      down = await fetch(`${app.origin}/hooks/HOOKED`, {
        method: 'POST',
        headers: { ...app.auth, 'content-type': 'application/json', 'x-dirledger-action': `hook-${kind}` },
        body: '{"n":1}',
      });
    } finally {
      await restore();
    }
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('1');
    hits.length = 0;
    const retry = await fetch(`${app.origin}/hooks/HOOKED`, {
      method: 'POST',
      headers: { ...app.auth, 'content-type': 'application/json', 'x-dirledger-action': `hook-${kind}` },
      body: '{"n":1}',
    });
    expect(retry.status).toBe(200);
    expect(hits).toHaveLength(1);
    const events = await app.events(`hook-${kind}`);
    expect(events.map((e) => `${e.kind}/${e.direction}`)).toEqual(['REQUEST/IN', 'TOOL_CALL/OUT', 'TOOL_RESULT/IN', 'RESPONSE/OUT']);
  });

  it('a canary secret reaches the upstream but no stored blob, event column, answer or log', async () => {
    hits.length = 0;
    const r = await app.post('/api/tools/KEYED', { v: 'canary run' });
    expect(hits[0]!.headers['x-key']).toBe(CANARY);
    expect(JSON.parse(hits[0]!.body).k).toBe(`key=${CANARY}`);
    expect(JSON.stringify(r.body)).not.toContain(CANARY);
    const dry = await app.post('/api/dispatch', { tool: 'KEYED', args: { v: 'x' }, dryRun: true });
    expect(JSON.stringify(dry.body)).not.toContain(CANARY);
    // An argument spelling a secret's name is sent as those characters, never as the value.
    hits.length = 0;
    await app.post('/api/tools/KEYED', { v: '[CANARY_KEY]' });
    expect(JSON.parse(hits[0]!.body).v).toBe('[CANARY_KEY]');
    await app.app.services.writer.flush();
    const prisma = app.app.services.db.prisma;
    const events = await prisma.ledgerEvent.findMany();
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(CANARY);
    const blobs = await prisma.blob.findMany({ select: { sha256: true } });
    for (const b of blobs) {
      const bytes = await app.app.services.ledger.readBlob(b.sha256);
      expect(bytes?.includes(CANARY) ?? false, b.sha256).toBe(false);
    }
    const rows = await prisma.directoryRow.findMany();
    expect(JSON.stringify(rows)).not.toContain(CANARY);
    for (const file of await readdir(app.dataDir, { recursive: true })) {
      const full = path.join(app.dataDir, file);
      const content = await readFile(full).catch(() => null);
      if (content && !file.includes('pglite')) expect(content.includes(CANARY), file).toBe(false);
    }
    // The server's own log output: a line that carries the value in a field is written with its name.
    app.app.services.logger.warn({ upstreamHeaders: { 'x-key': CANARY }, note: `key=${CANARY}` }, 'canary probe');
    await app.post('/api/tools/KEYED', { v: CANARY });
    const probe = logLines.find((l) => l.includes('canary probe'));
    expect(probe).toContain('[CANARY_KEY]');
    for (const line of logLines) expect(line.includes(CANARY), line).toBe(false);
  });

  it('the root key and every bearer token are canaries too: in no stored byte, event column or log line', async () => {
    const rootKey = app.app.services.config.secrets.DIRLEDGER_ROOT_KEY!;
    expect(rootKey).toMatch(/^[0-9a-f]{64}$/);
    const scoped = app.mint('tools = KEYED');
    await app.post('/api/tools/KEYED', { v: `root ${rootKey} token ${scoped}` }, { authorization: `Bearer ${scoped}` });
    await fetch(`${app.origin}/api/tools/KEYED?v=x&token=${scoped}`);
    app.app.services.logger.warn({ key: rootKey, authorization: `Bearer ${scoped}`, note: `token=${scoped}` }, 'key probe');
    await app.app.services.writer.flush();
    const prisma = app.app.services.db.prisma;
    const stored = JSON.stringify(await prisma.ledgerEvent.findMany(), (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    const blobs = await Promise.all((await prisma.blob.findMany({ select: { sha256: true } })).map((b) => app.app.services.ledger.readBlob(b.sha256)));
    const logs = logLines.join('\n');
    expect(logs).toContain('key probe');
    for (const [name, value] of [
      ['root key', rootKey],
      ['admin token', app.token.slice(16, 60)],
      ['scoped token', scoped.slice(16, 60)],
    ] as const) {
      expect(stored.includes(value), `${name} in an event`).toBe(false);
      expect(
        blobs.some((b) => b?.includes(value)),
        `${name} in a blob`,
      ).toBe(false);
      expect(logs.includes(value), `${name} in a log line`).toBe(false);
    }
    expect(stored).toContain('[DIRLEDGER_TOKEN]');
    expect(blobs.some((b) => b?.includes('[DIRLEDGER_ROOT_KEY]'))).toBe(true);
  });
});

describe.each(databaseKinds)('MCP calls after their caller has gone, answered inside the cut-off (%s)', (kind) => {
  // Their own app with a 30 s cut-off: the durable records and the MCP session (a child's start, for
  // stdio) on a loaded 2-core machine must fit inside it, where the app above keeps a 1.5 s cut-off
  // to see a call cancelled at it.
  let app: DispatchApp;
  let mcp: McpUpstream;
  beforeAll(async () => {
    mcp = await startMcpUpstream();
    const stdioServer = `${process.execPath} ${path.join(import.meta.dirname, 'fixtures', 'mcp-stdio-upstream.mjs')}`;
    const slow = { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] };
    app = await startDispatchApp(
      kind,
      [
        { name: 'MCP_SLOW', way: { method: 'MCP', server: mcp.url, tool: 'slow', arguments: { ms: '{{ms}}' } }, args: slow },
        { name: 'MCP_STDIO_SLOW', way: { method: 'MCP', server: stdioServer, tool: 'slow', arguments: { ms: '{{ms}}' } }, args: slow },
      ],
      { STREAM_CUTOFF_MS: '30000' },
    );
  });
  afterAll(async () => {
    await app?.stop();
    await mcp?.close();
  });
  const blobText = (sha: string | null) => blobTextOf(app, sha);

  it('over HTTP: the answer that came after the caller left is on the record, the wire included', async () => {
    const finished = await callAndLeave(app, 'MCP_SLOW', `mcp-leave-${kind}`, { ms: 2_000 });
    const kept = finished.find((e) => e.kind === 'TOOL_RESULT')!;
    expect(kept).toMatchObject({ status: '0', metadata: { clientDisconnected: true } });
    expect(JSON.parse((await blobText(kept.payloadSha256))!)).toEqual({ slept: 2_000 });
    const keptWire = await toolsCallIn(app, finished);
    expect(keptWire.response).toMatchObject({ status: '200', payloadState: 'COMPLETE' });
    const keptMessages = sseMessages((await blobText(keptWire.response.payloadSha256))!);
    expect(keptMessages.map((m) => m.method ?? 'result')).toEqual(['notifications/message', 'result']);
    expect(keptMessages[1].result.content[0].text).toBe('{"slept":2000}');
  });

  it('over stdio: the answer and the pipes are on the record', async () => {
    const events = await callAndLeave(app, 'MCP_STDIO_SLOW', `mcp-stdio-leave-${kind}`, { ms: 2_000 });
    const result = events.find((e) => e.kind === 'TOOL_RESULT')!;
    expect(result).toMatchObject({ status: '0', metadata: { clientDisconnected: true } });
    expect(JSON.parse((await blobText(result.payloadSha256))!)).toEqual({ slept: 2_000 });
    const stdout = events.find((e) => e.kind === 'RESPONSE' && e.direction === 'IN')!;
    expect(jsonLines((await blobText(stdout.payloadSha256))!).map((m) => m.method ?? 'result')).toEqual(['result', 'notifications/message', 'result']);
  });
});

/** PostgreSQL: a real outage (ALLOW_CONNECTIONS false + terminate). PGlite cannot come back from a close, so its append is made to fail as the driver would. */
async function makeLedgerUnavailable(kind: string, app: DispatchApp): Promise<() => Promise<void>> {
  if (kind === 'postgres') {
    return refuseConnections(app.db.url!);
  }
  const ledger = app.app.services.ledger;
  const original = ledger.append.bind(ledger);
  ledger.append = async () => {
    throw new DomainError('DATABASE_UNAVAILABLE', 'The database is unavailable.');
  };
  return async () => {
    ledger.append = original;
  };
}
