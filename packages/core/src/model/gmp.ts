/**
 * GMP series rules (docs/spec.md#gmp-series): bucket sizes and UTC alignment, the from/to defaults,
 * the bucket cap, and turning exact bucket sums into rounded points.
 */
import { DAY_MS, dateToEpochMs, toIsoUtc } from './dates.js';
import { paiseToRupees, roundDiv } from './numbers.js';
import { badParam } from './errors.js';
import { gmpFigures } from './prices.js';
import { GMP_FIELDS, type GmpBucket, type GmpInterval, type GmpSeries, type GmpSnapshot, type SnapshotRecord } from './types.js';

/** A bucket grid: buckets start at `origin + k * size` (ms). */
export interface BucketGrid {
  size: number;
  origin: number;
}

const MINUTE_MS = 60_000;
/** 1970-01-05T00:00:00Z, a Monday: weekly buckets start on Mondays. */
export const WEEK_ORIGIN_MS = 4 * DAY_MS;

/** The grid of each interval, aligned in UTC. */
export const BUCKET_GRIDS: Readonly<Record<GmpInterval, BucketGrid>> = Object.freeze({
  '5m': { size: 5 * MINUTE_MS, origin: 0 },
  '10m': { size: 10 * MINUTE_MS, origin: 0 },
  '15m': { size: 15 * MINUTE_MS, origin: 0 },
  '30m': { size: 30 * MINUTE_MS, origin: 0 },
  hourly: { size: 60 * MINUTE_MS, origin: 0 },
  daily: { size: DAY_MS, origin: 0 },
  weekly: { size: 7 * DAY_MS, origin: WEEK_ORIGIN_MS },
});

/** Days in the default GMP range. */
export const DEFAULT_GMP_RANGE_DAYS = 30;

/**
 * The start of the bucket holding instant `t`.
 *
 * @example
 * ```ts
 * bucketStart(Date.UTC(2026, 10, 4, 12), BUCKET_GRIDS.weekly); // Date.UTC(2026, 10, 2): Monday
 * ```
 */
export function bucketStart(t: number, grid: BucketGrid): number {
  return grid.origin + Math.floor((t - grid.origin) / grid.size) * grid.size;
}

/**
 * The effective range [start, end] in ms from the optional `from`/`to` dates: with
 * neither, the 30 days ending now; with only `to`, from is 30 days before it; with only
 * `from`, end is now. Start after end is a 400 naming `from`.
 *
 * @example
 * ```ts
 * resolveGmpRange({ from: null, to: '2026-11-30', now: 0 }).start; // Date.UTC(2026, 9, 31)
 * ```
 */
export function resolveGmpRange(input: { from: string | null; to: string | null; now: number }): { start: number; end: number } {
  const { from, to, now } = input;
  let start: number;
  let end: number;
  if (to === null) {
    end = now;
    start = from === null ? now - DEFAULT_GMP_RANGE_DAYS * DAY_MS : (dateToEpochMs(from) as number);
  } else {
    const toDay = dateToEpochMs(to) as number;
    end = toDay + DAY_MS - 1;
    // (arithmetic on the instant: a date 30 days before 0000-01-01 has no YYYY-MM-DD form)
    start = from === null ? toDay - DEFAULT_GMP_RANGE_DAYS * DAY_MS : (dateToEpochMs(from) as number);
  }
  if (start > end) {
    throw badParam('from', `from must not be after the end of the range (${toIsoUtc(end)}).`);
  }
  return { start, end };
}

/**
 * Checks the bucket cap: the range spans `(bucketStart(end) - bucketStart(start)) / size + 1`
 * buckets, and more than `maxBuckets` is a 400 naming `interval`.
 *
 * @example
 * ```ts
 * checkBucketCap({ start: 0, end: 86_400_000 * 70 - 1 }, '5m', 20_000); // throws: 20,160 buckets
 * ```
 */
export function checkBucketCap(range: { start: number; end: number }, interval: GmpInterval, maxBuckets: number): void {
  const grid = BUCKET_GRIDS[interval];
  const buckets = (bucketStart(range.end, grid) - bucketStart(range.start, grid)) / grid.size + 1;
  if (buckets > maxBuckets) {
    throw badParam(
      'interval',
      `The range needs ${buckets} ${interval} buckets, more than the ${maxBuckets} allowed: use a longer interval or a shorter range.`,
    );
  }
}

/**
 * Turns store buckets into series points: each price is the exact mean of the bucket's
 * values (paise) rounded half away from zero to 2 decimals, or null when it had none.
 *
 * @example
 * ```ts
 * toSeriesPoints([{ start: 0, sum: 201, count: 2 }]); // [{ timestamp: '1970-01-01T00:00:00.000Z', price: 1.01 }]
 * ```
 */
export function toSeriesPoints(buckets: readonly GmpBucket[]): GmpSeries['series'] {
  return buckets.map((b) => ({
    timestamp: toIsoUtc(b.start),
    price: b.count === 0 ? null : paiseToRupees(roundDiv(b.sum, b.count)),
  }));
}

/**
 * The wire form of a stored snapshot (docs/spec.md#gmp-snapshot), for an IPO whose price
 * band's high is `highPaise` (null: it has no price band, and the figures derived from it,
 * `estimatedListingPrice` and `gmpPercent`, are null).
 *
 * @example
 * ```ts
 * toGmpSnapshot(record).lastUpdatedAt;                 // '2026-11-18T09:30:00.000Z'
 * toGmpSnapshot(record, 10_000).estimatedListingPrice; // 100 + the mean
 * ```
 */
export function toGmpSnapshot(record: SnapshotRecord, highPaise: number | null = null): GmpSnapshot {
  const a = record.aggregations;
  const aggregations = {} as GmpSnapshot['aggregations'];
  for (const field of GMP_FIELDS) aggregations[field] = rupeesOrNull(a[field]);
  const { estimatedListingPrice, gmpPercent } = gmpFigures(highPaise, a.mean);
  return {
    lastUpdatedAt: toIsoUtc(record.timestamp),
    aggregations,
    estimatedListingPrice,
    gmpPercent,
    sources: record.sources.map((s) => ({ name: s.name, gmpPrice: paiseToRupees(s.paise) })),
  };
}

function rupeesOrNull(paise: number | null): number | null {
  return paise === null ? null : paiseToRupees(paise);
}
