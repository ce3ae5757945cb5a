/**
 * Case folding as identifiers do it: A-Z and a-z match, and no other character folds
 * (docs/spec.md#parameters). JavaScript's `toLowerCase`/`toUpperCase` and SQL's `lower()` also
 * fold the Kelvin sign to `k` and the long s to `S`, which would let `type=\u017Fme` name SME
 * in one backend and not in another.
 */

const UPPER = /[A-Z]/;
const UPPER_ALL = /[A-Z]/g;

/**
 * Lowercases the ASCII letters A-Z and nothing else.
 *
 * @example
 * ```ts
 * asciiLower('AbC-\u212A'); // 'abc-\u212A' (the Kelvin sign stays)
 * ```
 */
export function asciiLower(s: string): string {
  return UPPER.test(s) ? s.replace(UPPER_ALL, toLower) : s;
}

function toLower(c: string): string {
  return String.fromCharCode(c.charCodeAt(0) + 32);
}
