// Reviewer console in Chromium: first paint of /console, and the live page under 500 events/s (shown = sent, longest main-thread task).
//
//   npm run bench -- console [--seconds 30] [--rate 500] [--paints 5]
//
// The server runs in a child process (src/server.ts, AUTHORITY=off) on a fresh PostgreSQL database
// (BENCH_DATABASE_URL, default the machine's); Debian's Chromium (/usr/bin/chromium) runs the console
// built from console/src. A writer here POSTs batches to /ledger/batches every 50 ms at --rate events/s.
// Figures:
//   first paint    first-contentful-paint of /console (sign-in) and of /console/live signed in, fresh
//                  context each time (median of --paints);
//   keeps up       rows the live page counts once the writer stops, against events sent (must be equal:
//                  a subscription the server ends for slowness resumes from its cursor);
//   longest task   the longest main-thread task (PerformanceObserver 'longtask') while the events flow,
//                  beside the floor: the same page doing a fixed 5 ms every 100 ms with no events, whose
//                  long tasks are the machine's contention (load average printed), not the page's.
// Targets (printed PASS/MISS, never asserted): first paint ≤ 1 s; shown = sent; longest task < 50 ms.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildConsole } from '../console/build.ts';
import { onCleanup } from './lib/cleanup.ts';
import { createBenchDatabase } from './lib/postgres.ts';
import { startServer } from './lib/server.ts';
import { fixed, int, median, row, target } from './lib/stats.ts';

const chromiumPath = '/usr/bin/chromium';
const TICK_MS = 50;

declare global {
  interface Window {
    __longestTask: number;
    __longTasks: number;
  }
}

/** Installed before any page script: the longest task seen since the last reset. */
const observeLongTasks = () => {
  window.__longestTask = 0;
  window.__longTasks = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      window.__longTasks++;
      window.__longestTask = Math.max(window.__longestTask, entry.duration);
    }
  }).observe({ type: 'longtask', buffered: true });
};

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { seconds: { type: 'string', default: '30' }, rate: { type: 'string', default: '500' }, paints: { type: 'string', default: '5' } },
  });
  const seconds = Number(values.seconds);
  const rate = Number(values.rate);
  const paints = Number(values.paints);
  if (!(seconds > 0 && rate > 0 && paints > 0)) throw new Error('--seconds, --rate and --paints: expected positive numbers');
  if (!existsSync(chromiumPath)) {
    process.stdout.write(`console: skipped, ${chromiumPath} is missing (apt install chromium)\n`);
    return;
  }
  await buildConsole();
  const db = await createBenchDatabase('console');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dirledger-bench-console-'));
  onCleanup('remove the data folder', () => rm(dataDir, { recursive: true, force: true }));
  const server = await startServer({ DATABASE_URL: db.url, DATA_DIR: dataDir, DIRECTORY_WATCH_MS: '0', AUTHORITY: 'off', LOG_LEVEL: 'warn' });
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  onCleanup('close chromium', () => browser.close());
  const profile = process.env.BENCH_CONSOLE_PROFILE;
  process.stdout.write(
    `\nconsole: ${rate} events/s for ${seconds} s; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );

  // First paint: fresh context each time, so nothing is cached.
  const firstPaint = async (path: string, signedIn: boolean) => {
    const times: number[] = [];
    for (let i = 0; i < paints; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      if (signedIn) await page.addInitScript(() => sessionStorage.setItem('dirledger.console.token', 'bench'));
      await page.goto(`${server.origin}${path}`);
      await page
        .locator(signedIn ? 'nav' : 'form')
        .first()
        .waitFor();
      const fcp = await page.evaluate(
        () => (performance.getEntriesByName('first-contentful-paint')[0] ?? performance.getEntriesByType('paint').at(-1))?.startTime ?? Number.NaN,
      );
      times.push(fcp);
      await context.close();
    }
    return median(times);
  };
  const paintSignIn = await firstPaint('/console', false);
  const paintLive = await firstPaint('/console/live', true);

  // The live page, signed in, unfiltered.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(() => sessionStorage.setItem('dirledger.console.token', 'bench'));
  await page.addInitScript(observeLongTasks);
  await page.goto(`${server.origin}/console/live`);
  const shown = async () => Number(await page.getByTestId('live-shown').innerText());
  const statusText = () => page.getByTestId('live-status').innerText();

  let sequence = 0;
  const append = async (count: number) => {
    const occurredAt = new Date().toISOString();
    const events = Array.from({ length: count }, () => {
      const id = `bench-${sequence++}`;
      return {
        id,
        kind: 'TOOL_CALL',
        direction: 'OUT',
        actionId: `act-${id}`,
        tool: `tool-${sequence % 20}`,
        occurredAt,
        payload: { state: 'COMPLETE', text: `{"n":${sequence}}` },
      };
    });
    const response = await fetch(`${server.origin}/ledger/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ collector: 'bench-console', events }),
    });
    if (!response.ok) throw new Error(`append: HTTP ${response.status} ${await response.text()}`);
  };
  // Live once a marker arrives.
  const liveBy = Date.now() + 30_000;
  while ((await shown()) === 0) {
    if (Date.now() > liveBy) throw new Error(`the live page showed nothing after 30 s: ${await statusText()}`);
    await append(1);
    await new Promise((r) => setTimeout(r, 300));
  }
  await new Promise((r) => setTimeout(r, 500));
  const before = await shown();
  const resetTasks = () =>
    page.evaluate(() => {
      window.__longestTask = 0;
      window.__longTasks = 0;
    });
  const readTasks = () => page.evaluate(() => ({ longest: window.__longestTask, count: window.__longTasks }));
  // The floor on this (shared) machine: the same page with nothing arriving, doing a fixed 5 ms of
  // work every 100 ms, the size of one flush of rows. Its long tasks are the machine's, not the page's.
  await resetTasks();
  const floorSeconds = Math.min(seconds, 10);
  await page.evaluate((ms) => {
    const timer = setInterval(() => {
      const until = performance.now() + 5;
      while (performance.now() < until);
    }, 100);
    setTimeout(() => clearInterval(timer), ms);
  }, floorSeconds * 1000);
  await new Promise((r) => setTimeout(r, floorSeconds * 1000 + 200));
  const idle = await readTasks();
  await resetTasks();
  if (profile === 'trace') await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'v8', 'blink'] });
  const cdp = profile && profile !== 'trace' ? await context.newCDPSession(page) : undefined;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.start');
  }

  const perTick = (rate * TICK_MS) / 1000;
  const started = performance.now();
  let sent = 0;
  let owed = 0;
  const appends: Promise<void>[] = [];
  for (let tick = 1; performance.now() - started < seconds * 1000; tick++) {
    owed += perTick;
    const count = Math.floor(owed);
    owed -= count;
    sent += count;
    appends.push(append(count));
    const wait = started + tick * TICK_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(appends);
  const elapsed = (performance.now() - started) / 1000;
  const drainBy = Date.now() + 30_000;
  while ((await shown()) - before < sent && Date.now() < drainBy) await new Promise((r) => setTimeout(r, 200));
  const drainedMs = Date.now() - (drainBy - 30_000);
  const seen = (await shown()) - before;
  const { longest, count } = await readTasks();
  if (cdp) printProfile((await cdp.send('Profiler.stop')).profile);
  if (profile === 'trace') printLongTasks(JSON.parse((await browser.stopTracing()).toString('utf8')).traceEvents);
  const status = await statusText();
  const domRows = await page.getByTestId('live-row').count();

  process.stdout.write(`${row('events sent', int(sent))}\n`);
  process.stdout.write(`${row('sent rate (events/s)', fixed(sent / elapsed, 1))}\n`);
  process.stdout.write(`${row('shown after the writer stopped', `${drainedMs} ms`)}\n`);
  process.stdout.write(`${row('long tasks (> 50 ms)', int(count))}\n`);
  process.stdout.write(`${row(`floor (5 ms per 100 ms, ${floorSeconds} s): long tasks, longest`, int(idle.count), `${fixed(idle.longest, 0)} ms`)}\n`);
  process.stdout.write(`${row('rows in the DOM (virtualized)', int(domRows))}\n`);
  process.stdout.write(`${row('live status', status.replace(/\s+/g, ' '))}\n`);
  process.stdout.write(`${target('first paint /console (median)', `${fixed(paintSignIn, 0)} ms`, '≤ 1000 ms', paintSignIn <= 1000)}\n`);
  process.stdout.write(`${target('first paint /console/live (median)', `${fixed(paintLive, 0)} ms`, '≤ 1000 ms', paintLive <= 1000)}\n`);
  process.stdout.write(`${target('events shown / sent', `${seen} / ${sent}`, '= sent', seen === sent)}\n`);
  process.stdout.write(`${target('longest main-thread task', `${fixed(longest, 0)} ms`, '< 50 ms', longest < 50)}\n`);
  await context.close();
}

