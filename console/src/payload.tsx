// One payload's bytes as text, pretty JSON or hex, with hash, state and size.
import { useMemo, useState } from 'react';
import { CopyButton, Pre } from './ui.tsx';

export function bytesOf(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const hexLimit = 64 * 1024;

export function hexDump(bytes: Uint8Array): string {
  const lines: string[] = [];
  const shown = Math.min(bytes.length, hexLimit);
  for (let offset = 0; offset < shown; offset += 16) {
    const slice = bytes.subarray(offset, Math.min(offset + 16, shown));
    const hex = Array.from(slice, (b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = Array.from(slice, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  if (bytes.length > shown) lines.push(`… ${bytes.length - shown} more bytes`);
  return lines.join('\n');
}

type View = 'text' | 'json' | 'hex';

export type PayloadFacts = {
  base64: string;
  text?: string | null;
  sha256?: string | null;
  state?: string | null;
  size?: string | number | null;
};

export function PayloadView({ payload, label }: { payload: PayloadFacts; label: string }) {
  const bytes = useMemo(() => bytesOf(payload.base64), [payload.base64]);
  const text = payload.text ?? null;
  const pretty = useMemo(() => {
    if (text === null) return null;
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return null;
    }
  }, [text]);
  const [view, setView] = useState<View>(pretty !== null ? 'json' : text !== null ? 'text' : 'hex');
  const shown = view === 'json' && pretty !== null ? pretty : view === 'text' && text !== null ? text : hexDump(bytes);
  return (
    <div className="payload">
      <fieldset className="row">
        <legend className="visually-hidden">{`${label}: view as`}</legend>
        {(['text', 'json', 'hex'] as const).map((v) => (
          <button
            key={v}
            type="button"
            aria-pressed={view === v}
            disabled={(v === 'text' && text === null) || (v === 'json' && pretty === null)}
            onClick={() => setView(v)}
          >
            {v === 'json' ? 'JSON' : v === 'hex' ? 'Hex' : 'Text'}
          </button>
        ))}
        <CopyButton text={shown} label={`Copy ${label}`} />
        <span className="hint">
          {payload.state && <>{payload.state} · </>}
          {payload.size ?? bytes.length} bytes
          {payload.sha256 && (
            <>
              {' '}
              · sha256 <span className="mono">{payload.sha256}</span>
            </>
          )}
        </span>
      </fieldset>
      <Pre className="bytes" testId="payload-bytes">
        {shown}
      </Pre>
    </div>
  );
}
