// Live ledger: the ledgerEvents subscription with filter chips, pause and resume from the cursor, and
// a new subscription from the error's cursor when the server ends one for slowness. Rows arrive in a
// buffer and render once per frame, and only the rows on screen exist in the DOM (fixed-window.ts).
import { type FormEvent, memo, startTransition, useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { graphql } from '../../gql/index.ts';
import type { ConsoleLiveSubscription, LedgerFilter } from '../../gql/graphql.ts';
import { subscribe } from '../client.ts';
import { useFixedWindow } from '../fixed-window.ts';
import { hrefOf } from '../router.ts';
import { ErrorBox, Link } from '../ui.tsx';

const LiveEvents = graphql(`
  subscription ConsoleLive($filter: LedgerFilter, $after: String) {
    ledgerEvents(filter: $filter, after: $after) {
      id
      cursor
      position
      occurredAt
      kind
      direction
      toolName
      status
      session
      task
      actionId
    }
  }
`);

type Row = ConsoleLiveSubscription['ledgerEvents'];
/** Rows render at most this often: fewer, cheaper frames under hundreds of events a second. */
const FLUSH_MS = 100;
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
  const [round, setRound] = useState(0);
  const [error, setError] = useState<unknown>();
  const [reconnects, setReconnects] = useState(0);
  const [, setFrame] = useState(0);
  const rows = useRef<Row[]>([]);
  const cursor = useRef<string | null>(null);
  const pending = useRef(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `round` restarts the subscription from the cursor.
  useEffect(() => {
    if (paused) return;
    const flush = () => {
      pending.current = 0;
      // A transition: React renders the new rows in slices that yield to input, never one long task.
      requestAnimationFrame(() => startTransition(() => setFrame((f) => f + 1)));
    };
    const stop = subscribe(
      LiveEvents,
      { filter: filterOf(chips), ...(cursor.current && { after: cursor.current }) },
      {
        next: ({ ledgerEvents }) => {
          rows.current.push(ledgerEvents);
          cursor.current = ledgerEvents.cursor;
          pending.current ||= window.setTimeout(flush, FLUSH_MS);
        },
        error: (caught) => {
          if (caught.code === 'SUBSCRIBER_TOO_SLOW') {
            const resumeAt = caught.errors[0]?.extensions?.cursor;
            if (typeof resumeAt === 'string') cursor.current = resumeAt;
            setReconnects((n) => n + 1);
            setRound((r) => r + 1);
          } else setError(caught);
        },
        complete: () => {},
      },
    );
    setError(undefined);
    return () => {
      stop();
      if (pending.current) clearTimeout(pending.current);
      pending.current = 0;
    };
  }, [chips, paused, round]);

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