type CpuProfile = { nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[]; samples?: number[]; timeDeltas?: number[] };

/** BENCH_CONSOLE_PROFILE=1: the page's functions by self time while the events flowed. */
function printProfile(profile: CpuProfile): void {
  const frameOf = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, number>();
  const samples = profile.samples ?? [];
  for (let i = 0; i < samples.length; i++) {
    const frame = frameOf.get(samples[i]!)!;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').at(-1)}:${frame.lineNumber}`;
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas?.[i] ?? 0) / 1000);
  }
  for (const [name, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20)) process.stdout.write(`${row(name.slice(0, 60), `${fixed(ms, 0)} ms`)}\n`);
}

type TraceEvent = { name: string; ph: string; ts: number; dur?: number; tid: number; pid: number };

/** BENCH_CONSOLE_PROFILE=trace: what each main-thread task over 50 ms spent its time on. */
function printLongTasks(events: TraceEvent[]): void {
  const tasks = events.filter((e) => e.ph === 'X' && (e.dur ?? 0) > 50_000 && /RunTask|ThreadControllerImpl/.test(e.name));
  const slow = new Map<string, number>();
  for (const e of events) if (e.ph === 'X' && (e.dur ?? 0) > 30_000) slow.set(e.name, (slow.get(e.name) ?? 0) + 1);
  process.stdout.write(`trace: ${events.length} events; over 30 ms: ${[...slow].map(([n, c]) => `${n}×${c}`).join(', ')}\n`);
  for (const task of tasks.slice(0, 12)) {
    const inside = new Map<string, number>();
    for (const e of events) {
      if (e.ph !== 'X' || e.tid !== task.tid || e.pid !== task.pid || e === task || e.ts < task.ts || e.ts > task.ts + task.dur!) continue;
      inside.set(e.name, (inside.get(e.name) ?? 0) + (e.dur ?? 0) / 1000);
    }
    const top = [...inside].sort((a, b) => b[1] - a[1]).slice(0, 6);
    process.stdout.write(`task ${fixed(task.dur! / 1000, 0)} ms: ${top.map(([n, ms]) => `${n} ${fixed(ms, 0)}`).join(', ')}\n`);
  }
}
