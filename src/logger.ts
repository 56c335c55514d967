// The one structured logger, created at the edge and handed inward.
import { pino, type DestinationStream, type Logger as PinoLogger, type LoggerOptions } from 'pino';
import { redactTokens } from './ledger/redact.ts';

export type Logger = PinoLogger;

/** Secrets every logger of the process redacts, whenever it was created (the root key, loaded after some loggers exist). */
const processSecrets = new Map<string, string>();
export function redactInEveryLog(name: string, value: string): void {
  if (value) processSecrets.set(value, name);
}

/** `fd` 2 writes to stderr (the stdio MCP server keeps stdout for the protocol); `destination` (tests) overrides both. */
export function createLogger(level: string, secrets: Record<string, string> = {}, fd: 1 | 2 = 1, destination?: DestinationStream): Logger {
  const values = Object.entries(secrets);
  const options: LoggerOptions = {
    level,
    base: undefined,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.password'], censor: '[REDACTED]' },
    hooks: {
      // No secret value or bearer token reaches a log line, whatever field it hides in.
      streamWrite: (line) => {
        let out = redactTokens(line);
        for (const [name, value] of values) if (out.includes(value)) out = out.split(value).join(`[${name}]`);
        for (const [value, name] of processSecrets) if (out.includes(value)) out = out.split(value).join(`[${name}]`);
        return out;
      },
    },
  };
  if (destination) return pino(options, destination);
  return fd === 1 ? pino(options) : pino(options, pino.destination({ fd, sync: true }));
}
