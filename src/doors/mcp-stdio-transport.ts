// The stdio transport of `dirledger mcp`: one JSON-RPC message a line, each checked against the MCP
// doors' limits (mcp-limits.ts) and, when `admit` is given, the caller's rate, before the SDK sees it.
// What breaks a limit is answered with a JSON-RPC error naming it, and the session goes on: a line
// longer than the size limit is not buffered (its bytes are dropped up to its newline), so a client
// cannot make this process hold more than the limit.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { checkMessage, rpcErrorMessage, tooLarge, type RpcProblem } from './mcp-limits.ts';

export type StdioLimits = {
  /** The longest line (message) accepted, in bytes. */
  maxBytes: number;
  /** Called for each message that passed the limits; a problem returned is answered instead (a request) or the message dropped (a notification). */
  admit?: (message: JSONRPCMessage) => RpcProblem | undefined | Promise<RpcProblem | undefined>;
};

const NEWLINE = 0x0a;
const CR = 0x0d;

export class LimitedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private parts: Buffer[] = [];
  private buffered = 0;
  /** Dropping an over-long line until its newline. */
  private skipping = false;
  /** Lines are handled one after another (admit may wait), so messages reach the SDK in order. */
  private queue: Promise<void> = Promise.resolve();
  private readonly limits: StdioLimits;
  private readonly stdin: NodeJS.ReadableStream;
  private readonly stdout: NodeJS.WritableStream;

  constructor(limits: StdioLimits, stdin: NodeJS.ReadableStream = process.stdin, stdout: NodeJS.WritableStream = process.stdout) {
    this.limits = limits;
    this.stdin = stdin;
    this.stdout = stdout;
  }

  private readonly ondata = (chunk: Buffer): void => {
    let at = 0;
    while (at < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, at);
      const end = newline === -1 ? chunk.length : newline;
      if (this.skipping) {
        if (newline !== -1) this.skipping = false;
      } else if (this.buffered + (end - at) > this.limits.maxBytes) {
        // Answered now, not when (or if) the line ends; the rest of it is dropped as it arrives.
        this.parts = [];
        this.buffered = 0;
        this.skipping = newline === -1;
        this.enqueue(() => this.answer(tooLarge(Number.POSITIVE_INFINITY, this.limits.maxBytes)));
      } else {
        this.parts.push(chunk.subarray(at, end));
        this.buffered += end - at;
        if (newline !== -1) {
          const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
          this.parts = [];
          this.buffered = 0;
          this.enqueue(() => this.handle(line));
        }
      }
      at = end + 1;
    }
  };

  private readonly onstdinerror = (error: Error): void => this.onerror?.(error);

  private enqueue(step: () => Promise<void>): void {
    this.queue = this.queue.then(step).catch((error: Error) => this.onerror?.(error));
  }

  private async handle(raw: Buffer): Promise<void> {
    const line = raw.length && raw[raw.length - 1] === CR ? raw.subarray(0, -1) : raw;
    if (line.toString('latin1').trim() === '') return;
    const checked = checkMessage(line, this.limits.maxBytes);
    if ('problem' in checked) return this.answer(checked.problem);
    const refused = await this.limits.admit?.(checked.message);
    if (refused) {
      const m = checked.message as { id?: string | number; method?: string };
      if (m.method !== undefined && m.id !== undefined) await this.answer({ ...refused, id: m.id });
      return;
    }
    this.onmessage?.(checked.message);
  }

  private answer(problem: RpcProblem): Promise<void> {
    this.onerror?.(new Error(`refused a message (${problem.data.limit}): ${problem.message}`));
    return this.send(rpcErrorMessage(problem));
  }

  /** Resolves once every line read so far has been handled (answered, or passed to the SDK). */
  settled(): Promise<void> {
    return this.queue;
  }

  async start(): Promise<void> {
    this.stdin.on('data', this.ondata);
    this.stdin.on('error', this.onstdinerror);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.ondata);
    this.stdin.off('error', this.onstdinerror);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.parts = [];
    this.onclose?.();
  }
}
