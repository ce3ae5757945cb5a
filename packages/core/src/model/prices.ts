/**
 * The numbers the IPO object derives from its texts (docs/spec.md#ipo-object): the price
 * band from `priceRange`, the issue size in crore from `issueSize`, and the GMP snapshot's
 * estimated listing price and GMP percent from the band's high and the snapshot's mean.
 * Prices are exact as GMP values are (docs/spec.md#numbers): integer paise before any
 * arithmetic, rupees only on output.
 */
import { PRICE_LIMIT, PRICE_RANGE_PATTERN } from './ipo-fields.js';
import { paiseToRupees, roundDiv } from './numbers.js';
import type { PriceBand } from './types.js';

/** Prices are below 10,000,000 rupees ({@link PRICE_LIMIT}): below this many paise. */
export const MAX_PRICE_PAISE = PRICE_LIMIT * 100;

const PRICE_RANGE_RE = new RegExp(PRICE_RANGE_PATTERN);
/** Digits, an optional decimal part, ordinary spaces, then `cr` or `crore` in any ASCII case. */
const ISSUE_SIZE_CRORE_RE = /^([0-9]+(?:\.[0-9]+)?) *(?:[Cc][Rr]|[Cc][Rr][Oo][Rr][Ee])$/;
const LEADING_ZEROS_RE = /^0+(?=[0-9])/;

/**
 * The price band of a `priceRange` in integer paise, or null when the range is null, not of
 * the form `<low>-<high>`, or its high is 10,000,000 rupees or more (no exact rupee number
 * for it is promised: docs/spec.md#numbers).
 *
 * @example
 * ```ts
 * priceBandPaise('95.5-100'); // { low: 9550, high: 10000 }
 * priceBandPaise(null);       // null
 * ```
 */
export function priceBandPaise(priceRange: string | null): { low: number; high: number } | null {
  if (priceRange === null) return null;
  const m = PRICE_RANGE_RE.exec(priceRange);
  if (m === null) return null;
  const low = decimalPaise(m[1] ?? '', m[3] ?? '');
  const high = decimalPaise(m[4] ?? '', m[6] ?? '');
  if (low === null || high === null) return null;
  return { low, high };
}

/**
 * The IPO object's `priceBand`: {@link priceBandPaise} in rupees.
 *
 * @example
 * ```ts
 * toPriceBand('95.5-100'); // { low: 95.5, high: 100 }
 * ```
 */
export function toPriceBand(priceRange: string | null): PriceBand | null {
  const band = priceBandPaise(priceRange);
  return band === null ? null : { low: paiseToRupees(band.low), high: paiseToRupees(band.high) };
}

/**
 * The IPO object's `issueSizeCrore`: the number of an `issueSize` that is, as a whole, digits
 * with an optional decimal part, then optional spaces (U+0020 only), then `cr` or `crore`
 * (ASCII case ignored); null for anything else (`"crores"`, `"Rs 50cr"`, `"1,200cr"`).
 *
 * @example
 * ```ts
 * issueSizeCrore('24.50cr');   // 24.5
 * issueSizeCrore('192 Crore'); // 192
 * issueSizeCrore('1,200cr');   // null
 * ```
 */
export function issueSizeCrore(issueSize: string | null): number | null {
  if (issueSize === null) return null;
  const m = ISSUE_SIZE_CRORE_RE.exec(issueSize);
  if (m === null) return null;
  // Number() of decimal text is the double nearest that decimal (what JSON then prints).
  const value = Number(m[1]);
  return Number.isFinite(value) ? value : null;
}

/**
 * The GMP snapshot's derived figures from the band's high and the snapshot's mean, both in
 * paise (the mean as the snapshot shows it, already rounded): `estimatedListingPrice` =
 * high + mean and `gmpPercent` = mean / high x 100, rounded once to 2 decimals half away from
 * zero; both null when either is null or the high is 0.
 *
 * @example
 * ```ts
 * gmpFigures(10000, 4140); // { estimatedListingPrice: 141.4, gmpPercent: 41.4 }
 * gmpFigures(30000, 100);  // { estimatedListingPrice: 301, gmpPercent: 0.33 }
 * ```
 */
export function gmpFigures(highPaise: number | null, meanPaise: number | null): { estimatedListingPrice: number | null; gmpPercent: number | null } {
  if (highPaise === null || meanPaise === null || highPaise === 0) return { estimatedListingPrice: null, gmpPercent: null };
  // |mean| < 10^9 paise, so mean x 10,000 (hundredths of a percent, times high) stays a safe integer.
  return {
    estimatedListingPrice: paiseToRupees(highPaise + meanPaise),
    gmpPercent: paiseToRupees(roundDiv(meanPaise * 10_000, highPaise)),
  };
}

/**
 * A non-negative decimal with at most 2 decimals, given as its digits, in paise; null when
 * it is 10,000,000 rupees or more.
 */
function decimalPaise(whole: string, frac: string): number | null {
  const digits = whole.replace(LEADING_ZEROS_RE, '');
  if (digits.length > 7) return null;
  const paise = Number(digits) * 100 + Number((frac + '00').slice(0, 2));
  return paise < MAX_PRICE_PAISE ? paise : null;
}
