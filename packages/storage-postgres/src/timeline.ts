/**
 * One IPO's snapshots for one GMP field, as the data cache keeps them for `gmpBuckets`:
 * the GMP route's range moves with the request clock (`to` is now, `from` 30 days before
 * by default), so its buckets are never asked for twice, but the snapshots they are made
 * of change only with the data. Buckets made here equal the SQL's, bit for bit.
 */
import type { GmpBucket, GmpBucketQuery } from '@ipokit/core/backend';

/** Instants ascending (unique) and the field's paise at each, NaN where it is null. */
export interface Timeline {
  ts: Float64Array;
  values: Float64Array;
}

/**
 * Largest magnitude of the instants, bounds and values bucketed here (about 35,000 years
 * of ms): every difference and product below stays an exact double. Anything larger is
 * left to SQL.
 */
export const TIMELINE_LIMIT = 2 ** 50;

/**
 * The start of the bucket that holds `from`, computed exactly (`%` on integral doubles is
 * exact): every instant in range is at or after it, and the SQL numbers buckets from it.
 *
 * @example
 * ```ts
 * firstBucketStart({ from: 3_700_000, size: 3_600_000, origin: 0 }); // 3_600_000
 * ```
 */
export function firstBucketStart(q: Pick<GmpBucketQuery, 'from' | 'size' | 'origin'>): number {
  return q.from - ((((q.from - q.origin) % q.size) + q.size) % q.size);
}

/**
 * Whether {@link timelineBuckets} answers `q` exactly: whole numbers within
 * {@link TIMELINE_LIMIT}, and a bucket width of at least 1 ms. (SQL answers the rest,
 * refusing what it refuses, as before.)
 *
 * @example
 * ```ts
 * timelineFits({ ipoId: 'a', field: 'mean', from: 0, to: 1, size: 300_000, origin: 0 }); // true
 * ```
 */
export function timelineFits(q: GmpBucketQuery): boolean {
  const small = (n: number): boolean => Number.isSafeInteger(n) && Math.abs(n) <= TIMELINE_LIMIT;
  return small(q.from) && small(q.to) && small(q.origin) && small(q.size) && q.size >= 1;
}

/**
 * A timeline from the rows SQL gave (instants ascending, values or null), or null when an
 * instant or value is outside what {@link timelineBuckets} computes exactly.
 *
 * @example
 * ```ts
 * toTimeline([1000, 2000], [4200, null]); // { ts: Float64Array [1000, 2000], values: Float64Array [4200, NaN] }
 * ```
 */
export function toTimeline(ts: readonly number[], values: ReadonlyArray<number | null>): Timeline | null {
  const out: Timeline = { ts: new Float64Array(ts.length), values: new Float64Array(ts.length) };
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i]!;
    const v = values[i] ?? null;
    if (!Number.isSafeInteger(t) || Math.abs(t) > TIMELINE_LIMIT || (v !== null && !Number.isSafeInteger(v))) return null;
    out.ts[i] = t;
    out.values[i] = v ?? NaN;
  }
  return out;
}

/**
 * The buckets of `q` (which {@link timelineFits}) from the timeline of `q.ipoId` and
 * `q.field`: those holding a snapshot in `[from, to]`, ascending, each with the exact sum
 * (a bigint outside the safe range) and count of the non-null values; as the SQL of
 * `gmpBuckets` gives them.
 *
 * @example
 * ```ts
 * timelineBuckets(timeline, { ipoId: 'a', field: 'mean', from, to: now, size: 3_600_000, origin: 0 });
 * ```
 */
export function timelineBuckets(t: Timeline, q: GmpBucketQuery): GmpBucket[] {
  const first = firstBucketStart(q);
  const out: GmpBucket[] = [];
  let bucket = -1; // (every instant in range is at or after `first`: its bucket number is >= 0)
  let sum = 0;
  let big: bigint | null = null;
  let count = 0;
  const flush = (): void => {
    if (bucket >= 0) out.push({ start: first + bucket * q.size, sum: big === null ? sum : numberIfSafe(big), count });
  };
  for (let i = lowerBound(t.ts, q.from); i < t.ts.length && t.ts[i]! <= q.to; i++) {
    // SQL's integer division (ts - first) / size; the double quotient may round up or down
    // to the next integer, which the products (exact here) correct.
    const d = t.ts[i]! - first;
    let k = Math.floor(d / q.size);
    if (k * q.size > d) k -= 1;
    else if ((k + 1) * q.size <= d) k += 1;
    if (k !== bucket) {
      flush();
      bucket = k;
      sum = 0;
      big = null;
      count = 0;
    }
    const v = t.values[i]!;
    if (Number.isNaN(v)) continue;
    count += 1;
    if (big !== null) {
      big += BigInt(v);
    } else {
      // exact while the true sum is a safe integer (the double is then the sum itself)
      const next = sum + v;
      if (Number.isSafeInteger(next)) sum = next;
      else big = BigInt(sum) + BigInt(v);
    }
  }
  flush();
  return out;
}

/** The first index whose instant is >= `from`. */
function lowerBound(ts: Float64Array, from: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ts[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function numberIfSafe(n: bigint): number | bigint {
  return n >= MIN_SAFE && n <= MAX_SAFE ? Number(n) : n;
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
