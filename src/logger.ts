// The one structured logger, created at the edge and handed inward.
import { pino, type DestinationStream, type Logger as PinoLogger, type LoggerOptions } from 'pino';
import { SecretRedactor } from './secrets/redact.ts';
import { processSecretsVersion, withProcessSecrets } from './secrets/registry.ts';

export type Logger = PinoLogger;

/** `fd` 2 writes to stderr (the stdio MCP server keeps stdout for the protocol); `destination` (tests) overrides both. */
export function createLogger(level: string, secrets: Record<string, string> = {}, fd: 1 | 2 = 1, destination?: DestinationStream): Logger {
  // The ledger's one rule (every registered value in every encoding, and tokens), rebuilt when a process secret joins.
  let redactor = new SecretRedactor(withProcessSecrets(secrets));
  let version = processSecretsVersion();
  const options: LoggerOptions = {
    level,
    base: undefined,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.password'], censor: '[REDACTED]' },
    hooks: {
      // No secret value or bearer token reaches a log line, whatever field it hides in.
      streamWrite: (line) => {
        if (version !== processSecretsVersion()) {
          redactor = new SecretRedactor(withProcessSecrets(secrets));
          version = processSecretsVersion();
        }
        return redactor.text(line, new Set());
      },
    },
  };
  if (destination) return pino(options, destination);
  return fd === 1 ? pino(options) : pino(options, pino.destination({ fd, sync: true }));
}
