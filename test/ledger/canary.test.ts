// The canary: one registered secret sent through every door and field, in every spelling the
// redactor must catch (test/helpers/canary.ts; base64 wrapped with line breaks through the fields that
// take them), then every column of every table (on PostgreSQL
// also a pg_dump of the database), every blob, every object file and every server log line is
// scanned for it by a decoding oracle: no hit anywhere.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeInline } from '../../src/ledger/payload.ts';
import { canaryLeaks, canarySpellings, canaryWrappedSpellings } from '../helpers/canary.ts';
import { databaseKinds } from '../helpers/database.ts';
import { event } from '../helpers/ledger.ts';
import { rawSql } from '../helpers/sql.ts';
import { startDispatchApp, type DispatchApp } from '../dispatch/helpers.ts';

const CANARY = 'CnRy/7f3Q9z-canary';
const spellings = canarySpellings(CANARY);
/** base64 wrapped with CR/LF: through ingest (every field) and a dispatched call's arguments, not headers. */
const wrapped = canaryWrappedSpellings(CANARY);

/** An upstream that streams a spelling cut in two chunks (`/split?i=`), echoes (`/echo`), or fails quoting it (`/fail?i=`). */
function upstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const text = spellings[Number(url.searchParams.get('i') ?? 0)]?.text ?? '';
    if (url.pathname === '/split') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const cut = Math.floor(text.length / 2);
      res.write(`data: {"key":"${text.slice(0, cut)}`);
      setTimeout(() => res.end(`${text.slice(cut)}"}\n\ndata: done\n\n`), 15);
      return;
    }
    if (url.pathname === '/fail') {
      res.writeHead(502, { 'content-type': 'application/json', 'x-upstream-key': text });
      res.end(JSON.stringify({ error: `bad key ${text}` }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo': text });
      res.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

describe.each(databaseKinds)('canary secret through every door on %s', (kind) => {
  let app: DispatchApp;
  let up: { url: string; server: Server };
  const logs: string[] = [];
  const statuses: [string, number][] = [];

  beforeAll(async () => {
    up = await upstream();
    const logTo = new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    });
    const i = { type: 'object', properties: { i: { type: 'integer' }, x: { type: 'string' } } };
    app = await startDispatchApp(
      kind,
      [
        { name: 'STREAM_SPLIT', way: { method: 'GET', url: `${up.url}/split?i={{i}}` }, args: i },
        { name: 'ECHO_UP', way: { method: 'POST', url: `${up.url}/echo?i={{i}}`, body: { x: '{{x}}' } }, args: i },
        { name: 'FAIL_UP', way: { method: 'GET', url: `${up.url}/fail?i={{i}}` }, args: i },
      ],
      { DIRLEDGER_SECRET_CANARY: CANARY, LOG_LEVEL: 'debug', STREAM_CUTOFF_MS: '2000' },
      { logTo },
    );
    await sendEverywhere();
    await app.app.services.writer.flush();
  }, 600_000);
  afterAll(async () => {
    up?.server.close();
    await app?.stop();
  });

  const send = async (label: string, pathname: string, init: RequestInit = {}) => {
    const response = await fetch(`${app.origin}${pathname}`, { ...init, headers: { ...app.auth, ...(init.headers as Record<string, string>) } });
    await response.arrayBuffer();
    statuses.push([label, response.status]);
    return response.status;
  };
  const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

  /** Ingest: every field of an event, and the batch's collector. */
  async function ingest(n: number | string, name: string, text: string) {
    const short = (max: number) => (text.length <= max ? text : undefined);
    await send(
      `batch ${name}`,
      '/ledger/batches',
      json({
        collector: `c-${text}`,
        position: 1,
        events: [
          event(`${n}-${text}`, {
            kind: short(128) ?? 'TOOL_CALL',
            actionId: `act-${text}`,
            tool: text,
            session: text,
            turn: text,
            task: text,
            agent: text,
            model: text,
            status: short(128) ?? '200',
            ...(short(32) && { method: short(32) }),
            url: `https://api.example.com/${text}?key=${text}`,
            headers: { authorization: `Bearer ${text}`, [`x-${text}`]: [text] },
            metadata: { [text]: { deep: [text] } },
            contract: { form: short(128) ?? 'curl', sha256: 'a'.repeat(64) },
            payload: { state: 'COMPLETE', text: `{"key":"${text}"}` },
          }),
          event(`${n}-b64-${text}`, { payload: { state: 'COMPLETE', base64: Buffer.from(`bytes ${text} \u0000`).toString('base64') } }),
          event(`${n}-artifact`, { payload: { state: 'ARTIFACT', artifactUri: `file:///deploy/${text}/x.js` } }),
        ],
      }),
    );
  }

  async function sendEverywhere() {
    for (const [n, { name, text }] of wrapped.entries()) {
      await ingest(`w${n}`, name, text);
      await send(`dispatch echo ${name}`, '/api/dispatch', json({ tool: 'ECHO_UP', args: { i: 0, x: text } }));
    }
    for (const [n, { name, text }] of spellings.entries()) {
      await ingest(n, name, text);
      // Dispatch: an unknown tool named by it, args holding it, and every invocation header.
      const invocation = {
        'x-dirledger-session': text,
        'x-dirledger-task': text,
        'x-dirledger-agent': text,
        'x-dirledger-turn': text,
        'x-dirledger-action': `a-${n}-${text}`,
      };
      await send(`dispatch unknown ${name}`, '/api/dispatch', json({ tool: text, args: { key: text } }, invocation));
      await send(
        `dispatch echo ${name}`,
        '/api/dispatch',
        json({ tool: 'ECHO_UP', args: { i: n, x: text } }, { ...invocation, 'x-dirledger-action': `b-${n}-${text}` }),
      );
      await send(`dispatch fail ${name}`, '/api/dispatch', json({ tool: 'FAIL_UP', args: { i: n } }));
      // A streamed answer with the spelling cut across two chunks.
      await send(`stream ${name}`, `/api/tools/STREAM_SPLIT?i=${n}`);
      // URLs: a query, and a tool name in the path.
      await send(`url query ${name}`, `/api/tools/ECHO_UP?i=${n}&x=${encodeURIComponent(text)}&raw=${text.replace(/[#&?]/g, '')}`);
      await send(`url tool ${name}`, `/api/tools/${encodeURIComponent(text)}?x=1`);
      // MCP: an unknown tool name.
      await send(
        `mcp ${name}`,
        '/mcp',
        json(
          { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: text, arguments: { key: text } } },
          { accept: 'application/json, text/event-stream' },
        ),
      );
      // GraphQL: dispatch mutation with an unknown tool.
      await send(
        `graphql ${name}`,
        '/graphql',
        json(
          { query: 'mutation($tool: String!, $args: JSON) { dispatch(tool: $tool, args: $args) { outcome } }', variables: { tool: text, args: { key: text } } },
          invocation,
        ),
      );
    }
  }

  it('every door answered without a 5xx, and recorded the canary as [CANARY]', async () => {
    expect(statuses.length).toBe(spellings.length * 9 + wrapped.length * 2);
    expect(
      statuses.filter(([, status]) => status >= 500 && status !== 502),
      JSON.stringify(statuses.filter(([, s]) => s >= 500)),
    ).toEqual([]);
    const sql = await rawSql(app.db);
    try {
      const [row] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_event WHERE 'CANARY' = ANY(redacted_secrets)`);
      // Each spelling: 3 ingested events, and the dispatch, stream, URL, MCP and GraphQL exchanges.
      expect(row!.n).toBeGreaterThan(spellings.length * 8);
    } finally {
      await sql.close();
    }
  });

  it('a hash column that spells the canary (hex) is refused with a 400 naming the field', async () => {
    const hex = Buffer.from(CANARY).toString('hex').padEnd(64, '0');
    const response = await fetch(
      `${app.origin}/ledger/batches`,
      json({ collector: 'hash', events: [event('hash-1', { contract: { form: 'curl', sha256: hex } })] }, app.auth),
    );
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(response.status).toBe(400);
    expect(body.error.code).toBe('BAD_INPUT');
    expect(body.error.message).toContain('contract.sha256 holds the secret [CANARY]');
  });

  it('no column of any table holds it in any spelling', async () => {
    const sql = await rawSql(app.db);
    try {
      const tables = await sql.query<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
      );
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['ledger_event', 'ledger_batch', 'collector', 'blob', 'token_uses']));
      for (const { name } of tables) {
        const rows = await sql.query<{ r: string }>(`SELECT row_to_json(x)::text AS r FROM "${name}" x`);
        for (const row of rows) expect(canaryLeaks(row.r, CANARY), `${name}: ${row.r}`).toEqual([]);
      }
      const collectors = await sql.query<{ id: string }>(`SELECT id FROM collector WHERE id LIKE 'c-%'`);
      expect(collectors.length).toBeGreaterThan(0);
    } finally {
      await sql.close();
    }
  });

  it('no blob (decoded) and no object file holds it', async () => {
    const sql = await rawSql(app.db);
    try {
      const blobs = await sql.query<{ sha256: string; codec: string; data: Uint8Array | null }>(`SELECT sha256, codec, data FROM blob`);
      expect(blobs.length).toBeGreaterThan(spellings.length);
      for (const blob of blobs) {
        if (blob.data) expect(canaryLeaks(await decodeInline(blob.codec, blob.data), CANARY), blob.sha256).toEqual([]);
        else expect(canaryLeaks((await app.app.services.ledger.readBlob(blob.sha256))!, CANARY), blob.sha256).toEqual([]);
      }
    } finally {
      await sql.close();
    }
    const root = path.join(app.dataDir, 'blobs');
    const files = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const file of files.filter((d) => d.isFile()))
      expect(canaryLeaks(await readFile(path.join(file.parentPath, file.name)), CANARY), file.name).toEqual([]);
  });

  it.runIf(kind === 'postgres')('a full pg_dump of the database holds it nowhere', async () => {
    const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', app.db.url!], { maxBuffer: 256 * 1024 * 1024, encoding: 'buffer' }).catch(
      (error: Error) => {
        throw new Error(`pg_dump failed (${error.message.split('\n')[0]}); the SELECT of every column above still ran`);
      },
    );
    expect(stdout.length).toBeGreaterThan(10_000);
    expect(canaryLeaks(stdout, CANARY)).toEqual([]);
  });

  it('no server log line holds it', () => {
    expect(logs.length).toBeGreaterThan(0);
    const leaking = logs.filter((line) => canaryLeaks(line, CANARY).length > 0);
    expect(leaking.slice(0, 3)).toEqual([]);
  });
});
