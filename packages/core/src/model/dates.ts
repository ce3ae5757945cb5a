/**
 * Calendar dates (`YYYY-MM-DD`), "today" in India, and UTC instants: the one definition of
 * the day arithmetic every request, store and event uses.
 *
 * India keeps UTC+05:30 all year (docs/spec.md#conventions; so since 1945-10-15), so an IST
 * day is a fixed offset from a UTC one: no zone database on the request path. A property
 * test (dates.test.ts) pins every function here to luxon's Asia/Kolkata zone for every
 * instant from 1946 to 2100.
 */

/** Milliseconds in one day. */
export const DAY_MS = 86_400_000;

/** The earliest instant a dataset may hold (a snapshot's timestamp): 2000-01-01T00:00:00.000Z. */
export const EARLIEST_INSTANT = Date.UTC(2000, 0, 1);
/** The latest instant a dataset may hold: 9999-12-31T23:59:59.999Z. */
export const LATEST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Tells whether `text` is a real calendar date written `YYYY-MM-DD`
 * (`2026-02-30` and `2026-2-3` are not).
 *
 * @example
 * ```ts
 * isCalendarDate('2024-02-29'); // true
 * isCalendarDate('2026-02-29'); // false
 * ```
 */
export function isCalendarDate(text: string): boolean {
  return dateToEpochMs(text) !== null;
}

/**
 * The instant 00:00:00.000Z of a `YYYY-MM-DD` date, or `null` when it is not a real date.
 *
 * @example
 * ```ts
 * dateToEpochMs('1970-01-02'); // 86400000
 * ```
 */
export function dateToEpochMs(text: string): number | null {
  const m = DATE_RE.exec(text);
  if (m === null) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return null;
  if (day > daysInMonth(year, month)) return null;
  return daysFromCivil(year, month, day) * DAY_MS;
}

/**
 * Days since 1970-01-01 of a `YYYY-MM-DD` calendar date (proleptic Gregorian, any year
 * 0000-9999), or NaN for null; the text is not checked (see {@link isCalendarDate}). Order
 * and differences match the dates', so a store's indexes compare days as plain numbers.
 *
 * @example
 * ```ts
 * dayNumber('1970-01-02'); // 1
 * dayNumber(null);         // NaN
 * ```
 */
export function dayNumber(date: string | null): number {
  if (date === null) return NaN;
  return daysFromCivil(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10)));
}

/** Howard Hinnant's days_from_civil: years start in March, so leap days come last. */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Asia/Kolkata's offset from UTC, ms: India keeps UTC+05:30 all year (docs/spec.md#conventions). */
const IST_OFFSET_MS = 19_800_000;

/**
 * Today's calendar day in Asia/Kolkata at `now`, as `YYYY-MM-DD`.
 *
 * @example
 * ```ts
 * todayInIst(new Date('2026-11-22T19:00:00Z')); // '2026-11-23' (00:30 IST)
 * ```
 */
export function todayInIst(now: Date | number): string {
  const ms = typeof now === 'number' ? now : now.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('todayInIst: the clock gave an invalid time');
  return epochMsToDate(ms + IST_OFFSET_MS);
}

/**
 * The instant 00:00 IST of a real `YYYY-MM-DD` date: its UTC midnight less 5 h 30 min.
 *
 * @example
 * ```ts
 * new Date(istMidnight('2026-11-24')).toISOString(); // '2026-11-23T18:30:00.000Z'
 * ```
 */
export function istMidnight(day: string): number {
  return (dateToEpochMs(day) as number) - IST_OFFSET_MS;
}

/**
 * When the IST calendar day holding `now` began: 00:00 IST, which is 18:30 UTC the day before.
 *
 * @example
 * ```ts
 * new Date(istDayStart(Date.UTC(2026, 10, 24, 12))).toISOString(); // '2026-11-23T18:30:00.000Z'
 * ```
 */
