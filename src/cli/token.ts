// The credential every client command sends: --token, else DIRLEDGER_TOKEN, else the config file
// ($XDG_CONFIG_HOME/dirledger/token, else ~/.config/dirledger/token), trimmed.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const TOKEN_ENV = 'DIRLEDGER_TOKEN';

/** Exit code of a command the server refused for its credential (401), its token's limits (403) or rate (429). */
export const EXIT_REFUSED = 4;

/** Where the token file is read from. */
export function tokenFile(env: Record<string, string | undefined> = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'dirledger', 'token');
}

/** The token to send, or undefined when none is configured anywhere. */
export function resolveToken(flag: string | undefined, env: Record<string, string | undefined> = process.env): string | undefined {
  if (flag) return flag;
  if (env[TOKEN_ENV]) return env[TOKEN_ENV];
  try {
    return readFileSync(tokenFile(env), 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** The help text's account of where the token comes from. */
export const tokenHelp = `The token: --token, else $${TOKEN_ENV}, else the file $XDG_CONFIG_HOME/dirledger/token (default ~/.config/dirledger/token). Exit ${EXIT_REFUSED} when the server refuses it.`;

/** What to print for a door's refusal: its plain message, and where a token is read from when none was sent. */
export function refusalLine(status: number, error: { code?: string; message?: string } | undefined, sent: boolean): string {
  const plain = `${error?.code ?? `HTTP ${status}`}: ${error?.message ?? 'refused'}`;
  return sent ? plain : `${plain} No token was sent: pass --token, set ${TOKEN_ENV}, or write it to ${tokenFile()}.`;
}

/** A refusal's code and message from either answer shape: a door's `error`, or the GraphQL door's `errors[0]`. */
export function refusalOf(
  body: { error?: { code?: string; message?: string }; errors?: { message: string; extensions?: { code?: string } }[] } | null | undefined,
): { code?: string; message?: string } | undefined {
  const first = body?.errors?.[0];
  return body?.error ?? (first && { ...(first.extensions?.code && { code: first.extensions.code }), message: first.message });
}

export const refusalCode = (status: number) => (status === 401 ? 'UNAUTHENTICATED' : status === 429 ? 'RATE_LIMITED' : 'FORBIDDEN');

export const isRefusalStatus = (status: number) => status === 401 || status === 403 || status === 429;
