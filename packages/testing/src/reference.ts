/**
 * Naive reference implementations of the store queries (docs/spec.md#list, #one-ipo, #gmp-series). They define
 * the semantics every backend must reproduce and are what the property tests compare
 * against: plain array scans, no indexes, clarity over speed.
 */
import { asciiLower, compareForStatus, deriveStatus, type GmpBucket, type GmpBucketQuery, type IpoRecord, type IpoRow, type ListQuery, type SnapshotRecord, type SubscriptionQuery, type SubscriptionRecord } from '@ipokit/core/backend';

/**
 * The latest snapshot of an IPO whose timestamp is at or before `at`, or null.
 *
 * @example
 * ```ts
 * latestSnapshot(snapshots, 'ipo-1', Date.parse('2026-11-20T00:00:00Z')); // the newest one not after that instant
 * ```
 */
export function latestSnapshot(snapshots: readonly SnapshotRecord[], ipoId: string, at: number): SnapshotRecord | null {
  let best: SnapshotRecord | null = null;
  for (const s of snapshots) {
    if (s.ipoId !== ipoId || s.timestamp > at) continue;
    if (best === null || s.timestamp > best.timestamp) best = s;
  }
  return best;
}

/**
 * The latest subscription snapshot of an IPO whose timestamp is at or before `at`, or null.
 *
 * @example
 * ```ts
 * latestSubscription(subscription, 'ipo-1', Date.parse('2026-11-20T00:00:00Z')); // the newest one not after that instant
 * ```
 */
export function latestSubscription(subscription: readonly SubscriptionRecord[], ipoId: string, at: number): SubscriptionRecord | null {
  let best: SubscriptionRecord | null = null;
  for (const s of subscription) {
    if (s.ipoId !== ipoId || s.timestamp > at) continue;
    if (best === null || s.timestamp > best.timestamp) best = s;
  }
  return best;
}

/**
 * The subscription series of one IPO (docs/spec.md#subscription-series): its snapshots with
 * `from <= timestamp <= to`, ascending by timestamp.
 *
 * @example
 * ```ts
 * referenceSubscriptionSeries(subscription, { ipoId: 'ipo-1', from: 0, to: Date.UTC(2026, 10, 22) });
 * ```
 */
export function referenceSubscriptionSeries(subscription: readonly SubscriptionRecord[], q: SubscriptionQuery): SubscriptionRecord[] {
  return subscription.filter((s) => s.ipoId === q.ipoId && s.timestamp >= q.from && s.timestamp <= q.to).sort((a, b) => a.timestamp - b.timestamp);
}

/**
 * Whether an IPO passes the list filter `q` (docs/spec.md#list): its name or its symbol
 * contains `q` once both are folded with ASCII case only (`É` is not `é`; `%`, `_` and `\`
 * are plain characters). A null or absent `q` keeps every IPO.
 *
 * @example
 * ```ts
 * matchesQ(makeIpo({ id: 'a', name: 'Orbit Aerospace', symbol: 'ORBIT' }), 'aero'); // true
 * ```
 */
export function matchesQ(ipo: IpoRecord, q: string | null | undefined): boolean {
  if (q === null || q === undefined) return true;
  const folded = asciiLower(q);
  return asciiLower(ipo.name).includes(folded) || (ipo.symbol !== null && asciiLower(ipo.symbol).includes(folded));
}

/**
 * The list query of the contract (docs/spec.md#list), done the obvious way: keep the IPOs whose
 * derived status and filters (`q` included) match, sort them with the status's order, count
 * them all, and cut the page. With `gmpAt` set each row carries its latest snapshot at or
 * before it; with `subscriptionAt` set, its latest subscription snapshot at or before that.
 *
 * @example
 * ```ts
 * const { count, rows } = referenceList(ipos, {
 *   status: 'upcoming', today: '2026-11-20', types: null, source: null, startDate: null,
 *   endDate: null, year: null, q: 'orb', offset: 0, limit: 3, gmpAt: null, subscriptionAt: null,
 * });
 * ```
 */
