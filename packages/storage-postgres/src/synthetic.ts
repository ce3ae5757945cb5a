/** Synthetic IPO records at scale (not published). */
import { addDays, type IpoRecord } from '@ipokit/core/backend';
import { makeIpo } from '@ipokit/testing';

/**
 * Synthetic IPO `i` of `total`, for benchmarks and plan tests: opening days spread evenly
 * over the 2,500 days before `today` and the 30 after (so few are upcoming or open, as in
 * real life); 2% announced; 10% never list (withdrawn, unlisted debt).
 *
 * @example
 * ```ts
 * syntheticIpo(7, 100_000, '2026-11-22').id; // 'B0000007'
 * ```
 */
export function syntheticIpo(i: number, total: number, today: string): IpoRecord {
  const day = (offset: number): string => addDays(today, offset);
  const start = Math.round(-2500 + (i / total) * 2530); // days from today: -2500 .. +30
  const announced = i % 50 === 0;
  const end = start + 3;
  const listing = i % 10 === 0 ? null : end + 3;
  return makeIpo({
    id: `B${String(i).padStart(7, '0')}`,
    name: `Bench Company ${(i * 7919) % total} Ltd`,
    symbol: `BENCH${i}`,
    slug: `bench-company-${i}-ipo`,
    type: (['EQ', 'SME', 'DEBT'] as const)[i % 3]!,
    exchanges: i % 3 === 1 ? ['nse'] : ['nse', 'bse'],
    infoUrl: `https://example.com/ipo/${i}`,
    startDate: announced ? null : day(start),
    endDate: announced ? null : day(end),
    listingDate: announced || listing === null ? null : day(listing),
    priceRange: '95-100',
    minQty: 150,
    minAmount: 15000,
    issueSize: '120cr',
    about: 'A benchmark company.',
    strengths: ['one', 'two'],
    risks: ['three'],
  });
}
