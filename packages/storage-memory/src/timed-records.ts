/**
 * Records of an IPO at instants (GMP snapshots, subscription snapshots), as a memory store
 * keeps them: per IPO a Map keyed by timestamp, so that a record of the same instant
 * replaces the old one, and a read-only view of them (sorted, in columns) built lazily, once
 * per write that touches the IPO. The two tables differ only in their view.
 */

/** What a timed record has: its IPO and its instant (epoch ms). */
export interface Timed {
  ipoId: string;
  timestamp: number;
}

/** One IPO's records: the writable map and its lazily built view. */
interface RecordSet<R, V> {
  byTime: Map<number, R>;
  view: V | null;
}

/**
 * Every record, grouped by IPO id, with a view per IPO made by `build` from its records
 * sorted by timestamp. Records are kept as given to {@link put} (the caller hands over
 * objects it no longer mutates) and returned as they are stored.
 *
 * @example
 * ```ts
 * const table = new TimedRecords((records) => records);
 * table.put({ ipoId: 'a1', timestamp: 0 });
 * table.view('a1'); // [{ ipoId: 'a1', timestamp: 0 }]
 * ```
 */
export class TimedRecords<R extends Timed, V> {
  private sets = new Map<string, RecordSet<R, V>>();

  constructor(private readonly build: (sorted: R[]) => V) {}

  /**
   * Stores a record, replacing the one of the same IPO and instant.
   *
   * @example
   * ```ts
   * table.put(record);
   * ```
   */
  put(record: R): void {
    let set = this.sets.get(record.ipoId);
    if (set === undefined) {
      set = { byTime: new Map(), view: null };
      this.sets.set(record.ipoId, set);
    }
    set.byTime.set(record.timestamp, record);
    set.view = null;
  }

  /**
   * The record of this IPO at exactly this instant, or null.
   *
   * @example
   * ```ts
   * table.get('a1', 0); // null for a new table
   * ```
   */
  get(ipoId: string, timestamp: number): R | null {
    return this.sets.get(ipoId)?.byTime.get(timestamp) ?? null;
  }

  /**
   * Removes every record of an IPO; returns how many there were.
   *
   * @example
   * ```ts
   * table.deleteIpo('a1'); // 3
   * ```
   */
  deleteIpo(ipoId: string): number {
    const set = this.sets.get(ipoId);
    if (set === undefined) return 0;
    this.sets.delete(ipoId);
    return set.byTime.size;
  }

  /**
   * The view of an IPO's records (built now if a write touched them since), or null when it
   * has none.
   *
   * @example
   * ```ts
   * table.view('a1');
   * ```
   */
  view(ipoId: string): V | null {
    const set = this.sets.get(ipoId);
    if (set === undefined) return null;
    set.view ??= this.build([...set.byTime.values()].sort((a, b) => a.timestamp - b.timestamp));
    return set.view;
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
}
