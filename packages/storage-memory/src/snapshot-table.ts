/**
 * The GMP snapshots of a memory store, per IPO ({@link TimedRecords}: a record of the same
 * instant replaces the old one); reads use a columnar copy sorted by timestamp, rebuilt
 * lazily for the IPOs a write touched: one Float64Array of timestamps and one per
 * aggregation field (NaN for null). A series or a latest-snapshot
 * query is then a binary search plus, for the series, one pass over the range.
 */
import { GMP_FIELDS, type GmpField } from '@ipokit/core';
import { type GmpBucket, type GmpBucketQuery, type SnapshotRecord } from '@ipokit/core/backend';
import { lowerBound, upperBound } from './sorted.js';
import { TimedRecords } from './timed-records.js';

/** The aggregation fields, in the order their columns are kept. */
const FIELDS: readonly GmpField[] = GMP_FIELDS;

/** One IPO's snapshots sorted by timestamp, in columns. */
interface Columns {
  timestamps: Float64Array;
  /** Every timestamp is a whole number of milliseconds (as every imported one is). */
  integral: boolean;
  values: Record<GmpField, Float64Array>;
  records: SnapshotRecord[];
}

/**
 * Every stored snapshot, grouped by IPO id (see {@link TimedRecords}), read through its
 * columns. Records are kept as given to `put` (the caller hands over objects it no longer
 * mutates) and returned as they are stored.
 *
 * @example
 * ```ts
 * const table = new SnapshotTable();
 * table.put({ ipoId: 'a1', timestamp: 0, sources: [], aggregations: { mean: null, median: null, min: null, max: null, mode: null } });
 * table.latest('a1', 0)?.timestamp; // 0
 * ```
 */
export class SnapshotTable extends TimedRecords<SnapshotRecord, Columns> {
  constructor() {
    super(buildColumns);
  }

  /**
   * The latest snapshot of an IPO with `timestamp <= at`, or null: one binary search.
   *
   * @example
   * ```ts
   * table.latest('a1', Date.now()); // the newest visible snapshot, or null
   * ```
   */
  latest(ipoId: string, at: number): SnapshotRecord | null {
    const columns = this.view(ipoId);
    if (columns === null) return null;
    const i = upperBound(columns.timestamps, at) - 1;
    return i >= 0 ? (columns.records[i] as SnapshotRecord) : null;
  }

  /**
   * The buckets of a series query (see `Store.gmpBuckets`): a binary search for the
   * range, then one pass. Sums are exact: a bucket's sum switches to a bigint when it
   * would leave the safe-integer range, and back to a number when it ends inside it.
   *
   * @example
   * ```ts
   * table.buckets({ ipoId: 'a1', field: 'mean', from: 0, to: Date.now(), size: 86_400_000, origin: 0 });
   * ```
   */
  buckets(query: GmpBucketQuery): GmpBucket[] {
    const { from, to, size, origin } = query;
    const columns = this.view(query.ipoId);
    if (columns === null || !(from <= to)) return [];
    const timestamps = columns.timestamps;
    const values = columns.values[query.field];
    const lo = lowerBound(timestamps, from);
    const hi = upperBound(timestamps, to, lo);
    const out: GmpBucket[] = [];
    if (hi <= lo) return out;
    // A bucket's snapshots are found by comparing timestamps with the bucket's end: one
    // division per bucket. That is the bucket of the division exactly when every term is
    // an integer far from 2^53 (see `sameBucketWhileBelowEnd`); otherwise divide each time.
    const fast = columns.integral && sameBucketWhileBelowEnd(timestamps[lo] as number, timestamps[hi - 1] as number, size, origin);
    let i = lo;
    while (i < hi) {
      const start = origin + Math.floor(((timestamps[i] as number) - origin) / size) * size;
      let j = i + 1;
      if (fast) {
        const end = start + size;
        while (j < hi && (timestamps[j] as number) < end) j++;
      } else {
        while (j < hi && origin + Math.floor(((timestamps[j] as number) - origin) / size) * size === start) j++;
      }
      let sum = 0;
      let big: bigint | null = null;
      let count = 0;
      for (; i < j; i++) {
        const v = values[i] as number;
        if (v !== v) continue; // NaN: the field is null in this snapshot
        count++;
        if (big !== null) {
          big += BigInt(v);
        } else {
          const next = sum + v;
          // Both operands are safe integers, so the float sum is exact whenever the true
          // sum is safe (and lands outside the safe range when it is not); outside that
          // range redo it exactly.
          if (next <= Number.MAX_SAFE_INTEGER && next >= Number.MIN_SAFE_INTEGER) sum = next;
          else big = BigInt(sum) + BigInt(v);
        }
      }
      out.push({ start, sum: finish(sum, big), count });
    }
    return out;
  }

}

function buildColumns(records: SnapshotRecord[]): Columns {
  const n = records.length;
  const timestamps = new Float64Array(n);
  const values = {} as Record<GmpField, Float64Array>;
  for (const field of FIELDS) values[field] = new Float64Array(n);
  let integral = true;
  for (let i = 0; i < n; i++) {
    const r = records[i] as SnapshotRecord;
    timestamps[i] = r.timestamp;
    if (!Number.isInteger(r.timestamp)) integral = false;
    for (const field of FIELDS) values[field][i] = r.aggregations[field] ?? NaN;
  }
  return { timestamps, integral, values, records };
}

/**
 * Whether, for integer timestamps in [first, last], `t < bucket + size` holds exactly when
 * `origin + Math.floor((t - origin) / size) * size` is `bucket`. With integer `origin` and
 * `size` and |t - origin| + size < 2^52, `t - origin` is exact and its rounded quotient
 * by `size` stays at least 1/size below the next integer, more than the rounding can
 * cross, so the floor is the exact one and `bucket + size` is exact too.
 */
function sameBucketWhileBelowEnd(first: number, last: number, size: number, origin: number): boolean {
  return (
    Number.isSafeInteger(size) &&
    size > 0 &&
    Number.isSafeInteger(origin) &&
    Math.max(Math.abs(first - origin), Math.abs(last - origin)) + size < 2 ** 52
  );
}

function finish(sum: number, big: bigint | null): number | bigint {
  if (big === null) return sum;
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}
