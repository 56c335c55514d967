// Live ledger: the ledgerEvents subscription with filter chips, pause and resume from the cursor, and
// a new subscription from the error's cursor when the server ends one for slowness. The subscription
// runs in a worker (live-feed.ts) that hands over batches; a batch renders on the next frame, and only
// the rows on screen exist in the DOM (fixed-window.ts).
import { type FormEvent, memo, startTransition, useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { LedgerFilter } from '../../gql/graphql.ts';
import { readToken, RequestError } from '../client.ts';
import { useFixedWindow } from '../fixed-window.ts';
import type { LiveReport, LiveRow as Row, LiveStart } from '../live-feed.ts';
import { hrefOf } from '../router.ts';
import { ErrorBox, Link } from '../ui.tsx';

/** console/build.ts names the worker's bundled file (live-feed.ts) by its hash. */
declare const LIVE_FEED_URL: string;

/** Must match `.live-row`'s height in console.css. */
const ROW_PX = 30;
const chipKeys = ['tool', 'kind', 'session', 'task', 'status'] as const;
type ChipKey = (typeof chipKeys)[number];
type Chip = { key: ChipKey; value: string };

const filterOf = (chips: Chip[]): LedgerFilter => {
  const filter: LedgerFilter = {};
  for (const { key, value } of chips) filter[key] = [...((filter[key] as string[] | undefined) ?? []), value];
  return filter;
};

export function LivePage() {
  const [chips, setChips] = useState<Chip[]>([]);
  const [paused, setPaused] = useState(false);
  const [error, setError] = useState<unknown>();
  const [reconnects, setReconnects] = useState(0);
  const [, setFrame] = useState(0);
  const rows = useRef<Row[]>([]);
  const cursor = useRef<string | null>(null);

  useEffect(() => {
    if (paused) return;
    let open = true;
    let frame = 0;
    const feed = new Worker(LIVE_FEED_URL, { type: 'module', name: 'live-feed' });
    feed.onmessage = ({ data: report }: MessageEvent<LiveReport>) => {
      if (!open) return;
      if (report.type === 'rows') {
        for (const row of report.rows) rows.current.push(row);
        cursor.current = report.rows.at(-1)?.cursor ?? cursor.current;
        // A transition: React renders the new rows in slices that yield to input.
        frame ||= requestAnimationFrame(() => {
          frame = 0;
          startTransition(() => setFrame((f) => f + 1));
        });
      } else if (report.type === 'resumed') setReconnects((n) => n + 1);
      else setError(new RequestError(report.errors));
    };
    feed.onerror = () => open && setError(new RequestError([{ message: 'The live feed stopped (its worker failed).' }]));
    feed.postMessage({ token: readToken(), filter: filterOf(chips), after: cursor.current } satisfies LiveStart);
    setError(undefined);
    return () => {
      open = false;
      cancelAnimationFrame(frame);
      feed.terminate();
    };
  }, [chips, paused]);

  const chipsNow = useRef(chips);
  chipsNow.current = chips;
  // Stable, so the memoized rows do not re-render for it.
  const changeChips = useCallback((next: Chip[]) => {
    rows.current = [];
    cursor.current = null;
    setChips(next);
  }, []);
  const addChip = useCallback(
    (chip: Chip) => {
      if (!chipsNow.current.some((c) => c.key === chip.key && c.value === chip.value)) changeChips([...chipsNow.current, chip]);
    },
    [changeChips],
  );

  const list = rows.current;
  const scroller = useRef<HTMLDivElement>(null);
  const view = useFixedWindow(scroller, list.length, ROW_PX);
  // Scrolled down to read, the rows stay where they are while newer ones arrive above.
  const drawn = useRef(0);
  useLayoutEffect(() => {
    const added = list.length - drawn.current;
    drawn.current = list.length;
    if (added > 0 && view.top > 0 && scroller.current) scroller.current.scrollTop = view.top + added * ROW_PX;
  });
  const slots: number[] = [];
  for (let index = view.first; index < view.last; index++) slots.push(index);

  return (
    <section className="live">
      <h1>Live ledger</h1>
      <ChipForm onAdd={addChip} />
      <ul className="chips" aria-label="Active filters">
        {chips.map((c) => (
          <li key={`${c.key}=${c.value}`}>
            {c.key} = {c.value}
            <button type="button" aria-label={`Remove the filter ${c.key} = ${c.value}`} onClick={() => changeChips(chips.filter((d) => d !== c))}>
              ×
            </button>
          </li>
        ))}
        {chips.length === 0 && <li className="none">Every event</li>}
      </ul>
      <div className="row">
        <button type="button" onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <span className="status" data-testid="live-status">
          {paused ? 'Paused' : 'Live'} · <span data-testid="live-shown">{list.length}</span> events shown
          {reconnects > 0 && ` · resumed ${reconnects}× after the server found this page too slow`}
        </span>
      </div>
      <ErrorBox error={error} />
      <div className="live-head" aria-hidden="true">
        <span>#</span>
        <span>Kind</span>
        <span>Dir</span>
        <span>Tool</span>
        <span>Status</span>
        <span>Task</span>
        <span>Action</span>
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to scroll by keyboard (axe scrollable-region-focusable). */}
      <div ref={scroller} className="live-list" tabIndex={0}>
        <ul aria-label="Events, newest first" style={{ height: view.height }}>
          {/* Keyed by place, not by event: new arrivals change the text of the rows on screen instead of replacing them. */}
          {slots.map((index) => (
            <LiveRow key={index % (view.last - view.first)} event={list[list.length - 1 - index]!} start={index * ROW_PX} onTool={addChip} />
          ))}
        </ul>
      </div>
    </section>
  );
}

const LiveRow = memo(function LiveRow({ event: e, start, onTool }: { event: Row; start: number; onTool(chip: Chip): void }) {
  return (
    <li className="live-row" style={{ transform: `translateY(${start}px)` }} data-testid="live-row">
      <span className="num">{e.position}</span>
      <span>{e.kind}</span>
      <span>{e.direction}</span>
      <span>
        {e.toolName && (
          <button type="button" className="chip-add" onClick={() => onTool({ key: 'tool', value: e.toolName! })} title="Filter by this tool">
            {e.toolName}
          </button>
        )}
      </span>
      <span>{e.status ?? ''}</span>
      <span>{e.task ? <Link href={hrefOf.task(e.task)}>{e.task}</Link> : ''}</span>
      <span>
        <Link href={hrefOf.action(e.actionId)}>{e.actionId.slice(0, 14)}</Link>
      </span>
    </li>
  );
});

function ChipForm({ onAdd }: { onAdd(chip: Chip): void }) {
  const [key, setKey] = useState<ChipKey>('tool');
  const [value, setValue] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!value.trim()) return;
    onAdd({ key, value: value.trim() });
    setValue('');
  };
  return (
    <form className="row chip-form" onSubmit={submit}>
      <label htmlFor="chip-key">Filter</label>
      <select id="chip-key" value={key} onChange={(e) => setKey(e.target.value as ChipKey)}>
        {chipKeys.map((k) => (
          <option key={k} value={k}>
            {k}
          </option>
        ))}
      </select>
      <label htmlFor="chip-value" className="visually-hidden">
        Value
      </label>
      <input id="chip-value" value={value} onChange={(e) => setValue(e.target.value)} placeholder="value, exactly" />
      <button type="submit">Add filter</button>
    </form>
  );
}
