// Small shared pieces: links that route in place, copy buttons, error and loading states.
import { type MouseEvent, type ReactNode, useEffect, useState } from 'react';
import { RequestError } from './client.ts';
import { navigate } from './router.ts';

export function Link({ href, children, className }: { href: string; children: ReactNode; className?: string }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} className={className}>
      {children}
    </a>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 1200);
    } catch {
      setDone(false);
    }
  };
  return (
    <button type="button" className="copy" onClick={copy} aria-label={label}>
      {done ? 'Copied' : 'Copy'}
    </button>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof RequestError || error instanceof Error ? error.message : String(error);
  return (
    <p className="error" role="alert">
      {text}
    </p>
  );
}

export type Loaded<T> = { data?: T; error?: unknown; loading: boolean; reload(): void };

/** Runs `load` when `key` changes (and on reload); keeps the last data while the next one loads. */
export function useLoad<T>(key: string, load: () => Promise<T>): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `load` is a fresh closure each render; `key` names what it reads.
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [key, round]);
  return { ...state, reload: () => setRound((r) => r + 1) };
}

export const formatTime = (iso: string | null | undefined) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, 'Z') : '');

/** Preformatted text in a box that scrolls, and so takes focus to scroll by keyboard. */
export function Pre({ children, className, testId }: { children: ReactNode; className?: string; testId?: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling box must take focus (axe scrollable-region-focusable).
    <pre className={className} tabIndex={0} data-testid={testId}>
      {children}
    </pre>
  );
}

export function Json({ value }: { value: unknown }) {
  return <Pre className="json">{JSON.stringify(value, null, 2)}</Pre>;
}
