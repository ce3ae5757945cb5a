import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asciiLower, type ListQuery } from '@ipokit/core/backend';
import { latestSnapshot, latestSubscription, matchesQ, referenceBuckets, referenceFind, referenceList, referenceSubscriptionSeries } from './reference.js';
import { makeIpo, makeSnapshot, makeSubscription } from './arbitraries.js';

const query = (over: Partial<ListQuery> & Pick<ListQuery, 'status'>): ListQuery => ({
  today: '2026-11-20',
  types: null,
  source: null,
  startDate: null,
  endDate: null,
  year: null,
  offset: 0,
  limit: 100,
  gmpAt: null,
  ...over,
});

describe('asciiLower', () => {
  it('lowercases A-Z and nothing else', () => {
    expect(asciiLower('AbC-É_Z09')).toBe('abc-É_z09');
    expect(asciiLower('\u212A\u0130')).toBe('\u212A\u0130'); // Kelvin sign, dotted I
  });

  it('equals a naive per-character fold on any string', () => {
    const naive = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => asciiLower(s) === naive(s)));
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...'aZ-\u212A\u017F') }), (s) => asciiLower(s) === naive(s)));
  });
});

describe('referenceList', () => {
  const ipos = [
    makeIpo({ id: 'b', startDate: '2026-11-10', endDate: null, type: 'SME', exchanges: ['bse'] }),
    makeIpo({ id: 'a', startDate: '2026-11-08', endDate: '2026-11-10', exchanges: ['nse'] }),
    makeIpo({ id: 'C', startDate: '2026-11-05', endDate: '2026-11-10', exchanges: ['nse', 'bse'] }),
    makeIpo({ id: 'n', name: '\u{1F600}' }),
    makeIpo({ id: 'm', name: '\uFFFD' }),
  ];
  const snapshots = [makeSnapshot('a', 1000, { x: 1 }), makeSnapshot('a', 2000, { x: 2 }), makeSnapshot('b', 3000, { x: 3 })];

  it('orders closed IPOs by closing date descending (startDate for a null endDate), then id by code point', () => {
    const { count, rows } = referenceList(ipos, query({ status: 'closed' }));
    expect(count).toBe(3);
    expect(rows.map((r) => r.ipo.id)).toEqual(['C', 'a', 'b']);
    expect(rows[0]).not.toHaveProperty('gmp');
  });

  it('orders announced names by code point, not UTF-16 unit', () => {
    expect(referenceList(ipos, query({ status: 'announced' })).rows.map((r) => r.ipo.id)).toEqual(['m', 'n']);
  });

  it('filters, counts all matches and cuts the page', () => {
    expect(referenceList(ipos, query({ status: 'closed', source: 'nse', offset: 1, limit: 1 }))).toEqual({ count: 2, rows: [{ ipo: ipos[1] }] });
    expect(referenceList(ipos, query({ status: 'closed', endDate: '2026-11-10' })).count).toBe(2); // b has no endDate
    expect(referenceList(ipos, query({ status: 'closed', types: ['SME'] })).rows.map((r) => r.ipo.id)).toEqual(['b']);
    expect(referenceList(ipos, query({ status: 'closed', startDate: '2026-11-08', year: '2026' })).count).toBe(2);
    expect(referenceList(ipos, query({ status: 'closed', offset: 2 ** 31 }))).toEqual({ count: 3, rows: [] });
  });

  it('attaches the latest snapshot at or before gmpAt, or null', () => {
    const rows = referenceList(ipos, query({ status: 'closed', gmpAt: 2000 }), snapshots).rows;
    expect(rows.map((r) => r.gmp?.timestamp ?? null)).toEqual([null, 2000, null]);
  });
});

