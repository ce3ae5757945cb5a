import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUCKET_GRIDS, bucketStart, checkBucketCap, resolveGmpRange, toSeriesPoints } from './gmp.js';
import type { GmpInterval } from './types.js';

const DAY = 86_400_000;
const intervals = Object.keys(BUCKET_GRIDS) as GmpInterval[];

/** Naive reference: walk bucket starts from a known aligned instant. */
function naiveBucketStart(t: number, interval: GmpInterval): number {
  const d = new Date(t);
  const utc = (h: number, m: number) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), h, m);
  const minutes = { '5m': 5, '10m': 10, '15m': 15, '30m': 30, hourly: 60 } as const;
  if (interval === 'daily') return utc(0, 0);
  if (interval === 'weekly') return utc(0, 0) - ((d.getUTCDay() + 6) % 7) * DAY; // back to Monday
  const step = minutes[interval];
  const total = d.getUTCHours() * 60 + d.getUTCMinutes();
  const m = Math.floor(total / step) * step;
  return utc(Math.floor(m / 60), m % 60);
}

describe('bucketing', () => {
  it('aligns every interval in UTC, weeks on Monday, like a naive reference (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }), fc.constantFrom(...intervals), (t, interval) => {
        expect(bucketStart(t, BUCKET_GRIDS[interval])).toBe(naiveBucketStart(t, interval));
      }),
      { numRuns: 5000 },
    );
    expect(new Date(bucketStart(Date.UTC(2026, 10, 8, 23), BUCKET_GRIDS.weekly)).toISOString()).toBe('2026-11-02T00:00:00.000Z');
    expect(new Date(bucketStart(Date.UTC(1969, 11, 31, 23), BUCKET_GRIDS.weekly)).toISOString()).toBe('1969-12-29T00:00:00.000Z');
  });

  it('turns exact sums into rounded points, null when a bucket has no value', () => {
    expect(toSeriesPoints([{ start: 0, sum: 201, count: 2 }, { start: 300_000, sum: 0, count: 0 }, { start: 600_000, sum: -535, count: 2 }])).toEqual([
      { timestamp: '1970-01-01T00:00:00.000Z', price: 1.01 },
      { timestamp: '1970-01-01T00:05:00.000Z', price: null },
      { timestamp: '1970-01-01T00:10:00.000Z', price: -2.68 },
    ]);
  });
});

describe('resolveGmpRange', () => {
  const now = Date.UTC(2026, 10, 22, 6, 30);
  it('defaults to the 30 days ending now', () => {
    expect(resolveGmpRange({ from: null, to: null, now })).toEqual({ start: now - 30 * DAY, end: now });
  });
  it('with only to: from is 30 days before it, the whole to day included', () => {
    expect(resolveGmpRange({ from: null, to: '2026-11-30', now })).toEqual({ start: Date.UTC(2026, 9, 31), end: Date.UTC(2026, 11, 1) - 1 });
  });
  it('with only from: the end is now', () => {
    expect(resolveGmpRange({ from: '2026-11-01', to: null, now })).toEqual({ start: Date.UTC(2026, 10, 1), end: now });
  });
  it('start after end is a 400 naming from', () => {
    expect(() => resolveGmpRange({ from: '2026-11-23', to: null, now })).toThrow(expect.objectContaining({ code: 'ERR:BADPARAM', parameter: 'from' }));
    expect(() => resolveGmpRange({ from: '2026-11-02', to: '2026-11-01', now })).toThrow(expect.objectContaining({ parameter: 'from' }));
    expect(resolveGmpRange({ from: '2026-11-01', to: '2026-11-01', now }).end - Date.UTC(2026, 10, 1)).toBe(DAY - 1);
  });
});

describe('checkBucketCap', () => {
  it('allows exactly maxBuckets and refuses one more, naming interval', () => {
    const start = 0;
    expect(() => checkBucketCap({ start, end: 19_999 * 300_000 }, '5m', 20_000)).not.toThrow();
    expect(() => checkBucketCap({ start, end: 20_000 * 300_000 }, '5m', 20_000)).toThrow(expect.objectContaining({ parameter: 'interval' }));
    expect(() => checkBucketCap({ start: 299_999, end: 20_000 * 300_000 - 1 }, '5m', 20_000)).not.toThrow();
  });
});
