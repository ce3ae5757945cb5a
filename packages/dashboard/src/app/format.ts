/**
 * Formatting for people, the way Indian IPO pages write it, the same in every browser: amounts
 * grouped `en-IN` (₹1,23,456), issue sizes in ₹ crore, days as `27 Nov 2026`, instants in India's
 * time (IST, UTC+05:30, no daylight saving) with "IST" after the time. Every page formats through
 * this module: nothing here reads the browser's locale or zone. Month names are written here, not
 * asked of Intl, whose en-IN says "Sept".
 */

const whole = new Intl.NumberFormat('en-IN');
const rupees = new Intl.NumberFormat('en-IN', { maximumFractionDigits: 0 });
const paise = new Intl.NumberFormat('en-IN', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const percent = new Intl.NumberFormat('en-IN', { maximumFractionDigits: 2 });
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const IST_OFFSET_MS = 330 * 60_000;
const DAY_MS = 86_400_000;

/** The fields of an instant as a wall clock in India shows them. */
export interface IstParts {
  year: number;
  /** 0 to 11 */
  month: number;
  day: number;
  hour: number;
  minute: number;
}

export function istParts(ms: number): IstParts {
  const d = new Date(ms + IST_OFFSET_MS);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth(), day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes() };
}

const two = (n: number) => String(n).padStart(2, '0');

/** The IST time of an instant (ms), 24-hour, e.g. "10:15". */
export function formatIstTime(ms: number): string {
  const p = istParts(ms);
  return `${two(p.hour)}:${two(p.minute)}`;
}

/** The IST day of an instant (ms) without its year, e.g. "27 Nov". */
export function formatIstShortDay(ms: number): string {
  const p = istParts(ms);
  return `${p.day} ${MONTHS[p.month]}`;
}

/**
 * A time axis' labels in IST, for ticks `splits` (seconds) `incr` seconds apart: "27 Nov" when
 * the ticks are a day or more apart, else "10:15", with the day on a second line under the
 * first tick of each day ("00:00\n27 Nov").
 */
export function istAxisLabels(splits: readonly number[], incr: number): string[] {
  let last = '';
  return splits.map((t) => {
    const day = formatIstShortDay(t * 1000);
    if (incr >= 86_400) return day;
    const label = day === last ? formatIstTime(t * 1000) : `${formatIstTime(t * 1000)}\n${day}`;
    last = day;
    return label;
  });
}

/** An instant (ms) in India, e.g. "27 Nov 2026, 10:15 IST". */
export function formatIstInstant(ms: number): string {
  const p = istParts(ms);
  return `${p.day} ${MONTHS[p.month]} ${p.year}, ${two(p.hour)}:${two(p.minute)} IST`;
}

/** An ISO instant in India, e.g. "24 Nov 2026, 14:05 IST" (the text itself when it is no instant). */
export function formatInstant(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : formatIstInstant(ms);
}

/** A calendar day (`YYYY-MM-DD`) as e.g. "24 Nov 2026", the same in every zone. */
export function formatDay(day: string): string {
  const ms = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(ms)) return day;
  const d = new Date(ms);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** A calendar day without its year, e.g. "24 Nov". */
export function formatShortDay(day: string): string {
  const ms = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(ms)) return day;
  const d = new Date(ms);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
}

/** A count grouped the Indian way, e.g. "1,23,456". */
export function formatCount(n: number): string {
  return whole.format(n);
}

/** Rupees grouped the Indian way, with both digits of the paise when there are any: "₹1,23,456", "₹95.50", "-₹12". */
export function formatRupees(n: number): string {
  const abs = Math.abs(n);
  const text = Number.isInteger(abs) ? rupees.format(abs) : paise.format(abs);
  return n < 0 ? `-₹${text}` : `₹${text}`;
}

/**
 * A price band as the API writes it (`"1610-1675"`, `"95.5-100"`, `"100-100"`) in rupees:
 * "₹1,610 – ₹1,675", "₹100" when both ends are one price; anything else as given.
 */
export function formatPriceBand(band: string): string {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:-\s*(\d+(?:\.\d+)?))?\s*$/.exec(band);
  if (m === null) return band;
  const low = Number(m[1]);
  const high = m[2] === undefined ? low : Number(m[2]);
  return low === high ? formatRupees(low) : `${formatRupees(low)} – ${formatRupees(high)}`;
}

/** An issue size as the API writes it (`"4480cr"`, `"1,200.5 crore"`) in ₹ crore: "₹4,480 Cr"; anything else (`"50 lakh"`) as given. */
export function formatIssueSize(size: string): string {
  const m = /^\s*(\d{1,3}(?:,\d{2,3})*(?:\.\d+)?|\d+(?:\.\d+)?)\s*(?:cr|crore)\s*$/i.exec(size);
  return m === null ? size : `${formatRupees(Number(m[1]!.replace(/,/g, '')))} Cr`;
}

/** A listing gain as the API writes it (a percentage as text, e.g. `"15.5"`, `"-2"`): "+15.5%", "-2%", "0%"; anything else as given. */
export function formatGain(gain: string): string {
  const n = Number(gain);
  if (gain.trim() === '' || !Number.isFinite(n)) return gain;
  const text = `${percent.format(Math.abs(n))}%`;
  return n > 0 ? `+${text}` : n < 0 ? `-${text}` : text;
}

/** A percentage as a number (e.g. the GMP's share of the issue price): "+12.5%", "-3.25%", "0%". */
export function formatPercent(n: number): string {
  const text = `${percent.format(Math.abs(n))}%`;
  return n > 0 ? `+${text}` : n < 0 ? `-${text}` : text;
}

/** Times subscribed, as Indian IPO pages write it: "12.34x", "0.80x", "1,234.50x". */
export function formatTimes(n: number): string {
  return `${paise.format(n)}x`;
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

/**
 * JSON text indented by two spaces, for reading; any other text as it is (a receiver's body
 * need not be JSON).
 */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text) as unknown, null, 2);
  } catch {
    return text;
  }
}

/** Names joined for a sentence: "pro", "paid or pro", "free, paid or pro". */
export function orList(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}