describe('referenceFind', () => {
  const ipos = [
    makeIpo({ id: 'abc', symbol: 'X1', slug: 'x-one' }),
    makeIpo({ id: 'y', symbol: 'ABC', slug: 'y-one' }),
    makeIpo({ id: 'z', symbol: 'Z1', slug: 'abc' }),
  ];

  it('resolves id, then symbol, then slug, folding ASCII case only', () => {
    expect(referenceFind(ipos, 'abc', null)?.ipo.id).toBe('abc');
    expect(referenceFind(ipos, 'Abc', null)?.ipo.id).toBe('y');
    expect(referenceFind(ipos, 'X-ONE', null)?.ipo.id).toBe('abc');
    expect(referenceFind(ipos, '\u212A', null)).toBeNull();
    expect(referenceFind(ipos, 'nope', null)).toBeNull();
  });

  it('carries gmp only when gmpAt is given', () => {
    const snapshots = [makeSnapshot('y', 5, { a: 1 })];
    expect(referenceFind(ipos, 'ABC', null, snapshots)).toEqual({ ipo: ipos[1] });
    expect(referenceFind(ipos, 'ABC', 4, snapshots)).toEqual({ ipo: ipos[1], gmp: null });
    expect(referenceFind(ipos, 'ABC', 5, snapshots)).toEqual({ ipo: ipos[1], gmp: snapshots[0] });
  });
});

describe('latestSnapshot', () => {
  it('is inclusive of `at` and ignores other IPOs', () => {
    const s = [makeSnapshot('a', 10, {}), makeSnapshot('b', 20, {}), makeSnapshot('a', 30, {})];
    expect(latestSnapshot(s, 'a', 29)?.timestamp).toBe(10);
    expect(latestSnapshot(s, 'a', 30)?.timestamp).toBe(30);
    expect(latestSnapshot(s, 'a', 9)).toBeNull();
  });
});

describe('referenceBuckets', () => {
  const day = 86_400_000;
  const monday = Date.UTC(2026, 10, 2);

  it('groups by bucket start with inclusive bounds, keeping all-null buckets', () => {
    const s = [
      makeSnapshot('a', monday - 1, { x: 100 }),
      makeSnapshot('a', monday, { x: 200, y: 300 }), // mean 250
      makeSnapshot('a', monday + 1, {}),
      makeSnapshot('a', monday + day, {}),
      makeSnapshot('b', monday, { x: 999 }),
    ];
    expect(referenceBuckets(s, { ipoId: 'a', field: 'mean', from: monday - 1, to: monday + day, size: day, origin: 0 })).toEqual([
      { start: monday - day, sum: 100, count: 1 },
      { start: monday, sum: 250, count: 1 },
      { start: monday + day, sum: 0, count: 0 },
    ]);
    expect(referenceBuckets(s, { ipoId: 'a', field: 'min', from: monday, to: monday, size: day, origin: 0 })).toEqual([{ start: monday, sum: 200, count: 1 }]);
  });

  it('aligns weekly buckets on the origin (Monday 1970-01-05)', () => {
    const s = [makeSnapshot('a', monday + 3 * day, { x: -5 })];
    expect(referenceBuckets(s, { ipoId: 'a', field: 'max', from: 0, to: monday + 7 * day, size: 7 * day, origin: 4 * day })).toEqual([
      { start: monday, sum: -5, count: 1 },
    ]);
  });

  it('returns a bigint sum only beyond the safe-integer range', () => {
    const big = Number.MAX_SAFE_INTEGER;
    const s = [makeSnapshot('a', 0, { x: big }), makeSnapshot('a', 1, { x: big })];
    expect(referenceBuckets(s, { ipoId: 'a', field: 'mean', from: 0, to: 1, size: day, origin: 0 })).toEqual([
      { start: 0, sum: 2n * BigInt(big), count: 2 },
    ]);
    expect(referenceBuckets(s, { ipoId: 'a', field: 'mean', from: 0, to: 0, size: day, origin: 0 })[0]?.sum).toBe(big);
  });
});

