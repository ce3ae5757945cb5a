/**
 * The five aggregations of one GMP snapshot across its sources (docs/spec.md#ipo-object, #numbers),
 * computed on integer paise so that they are exact.
 */
import { max, median, min, modeSorted } from 'simple-statistics';
import { roundDiv } from './numbers.js';
import type { GmpAggregationsPaise } from './types.js';

/**
 * Aggregations of a snapshot without any numeric source. Written out (the type requires
 * every GMP field): an object built key by key at load gave V8 a shape that made every
 * stored snapshot's copied aggregations larger (bench/core-memory.ts: 394 -> 431 bytes a snapshot).
 */
export const NULL_AGGREGATIONS: Readonly<GmpAggregationsPaise> = Object.freeze({
  mean: null,
  median: null,
  min: null,
  max: null,
  mode: null,
});

/**
 * Mean, median, min, max and mode of integer paise values, each rounded half away from
 * zero to whole paise. The median of an even count is the mean of the two middle values;
 * the mode is the most frequent value, a tie going to the lowest.
 *
 * @example
 * ```ts
 * aggregatePaise([100, 101]); // { mean: 101, median: 101, min: 100, max: 101, mode: 100 }
 * ```
 */
export function aggregatePaise(values: readonly number[]): GmpAggregationsPaise {
  if (values.length === 0) return { ...NULL_AGGREGATIONS };
  const sorted = [...values].sort((a, b) => a - b);
  let sum = 0;
  for (const v of sorted) sum += v; // |v| < 1e9 and few sources: the sum stays exact
  return {
    mean: roundDiv(sum, sorted.length),
    // median of integers is an integer or a half: twice it is an exact integer
    median: roundDiv(median(sorted) * 2, 2),
    min: min(sorted),
    max: max(sorted),
    mode: modeSorted(sorted),
  };
}
