// Secrets every logger of the process redacts, whenever it was created (the root key is loaded after
// some loggers exist): each logger rebuilds its redactor when the version moves. A value stays while
// anything that registered it still holds it: a process that runs several apps one after another
// (tests, benchmarks) does not pay, in every later logger, for the keys of apps that have stopped.
const processSecrets = new Map<string, { name: string; holders: number }>();
let version = 0;

/** Registers a value every log line of this process redacts as `[name]`; the returned function lets go of it (the last holder's removes it). */
export function redactInEveryLog(name: string, value: string): () => void {
  if (!value) return () => {};
  const held = processSecrets.get(value);
  if (held) held.holders++;
  else {
    processSecrets.set(value, { name, holders: 1 });
    version++;
  }
  let released = false;
  return () => {
    const entry = processSecrets.get(value);
    if (released || !entry) return;
    released = true;
    if (--entry.holders === 0) {
      processSecrets.delete(value);
      version++;
    }
  };
}

/** Moves each time a process secret joins or leaves. */
export const processSecretsVersion = (): number => version;

/** The process secrets, then `secrets`, as [name, value] pairs for a SecretRedactor. */
export function withProcessSecrets(secrets: Record<string, string>): [string, string][] {
  return [...[...processSecrets].map(([value, { name }]): [string, string] => [name, value]), ...Object.entries(secrets)];
}
