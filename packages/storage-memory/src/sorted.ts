/**
 * Binary searches over ascending numeric columns and the calendar-day arithmetic the
 * indexes use. Dates become whole days since 1970-01-01 so that ranges such as "started
 * at most N days before today" are plain number comparisons.
 */

/**
 * The first index in `[lo, hi)` whose key is `>= x` (`hi` when none is). `keys` must be
 * ascending on that range.
 *
 * @example
 * ```ts
 * lowerBound(Float64Array.of(1, 3, 3, 5), 3); // 1
 * ```
 */
export function lowerBound(keys: Float64Array, x: number, lo = 0, hi = keys.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The first index in `[lo, hi)` whose key is `> x` (`hi` when none is). `keys` must be
 * ascending on that range.
 *
 * @example
 * ```ts
 * upperBound(Float64Array.of(1, 3, 3, 5), 3); // 3
 * ```
 */
export function upperBound(keys: Float64Array, x: number, lo = 0, hi = keys.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Days since 1970-01-01 of a `YYYY-MM-DD` calendar date (proleptic Gregorian, any year
 * 0000-9999), or NaN for null. Order and differences match the dates'.
 *
 * @example
 * ```ts
 * dayNumber('1970-01-02'); // 1
 * dayNumber(null);         // NaN
 * ```
 */
export function dayNumber(date: string | null): number {
  if (date === null) return NaN;
  const y = Number(date.slice(0, 4));
  const m = Number(date.slice(5, 7));
  const d = Number(date.slice(8, 10));
  // Howard Hinnant's days_from_civil: years start in March, so leap days come last.
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}
