import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GmpField } from '@ipokit/core';
import type { GmpBucket, GmpBucketQuery, SnapshotRecord } from '@ipokit/core/backend';
import { referenceBuckets } from '@ipokit/testing';
import { timelineBuckets, timelineFits, toTimeline, TIMELINE_LIMIT } from './timeline.js';

// The data cache buckets the GMP series in memory from one IPO's timeline: the buckets must
// be the SQL's (checked against the database by the store suite), which are the reference's.

const FIELD: GmpField = 'mean';
const GRIDS = [
  { size: 300_000, origin: 0 },
  { size: 3_600_000, origin: 0 },
  { size: 86_400_000, origin: 0 },
  { size: 604_800_000, origin: 345_600_000 },
  { size: 1, origin: 0 },
  { size: 7, origin: -3 },
];

/** Snapshots of one IPO as the store keeps them: only `timestamp` and the field matter here. */
function snapshotsOf(points: ReadonlyArray<readonly [number, number | null]>): SnapshotRecord[] {
  return points.map(([timestamp, v]) => ({
    ipoId: 'a',
    timestamp,
    sources: [],
    aggregations: { mean: v, median: null, min: null, max: null, mode: null },
  }));
}

function exact(buckets: GmpBucket[]): Array<{ start: number; sum: bigint; count: number }> {
  return buckets.map((b) => ({ start: b.start, sum: BigInt(b.sum), count: b.count }));
}

function bucketsFromTimeline(snapshots: SnapshotRecord[], q: GmpBucketQuery): GmpBucket[] {
  const sorted = [...snapshots].sort((x, y) => x.timestamp - y.timestamp);
  const timeline = toTimeline(
    sorted.map((x) => x.timestamp),
    sorted.map((x) => x.aggregations[FIELD]),
  );
  if (timeline === null) throw new Error('not a timeline');
  return timelineBuckets(timeline, q);
}

describe('timelineBuckets', () => {
  it('equals referenceBuckets on random snapshots, grids and ranges, sums beyond 2^53 included (property)', () => {
    const t0 = Date.UTC(2026, 10, 1);
    const value = fc.oneof(
      fc.constant(null),
      fc.integer({ min: -2_000, max: 20_000 }),
      fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1),
    );
    const instant = fc.oneof(fc.integer({ min: t0 - 86_400_000, max: t0 + 30 * 86_400_000 }), fc.integer({ min: -1_000, max: 1_000 }));
    const arb = fc.record({
      points: fc.uniqueArray(fc.tuple(instant, value), { maxLength: 60, selector: ([t]) => t }),
      grid: fc.constantFrom(...GRIDS),
      a: instant,
      b: instant,
    });
    fc.assert(
      fc.property(arb, ({ points, grid, a, b }) => {
        const snapshots = snapshotsOf(points);
        for (const [from, to] of [
          [Math.min(a, b), Math.max(a, b)],
          [Math.max(a, b), Math.min(a, b)],
        ] as const) {
          const q: GmpBucketQuery = { ipoId: 'a', field: FIELD, from, to, ...grid };
          expect(timelineFits(q)).toBe(true);
          const got = bucketsFromTimeline(snapshots, q);
          const want = referenceBuckets(snapshots, q);
          expect(exact(got)).toEqual(exact(want));
          // a number while safe, a bigint beyond: as the SQL's exactSum gives it
          expect(got.map((x) => typeof x.sum)).toEqual(want.map((x) => typeof x.sum));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('leaves to SQL what it cannot compute exactly', () => {
    const q: GmpBucketQuery = { ipoId: 'a', field: FIELD, from: 0, to: 10, size: 5, origin: 0 };
    expect(timelineFits(q)).toBe(true);
    expect(timelineFits({ ...q, from: 0.5 })).toBe(false);
    expect(timelineFits({ ...q, size: 0 })).toBe(false);
    expect(timelineFits({ ...q, to: TIMELINE_LIMIT * 2 })).toBe(false);
    expect(timelineFits({ ...q, origin: Number.NaN })).toBe(false);
    expect(toTimeline([TIMELINE_LIMIT * 2], [1])).toBeNull();
    expect(toTimeline([1], [2 ** 53])).toBeNull();
    expect(toTimeline([1, 2], [null, 3])).not.toBeNull();
  });
});