describe('matchesQ', () => {
  const orbit = makeIpo({ id: 'o', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT' });
  const eclair = makeIpo({ id: 'e', name: 'Éclair 100% _Bakes_ \\ Co', symbol: null });

  it('keeps a name or symbol that contains q, ASCII case ignored', () => {
    expect(matchesQ(orbit, 'aero')).toBe(true);
    expect(matchesQ(orbit, 'BIT')).toBe(true);
    expect(matchesQ(orbit, 'orbit aerospace ltd')).toBe(true);
    expect(matchesQ(orbit, 'orbitx')).toBe(false);
    expect(matchesQ(orbit, null)).toBe(true);
    expect(matchesQ(orbit, undefined)).toBe(true);
  });

  it('folds no other case and takes %, _ and \\ literally', () => {
    expect(matchesQ(eclair, 'éclair')).toBe(false);
    expect(matchesQ(eclair, 'ÉCLAIR')).toBe(true);
    expect(matchesQ(eclair, '100%')).toBe(true);
    expect(matchesQ(eclair, '%')).toBe(true);
    expect(matchesQ(eclair, '_b')).toBe(true);
    expect(matchesQ(eclair, '\\ c')).toBe(true);
    expect(matchesQ(orbit, '%')).toBe(false);
    expect(matchesQ(orbit, '_')).toBe(false);
    expect(matchesQ(orbit, 'o_bit')).toBe(false);
    expect(matchesQ(makeIpo({ id: 'k', name: 'x', symbol: 'K1' }), '\u212A')).toBe(false); // Kelvin sign
  });

  it('filters the list before counting and keeps the order', () => {
    const ipos = [makeIpo({ id: 'b', name: 'Zeta Orb' }), makeIpo({ id: 'a', name: 'Alpha', symbol: 'ORB1' }), makeIpo({ id: 'c', name: 'Gamma' })];
    expect(referenceList(ipos, query({ status: 'announced', q: 'orb' }))).toEqual({ count: 2, rows: [{ ipo: ipos[1] }, { ipo: ipos[0] }] });
  });
});

describe('subscription snapshots', () => {
  const subscription = [makeSubscription('a', 30, { total: 3 }), makeSubscription('b', 20, { qib: 1 }), makeSubscription('a', 10, { total: 1, retail: null })];

  it('latestSubscription is inclusive of `at` and ignores other IPOs', () => {
    expect(latestSubscription(subscription, 'a', 29)?.timestamp).toBe(10);
    expect(latestSubscription(subscription, 'a', 30)?.timestamp).toBe(30);
    expect(latestSubscription(subscription, 'a', 9)).toBeNull();
  });

  it('rows carry subscription only when subscriptionAt is a number', () => {
    const ipos = [makeIpo({ id: 'a', symbol: 'A1' })];
    expect(referenceFind(ipos, 'a1', null, [], null, subscription)).toEqual({ ipo: ipos[0] });
    expect(referenceFind(ipos, 'a1', null, [], 9, subscription)).toEqual({ ipo: ipos[0], subscription: null });
    expect(referenceFind(ipos, 'a1', 5, [], 29, subscription)).toEqual({ ipo: ipos[0], gmp: null, subscription: subscription[2] });
    expect(referenceList(ipos, query({ status: 'announced', subscriptionAt: 100 }), [], subscription).rows).toEqual([{ ipo: ipos[0], subscription: subscription[0] }]);
  });

  it('the series is inclusive of both bounds and ascending', () => {
    expect(referenceSubscriptionSeries(subscription, { ipoId: 'a', from: 10, to: 30 }).map((s) => s.timestamp)).toEqual([10, 30]);
    expect(referenceSubscriptionSeries(subscription, { ipoId: 'a', from: 11, to: 29 })).toEqual([]);
    expect(referenceSubscriptionSeries(subscription, { ipoId: 'b', from: 20, to: 20 })).toEqual([subscription[1]]);
  });

  it('makeSubscription fills every category in order', () => {
    expect(Object.keys(makeSubscription('a', 0, { total: 2.5 }).times)).toEqual(['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total']);
    expect(makeSubscription('a', '2026-11-18T09:30:00.000Z', { total: 2.5 })).toEqual({
      ipoId: 'a',
      timestamp: Date.UTC(2026, 10, 18, 9, 30),
      times: { qib: null, nii: null, bnii: null, snii: null, retail: null, employee: null, shareholder: null, total: 2.5 },
    });
  });
});
