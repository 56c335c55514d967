// A TCP relay in front of PostgreSQL that reads the wire protocol as it passes, so a benchmark can
// count what any client (our server, a peer server, plain pg) asks of the database: statements
// executed (simple Query and extended-protocol Execute messages), the SQL text parsed, bytes sent back
// and, of those, bytes of bytea columns (blob.data is the only bytea column these tables have).
// Used only for accounting passes, never while timing: every byte crosses this process.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { onCleanup } from './cleanup.ts';

/** `byType`: bytes from the server per message type (a letter of the protocol), for a closer look. */
/** `appends`: of `statements`, those of the ledger's append (a recorded request's own record, written in the background). */
export type WireCounts = {
  statements: number;
  appends: number;
  bytesFromServer: number;
  byteaBytes: number;
  texts: string[];
  byType: Record<string, number>;
};

/** The ledger append's statements (its blob lookup, then one INSERT … CTE), as test/helpers/sql.ts tells them apart. */
export const isLedgerAppend = (text: string): boolean => /\bINSERT\s+INTO\b|^SELECT sha256 FROM blob WHERE sha256 = ANY/i.test(text);

const empty = (): WireCounts => ({ statements: 0, appends: 0, bytesFromServer: 0, byteaBytes: 0, texts: [], byType: {} });

const BYTEA = 17;

/** Splits a stream into protocol messages (type byte + int32 length); the first client message has no type byte. */
class MessageReader {
  private buffer: Buffer = Buffer.alloc(0);
  private untyped: boolean;
  private readonly onMessage: (type: number, body: Buffer) => void;
  constructor(untyped: boolean, onMessage: (type: number, body: Buffer) => void) {
    this.untyped = untyped;
    this.onMessage = onMessage;
  }

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      if (this.untyped) {
        if (this.buffer.length < 4) return;
        const length = this.buffer.readInt32BE(0);
        if (this.buffer.length < length) return;
        const code = this.buffer.readInt32BE(4);
        this.buffer = this.buffer.subarray(length);
        // SSLRequest and GSSENCRequest are followed by another untyped startup message.
        if (code !== 80877103 && code !== 80877104) this.untyped = false;
        continue;
      }
      if (this.buffer.length < 5) return;
      const length = this.buffer.readInt32BE(1);
      if (this.buffer.length < 1 + length) return;
      this.onMessage(this.buffer[0]!, this.buffer.subarray(5, 1 + length));
      this.buffer = this.buffer.subarray(1 + length);
    }
  }
}

/** `via(url)`: the same database URL, through the relay. `take()`: the counts since the last take. */
export type WireCounter = { port: number; via(url: string): string; take(): WireCounts; close(): Promise<void> };

/** Listens on a free loopback port and relays every connection to `target` (host:port of PostgreSQL). */
export async function startWireCounter(target: { host: string; port: number }): Promise<WireCounter> {
  let counts = empty();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let bytea: number[] = [];
    // Statement name → its text (Parse), and the statement the next Execute runs (Bind), to tell appends apart.
    const prepared = new Map<string, string>();
    let bound = '';
    const fromClient = new MessageReader(true, (type, body) => {
      if (type === 0x51 /* Q */) {
        const text = body.toString('utf8', 0, body.length - 1);
        counts.statements++;
        if (isLedgerAppend(text)) counts.appends++;
        counts.texts.push(text);
      } else if (type === 0x45 /* E */) {
        counts.statements++;
        if (isLedgerAppend(prepared.get(bound) ?? '')) counts.appends++;
      } else if (type === 0x42 /* B */) {
        const portalEnd = body.indexOf(0);
        bound = body.toString('utf8', portalEnd + 1, body.indexOf(0, portalEnd + 1));
      } else if (type === 0x50 /* P */) {
        const nameEnd = body.indexOf(0);
        const text = body.toString('utf8', nameEnd + 1, body.indexOf(0, nameEnd + 1));
        prepared.set(body.toString('utf8', 0, nameEnd), text);
        counts.texts.push(text);
      }
    });
    const fromServer = new MessageReader(false, (type, body) => {
      const letter = String.fromCharCode(type);
      counts.byType[letter] = (counts.byType[letter] ?? 0) + body.length + 5;
      if (type === 0x54 /* T: RowDescription */) {
        bytea = [];
        let at = 2;
        for (let i = 0; i < body.readInt16BE(0); i++) {
          at = body.indexOf(0, at) + 1;
          if (body.readInt32BE(at + 6) === BYTEA) bytea.push(i);
          at += 18;
        }
      } else if (type === 0x44 /* D: DataRow */ && bytea.length) {
        let at = 2;
        for (let i = 0, n = body.readInt16BE(0); i < n; i++) {
          const length = body.readInt32BE(at);
          at += 4;
          if (length > 0) {
            if (bytea.includes(i)) counts.byteaBytes += length;
            at += length;
          }
        }
      }
    });
    client.on('data', (chunk: Buffer) => {
      fromClient.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      counts.bytesFromServer += chunk.length;
      fromServer.push(chunk);
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const close = onCleanup(`wire counter on ${port}`, async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port,
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    take() {
      const out = counts;
      counts = empty();
      return out;
    },
    close,
  };
}
