// The runner's MCP client transport over a child process's stdio: the SDK's own line framing
// (ReadBuffer, serializeMessage) and its default environment, and the exact bytes each way kept
// for the ledger, since the SDK's StdioClientTransport owns its pipes and shows neither.
// The program is spawned with its argument vector (no shell); stderr is ignored, as before.
import { spawn, type ChildProcess } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BoundedBytes } from '../capture/payload.ts';

/** What crossed the pipes: stdin as written, stdout as read, and how the process ended. */
export type StdioWire = {
  argv: string[];
  sent: BoundedBytes;
  received: BoundedBytes;
  /** Set once the process has exited. */
  exit?: { code: number | null; signal: NodeJS.Signals | null };
};

/** How long close() waits after ending stdin, and again after SIGTERM, before the next step. */
const CLOSE_GRACE_MS = 2_000;

export class RecordingStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly wire: StdioWire;
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private readonly lines = new ReadBuffer();

  private readonly onReceived?: (chunk: Buffer) => void;
  /** `onReceived`: each stdout chunk as it arrives (for streamCapture). */
  constructor(argv: string[], maxBytes: number, onReceived?: (chunk: Buffer) => void) {
    this.onReceived = onReceived;
    this.wire = { argv, sent: new BoundedBytes(maxBytes), received: new BoundedBytes(maxBytes) };
  }

  start(): Promise<void> {
    if (this.child) throw new Error('RecordingStdioTransport already started');
    const [command, ...args] = this.wire.argv;
    const child = spawn(command!, args, { env: getDefaultEnvironment(), stdio: ['pipe', 'pipe', 'ignore'], shell: false });
    this.child = child;
    this.exited = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.wire.exit = { code, signal };
        resolve();
        this.onclose?.();
      }),
    );
    child.stdin!.on('error', (error) => this.onerror?.(error));
    child.stdout!.on('data', (chunk: Buffer) => {
      this.wire.received.push(chunk);
      this.onReceived?.(chunk);
      try {
        this.lines.append(chunk);
      } catch (error) {
        // A line past the SDK's bound (10 MiB): the session cannot go on.
        this.onerror?.(error as Error);
        child.kill('SIGKILL');
        return;
      }
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.lines.readMessage();
        } catch (error) {
          this.onerror?.(error as Error); // the bad line is consumed; the next one is read
          continue;
        }
        if (!message) break;
        this.onmessage?.(message);
      }
    });
    let spawned = false;
    return new Promise((resolve, reject) => {
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.once('error', (error) => {
        // A program that never started (not found, not executable) has nothing to wait for.
        if (!spawned) this.wire.exit ??= { code: null, signal: null };
        reject(error);
        this.onerror?.(error);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error('the MCP server process is not running'));
    const line = serializeMessage(message);
    this.wire.sent.push(line);
    return new Promise((resolve) => (stdin.write(line) ? resolve() : stdin.once('drain', () => resolve())));
  }

  /** Ends stdin and waits for the process; SIGTERM, then SIGKILL, if it does not go. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.wire.exit) return;
    const gone = () => this.wire.exit !== undefined;
    const wait = () => Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
    child.stdin?.end();
    await wait();
    if (!gone()) child.kill('SIGTERM');
    if (!gone()) await wait();
    if (!gone()) child.kill('SIGKILL');
    if (!gone()) await wait();
  }
}