export function istDayStart(now: number): number {
  return Math.floor((now + IST_OFFSET_MS) / DAY_MS) * DAY_MS - IST_OFFSET_MS;
}

/**
 * The `YYYY-MM-DD` date that is `days` days after `date` (negative: before).
 *
 * @example
 * ```ts
 * addDays('2026-03-01', -1); // '2026-02-28'
 * ```
 */
export function addDays(date: string, days: number): string {
  const ms = dateToEpochMs(date);
  if (ms === null) throw new RangeError(`addDays: ${date} is not a calendar date`);
  return epochMsToDate(ms + days * DAY_MS);
}

/**
 * The UTC calendar date (`YYYY-MM-DD`) of an instant.
 *
 * @example
 * ```ts
 * epochMsToDate(0); // '1970-01-01'
 * ```
 */
export function epochMsToDate(ms: number): string {
  return toIsoUtc(ms).slice(0, 10);
}

/**
 * ISO-8601 UTC with milliseconds, as `Date#toISOString` prints it.
 *
 * @example
 * ```ts
 * toIsoUtc(0); // '1970-01-01T00:00:00.000Z'
 * ```
 */
export function toIsoUtc(ms: number): string {
  // A GMP series writes thousands of these per request, mostly on whole minutes of a few
  // days: the texts of the last two days are kept (a range's two ends are often days apart)
  // and the time comes from a table, instead of a Date per point. Anything unusual goes to Date.
  if (!Number.isInteger(ms) || ms < FIRST_ISO_MS || ms > LAST_ISO_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  let kept = isoDays[0];
  if (day !== kept.day) {
    kept = isoDays[1];
    if (day !== kept.day) kept = { day, text: new Date(day * DAY_MS).toISOString().slice(0, 11) };
    isoDays[1] = isoDays[0];
    isoDays[0] = kept;
  }
  const inDay = ms - day * DAY_MS;
  const minute = Math.floor(inDay / 60_000);
  const rest = inDay - minute * 60_000;
  const seconds = rest === 0 ? ':00.000Z' : `:${TWO_DIGITS[Math.floor(rest / 1000)]}.${String(rest % 1000).padStart(3, '0')}Z`;
  return kept.text + MINUTES_OF_DAY[minute] + seconds;
}

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: four-digit years only. */
const FIRST_ISO_MS = -62_167_219_200_000;
const LAST_ISO_MS = 253_402_300_799_999;
/** The texts (`YYYY-MM-DDT`) of the two days last written, the latest first. */
const isoDays: [{ day: number; text: string }, { day: number; text: string }] = [
  { day: Number.NaN, text: '' },
  { day: Number.NaN, text: '' },
];
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
/** `HH:MM` of every minute of a day. */
const MINUTES_OF_DAY = Array.from({ length: 1440 }, (_, m) => `${TWO_DIGITS[Math.floor(m / 60)]}:${TWO_DIGITS[m % 60]}`);

const INSTANT_RE =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Parses an ISO-8601 instant with `Z` or an offset and at most 3 fractional digits
 * (`2026-11-18T09:30:00.000Z`, `2026-11-18T15:00+05:30`) into epoch milliseconds, or
 * `null` when the text is not one or names an impossible date or time.
 *
 * @example
 * ```ts
 * parseInstant('2026-11-18T15:00:00+05:30'); // Date.UTC(2026, 10, 18, 9, 30)
 * ```
 */
export function parseInstant(text: string): number | null {
  const m = INSTANT_RE.exec(text);
  if (m === null) return null;
  const day = dateToEpochMs(`${m[1]}-${m[2]}-${m[3]}`);
  if (day === null) return null;
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6] ?? '0');
  const millis = Number(((m[7] ?? '') + '000').slice(0, 3));
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMin = 0;
  const zone = m[8] as string;
  if (zone !== 'Z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offsetMin = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  return day + ((hour * 60 + minute - offsetMin) * 60 + second) * 1000 + millis;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
