// Live-test helpers: graphql-ws and SSE subscribers that collect what they receive, and waits.
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export type Received = {
  events: any[];
  errors: any[];
  completed: boolean;
  /** Resolves when the subscription completes or errors. */
  done: Promise<void>;
  stop(): void;
};

/** A graphql-ws client; `token` goes in the connection_init payload. */
export function wsClient(graphqlUrl: string, token?: string): Client {
  return createClient({
    url: graphqlUrl.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    ...(token ? { connectionParams: { token } } : {}),
  });
}

/** Subscribes over graphql-ws; `field` is the root field whose values are collected. */
export function wsSubscribe(client: Client, query: string, variables: Record<string, unknown>, field: string): Received {
  const received: Received = { events: [], errors: [], completed: false, done: Promise.resolve(), stop: () => {} };
  received.done = new Promise<void>((resolve) => {
    received.stop = client.subscribe(
      { query, variables },
      {
        next: (result) => {
          if (result.errors) received.errors.push(...result.errors);
          const value = (result.data as any)?.[field];
          if (value) received.events.push(value);
        },
        error: (error) => {
          received.errors.push(error);
          resolve();
        },
        complete: () => {
          received.completed = true;
          resolve();
        },
      },
    );
  });
  return received;
}

/** Subscribes over GraphQL SSE (Yoga's distinct-connection mode) with a plain fetch reader. */
export function sseSubscribe(graphqlUrl: string, query: string, variables: Record<string, unknown>, field: string, token?: string): Received {
  const controller = new AbortController();
  const received: Received = { events: [], errors: [], completed: false, done: Promise.resolve(), stop: () => controller.abort() };
  received.done = (async () => {
    try {
      const response = await fetch(graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query, variables }),
        signal: controller.signal,
      });
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trimStart())
            .join('\n');
          if (event === 'complete') {
            received.completed = true;
            return;
          }
          if (!data) continue;
          const result = JSON.parse(data);
          if (result.errors) received.errors.push(...result.errors);
          const value = result.data?.[field];
          if (value) received.events.push(value);
        }
      }
      received.completed = true;
    } catch (error) {
      if ((error as Error).name !== 'AbortError') received.errors.push(error);
    }
  })();
  return received;
}

export async function waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const eventsQuery = `subscription ($filter: LedgerFilter, $after: String) {
  ledgerEvents(filter: $filter, after: $after) { id position cursor toolName kind }
}`;

export const streamQuery = `subscription ($actionId: ID!) {
  streamCapture(actionId: $actionId) { actionId sequence offset size text base64 final state sha256 totalSize cut }
}`;
