// The one structured logger, created at the edge and handed inward.
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export function createLogger(level: string, secrets: Record<string, string> = {}): Logger {
  const values = Object.entries(secrets);
  return pino({
    level,
    base: undefined,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.password'], censor: '[REDACTED]' },
    hooks: {
      // No secret value reaches a log line, whatever field it hides in.
      streamWrite: (line) => {
        let out = line;
        for (const [name, value] of values) if (out.includes(value)) out = out.split(value).join(`[${name}]`);
        return out;
      },
    },
  });
}
