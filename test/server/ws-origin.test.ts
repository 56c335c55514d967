// WebSocket upgrades and the browser Origin: no preflight guards a socket, so both WebSocket doors
// (graphql-ws on /graphql, the JSON door on /api/ws) refuse a page of another site with 403 before the
// socket opens, recorded as a REFUSAL (limit origin). This server's own pages (the console), the
// origins CORS_ORIGINS names, and clients that send no Origin (not browsers) open as before.
// Shown with real `ws` clients sending Origin, and graphql-ws's own client.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const ALLOWED = 'https://app.example.com';

/** Opens a socket with these headers: the upgrade's status and body when refused, 101 when it opened. */
function upgrade(url: string, headers: Record<string, string>, protocol?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocol ?? [], { headers });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

/** graphql-ws's client, its sockets carrying this Origin (as a browser's would). */
async function queryOver(t: TestApp, origin: string | undefined): Promise<unknown> {
  class OriginSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, origin ? { origin } : {});
    }
  }
  const client = createClient({
    url: t.url.replace(/^http/, 'ws'),
    webSocketImpl: OriginSocket,
    retryAttempts: 0,
    lazy: true,
    connectionParams: { authorization: `Bearer ${t.token}` },
  });
  try {
    return await new Promise((resolve, reject) => {
      let result: unknown;
      client.subscribe({ query: '{ __typename }' }, { next: (r) => (result = r), error: reject, complete: () => resolve(result) });
    });
  } finally {
    await client.dispose();
  }
}

describe('WebSocket upgrades check the browser Origin', () => {
  let t: TestApp;
  let ws: { graphql: string; door: string };
  beforeAll(async () => {
    t = await startTestApp('pglite', { CORS_ORIGINS: ALLOWED });
    const base = t.origin.replace(/^http/, 'ws');
    ws = { graphql: `${base}/graphql`, door: `${base}/api/ws` };
  });
  afterAll(async () => t?.stop());

  const originRefusals = async () => {
    await t.app.services.writer.flush();
    const rows = await t.app.services.db.prisma.ledgerEvent.findMany({ where: { kind: 'REFUSAL' }, orderBy: { position: 'asc' } });
    return rows.map((r) => r.metadata as Record<string, unknown>).filter((m) => m.limit === 'origin');
  };

  it('a page of another site gets 403 FORBIDDEN (limit origin) on both doors, even with a good token, and it is recorded', async () => {
    const foreign = ['https://evil.example', 'null', `http://127.0.0.1:1`, `${ALLOWED}:8443`, 'http://app.example.com'];
    for (const url of [ws.graphql, ws.door]) {
      for (const origin of foreign) {
        const answer = await upgrade(url, { origin, ...t.auth }, url === ws.graphql ? 'graphql-transport-ws' : undefined);
        expect(answer.status, `${url} ${origin}`).toBe(403);
        const body = JSON.parse(answer.body);
        expect(body.error).toMatchObject({ code: 'FORBIDDEN', limit: 'origin' });
        expect(body.error.message).toContain(JSON.stringify(origin));
        expect(body.error.message).toContain('CORS_ORIGINS');
      }
    }
    const recorded = await originRefusals();
    expect(recorded).toHaveLength(10);
    expect(new Set(recorded.map((m) => m.door))).toEqual(new Set(['GRAPHQL_WS', 'WEBSOCKET']));
    await expect(queryOver(t, 'https://evil.example')).rejects.toBeTruthy();
  });

  it('an origin CORS_ORIGINS names, this server itself, and a client without Origin open and are answered', async () => {
    for (const origin of [ALLOWED, t.origin, undefined]) {
      expect(await queryOver(t, origin), String(origin)).toEqual({ data: { __typename: 'Query' } });
      const headers = { ...t.auth, ...(origin && { origin }) };
      expect((await upgrade(ws.door, headers)).status, String(origin)).toBe(101);
      expect((await upgrade(ws.graphql, headers, 'graphql-transport-ws')).status, String(origin)).toBe(101);
    }
  });
});

describe('CORS_ORIGINS unset: only this server’s own pages may open a socket from a browser', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite');
  });
  afterAll(async () => t?.stop());

  it('the console’s own origin opens; any other is 403', async () => {
    expect(await queryOver(t, t.origin)).toEqual({ data: { __typename: 'Query' } });
    const refused = await upgrade(`${t.origin.replace(/^http/, 'ws')}/graphql`, { origin: ALLOWED }, 'graphql-transport-ws');
    expect(refused.status).toBe(403);
  });
});
