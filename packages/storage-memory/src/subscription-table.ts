/**
 * The subscription snapshots of a memory store, per IPO (docs/spec.md#subscription): the
 * records sorted by timestamp, rebuilt lazily for the IPOs a write touched (see
 * {@link TimedRecords}). An IPO has a few dozen snapshots, so the latest one and a range are
 * binary searches.
 */
import { type SubscriptionQuery, type SubscriptionRecord } from '@ipokit/core/backend';
import { lowerBound, upperBound } from './sorted.js';
import { TimedRecords } from './timed-records.js';

/** One IPO's snapshots sorted by timestamp, with their timestamps as a column. */
interface Sorted {
  timestamps: Float64Array;
  records: SubscriptionRecord[];
}

/**
 * Every stored subscription snapshot, grouped by IPO id. Records are kept as given to `put`
 * (frozen copies the caller no longer mutates) and returned as they are stored, so that a
 * serialized snapshot's text can be kept with it.
 *
 * @example
 * ```ts
 * const table = new SubscriptionTable();
 * table.put(Object.freeze({ ipoId: 'a1', timestamp: 0, times }));
 * table.latest('a1', 0)?.timestamp; // 0
 * ```
 */
export class SubscriptionTable extends TimedRecords<SubscriptionRecord, Sorted> {
  constructor() {
    // Frozen: a series of every snapshot is this array itself, whose text the core keeps.
    super((records) => ({ timestamps: Float64Array.from(records, (r) => r.timestamp), records: Object.freeze(records) as SubscriptionRecord[] }));
  }

  /**
   * The latest snapshot of an IPO with `timestamp <= at`, or null.
   *
   * @example
   * ```ts
   * table.latest('a1', now); // the newest visible snapshot, or null
   * ```
   */
  latest(ipoId: string, at: number): SubscriptionRecord | null {
    const sorted = this.view(ipoId);
    if (sorted === null) return null;
    const i = upperBound(sorted.timestamps, at) - 1;
    return i >= 0 ? (sorted.records[i] as SubscriptionRecord) : null;
  }

  /**
   * The snapshots of a series query (see `IpoStore.subscriptionSeries`), ascending: when the
   * range holds every snapshot of the IPO (as the route's default does), the same frozen
   * array each time until a write.
   *
   * @example
   * ```ts
   * table.range({ ipoId: 'a1', from: 0, to: now });
   * ```
   */
  range(query: SubscriptionQuery): SubscriptionRecord[] {
    const sorted = this.view(query.ipoId);
    if (sorted === null || !(query.from <= query.to)) return [];
    const lo = lowerBound(sorted.timestamps, query.from);
    const hi = upperBound(sorted.timestamps, query.to, lo);
    return lo === 0 && hi === sorted.records.length ? sorted.records : sorted.records.slice(lo, hi);
  }
}
