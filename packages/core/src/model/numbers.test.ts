import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paiseToRupees, roundDiv, roundHalfAway2, toPaise } from './numbers.js';

/** Decimal-string reference: round a decimal text half away from zero to 2 places. */
function roundDecimalText(text: string): string {
  const neg = text.startsWith('-');
  const [whole = '0', frac = ''] = (neg ? text.slice(1) : text).split('.');
  let hundredths = BigInt(whole + (frac + '00').slice(0, 2));
  if ((frac[2] ?? '0') >= '5') hundredths += 1n;
  const s = hundredths.toString().padStart(3, '0');
  const out = `${s.slice(0, -2)}.${s.slice(-2)}`;
  return hundredths === 0n ? '0.00' : (neg ? '-' : '') + out;
}

describe('roundHalfAway2', () => {
  it('rounds on the decimal value, half away from zero', () => {
    expect(roundHalfAway2(1.005)).toBe(1.01);
    expect(roundHalfAway2(45.125)).toBe(45.13);
    expect(roundHalfAway2(-2.675)).toBe(-2.68);
    expect(roundHalfAway2(0.004)).toBe(0);
    expect(Object.is(roundHalfAway2(-0.004), 0)).toBe(true);
    expect(roundHalfAway2(1e21)).toBe(1e21);
    expect(roundHalfAway2(1.5e-7)).toBe(0);
  });

  it('equals a decimal-string reference (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -99_999_999, max: 99_999_999 }), fc.integer({ min: 0, max: 999 }), (whole, thousandths) => {
        const text = `${whole < 0 ? '-' : ''}${Math.abs(whole)}.${String(thousandths).padStart(3, '0')}`;
        const value = Number(text);
        expect(roundHalfAway2(value)).toBe(Number(roundDecimalText(String(value))));
      }),
    );
  });
});

describe('roundDiv', () => {
  it('rounds exact fractions half away from zero', () => {
    expect(roundDiv(201, 2)).toBe(101);
    expect(roundDiv(-201, 2)).toBe(-101);
    expect(roundDiv(199, 2)).toBe(100);
    expect(roundDiv(1, 3)).toBe(0);
    expect(roundDiv(2, 3)).toBe(1);
    expect(roundDiv(2n ** 60n + 1n, 2)).toBe(Number(2n ** 59n + 1n));
  });

  it('the mean of 1 and 1.01 rupees is 1.01 (not 1.0049999999999999 rounded down)', () => {
    expect(paiseToRupees(roundDiv(100 + 101, 2))).toBe(1.01);
  });

  it('equals a BigInt reference (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), fc.integer({ min: 1, max: 1_000_000 }), (n, d) => {
        const abs = n < 0n ? -n : n;
        let q = abs / BigInt(d);
        if ((abs % BigInt(d)) * 2n >= BigInt(d)) q += 1n;
        const expected = Number(n < 0n ? -q : q);
        const input = n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
        expect(roundDiv(input, d)).toBe(expected === 0 ? 0 : expected);
      }),
    );
  });
});

describe('toPaise', () => {
  it('accepts at most two decimals below 10,000,000', () => {
    expect(toPaise(45.1)).toBe(4510);
    expect(toPaise(-2.68)).toBe(-268);
    expect(toPaise(1.01)).toBe(101);
    expect(toPaise(9_999_999.99)).toBe(999_999_999);
    expect(toPaise(10_000_000)).toBeNull();
    expect(toPaise(1.005)).toBeNull();
    expect(toPaise(NaN)).toBeNull();
    expect(toPaise(Infinity)).toBeNull();
    expect(toPaise(1e-7)).toBeNull();
  });

  it('round-trips every hundredth (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -999_999_999, max: 999_999_999 }), (paise) => {
        expect(toPaise(paiseToRupees(paise))).toBe(paise === 0 ? 0 : paise);
      }),
    );
  });
});
