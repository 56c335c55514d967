// Drivers for hostile-input tests: each door reached through its real transport, every answer
// bounded in time, so a hang fails as a timeout instead of stalling the suite.
import WebSocket from 'ws';
import type { TestApp } from './app.ts';

/** `n` nested arrays as raw JSON text, never built as a value (JSON.stringify would overflow first). */
export const deepJson = (n: number): string => '['.repeat(n) + ']'.repeat(n);

export type Answer = { status: number; text: string; ms: number; json?: any };

function withJson(answer: Omit<Answer, 'json'>): Answer {
  try {
    return { ...answer, json: JSON.parse(answer.text) };
  } catch {
    return answer;
  }
}

/** One HTTP request with the admin token; fails after `timeoutMs` instead of hanging. */
export async function send(
  t: TestApp,
  path: string,
  init: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
  timeoutMs = 10_000,
): Promise<Answer> {
  const started = performance.now();
  const request = () =>
    fetch(`${t.origin}${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { 'content-type': 'application/json', accept: 'application/json', ...t.auth, ...init.headers },
      ...(init.body !== undefined && { body: typeof init.body === 'string' ? init.body : new Uint8Array(init.body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  // A pooled keep-alive socket the server closed as idle (a busy machine stretches the gaps) resets
  // before any answer: sent again once on a fresh socket. A server that resets every time still fails.
  const response = await request().catch((error: Error & { cause?: { code?: string } }) => {
    if (error.cause?.code === 'ECONNRESET' || error.cause?.code === 'UND_ERR_SOCKET') return request();
    throw error;
  });
  const text = await response.text();
  return withJson({ status: response.status, text, ms: performance.now() - started });
}

/** A GraphQL document with variables, or raw body text. */
export const graphql = (t: TestApp, body: string, headers: Record<string, string> = {}) => send(t, '/graphql', { body, headers });

/** MCP tools/call with a raw `params` text. */
export const mcpCall = (t: TestApp, params: string) =>
  send(t, '/mcp', { body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params}}`, headers: { accept: 'application/json, text/event-stream' } });

function opened(url: string, protocol: string | undefined, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocol ? [protocol] : [], { headers });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

function nextMessage(ws: WebSocket, match: (m: any) => boolean, timeoutMs: number): Promise<any> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.off('message', onMessage);
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString());
      if (!match(message)) return;
      clearTimeout(timer);
      ws.off('message', onMessage);
      resolve(message);
    };
    ws.on('message', onMessage);
  });
}

/** The raw WebSocket door: `ask` sends one frame and waits for the reply carrying `id` (or any reply). */
export async function wsDoor(t: TestApp) {
  const ws = await opened(`${t.origin.replace(/^http/, 'ws')}/api/ws`, 'dirledger', t.auth);
  return {
    ws,
    ask(frame: string | Buffer, id?: string, timeoutMs = 10_000): Promise<any> {
      const reply = nextMessage(ws, (m) => id === undefined || m.id === id, timeoutMs);
      ws.send(frame, { binary: Buffer.isBuffer(frame) });
      return reply;
    },
    close: () => ws.close(),
  };
}

/** graphql-ws spoken by hand, so a test sees exactly what the server sends and how it closes. */
export async function graphqlWs(t: TestApp) {
  const ws = await opened(t.url.replace(/^http/, 'ws'), 'graphql-transport-ws', {});
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  const acked = nextMessage(ws, (m) => m.type === 'connection_ack', 10_000);
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: t.auth.authorization } }));
  await acked;
  return {
    ws,
    closed,
    /** Sends a raw subscribe frame text and waits for the first message for `id`. */
    subscribe(id: string, frame: string, timeoutMs = 10_000): Promise<any> {
      const reply = nextMessage(ws, (m) => m.id === id, timeoutMs);
      ws.send(frame);
      return reply;
    },
    next: (id: string, timeoutMs = 10_000) => nextMessage(ws, (m) => m.id === id, timeoutMs),
    close: () => ws.close(),
  };
}
