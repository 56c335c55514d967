// The root key is a process secret while its app runs: every logger of the process redacts it, even
// one made before the app. An app that stops lets go of it, so a process that runs many apps one after
// another (the suite's shared workers, benchmarks) keeps only the keys still in use.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ROOT_KEY_SECRET } from '../../src/auth/root-key.ts';
import { createLogger } from '../../src/logger.ts';
import { redactInEveryLog, withProcessSecrets } from '../../src/secrets/registry.ts';
import { startTestApp } from '../helpers/app.ts';

/** A logger made now, and what it writes for `value`. */
function logged(lines: string[]) {
  const logger = createLogger('info', {}, 1, { write: (line: string) => void lines.push(line) });
  return (value: string) => {
    logger.info({ value }, 'a line');
    return JSON.parse(lines.at(-1)!).value as string;
  };
}

describe('the root key in the secret registry', () => {
  it('is redacted by a logger made before the app while the app runs, and is no process secret once the app has stopped', async () => {
    const write = logged([]);
    const t = await startTestApp('pglite');
    const key = t.app.services.config.secrets[ROOT_KEY_SECRET]!;
    try {
      expect(key).toMatch(/^[0-9a-f]{64}$/);
      expect(write(`key ${key}`)).toBe(`key [${ROOT_KEY_SECRET}]`);
      expect(withProcessSecrets({}).map(([, value]) => value)).toContain(key);
    } finally {
      await t.stop();
    }
    expect(withProcessSecrets({}).map(([, value]) => value)).not.toContain(key);
  });

  it('a value registered twice stays until both holders let go; letting go twice counts once', () => {
    const value = randomBytes(32).toString('hex');
    const write = logged([]);
    const first = redactInEveryLog('SHARED_KEY', value);
    const second = redactInEveryLog('SHARED_KEY', value);
    first();
    first();
    expect(write(value)).toBe('[SHARED_KEY]');
    second();
    expect(withProcessSecrets({}).map(([, v]) => v)).not.toContain(value);
    expect(redactInEveryLog('NOTHING', '')).toBeTypeOf('function');
  });
});
