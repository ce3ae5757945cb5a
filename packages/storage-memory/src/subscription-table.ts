/**
 * The subscription snapshots of a memory store, per IPO (docs/spec.md#subscription). Writes
 * go to a Map keyed by timestamp (a snapshot with the same instant replaces the old one);
 * reads use the records sorted by timestamp, rebuilt lazily for the IPOs a write touched. An
 * IPO has a few dozen snapshots, so the latest one and a range are binary searches.
 */
import { type SubscriptionQuery, type SubscriptionRecord } from '@ipokit/core/backend';
import { lowerBound, upperBound } from './sorted.js';

/** One IPO's snapshots: the writable map and its lazily sorted copy. */
interface SubscriptionSet {
  byTime: Map<number, SubscriptionRecord>;
  sorted: { timestamps: Float64Array; records: SubscriptionRecord[] } | null;
}

/**
 * Every stored subscription snapshot, grouped by IPO id. Records are kept as given to
 * {@link put} (frozen copies the caller no longer mutates) and returned as they are stored,
 * so that a serialized snapshot's text can be kept with it.
 *
 * @example
 * ```ts
 * const table = new SubscriptionTable();
 * table.put(Object.freeze({ ipoId: 'a1', timestamp: 0, times }));
 * table.latest('a1', 0)?.timestamp; // 0
 * ```
 */
export class SubscriptionTable {
  private sets = new Map<string, SubscriptionSet>();

  /**
   * Stores a snapshot, replacing the one of the same IPO and instant.
   *
   * @example
   * ```ts
   * table.put(record);
   * ```
   */
  put(record: SubscriptionRecord): void {
    let set = this.sets.get(record.ipoId);
    if (set === undefined) {
      set = { byTime: new Map(), sorted: null };
      this.sets.set(record.ipoId, set);
    }
    set.byTime.set(record.timestamp, record);
    set.sorted = null;
  }

  /**
   * The snapshot of this IPO at exactly this instant, or null.
   *
   * @example
   * ```ts
   * table.get('a1', 0); // null for a new table
   * ```
   */
  get(ipoId: string, timestamp: number): SubscriptionRecord | null {
    return this.sets.get(ipoId)?.byTime.get(timestamp) ?? null;
  }

  /**
   * Removes every snapshot of an IPO; returns how many there were.
   *
   * @example
   * ```ts
   * table.deleteIpo('a1'); // 12
   * ```
   */
  deleteIpo(ipoId: string): number {
    const set = this.sets.get(ipoId);
    if (set === undefined) return 0;
    this.sets.delete(ipoId);
    return set.byTime.size;
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
    const sorted = this.sortedOf(ipoId);
    if (sorted === null) return null;
    const i = upperBound(sorted.timestamps, at) - 1;
    return i >= 0 ? (sorted.records[i] as SubscriptionRecord) : null;
  }

  /**
   * The snapshots of a series query (see `IpoStore.subscriptionSeries`), ascending.
   *
   * @example
   * ```ts
   * table.range({ ipoId: 'a1', from: 0, to: now });
   * ```
   */
  range(query: SubscriptionQuery): SubscriptionRecord[] {
    const sorted = this.sortedOf(query.ipoId);
    if (sorted === null || !(query.from <= query.to)) return [];
    const lo = lowerBound(sorted.timestamps, query.from);
    return sorted.records.slice(lo, upperBound(sorted.timestamps, query.to, lo));
  }

  /**
   * Forgets everything.
   *
   * @example
   * ```ts
   * table.clear();
   * ```
   */
  clear(): void {
    this.sets = new Map();
  }

  private sortedOf(ipoId: string): SubscriptionSet['sorted'] {
    const set = this.sets.get(ipoId);
    if (set === undefined) return null;
    if (set.sorted === null) {
      const records = [...set.byTime.values()].sort((a, b) => a.timestamp - b.timestamp);
      set.sorted = { timestamps: Float64Array.from(records, (r) => r.timestamp), records };
    }
    return set.sorted;
  }
}
