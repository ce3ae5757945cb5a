import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints, compareForStatus, deriveStatus } from './status.js';
import type { IpoDates, IpoStatus } from './types.js';

const day = fc.integer({ min: 0, max: 60 }).map((n) => new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString().slice(0, 10));

/** Well-formed dates per docs/spec.md#status: no end/listing without start, start <= end <= listing. */
const wellFormed: fc.Arbitrary<IpoDates> = fc
  .tuple(fc.option(day), fc.option(day), fc.option(day))
  .map(([a, b, c]) => {
    if (a === null) return { startDate: null, endDate: null, listingDate: null };
    const sorted = [a, b ?? a, c ?? a].sort();
    return { startDate: sorted[0] ?? null, endDate: b === null ? null : (sorted[1] ?? null), listingDate: c === null ? null : (sorted[2] ?? null) };
  });

function holds(s: IpoStatus, d: IpoDates, today: string): boolean {
  switch (s) {
    case 'listed': return d.listingDate !== null && d.listingDate <= today;
    case 'closed': return d.startDate !== null && today > (d.endDate ?? d.startDate) && !holds('listed', d, today);
    case 'open': return d.startDate !== null && d.startDate <= today && today <= (d.endDate ?? d.startDate) && !holds('listed', d, today);
    case 'upcoming': return d.startDate !== null && today < d.startDate;
    case 'announced': return d.startDate === null;
  }
}

describe('deriveStatus', () => {
  it('exactly one status holds for well-formed dates, and it is the derived one (property)', () => {
    fc.assert(
      fc.property(wellFormed, day, (d, today) => {
        const holding = (['listed', 'closed', 'open', 'upcoming', 'announced'] as const).filter((s) => holds(s, d, today));
        expect(holding).toEqual([deriveStatus(d, today)]);
      }),
      { numRuns: 2000 },
    );
  });

  it('follows the transitions announced -> upcoming -> open -> closed -> listed over time', () => {
    const d = { startDate: '2026-11-20', endDate: '2026-11-24', listingDate: '2026-11-27' };
    expect(['2026-11-19', '2026-11-20', '2026-11-24', '2026-11-25', '2026-11-27'].map((t) => deriveStatus(d, t))).toEqual([
      'upcoming', 'open', 'open', 'closed', 'listed',
    ]);
    expect(deriveStatus({ startDate: null, endDate: null, listingDate: null }, '2026-11-22')).toBe('announced');
    expect(deriveStatus({ startDate: '2026-11-20', endDate: null, listingDate: null }, '2026-11-21')).toBe('closed');
  });
});

describe('compareCodePoints', () => {
  it('orders by code point, unlike UTF-16 comparison above U+FFFF', () => {
    expect(compareCodePoints('\u{1F600}', '\uFFFF')).toBe(1);
    expect('\u{1F600}' < '\uFFFF').toBe(true);
    expect(compareCodePoints('a', 'b')).toBe(-1);
    expect(compareCodePoints('ab', 'a')).toBe(1);
  });

  it('equals UTF-8 byte order (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 2000 },
    );
  });

  it('orders closed IPOs by closing date descending, then id', () => {
    const a = { id: 'b', name: 'x', startDate: '2026-01-01', endDate: null, listingDate: null };
    const b = { id: 'a', name: 'x', startDate: '2025-12-30', endDate: '2026-01-01', listingDate: null };
    expect([a, b].sort(compareForStatus('closed')).map((i) => i.id)).toEqual(['a', 'b']);
  });
});
