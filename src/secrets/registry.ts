// Secrets every logger of the process redacts, whenever it was created (the root key is loaded after
// some loggers exist): each logger rebuilds its redactor when the version moves.
const processSecrets = new Map<string, string>();
let version = 0;

/** Registers a value every log line of this process redacts as `[name]`. */
export function redactInEveryLog(name: string, value: string): void {
  if (value && !processSecrets.has(value)) {
    processSecrets.set(value, name);
    version++;
  }
}

/** Moves each time a process secret joins. */
export const processSecretsVersion = (): number => version;

/** The process secrets, then `secrets`, as [name, value] pairs for a SecretRedactor. */
export function withProcessSecrets(secrets: Record<string, string>): [string, string][] {
  return [...[...processSecrets].map(([value, name]): [string, string] => [name, value]), ...Object.entries(secrets)];
}
