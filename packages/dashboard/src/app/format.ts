/** Formatting for people: dates in the reader's own zone and locale, IST days as the API counts them. */

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
const shortDay = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });
const whole = new Intl.NumberFormat(undefined);
const money = new Intl.NumberFormat(undefined, { minimumFractionDigits: 0, maximumFractionDigits: 2 });

const IST_OFFSET_MS = 330 * 60_000;
const DAY_MS = 86_400_000;

/** An ISO instant as a local date and time, e.g. "24 Nov 2026, 14:05". */
export function formatInstant(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

/** A calendar day (`YYYY-MM-DD`) as e.g. "24 Nov 2026", the same in every zone. */
export function formatDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? day : dateOnly.format(d);
}

/** A calendar day without its year, e.g. "24 Nov". */
export function formatShortDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? day : shortDay.format(d);
}

export function formatCount(n: number): string {
  return whole.format(n);
}

export function formatRupees(n: number): string {
  return `₹${money.format(n)}`;
}

/**
 * A plan as the header and the account page show it.
 *
 * @example
 * ```ts
 * planName('pro', true);   // 'Pro + GMP'
 * planName('free', false); // 'Free'
 * ```
 */
export function planName(plan: string, gmpAddon: boolean): string {
  const name = plan.charAt(0).toUpperCase() + plan.slice(1);
  return plan === 'pro' && gmpAddon ? `${name} + GMP` : name;
}

/** Seconds as e.g. "42 s", "13 min 5 s", "5 h 12 min". */
export function formatSeconds(total: number): string {
  const s = Math.max(0, Math.round(total));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Today as the API counts days: the calendar day in India (IST, UTC+05:30); pinned to the core's by format.test.ts. */
export function todayInIst(now = Date.now()): string {
  return new Date(now + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** `day` moved by `n` calendar days. */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Every day from `from` to `to`, both included. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let d = from; d <= to && days.length < 1000; d = addDays(d, 1)) days.push(d);
  return days;
}

export function isDay(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && addDays(value, 0) === value;
}

/** Only http(s) links from the data are made clickable: a `javascript:` URL must never be. */
export function safeUrl(url: string | null): string | null {
  return url !== null && /^https?:\/\//i.test(url) ? url : null;
}

const INTERVAL_NAMES: Record<string, string> = { '5m': '5 minutes', '10m': '10 minutes', '15m': '15 minutes', '30m': '30 minutes', hourly: 'hour', daily: 'day', weekly: 'week' };

/** A GMP interval in words, as in "one point per …". */
export function intervalName(interval: string): string {
  return INTERVAL_NAMES[interval] ?? interval;
}
