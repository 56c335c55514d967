import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.ts';
import { settingsTable } from '../../src/config-table.ts';

describe('configuration', () => {
  it('defaults to the embedded database on port 4000', () => {
    const config = parseConfig({});
    expect(config.PORT).toBe(4000);
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.DATA_DIR).toMatch(/\.data$/);
  });

  it('names the variable, what was expected and what arrived', () => {
    expect(() => parseConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => parseConfig({ PORT: 'eighty' })).toThrow(/PORT: expected .*number.*, got "eighty"/);
    expect(() => parseConfig({ DATABASE_URL: 'mysql://x' })).toThrow(
      /DATABASE_URL: expected a URL starting with postgresql:\/\/ or postgres:\/\/, got "mysql:\/\/x"/,
    );
    expect(() => parseConfig({ BLOB_STORE: 's3' })).toThrow(/S3_ENDPOINT: expected a value because BLOB_STORE=s3, got nothing/);
  });

  it('reads secrets from the environment and a file, and never echoes a bad value', () => {
    const config = parseConfig({ DIRLEDGER_SECRET_API_KEY: 'sk-123456', SECRETS_FILE: '/s.json' }, () => '{"OTHER_TOKEN":"tok-abcdef"}');
    expect(config.secrets).toEqual({ API_KEY: 'sk-123456', OTHER_TOKEN: 'tok-abcdef' });
    let message = '';
    try {
      parseConfig({ S3_SECRET_ACCESS_KEY: '', DIRLEDGER_SECRET_lower: 'sk-999999' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/DIRLEDGER_SECRET_lower: expected a secret name in UPPER_SNAKE_CASE/);
    expect(() => parseConfig({ DIRLEDGER_SECRET_SHORT: 'abc' })).toThrow(/at least 6 characters, got 3 characters/);
    expect(() => parseConfig({ DIRLEDGER_SECRET_SHORT: 'abc' })).not.toThrow(/abc"/);
  });

  it('a number setting given text says what was expected and quotes the text, not what zod made of it', () => {
    expect(() => parseConfig({ PORT: 'abc' })).toThrow(/PORT: expected number, got "abc"$/m);
    expect(() => parseConfig({ PORT: 'abc' })).not.toThrow(/NaN/);
  });

  it('documents every setting in the README', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(settingsTable());
  });
});
