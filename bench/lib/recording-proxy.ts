// The recording floor: a bare node:http proxy that keeps issue 15's rule with the product's own
// recording pipeline and nothing else. Per call it records the four events the server records
// (REQUEST/IN staged, TOOL_CALL/OUT durable before the upstream is called, TOOL_RESULT/IN and
// RESPONSE/OUT durable before the caller gets the answer) through the durable Spool (group commit,
// redaction) and the LedgerWriter, which moves them to Ledger.append on its own PostgreSQL
// database in the background. No door, token, Directory, argument check or template: what it
// spends beyond the bare proxy is the price of the record alone.
//
//   node bench/lib/recording-proxy.ts PORT UPSTREAM_URL DATABASE_URL FOLDER
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { bytesPayload } from '../../src/capture/payload.ts';
import type { EventInput } from '../../src/ledger/input.ts';
import { eventOf, openRecorder } from './recorder.ts';

const [portText, upstreamText, url, folder] = process.argv.slice(2) as [string, string, string, string];
const upstream = new URL(upstreamText);
const recorder = await openRecorder(url, folder);
const { writer } = recorder;
const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 60_000, maxSockets: 256 });

const event = (actionId: string, suffix: string, fields: Partial<EventInput>): EventInput => eventOf(actionId, suffix, { tool: 'BENCH_UP', ...fields });

const server = http.createServer((req, res) => {
  recorder.serving(res);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const actionId = randomUUID();
    const body = Buffer.concat(chunks);
    try {
      void writer
        .stage(
          event(actionId, 'door:request', {
            kind: 'REQUEST',
            direction: 'IN',
            method: req.method!,
            url: req.url!,
            headers: { 'content-type': String(req.headers['content-type'] ?? '') },
            payload: bytesPayload(body),
            metadata: { capture: 'boundary', door: 'API' },
          }),
        )
        .catch(() => {}); // its write is the TOOL_CALL's: a failure of it refuses the call below
      await writer.enqueue(
        event(actionId, 'call', {
          kind: 'TOOL_CALL',
          direction: 'OUT',
          method: 'POST',
          url: upstream.href,
          headers: { 'content-type': 'application/json' },
          payload: bytesPayload(body),
          metadata: { capture: 'runner', door: 'API' },
        }),
      );
    } catch (error) {
      res.writeHead(503);
      res.end(String(error));
      return;
    }
    const out = http.request(
      {
        agent,
        host: upstream.hostname,
        port: upstream.port,
        path: upstream.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', async () => {
          const bytes = Buffer.concat(parts);
          const status = String(answer.statusCode);
          try {
            await writer.enqueue([
              event(actionId, 'result', {
                kind: 'TOOL_RESULT',
                direction: 'IN',
                status,
                headers: { 'content-type': String(answer.headers['content-type'] ?? '') },
                payload: bytesPayload(bytes),
                metadata: { capture: 'runner', door: 'API' },
              }),
              event(actionId, 'door:answer', {
                kind: 'RESPONSE',
                direction: 'OUT',
                status,
                headers: { 'content-type': 'application/json' },
                payload: bytesPayload(bytes),
                metadata: { capture: 'boundary', door: 'API' },
              }),
            ]);
          } catch (error) {
            res.writeHead(503);
            res.end(String(error));
            return;
          }
          res.writeHead(answer.statusCode!, { 'content-type': 'application/json', 'content-length': bytes.length });
          res.end(bytes);
        });
      },
    );
    out.on('error', (error) => {
      res.writeHead(502);
      res.end(String(error));
    });
    out.end(body);
  });
});
server.keepAliveTimeout = 60_000;
process.on('SIGTERM', async () => {
  server.close();
  await recorder.close();
  process.exit(0);
});
server.listen(Number(portText), '127.0.0.1', () => process.stdout.write('ready\n'));
