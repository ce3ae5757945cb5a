/**
 * Binary searches over ascending numeric columns. Dates become whole days since 1970-01-01
 * (the core's `dayNumber`) so that ranges such as "started at most N days before today"
 * are plain number comparisons.
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
