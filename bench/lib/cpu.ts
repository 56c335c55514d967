// CPU time from /proc (Linux): one process, every process with a given name, and the whole machine,
// so a benchmark can say who spent the cores while it ran.
import { readdirSync, readFileSync } from 'node:fs';

const ticksPerSecond = 100; // USER_HZ; 100 on every mainstream Linux

/** utime + stime (with `children`, plus cutime + cstime) from a /proc stat file, in seconds; null when it is gone. */
function statCpuSeconds(file: string, children: boolean): number | null {
  try {
    const stat = readFileSync(file, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return (f[11]! + f[12]! + (children ? f[13]! + f[14]! : 0)) / ticksPerSecond;
  } catch {
    return null;
  }
}

/**
 * utime + stime of one process in seconds, or null when it is gone; with `children`, plus the
 * time of its children that have exited (so short-lived workers are not lost).
 */
export function processCpuSeconds(pid: number, children = false): number | null {
  return statCpuSeconds(`/proc/${pid}/stat`, children);
}

/** utime + stime of one thread of a process in seconds (`tid` = `pid`: its main thread, a Node process's event loop), or null when it is gone. */
export function threadCpuSeconds(pid: number, tid = pid): number | null {
  return statCpuSeconds(`/proc/${pid}/task/${tid}/stat`, false);
}

/** Summed CPU seconds of every process named `comm` (e.g. "postgres"), with its exited children. */
export function commandCpuSeconds(comm: string): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== comm) continue;
      total += processCpuSeconds(Number(entry), true) ?? 0;
    } catch {
      // the process ended between listing and reading
    }
  }
  return total;
}

/** Busy and total CPU seconds of the whole machine since boot (all cores). */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3]! + (v[4] ?? 0);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: (total - idle) / ticksPerSecond, total: total / ticksPerSecond };
}

export type CpuSplit = {
  server: number;
  postgres: number;
  client: number;
  machineBusy: number;
  machineTotal: number;
  /** The server's own PostgreSQL backends only, where the benchmark counted them (see backendsCpu). */
  backends?: number;
};

/** Starts counting; the returned function gives the CPU seconds each party spent since. */
export function cpuSplit(serverPid: number): () => CpuSplit {
  const s0 = processCpuSeconds(serverPid) ?? 0;
  const p0 = commandCpuSeconds('postgres');
  const c0 = process.cpuUsage();
  const m0 = machineCpuSeconds();
  return () => {
    const c = process.cpuUsage(c0);
    const m = machineCpuSeconds();
    return {
      server: (processCpuSeconds(serverPid) ?? s0) - s0,
      postgres: commandCpuSeconds('postgres') - p0,
      client: (c.user + c.system) / 1e6,
      machineBusy: m.busy - m0.busy,
      machineTotal: m.total - m0.total,
    };
  };
}

/** CPU seconds one process has run (from /proc/<pid>/schedstat, nanoseconds), or null when it is gone. */
export function processRunSeconds(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ', 1)[0]) / 1e9;
  } catch {
    return null;
  }
}

/**
 * Starts counting the CPU of the PostgreSQL backends connected to one database (same machine), so
 * other users' load on the same server is left out; the returned function gives the seconds spent
 * since. `backendPids` lists them (e.g. from pg_stat_activity). A backend that ends meanwhile is not counted.
 */
export async function backendsCpu(backendPids: () => Promise<number[]>): Promise<() => Promise<number>> {
  const start = new Map<number, number>();
  for (const pid of await backendPids()) start.set(pid, processRunSeconds(pid) ?? 0);
  return async () => {
    let total = 0;
    for (const pid of await backendPids()) total += (processRunSeconds(pid) ?? 0) - (start.get(pid) ?? 0);
    return total;
  };
}
