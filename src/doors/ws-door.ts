// The raw WebSocket JSON door at /api/ws (graphql-ws keeps /graphql; app.ts routes each upgrade by
// path). Text frames only, one JSON message each:
//   in:  {"type": "call", "id"?: string, "tool": NAME, "args"?: {...}, "dryRun"?: bool, "form"?: FORM}
//        {"type": "ping", "id"?: string}
//        {"type": "auth", "token": TOKEN}   first, when the upgrade carried no token (a browser cannot
//                                           set a header); never recorded as an exchange
//   A token goes in the Authorization header, a `dirledger.token.<token>` subprotocol entry (with
//   `dirledger` beside it) or the auth message; never in the URL (?token= is 400 TOKEN_IN_URL).
//   out: {"type": "result", "id", "result": DispatchResult}
//        {"type": "error", "id", "error": {"code", "message"}}   (the message was not a call)
//        {"type": "pong", "id"}
//        {"type": "error", "id", "error": {"code": "RATE_LIMITED", "message", "retryAfterSeconds"}}
//                                 (each message spends one request of the token's rate; recorded)
//        {"type": "error", "error": {"code": "TOKEN_EXPIRED" | "TOKEN_REVOKED", "message"}}, then the
//        socket closes (4403 TOKEN_EXPIRED, 4401 TOKEN_REVOKED) the moment its token expires or is
//        revoked, recorded as a REFUSAL first, like any refusal
// Each call is its own exchange at the boundary (request IN = the message, answer OUT = the reply),
// and calls on one socket run concurrently; replies carry the call's id.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { z } from 'zod';
import type { Checked, Grant } from '../auth/verdict.ts';
import type { Refusal } from '../auth/verdict.ts';
import { runAsCaller } from '../context/request.ts';
import { captureCall, InvocationHeaders, invocationFromHeaders, jsonAnswer, type BoundaryAnswer } from '../capture/boundary.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { lapseCode, watchLapse } from '../live/lease.ts';
import type { Services } from '../services.ts';
import { isPlainName, jsonTextTooDeep, tooDeep } from '../limits.ts';
import { describeIssues } from '../validation.ts';
import { recordRefusal } from './authenticate.ts';
import { CallMessage } from './call-message.ts';

export const wsDoorPath = '/api/ws';
/** The subprotocol this door speaks (optional for clients; chosen when offered). */
export const wsSubprotocol = 'dirledger';

const Id = z.string().min(1).max(256).optional();
const InMessage = z.discriminatedUnion('type', [CallMessage.extend({ type: z.literal('call'), id: Id }), z.strictObject({ type: z.literal('ping'), id: Id })]);

/** The codes this door closes a socket with: 4000 plus the HTTP status of the refusal, or 1011. */
export const WsCloseCode = { UNAUTHENTICATED: 4401, FORBIDDEN: 4403, RATE_LIMITED: 4429, INTERNAL: 1011 } as const;

/** How long a socket opened without a token has to send its auth message. */
const AUTH_WAIT_MS = 10_000;
const AuthMessage = z.strictObject({ type: z.literal('auth'), token: z.string().min(1).max(8_192) });