export function referenceList(
  ipos: readonly IpoRecord[],
  query: ListQuery,
  snapshots: readonly SnapshotRecord[] = [],
  subscription: readonly SubscriptionRecord[] = [],
): { count: number; rows: IpoRow[] } {
  const q = query;
  const matches = ipos.filter((ipo) => {
    if (deriveStatus(ipo, q.today) !== q.status) return false;
    if (q.types !== null && !q.types.includes(ipo.type)) return false;
    if (q.source !== null && !ipo.exchanges.includes(q.source)) return false;
    if (q.startDate !== null && !(ipo.startDate !== null && ipo.startDate >= q.startDate)) return false;
    if (q.endDate !== null && !(ipo.endDate !== null && ipo.endDate <= q.endDate)) return false;
    if (q.year !== null && !(ipo.startDate !== null && ipo.startDate.startsWith(`${q.year}-`))) return false;
    return matchesQ(ipo, q.q);
  });
  const sorted = [...matches].sort(compareForStatus(q.status));
  const page = sorted.slice(q.offset, q.offset + q.limit);
  return { count: sorted.length, rows: page.map((ipo) => row(ipo, q.gmpAt, snapshots, q.subscriptionAt ?? null, subscription)) };
}

/**
 * Resolves an identifier (docs/spec.md#one-ipo): the IPO whose id equals it exactly, else the one
 * whose symbol equals it ignoring ASCII case, else the one whose slug does; null if none.
 * The row carries `gmp` when `gmpAt` is a number and `subscription` when `subscriptionAt` is.
 *
 * @example
 * ```ts
 * referenceFind(ipos, 'orbit', null, []); // the IPO with symbol 'ORBIT', unless an id is 'orbit'
 * referenceFind(ipos, 'ORBIT', null, [], Date.now(), subscription)?.subscription; // its latest subscription snapshot, or null
 * ```
 */
export function referenceFind(
  ipos: readonly IpoRecord[],
  identifier: string,
  gmpAt: number | null,
  snapshots: readonly SnapshotRecord[] = [],
  subscriptionAt: number | null = null,
  subscription: readonly SubscriptionRecord[] = [],
): IpoRow | null {
  const folded = asciiLower(identifier);
  const found =
    ipos.find((ipo) => ipo.id === identifier) ??
    ipos.find((ipo) => ipo.symbol !== null && asciiLower(ipo.symbol) === folded) ??
    ipos.find((ipo) => asciiLower(ipo.slug) === folded);
  return found === undefined ? null : row(found, gmpAt, snapshots, subscriptionAt, subscription);
}

/**
 * The GMP buckets of one IPO (docs/spec.md#gmp-series): the snapshots with `from <= timestamp <= to`
 * grouped by `origin + floor((t - origin) / size) * size`, each bucket with the exact sum
 * and count of the non-null values of `field`. A bucket whose values are all null still
 * exists (sum 0, count 0). Ascending by start. The sum is a bigint only when it leaves
 * the safe-integer range.
 *
 * @example
 * ```ts
 * referenceBuckets(snapshots, { ipoId: 'ipo-1', field: 'mean', from: 0, to: 1_764_000_000_000, size: 86_400_000, origin: 0 });
 * // [{ start: 1763424000000, sum: 8400, count: 2 }, ...]
 * ```
 */
export function referenceBuckets(snapshots: readonly SnapshotRecord[], q: GmpBucketQuery): GmpBucket[] {
  const buckets = new Map<number, { sum: bigint; count: number }>();
  for (const s of snapshots) {
    if (s.ipoId !== q.ipoId || s.timestamp < q.from || s.timestamp > q.to) continue;
    const start = q.origin + Math.floor((s.timestamp - q.origin) / q.size) * q.size;
    const bucket = buckets.get(start) ?? { sum: 0n, count: 0 };
    const value = s.aggregations[q.field];
    if (value !== null) {
      bucket.sum += BigInt(value);
      bucket.count += 1;
    }
    buckets.set(start, bucket);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, b]) => ({ start, sum: toNumberIfSafe(b.sum), count: b.count }));
}

/** A row with `gmp` only when a snapshot cut-off was asked for, and `subscription` likewise. */
function row(ipo: IpoRecord, gmpAt: number | null, snapshots: readonly SnapshotRecord[], subscriptionAt: number | null, subscription: readonly SubscriptionRecord[]): IpoRow {
  const out: IpoRow = { ipo };
  if (gmpAt !== null) out.gmp = latestSnapshot(snapshots, ipo.id, gmpAt);
  if (subscriptionAt !== null) out.subscription = latestSubscription(subscription, ipo.id, subscriptionAt);
  return out;
}

function toNumberIfSafe(n: bigint): number | bigint {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}
