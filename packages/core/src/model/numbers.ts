/**
 * Exact GMP arithmetic (docs/spec.md#numbers): every GMP value is a whole number of paise
 * (hundredths of a rupee), and rounding decisions are taken on exact fractions.
 */

/** The largest GMP magnitude accepted, in paise (10,000,000 rupees, exclusive). */
export const MAX_GMP_PAISE = 1_000_000_000;

/**
 * Converts a rupee amount with at most two decimals to integer paise, exactly.
 * Returns `null` when the number has more than two decimals, is not finite, or its
 * magnitude is 10,000,000 or more.
 *
 * It works on the shortest decimal string of the number (what `String(n)` prints),
 * so `1.01` is 101 paise although `1.01 * 100` is `100.99999999999999` in binary.
 *
 * @example
 * ```ts
 * toPaise(45.1);  // 4510
 * toPaise(1.005); // null: three decimals
 * ```
 */
export function toPaise(rupees: number): number | null {
  if (!Number.isFinite(rupees)) return null;
  const text = String(Math.abs(rupees));
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (match === null) return null; // exponent form or more than two decimals
  const whole = Number(match[1]);
  const frac = Number(((match[2] ?? '') + '00').slice(0, 2));
  const paise = whole * 100 + frac;
  if (paise >= MAX_GMP_PAISE) return null;
  return rupees < 0 ? -paise : paise;
}

/**
 * Divides two integers and rounds half away from zero to an integer, exactly.
 * `numerator` may be a bigint when it exceeds the safe-integer range.
 *
 * @example
 * ```ts
 * roundDiv(201, 2); // 101 (100.5 rounds away from zero)
 * roundDiv(-5, 2);  // -3
 * ```
 */
export function roundDiv(numerator: number | bigint, denominator: number): number {
  if (denominator <= 0 || !Number.isInteger(denominator)) {
    throw new RangeError('roundDiv needs a positive integer denominator');
  }
  if (typeof numerator === 'bigint' || !Number.isSafeInteger(numerator)) {
    const n = BigInt(numerator);
    const d = BigInt(denominator);
    const neg = n < 0n;
    const a = neg ? -n : n;
    let q = a / d;
    if ((a % d) * 2n >= d) q += 1n;
    return Number(neg ? -q : q);
  }
  const neg = numerator < 0;
  const a = neg ? -numerator : numerator;
  let q = Math.trunc(a / denominator);
  let r = a - q * denominator;
  // The float quotient can be one off near an integer; settle it exactly.
  while (r < 0) {
    q -= 1;
    r += denominator;
  }
  while (r >= denominator) {
    q += 1;
    r -= denominator;
  }
  if (r * 2 >= denominator) q += 1;
  return neg && q !== 0 ? -q : q;
}

/**
 * Turns integer paise into the rupee number JSON shows (`4513` -> `45.13`).
 *
 * @example
 * ```ts
 * paiseToRupees(-268); // -2.68
 * ```
 */
export function paiseToRupees(paise: number): number {
  // Division by 100 of an integer yields the double nearest the decimal, which
  // JavaScript prints as that decimal. `+ 0` turns -0 into 0.
  return paise / 100 + 0;
}

/**
 * Rounds a decimal number to 2 decimals, half away from zero, on its decimal value
 * (the shortest string that prints it), not on its binary value.
 *
 * @example
 * ```ts
 * roundHalfAway2(1.005);  // 1.01
 * roundHalfAway2(-2.675); // -2.68
 * ```
 */
export function roundHalfAway2(value: number): number {
  if (!Number.isFinite(value)) throw new RangeError('roundHalfAway2 needs a finite number');
  const neg = value < 0;
  const text = toPlainDecimal(Math.abs(value));
  const dot = text.indexOf('.');
  const whole = dot < 0 ? text : text.slice(0, dot);
  const frac = dot < 0 ? '' : text.slice(dot + 1);
  const kept = BigInt(whole + (frac + '00').slice(0, 2));
  const up = (frac[2] ?? '0') >= '5';
  const hundredths = up ? kept + 1n : kept;
  // Number() of the decimal text is the double nearest the decimal, exactly once rounded.
  const result = Number(`${hundredths / 100n}.${String(hundredths % 100n).padStart(2, '0')}`);
  return neg && result !== 0 ? -result : result;
}

/** The plain (non-exponent) decimal string of a non-negative finite number. */
function toPlainDecimal(value: number): string {
  const text = String(value);
  const e = text.indexOf('e');
  if (e < 0) return text;
  const mantissa = text.slice(0, e);
  const exp = Number(text.slice(e + 1));
  const [intPart, fracPart = ''] = mantissa.split('.') as [string, string?];
  const digits = intPart + fracPart;
  const point = intPart.length + exp;
  if (point <= 0) return '0.' + '0'.repeat(-point) + digits;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return digits.slice(0, point) + '.' + digits.slice(point);
}
