// The stdio side of `dirledger mcp`: newline-delimited JSON-RPC on stdin and stdout, like the SDK's
// StdioServerTransport, except that a line it cannot take is answered on stdout (-32700 not JSON,
// -32600 not a JSON-RPC message, -32602 params the SDK's schema refuses) instead of only logged,
// so a client is never left waiting. A line over 10 MiB (the SDK's bound) ends the session.
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { readRpc } from './mcp-protocol.ts';

export const STDIO_MAX_LINE_BYTES = 10 * 1024 * 1024;

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private buffer: Buffer | undefined;
  private closed = false;
  private readonly input: Readable;
  private readonly output: Writable;

  constructor(input: Readable = process.stdin, output: Writable = process.stdout) {
    this.input = input;
    this.output = output;
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    this.drain();
    if ((this.buffer?.length ?? 0) > STDIO_MAX_LINE_BYTES) this.tooLong();
  };

  private tooLong(): void {
    this.buffer = undefined;
    this.onerror?.(new Error(`ReadBuffer exceeded maximum size of ${STDIO_MAX_LINE_BYTES} bytes`));
    void this.close();
  }

  private readonly onInputError = (error: Error): void => this.onerror?.(error);

  private drain(): void {
    while (this.buffer && !this.closed) {
      const at = this.buffer.indexOf(0x0a);
      if (at === -1) break;
      let line = this.buffer.subarray(0, at);
      this.buffer = this.buffer.subarray(at + 1);
      if (line.at(-1) === 0x0d) line = line.subarray(0, -1);
      if (line.length > STDIO_MAX_LINE_BYTES) {
        this.tooLong();
        return;
      }
      if (line.length === 0) continue;
      this.take(line);
    }
  }

  private take(line: Buffer): void {
    const read = readRpc(line);
    if ('refused' in read) {
      void this.send(read.refused as JSONRPCMessage);
      return;
    }
    for (const message of read.messages) this.onmessage?.(message);
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.buffer = undefined;
    this.onclose?.();
  }
}
