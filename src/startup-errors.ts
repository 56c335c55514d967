// A start that fails says so in one line naming the setting and what to do, instead of a stack:
// the database it cannot open (DATABASE_URL), the port it cannot listen on (PORT, HOST).
import type { Config } from './config.ts';
import { isDatabaseUnavailable } from './db/errors.ts';

/** Exit codes of `dirledger serve`: 2 a setting is wrong, 3 something it needs is not there. */
export const EXIT_SETTING = 2;
export const EXIT_UNAVAILABLE = 3;

export type StartProblem = { message: string; exitCode: number };

/** The URL with its password replaced, for printing. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '****';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** The innermost message of an error and its causes (pg errors nest in Prisma's, AggregateError in pg's). */
function rootMessage(error: unknown, depth = 0): string {
  const e = error as { message?: unknown; cause?: unknown; errors?: unknown[] } | null;
  if (!e || typeof e !== 'object' || depth > 5) return String(error);
  if (e.cause) return rootMessage(e.cause, depth + 1);
  if (Array.isArray(e.errors) && e.errors.length) return rootMessage(e.errors[0], depth + 1);
  return typeof e.message === 'string' && e.message ? e.message : String((e as { code?: unknown }).code ?? error);
}

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** What failed, said plainly, when `error` is a known way for a start to fail; undefined otherwise. */
export function startProblem(
  error: unknown,
  config: Pick<Config, 'DATABASE_URL' | 'PORT' | 'HOST' | 'DATA_DIR'>,
  stage: 'open' | 'listen',
): StartProblem | undefined {
  const code = codeOf(error);
  if (stage === 'listen' && (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')) {
    const why = code === 'EADDRINUSE' ? 'is already in use' : code === 'EACCES' ? 'may not be used by this user' : 'is not an address of this machine';
    return {
      message: `cannot listen on ${config.HOST}:${config.PORT}: the ${code === 'EADDRNOTAVAIL' ? 'host (HOST)' : 'port (PORT)'} ${why}. Stop the other server, or set PORT to a free port (0 picks one) or HOST to an address of this machine.`,
      exitCode: EXIT_UNAVAILABLE,
    };
  }
  if (stage !== 'open') return undefined;
  const pgAuth = code === '28P01' || code === '28000';
  if (config.DATABASE_URL && (isDatabaseUnavailable(error) || pgAuth || code === 'ENOTFOUND' || code === 'EAI_AGAIN')) {
    const hint = pgAuth
      ? 'Check the user and password in DATABASE_URL.'
      : code === '3D000'
        ? 'Create that database first (createdb), or name an existing one in DATABASE_URL.'
        : 'Check that PostgreSQL is running and reachable there, and that DATABASE_URL is right (postgresql://user:password@host:5432/database).';
    return {
      message: `cannot open the database at DATABASE_URL=${shownUrl(config.DATABASE_URL)}: ${rootMessage(error)}. ${hint} Or unset DATABASE_URL to run on the embedded database in DATA_DIR (${config.DATA_DIR}).`,
      exitCode: EXIT_UNAVAILABLE,
    };
  }
  return undefined;
}
