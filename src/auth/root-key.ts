// The root key every token is signed with: the DIRLEDGER_ROOT_KEY secret when registered (several
// instances share it), else DATA_DIR/root.key, created on the first start. It joins the secret
// registry, so its value never reaches a stored byte, a log line or an error.
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { redactInEveryLog } from '../secrets/registry.ts';

export const ROOT_KEY_SECRET = 'DIRLEDGER_ROOT_KEY';
const hex64 = /^[0-9a-f]{64}$/;

export type RootKeyed = {
  config: Config;
  rootKey: Buffer;
  created: boolean;
  /** Lets go of the key in the secret registry (an app that stops); a process that keeps it never calls it. */
  release: () => void;
};

/** The config with the root key registered as a secret; creates DATA_DIR/root.key (mode 0600) when there is none. */
export function withRootKey(config: Config): RootKeyed {
  const registered = config.secrets[ROOT_KEY_SECRET];
  if (registered !== undefined) {
    const rootKey = keyFrom(registered, `the ${ROOT_KEY_SECRET} secret`);
    const release = redactInEveryLog(ROOT_KEY_SECRET, registered);
    return { config, rootKey, created: false, release };
  }
  const file = path.join(config.DATA_DIR, 'root.key');
  let created = false;
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(config.DATA_DIR, { recursive: true });
    text = randomBytes(32).toString('hex');
    try {
      // wx: two processes starting at once never both create a key.
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${text}\n`);
      closeSync(fd);
      created = true;
    } catch (raced) {
      if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
      text = readFileSync(file, 'utf8').trim();
    }
  }
  const rootKey = keyFrom(text, file);
  const release = redactInEveryLog(ROOT_KEY_SECRET, text);
  return { config: { ...config, secrets: { ...config.secrets, [ROOT_KEY_SECRET]: text } }, rootKey, created, release };
}

function keyFrom(text: string, where: string): Buffer {
  // The message names where the key came from and what it should be, never what it holds.
  if (!hex64.test(text)) throw new Error(`Expected the root key in ${where} to be 64 lowercase hex characters (32 bytes); it is not.`);
  return Buffer.from(text, 'hex');
}
