// Calendar arithmetic for readQuestion's time phrases, in UTC; weeks start on Monday.
import { HOUR, type Token, type Unit, unitMs } from './ask-words.ts';

export const startOfDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
export const addDays = (d: Date, n: number) => new Date(d.getTime() + n * unitMs.day);
export const addMonths = (d: Date, n: number) => {
  const out = new Date(d);
  const day = out.getUTCDate();
  out.setUTCDate(1);
  out.setUTCMonth(out.getUTCMonth() + n);
  const last = new Date(Date.UTC(out.getUTCFullYear(), out.getUTCMonth() + 1, 0)).getUTCDate();
  out.setUTCDate(Math.min(day, last));
  return out;
};
export const startOfWeek = (d: Date) => addDays(startOfDay(d), -((d.getUTCDay() + 6) % 7));
export const startOfMonth = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
export const startOfYear = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), 0, 1));
export const startOfHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR) * HOUR);

export function rollingStart(now: Date, n: number, unit: Unit): Date {
  if (unit === 'month') return addMonths(now, -n);
  if (unit === 'year') return addMonths(now, -12 * n);
  return new Date(now.getTime() - n * unitMs[unit]);
}

export type Span = { from?: Date; to?: Date };

/** A date word: the day it names (from midnight UTC) or the instant, with whether it is a whole day. */
export function readDate(token: Token | undefined, now: Date): { at: Date; wholeDay: boolean } | null {
  if (!token) return null;
  if (token.word === 'today') return { at: startOfDay(now), wholeDay: true };
  if (token.word === 'yesterday') return { at: addDays(startOfDay(now), -1), wholeDay: true };
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(token.raw);
  if (day) {
    const at = new Date(Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])));
    const valid = at.getUTCFullYear() === Number(day[1]) && at.getUTCMonth() === Number(day[2]) - 1 && at.getUTCDate() === Number(day[3]);
    return valid ? { at, wholeDay: true } : null;
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})$/i.test(token.raw)) {
    const at = new Date(token.raw.toUpperCase());
    return Number.isNaN(at.getTime()) ? null : { at, wholeDay: false };
  }
  return null;
}
