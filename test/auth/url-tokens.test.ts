// Tokens out of URLs: the GraphQL doors (HTTP, SSE, graphql-ws) and the raw WebSocket door answer
// ?token= with 400 TOKEN_IN_URL, recorded with the token redacted; the WebSocket door takes the token
// in a subprotocol entry or a first auth message instead; the link doors keep their query token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { inspect } from '../../src/auth/tokens.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

async function refusalsAt(t: TestApp, door: string) {
  await t.app.services.writer.flush();
  return t.app.services.db.sql.query<{ url: string | null; metadata: any }>(
    `SELECT url, metadata FROM ledger_event WHERE kind = 'REFUSAL' AND metadata->>'door' = $1 AND metadata->>'reason' LIKE 'a token was sent as ?token=%'`,
    [door],
  );
}

/** The HTTP answer to a WebSocket upgrade that was refused, or 'open'. */
function upgrade(url: string, protocols?: string[]): Promise<{ status: number; body: any } | { ws: WebSocket }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    ws.once('open', () => resolve({ ws }));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
  });
}

/** Sends messages on an open socket; resolves with the replies and the close code. */
function talk(ws: WebSocket, messages: unknown[], until: (replies: any[]) => boolean): Promise<{ replies: any[]; closed?: number }> {
  return new Promise((resolve) => {
    const replies: any[] = [];
    ws.on('message', (data) => {
      replies.push(JSON.parse(String(data)));
      if (until(replies)) resolve({ replies });
    });
    ws.once('close', (code) => resolve({ replies, closed: code }));
    for (const m of messages) ws.send(JSON.stringify(m));
  });
}

describe('tokens out of URLs', () => {
  let t: TestApp;
  let ws: string;
  beforeAll(async () => {
    t = await startTestApp('pglite');
    ws = t.origin.replace(/^http/, 'ws');
  });
  afterAll(() => t?.stop());

  it('GraphQL over HTTP and SSE: ?token= is 400 TOKEN_IN_URL, recorded without the token', async () => {
    const token = t.mint('read = all');
    const post = await fetch(`${t.url}?token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{ __typename }"}',
    });
    expect(post.status).toBe(400);
    const body = (await post.json()) as any;
    expect(body.errors[0].extensions.code).toBe('TOKEN_IN_URL');
    expect(body.errors[0].message).toMatch(/Authorization: Bearer/);
    const sse = await fetch(`${t.url}?query=${encodeURIComponent('{ __typename }')}&token=${token}`, { headers: { accept: 'text/event-stream' } });
    expect(sse.status).toBe(400);
    // Even with a good header beside it: the URL has already leaked the token to every hop.
    const both = await fetch(`${t.url}?token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.auth },
      body: '{"query":"{ __typename }"}',
    });
    expect(both.status).toBe(400);
    for (const door of ['GRAPHQL', 'GRAPHQL_SSE']) {
      const rows = await refusalsAt(t, door);
      expect(rows.length, door).toBeGreaterThanOrEqual(1);
      for (const row of rows) expect(row.url).not.toContain(token);
    }
  });

  it('graphql-ws and the raw WebSocket door: an upgrade with ?token= is 400 TOKEN_IN_URL', async () => {
    const token = t.mint('read = all');
    for (const [path, door] of [
      ['/graphql', 'GRAPHQL_WS'],
      ['/api/ws', 'WEBSOCKET'],
    ] as const) {
      const answer = await upgrade(`${ws}${path}?token=${token}`, path === '/graphql' ? ['graphql-transport-ws'] : undefined);
      expect(answer, path).toMatchObject({ status: 400, body: { error: { code: 'TOKEN_IN_URL' } } });
      const rows = await refusalsAt(t, door);
      expect(rows.length, door).toBe(1);
      expect(rows[0]!.url).not.toContain(token);
    }
  });

  it('the raw WebSocket door takes the token as a `dirledger.token.` subprotocol entry (never echoed back)', async () => {
    const answer = await upgrade(`${ws}/api/ws`, ['dirledger', `dirledger.token.${t.mint('tools = ECHO')}`]);
    if (!('ws' in answer)) throw new Error(`refused: ${answer.status}`);
    expect(answer.ws.protocol).toBe('dirledger');
    const { replies } = await talk(answer.ws, [{ type: 'call', id: '1', tool: 'ECHO', args: { text: 'sub' } }], (r) => r.length === 1);
    expect(replies[0]).toMatchObject({ type: 'result', id: '1', result: { outcome: 'OK', output: { text: 'sub' } } });
    answer.ws.close();
    const bad = await upgrade(`${ws}/api/ws`, ['dirledger', 'dirledger.token.not-a-token']);
    expect(bad).toMatchObject({ status: 401 });
  });

  it('or in a first auth message: calls sent right after it wait for its verdict; a bad or revoked token closes the socket', async () => {
    const token = t.mint('tools = ECHO');
    const open = async () => {
      const answer = await upgrade(`${ws}/api/ws`);
      if (!('ws' in answer)) throw new Error(`refused: ${answer.status}`);
      return answer.ws;
    };
    const good = await talk(
      await open(),
      [
        { type: 'auth', token },
        { type: 'call', id: 'a', tool: 'ECHO', args: { text: 'first' } },
        { type: 'ping', id: 'p' },
      ],
      (r) => r.length === 2,
    );
    expect(good.replies).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'result', id: 'a' }), { type: 'pong', id: 'p' }]));
    const forged = await talk(
      await open(),
      [
        { type: 'auth', token: `${token.slice(0, -4)}AAAA` },
        { type: 'call', id: 'b', tool: 'ECHO', args: {} },
      ],
      () => false,
    );
    expect(forged.closed).toBe(4401);
    expect(forged.replies).toEqual([{ type: 'error', error: { code: 'UNAUTHENTICATED', message: 'Missing or invalid credential.' } }]);
    await t.gql(`mutation ($id: String!) { revokeToken(tokenId: $id, reason: "url test") { tokenId } }`, { id: inspect(token).tokenId });
    const revoked = await talk(await open(), [{ type: 'auth', token }], () => false);
    expect(revoked).toEqual({ closed: 4401, replies: [{ type: 'error', error: { code: 'TOKEN_REVOKED', message: 'This token was revoked.' } }] });
    const notJson = await talk(await open(), ['{nope'], () => false);
    expect(notJson.closed).toBe(4401);
  });

  it('a socket admitted by its auth message stays open past the 10 s the first message had', async () => {
    const answer = await upgrade(`${ws}/api/ws`);
    if (!('ws' in answer)) throw new Error(`refused: ${answer.status}`);
    const admitted = await talk(
      answer.ws,
      [
        { type: 'auth', token: t.mint('tools = ECHO') },
        { type: 'ping', id: 'in' },
      ],
      (r) => r.length === 1,
    );
    expect(admitted.replies).toEqual([{ type: 'pong', id: 'in' }]);
    await new Promise((resolve) => setTimeout(resolve, 10_500));
    expect(answer.ws.readyState).toBe(WebSocket.OPEN);
    const later = await talk(answer.ws, [{ type: 'ping', id: 'later' }], (r) => r.length === 1);
    expect(later).toEqual({ replies: [{ type: 'pong', id: 'later' }] });
    answer.ws.close();
  }, 20_000);

  it("the link doors keep their query token (the seed's one-line URL and credential-free links)", async () => {
    const token = t.mint('tools = ECHO');
    const link = await fetch(`${t.origin}/api/tools/ECHO?text=linked&token=${token}`);
    expect(link.status).toBe(200);
    expect(((await link.json()) as any).output).toEqual({ text: 'linked' });
  });
});
