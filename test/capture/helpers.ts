// Shared by the capture tests: event-driven waits and a real local HTTP server on a free port.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { EventInput } from '../../src/ledger/input.ts';
import { event } from '../helpers/ledger.ts';

/** Waits until the predicate holds; fails after a generous timeout, never asserting a duration. */
export async function until(predicate: () => boolean | Promise<boolean>, what = 'the condition', timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export function parsedEvent(id: string, overrides: Record<string, unknown> = {}): EventInput {
  return EventInput.parse(event(id, overrides));
}

export type TestServer = { origin: string; server: Server; stop(): Promise<void> };

export async function startServer(handler: (request: IncomingMessage, response: ServerResponse) => unknown): Promise<TestServer> {
  const server = createServer((request, response) => {
    const handled: unknown = handler(request, response);
    // A client that left mid-request fails the handler's read ('aborted', ECONNRESET): there is no one to answer.
    // Any other error stays unhandled, as it would be without this.
    if (handled instanceof Promise) {
      handled.catch((error: unknown) => {
        if ((error as { code?: string }).code !== 'ECONNRESET') throw error;
        response.destroy();
      });
    }
  });
  // Never closes an idle keep-alive connection itself (Node's default: after 5 s): on a loaded machine the
  // client took up such a connection again just as the server closed it (ECONNRESET). stop() closes them.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Answers as an SSE upstream: `count` events `data: {"n":i…}`, one every `everyMs`, then the end;
 * `extra(i)` adds fields to event i (e.g. a secret). Stops writing when the client goes away.
 */
export function writeSseEvents(
  request: IncomingMessage,
  response: ServerResponse,
  count: number,
  everyMs: number,
  extra: (i: number) => string = () => '',
): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let i = 0;
  const timer = setInterval(() => {
    if (response.destroyed) return clearInterval(timer);
    if (i === count) {
      clearInterval(timer);
      response.end();
      return;
    }
    response.write(`data: {"n":${i}${extra(i)}}\n\n`);
    i++;
  }, everyMs);
  request.on('close', () => clearInterval(timer));
}
