// Small numeric helpers every benchmark shares: medians, percentiles and fixed-width figures.

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * p;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

export const median = (values: number[]): number => percentile(values, 0.5);

export function sum(values: Iterable<number>): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

/** 12345.6 → "12,346" */
export function int(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n);
}

/** Decimal megabytes (10^6), the unit memory targets are stated in. */
export function mb(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

export function fixed(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}

export function mib(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

/** A target line: the measurement, the target and PASS or MISS (printed, never asserted). */
export function target(label: string, value: string, goal: string, met: boolean): string {
  return `${label.padEnd(34)} ${value.padStart(16)}   target ${goal.padEnd(12)} ${met ? 'PASS' : 'MISS'}`;
}

export function row(label: string, ...values: string[]): string {
  return `${label.padEnd(34)} ${values.map((v) => v.padStart(16)).join(' ')}`;
}