export type WsDoor = {
  /**
   * `grant`: the token the upgrade presented (checked by app.ts); every call on the socket runs under it.
   * `authenticate`: the upgrade carried no token, so the first message must (checked and recorded by it).
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, grant?: Grant, authenticate?: (token: string | undefined) => Promise<Checked>): void;
  close(): Promise<void>;
};

export function createWsDoor(services: Services): WsDoor {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: services.config.PAYLOAD_MAX_BYTES,
    handleProtocols: (protocols) => (protocols.has(wsSubprotocol) ? wsSubprotocol : false),
  });
  wss.on('connection', (socket: WebSocket, request: IncomingMessage, upgradeGrant?: Grant, authenticate?: (token: string | undefined) => Promise<Checked>) => {
    const url = `ws://${request.headers.host ?? 'localhost'}${request.url ?? wsDoorPath}`;
    // An action id names one call, never a whole socket.
    const { actionId: _socketAction, ...invocation } = invocationFromHeaders(request.headers as Record<string, string>);
    // Messages wait for the auth message's verdict, in order.
    let admitted: Promise<Grant | undefined | null> = Promise.resolve(upgradeGrant);
    let settle: ((grant: Grant | null) => void) | undefined;
    let authWait: NodeJS.Timeout | undefined;
    if (authenticate) {
      admitted = new Promise((resolve) => (settle = resolve));
      authWait = setTimeout(
        () => refuse(WsCloseCode.UNAUTHENTICATED, 'UNAUTHENTICATED', `Expected a first message {"type":"auth","token":…} within ${AUTH_WAIT_MS / 1000} s.`),
        AUTH_WAIT_MS,
      );
      authWait.unref();
      socket.once('close', () => clearTimeout(authWait));
    }
    const refuse = (code: number, errorCode: string, message: string) => {
      settle?.(null);
      settle = undefined;
      if (socket.readyState === socket.OPEN) {
        socket.send(JSON.stringify({ type: 'error', error: { code: errorCode, message } }));
        socket.close(code, errorCode);
      }
    };
    // The socket lives no longer than its token: closed, recorded first, when it expires or is revoked.
    let lapsed: Promise<void> | undefined;
    const lapse = (grant: Grant, refusal: Refusal) => {
      if (lapsed) return;
      const code = lapseCode(refusal);
      lapsed = services.authority
        .record(
          { ...refusal, reason: `${refusal.reason}, closing a WebSocket` },
          { actionId: randomUUID(), method: 'WS', url, ...(grant.task && { task: grant.task }), ...(grant.agent && { agent: grant.agent }) },
        )
        .catch((error) => services.logger.error({ err: error }, 'recording the close of a WebSocket whose token lapsed failed'))
        .then(() =>
          refuse(
            code === ErrorCode.TOKEN_REVOKED ? WsCloseCode.UNAUTHENTICATED : WsCloseCode.FORBIDDEN,
            code,
            `${refusal.message} This socket is closed${code === ErrorCode.TOKEN_REVOKED ? '' : '; connect again with a valid token'}.`,
          ),
        );
    };
    void admitted.then((grant) => {
      if (!grant || socket.readyState !== socket.OPEN) return;
      const stop = watchLapse(grant, 'WEBSOCKET', services, (refusal) => lapse(grant, refusal));
      socket.once('close', stop);
    });
    // Each message spends one request of the token's rate, as each request on an HTTP door does.
    const overRate = async (grant: Grant, data: RawData): Promise<string | undefined> => {
      const limited = await services.authority.rate(grant, 'WEBSOCKET');
      if (!limited) return undefined;
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value);
      // An action id names one call, never a whole socket: each refusal gets its own.
      headers.delete(InvocationHeaders.actionId);
      await recordRefusal(services, limited, grant, { method: 'WS', url, headers });
      return JSON.stringify({
        type: 'error',
        ...idOf(data),
        error: { code: 'RATE_LIMITED', message: limited.message, retryAfterSeconds: limited.retryAfterSeconds },
      });
    };
    socket.on('message', (data: RawData, isBinary: boolean) => {
      if (settle) {
        const first = settle;
        settle = undefined;
        // The first message came in time: whatever its verdict, the wait is over.
        clearTimeout(authWait);
        let token: string | undefined;
        try {
          const parsed = AuthMessage.safeParse(JSON.parse(toBuffer(data).toString('utf8')));
          if (parsed.success) token = parsed.data.token;
        } catch {
          // not JSON: refused below as no credential
        }
        void authenticate!(token).then(
          (checked) => {
            if (checked.ok) return first(checked.grant);
            const { refusal } = checked;
            refuse(
              refusal.status === 429 ? WsCloseCode.RATE_LIMITED : refusal.status === 403 ? WsCloseCode.FORBIDDEN : WsCloseCode.UNAUTHENTICATED,
              refusal.status === 429
                ? 'RATE_LIMITED'
                : refusal.status === 403
                  ? 'FORBIDDEN'
                  : refusal.limit === 'revoked'
                    ? 'TOKEN_REVOKED'
                    : 'UNAUTHENTICATED',
              refusal.message,
            );
          },
          (error) => {
            services.logger.error({ err: error }, 'checking a WebSocket auth message failed');
            refuse(WsCloseCode.INTERNAL, 'INTERNAL_SERVER_ERROR', 'Unexpected error.');
          },
        );
        return;
      }
      void admitted
        .then((grant) => {
          if (grant === null || lapsed) return undefined;
          // A message may arrive before the expiry timer fires.
          const refusal = grant && services.authority.recheck(grant, 'WEBSOCKET');
          if (refusal) return void lapse(grant, refusal);
          return (grant ? overRate(grant, data) : Promise.resolve(undefined)).then(
            (limited) =>
              limited ??
              runAsCaller({ door: 'WEBSOCKET', ...(grant && { grant }) }, () =>
                answer(services, { url, headers: request.headers as Record<string, string | string[]>, invocation }, data, isBinary),
              ),
          );
        })
        .then((reply) => {
          if (reply !== undefined && socket.readyState === socket.OPEN) socket.send(reply);
        })
        .catch((error) => {
          // The door always answers: an unexpected failure is masked, like every other door's.
          services.logger.error({ err: error }, 'unexpected error in the WebSocket door');
          if (socket.readyState === socket.OPEN)
            socket.send(JSON.stringify({ type: 'error', ...idOf(data), error: { code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.' } }));
        });
    });
    socket.on('error', (error) => services.logger.warn({ err: error }, 'WebSocket door socket error'));
  });
  return {
    handleUpgrade(request, socket, head, grant, authenticate) {
      wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request, grant, authenticate));
    },
    async close() {
      for (const client of wss.clients) client.close(1001, 'server stopping');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

type SocketInfo = { url: string; headers: Record<string, string | string[]>; invocation: ReturnType<typeof invocationFromHeaders> };

/** The id of a message, when a string one can be read from it (for a reply to a message that failed). */
function idOf(data: RawData): { id?: string } {
  const bytes = toBuffer(data);
  if (jsonTextTooDeep(bytes)) return {};
  try {
    const id = (JSON.parse(bytes.toString('utf8')) as { id?: unknown })?.id;
    return typeof id === 'string' ? { id } : {};
  } catch {
    return {};
  }
}

function toBuffer(data: RawData): Buffer {
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
}

/** Answers one message; returns the reply's text. */
async function answer(services: Services, info: SocketInfo, data: RawData, isBinary: boolean): Promise<string> {
  const bytes = toBuffer(data);
  const parsed = parse(bytes, isBinary);
  const id = parsed.ok ? parsed.message.id : parsed.id;
  const tool = parsed.ok && parsed.message.type === 'call' ? parsed.message.tool : undefined;
  const sent = await captureCall(
    services,
    {
      door: 'WEBSOCKET',
      request: { method: 'WS', url: info.url, headers: info.headers, body: bytes },
      invocation: info.invocation,
      ...(tool && isPlainName(tool) ? { tool } : {}),
    },
    async () => {
      if (!parsed.ok) return reply({ type: 'error', ...(id !== undefined && { id }), error: { code: parsed.error.code, message: parsed.error.message } }, 400);
      const m = parsed.message;
      if (m.type === 'ping') return reply({ type: 'pong', ...(id !== undefined && { id }) });
      const result = await services.dispatcher.dispatch({
        tool: m.tool,
        args: m.args ?? {},
        ...(m.dryRun !== undefined && { dryRun: m.dryRun }),
        form: m.form ?? 'WEBSOCKET',
      });
      return reply({ type: 'result', ...(id !== undefined && { id }), result });
    },
    recordedReply,
  ).catch((error: unknown) => {
    if (!(error instanceof DomainError)) throw error;
    return reply({ type: 'error', ...(id !== undefined && { id }), error: { code: error.code, message: error.message } }, 400);
  });
  return JSON.stringify(sent.body);
}

/** One reply message, and the status its answer OUT is recorded with. */
type Reply = { body: unknown; status: number };

function reply(body: unknown, status = 200): Reply {
  return { body, status };
}

const recordedReply = (reply: Reply): BoundaryAnswer => ({ ...jsonAnswer(reply.body), status: reply.status });

type Parsed = { ok: true; message: z.output<typeof InMessage> } | { ok: false; id?: string; error: DomainError };

function parse(bytes: Buffer, isBinary: boolean): Parsed {
  const bad = (message: string, id?: string): Parsed => ({ ok: false, ...(id !== undefined && { id }), error: new DomainError(ErrorCode.BAD_INPUT, message) });
  if (isBinary) return bad('Expected a text frame holding one JSON message, got a binary frame.');
  if (jsonTextTooDeep(bytes)) return { ok: false, error: tooDeep('one message') };
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    return bad(`Expected one JSON message in UTF-8, got ${(error as Error).message}.`);
  }
  const rawId = value && typeof value === 'object' ? (value as { id?: unknown }).id : undefined;
  const id = typeof rawId === 'string' ? rawId : undefined;
  const result = InMessage.safeParse(value);
  if (!result.success) return bad(`Invalid message: ${describeIssues(result.error, value).join('; ')}.`, id);
  return { ok: true, message: result.data };
}
