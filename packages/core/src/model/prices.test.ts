import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gmpFigures, issueSizeCrore, priceBandPaise, toPriceBand } from './prices.js';

/** n / d rounded half away from zero, in bigints (a naive reference). */
function roundHalfAway(n: bigint, d: bigint): bigint {
  const neg = n < 0n;
  const a = neg ? -n : n;
  const q = (2n * a + d) / (2n * d);
  return neg ? -q : q;
}

/** Hundredths as the decimal text of a number with at most 2 decimals: 14117 -> "141.17". */
function hundredthsText(h: bigint): string {
  const neg = h < 0n;
  const a = neg ? -h : h;
  return `${neg ? '-' : ''}${a / 100n}.${String(a % 100n).padStart(2, '0')}`;
}

describe('priceBand (docs/spec.md#ipo-object)', () => {
  it('reads priceRange as exact rupee numbers', () => {
    expect(toPriceBand('95.5-100')).toEqual({ low: 95.5, high: 100 });
    expect(toPriceBand('259-275')).toEqual({ low: 259, high: 275 });
    expect(toPriceBand('100-100')).toEqual({ low: 100, high: 100 });
    expect(toPriceBand('0.1-0.2')).toEqual({ low: 0.1, high: 0.2 });
    expect(toPriceBand('1.01-1.10')).toEqual({ low: 1.01, high: 1.1 });
    expect(toPriceBand('0095.50-0100')).toEqual({ low: 95.5, high: 100 });
    expect(toPriceBand('0-0')).toEqual({ low: 0, high: 0 });
    expect(toPriceBand('9999999.99-9999999.99')).toEqual({ low: 9_999_999.99, high: 9_999_999.99 });
    expect(priceBandPaise('95.5-100')).toEqual({ low: 9550, high: 10000 });
  });

  it('is null without a priceRange, and when its high is 10,000,000 rupees or more', () => {
    expect(toPriceBand(null)).toBeNull();
    expect(toPriceBand('1-10000000')).toBeNull();
    expect(toPriceBand('1-' + '9'.repeat(400))).toBeNull();
    expect(toPriceBand('not a range')).toBeNull();
  });

  it('prints every price with at most 2 decimals as its decimal text (property)', () => {
    const paise = fc.integer({ min: 0, max: 999_999_999 });
    fc.assert(
      fc.property(paise, paise, fc.boolean(), (a, b, padded) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const text = (p: number) => (padded ? hundredthsText(BigInt(p)) : String(p / 100));
        const band = toPriceBand(`${text(lo)}-${text(hi)}`);
        expect(band).not.toBeNull();
        expect(String(band?.low)).toBe(String(Number(hundredthsText(BigInt(lo)))));
        expect(band?.high).toBe(Number(hundredthsText(BigInt(hi))));
        expect(priceBandPaise(`${text(lo)}-${text(hi)}`)).toEqual({ low: lo, high: hi });
      }),
      { numRuns: 2000 },
    );
  });
});

describe('issueSizeCrore (docs/spec.md#ipo-object)', () => {
  it.each([
    ['192cr', 192],
    ['4480cr', 4480],
    ['24.50cr', 24.5],
    ['24.50 cr', 24.5],
    ['1000   crore', 1000],
    ['12Cr', 12],
    ['12CRORE', 12],
    ['12 CroRe', 12],
    ['0cr', 0],
    ['007.10cr', 7.1],
    ['0.123456cr', 0.123456],
  ])('reads %j as %j', (text, crore) => {
    expect(issueSizeCrore(text)).toBe(crore);
  });

  it.each([
    null,
    'crores',
    '12crores',
    'Rs 50cr',
    '1,200cr',
    '50 lakh',
    '192',
    'cr',
    ' 192cr',
    '192cr ',
    '192\u00a0cr',
    '192\tcr',
    '.5cr',
    '5.cr',
    '-5cr',
    '+5cr',
    '1e3cr',
    '\uff11\uff12cr',
    '12 c r',
    '12 cror',
    '12 \u017fcr',
    '1' + '0'.repeat(400) + 'cr',
  ])('reads %j as null', (text) => {
    expect(issueSizeCrore(text)).toBeNull();
  });
});

describe('GMP figures (docs/spec.md#gmp-snapshot)', () => {
  it('adds the mean to the high and takes it as a percent of the high, rounded once half away from zero', () => {
    expect(gmpFigures(10_000, 4_140)).toEqual({ estimatedListingPrice: 141.4, gmpPercent: 41.4 });
    expect(gmpFigures(22_100, 3_120)).toEqual({ estimatedListingPrice: 252.2, gmpPercent: 14.12 });
    // 0.01 of 200 is 0.005 %: half, away from zero
    expect(gmpFigures(20_000, 1)).toEqual({ estimatedListingPrice: 200.01, gmpPercent: 0.01 });
    expect(gmpFigures(20_000, -1)).toEqual({ estimatedListingPrice: 199.99, gmpPercent: -0.01 });
    expect(gmpFigures(20_001, 1)).toEqual({ estimatedListingPrice: 200.02, gmpPercent: 0 });
    expect(Object.is(gmpFigures(20_001, -1).gmpPercent, 0)).toBe(true);
    // a premium above the price, and one that takes the price below 0
    expect(gmpFigures(1, 999_999_999)).toEqual({ estimatedListingPrice: 10_000_000, gmpPercent: 99_999_999_900 });
    expect(gmpFigures(4_000, -5_000)).toEqual({ estimatedListingPrice: -10, gmpPercent: -125 });
  });

  it('is null when the high or the mean is null, or the high is 0', () => {
    const none = { estimatedListingPrice: null, gmpPercent: null };
    expect(gmpFigures(null, 100)).toEqual(none);
    expect(gmpFigures(10_000, null)).toEqual(none);
    expect(gmpFigures(0, 100)).toEqual(none);
  });

  it('agrees with exact bigint arithmetic (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999_999_999 }), fc.integer({ min: -999_999_999, max: 999_999_999 }), (high, mean) => {
        const { estimatedListingPrice, gmpPercent } = gmpFigures(high, mean);
        expect(estimatedListingPrice).toBe(Number(hundredthsText(BigInt(high) + BigInt(mean))));
        expect(gmpPercent).toBe(Number(hundredthsText(roundHalfAway(BigInt(mean) * 10_000n, BigInt(high)))));
      }),
      { numRuns: 5000 },
    );
  });
});
