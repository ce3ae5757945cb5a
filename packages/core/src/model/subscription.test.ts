import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fullTimes, isSubscriptionTimes, resolveSubscriptionRange, subscriptionJson, subscriptionPointJson, toSubscriptionPoint, toSubscriptionSnapshot } from './subscription.js';
import { SUBSCRIPTION_CATEGORIES, type SubscriptionRecord, type SubscriptionTimes } from './types.js';

const timesArb: fc.Arbitrary<SubscriptionTimes> = fc.record(
  Object.fromEntries(SUBSCRIPTION_CATEGORIES.map((c) => [c, fc.option(fc.integer({ min: 0, max: 999_999_999 }).map((h) => h / 100), { nil: null })])) as Record<
    keyof SubscriptionTimes,
    fc.Arbitrary<number | null>
  >,
);
const recordArb: fc.Arbitrary<SubscriptionRecord> = fc.record({
  ipoId: fc.constantFrom('a1', 'b-2', 'c.3'),
  timestamp: fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }),
  times: timesArb,
});

describe('subscription snapshots (docs/spec.md#subscription)', () => {
  it('writes the JSON of the wire snapshot and of a series point byte for byte, frozen or not, -0 as 0', () => {
    fc.assert(
      fc.property(recordArb, fc.boolean(), (record, frozen) => {
        const r = frozen ? Object.freeze({ ...record, times: Object.freeze({ ...record.times }) }) : record;
        expect(subscriptionJson(r)).toBe(JSON.stringify(toSubscriptionSnapshot(r)));
        expect(subscriptionJson(r)).toBe(subscriptionJson(r));
        expect(subscriptionPointJson(r)).toBe(JSON.stringify(toSubscriptionPoint(r)));
        expect(subscriptionPointJson(r)).toBe(subscriptionPointJson(r));
      }),
    );
    expect(subscriptionJson(null)).toBe('null');
    const negativeZero = { ipoId: 'a1', timestamp: 0, times: { ...fullTimes({}), qib: -0 } };
    expect(subscriptionPointJson(negativeZero)).toBe(JSON.stringify(toSubscriptionPoint(negativeZero)));
    expect(subscriptionJson(negativeZero)).toBe(JSON.stringify(toSubscriptionSnapshot(negativeZero)));
  });

  it('lists every category in order, absent ones null, and the instant in UTC with milliseconds', () => {
    const record = { ipoId: 'a1', timestamp: Date.UTC(2026, 10, 18, 5, 30), times: { total: 3.5, qib: 0 } as unknown as SubscriptionTimes };
    expect(JSON.stringify(toSubscriptionSnapshot(record))).toBe(
      '{"asOf":"2026-11-18T05:30:00.000Z","times":{"qib":0,"nii":null,"bnii":null,"snii":null,"retail":null,"employee":null,"shareholder":null,"total":3.5}}',
    );
    expect(Object.keys(toSubscriptionPoint(record))).toEqual(['timestamp', ...SUBSCRIPTION_CATEGORIES]);
    expect(Object.keys(fullTimes({}))).toEqual([...SUBSCRIPTION_CATEGORIES]);
    expect(Object.is(fullTimes({ qib: -0 }).qib, 0)).toBe(true);
  });

  it('accepts times >= 0 with at most 2 decimals below 10,000,000', () => {
    for (const ok of [0, 1, 12.5, 12.34, 9_999_999.99]) expect(isSubscriptionTimes(ok), String(ok)).toBe(true);
    for (const bad of [-0.01, -1, 1.234, 10_000_000, Infinity, NaN]) expect(isSubscriptionTimes(bad), String(bad)).toBe(false);
  });

  it('resolves the range: from 2000-01-01 without from, now without to, the whole day of to', () => {
    const now = Date.UTC(2026, 10, 20, 10);
    expect(resolveSubscriptionRange({ from: null, to: null, now })).toEqual({ start: Date.UTC(2000, 0, 1), end: now });
    expect(resolveSubscriptionRange({ from: null, to: '2026-11-18', now })).toEqual({ start: Date.UTC(2000, 0, 1), end: Date.UTC(2026, 10, 19) - 1 });
    expect(resolveSubscriptionRange({ from: '2026-11-17', to: null, now })).toEqual({ start: Date.UTC(2026, 10, 17), end: now });
    expect(() => resolveSubscriptionRange({ from: '2026-11-21', to: null, now })).toThrow(/from must not be after/);
    expect(() => resolveSubscriptionRange({ from: '1999-12-31', to: '1999-12-31', now })).not.toThrow();
  });
});
