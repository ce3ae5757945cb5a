/**
 * Status is derived from dates and today's IST calendar day (docs/spec.md#status), and every
 * status has its own total order (docs/spec.md#list). Stores use these to agree with the core.
 */
import type { IpoDates, IpoStatus } from './types.js';

/** The five statuses in the order of their transitions. */
export const IPO_STATUSES: readonly IpoStatus[] = ['announced', 'upcoming', 'open', 'closed', 'listed'];

/**
 * The status of an IPO on `today` (a `YYYY-MM-DD` IST day): the first rule that holds.
 *
 * @example
 * ```ts
 * deriveStatus({ startDate: '2026-11-20', endDate: '2026-11-24', listingDate: '2026-11-27' }, '2026-11-22'); // 'open'
 * ```
 */
export function deriveStatus(ipo: IpoDates, today: string): IpoStatus {
  if (ipo.listingDate !== null && ipo.listingDate <= today) return 'listed';
  if (ipo.startDate === null) return 'announced';
  if (today > (ipo.endDate ?? ipo.startDate)) return 'closed';
  if (ipo.startDate <= today) return 'open';
  return 'upcoming';
}

/**
 * Compares two strings by Unicode code point (UTF-8 byte order, PostgreSQL's
 * `COLLATE "C"`). JavaScript's `<` compares UTF-16 units and differs above U+FFFF.
 *
 * @example
 * ```ts
 * compareCodePoints('\u{1F600}', '\uFFFF'); // 1
 * ```
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (0xD800-0xDFFF) belongs to a code point above U+FFFF, which sorts
    // after every BMP character, also those from 0xE000 up that UTF-16 puts after it.
    // Among surrogates, and among BMP units, code-unit order is code-point order.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs === ys) return x < y ? -1 : 1;
    return xs ? 1 : -1;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

/**
 * The date that orders `closed` IPOs: endDate, or startDate where endDate is null.
 *
 * @example
 * ```ts
 * closingDate({ startDate: '2026-01-01', endDate: null, listingDate: null }); // '2026-01-01'
 * ```
 */
export function closingDate(ipo: IpoDates): string | null {
  return ipo.endDate ?? ipo.startDate;
}

/**
 * The comparator of the contract's stable, total order for IPOs of one status:
 * upcoming/open by startDate then id; announced by name then id; closed by closing date
 * descending then id; listed by listingDate descending then id.
 *
 * @example
 * ```ts
 * ipos.filter((i) => deriveStatus(i, today) === 'listed').sort(compareForStatus('listed'));
 * ```
 */
export function compareForStatus(
  status: IpoStatus,
): (a: IpoDates & { id: string; name: string }, b: IpoDates & { id: string; name: string }) => number {
  switch (status) {
    case 'upcoming':
    case 'open':
      return (a, b) => compareText(a.startDate ?? '', b.startDate ?? '') || compareCodePoints(a.id, b.id);
    case 'announced':
      return (a, b) => compareCodePoints(a.name, b.name) || compareCodePoints(a.id, b.id);
    case 'closed':
      return (a, b) => compareText(closingDate(b) ?? '', closingDate(a) ?? '') || compareCodePoints(a.id, b.id);
    case 'listed':
      return (a, b) => compareText(b.listingDate ?? '', a.listingDate ?? '') || compareCodePoints(a.id, b.id);
  }
}

/** ASCII-only text (dates) compares correctly with `<`. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
