import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { type Exchange, type IpoStatus, type IpoType, isIpokitError, type Store } from '@ipokit/core';
import { addDays, asciiLower, deriveStatus, IPO_STATUSES, type IpoRecord, type ListQuery, rateLimitHit, type RateLimitOutcome, type RateLimitWindow, type SnapshotRecord } from '@ipokit/core/backend';
import { makeIpo, makeSnapshot, referenceBuckets, referenceFind, referenceList } from '@ipokit/testing';
import { memoryStore } from './memory-store.js';
import { RateWindows } from './rate-windows.js';
import { lowerBound, upperBound } from './sorted.js';

const DAY = 86_400_000;
const FIRST = '2026-12-27';
const TYPES: readonly IpoType[] = ['EQ', 'SME', 'DEBT'];
const EXCHANGES: ReadonlyArray<Exchange[]> = [[], ['nse'], ['bse'], ['nse', 'bse']];

function query(over: Partial<ListQuery> & Pick<ListQuery, 'status' | 'today'>): ListQuery {
  return { types: null, source: null, startDate: null, endDate: null, year: null, offset: 0, limit: 1000, gmpAt: null, ...over };
}

/** Every valid combination of dates over a few days (across a year boundary), with ties on every key. */
function exhaustiveIpos(): IpoRecord[] {
  const out: IpoRecord[] = [];
  let n = 0;
  const add = (startDate: string | null, endDate: string | null, listingDate: string | null) => {
    const k = n++;
    out.push(
      makeIpo({
        id: `i${String(k % 7)}${k}`,
        name: ['Zeta', 'alpha', '\u{1F600}', '\uFFFD'][k % 4] ?? 'x',
        startDate,
        endDate,
        listingDate,
        type: TYPES[k % 3] ?? 'EQ',
        exchanges: EXCHANGES[k % 4] ?? [],
      }),
    );
  };
  for (let k = 0; k < 5; k++) add(null, null, null);
  for (let s = 0; s < 5; s++) {
    const start = addDays(FIRST, s);
    for (const endAfter of [null, 0, 2]) {
      const end = endAfter === null ? null : addDays(start, endAfter);
      for (const listAfter of [null, 0, 1, 3]) {
        add(start, end, listAfter === null ? null : addDays(end ?? start, listAfter));
      }
    }
  }
  return out;
}

function snapshotsFor(ipos: readonly IpoRecord[]): SnapshotRecord[] {
  const t0 = Date.UTC(2026, 11, 28);
  return ipos.flatMap((ipo, k) => (k % 3 === 0 ? [] : [makeSnapshot(ipo.id, t0 + k * 1000, { a: k }), makeSnapshot(ipo.id, t0 + DAY + k, { a: -k, b: 2 * k })]));
}

async function expectSameList(store: Store, ipos: readonly IpoRecord[], snapshots: readonly SnapshotRecord[], q: ListQuery): Promise<void> {
  const got = await store.listIpos(q);
  expect(got, JSON.stringify(q)).toEqual(referenceList(ipos, q, snapshots));
}

describe('memoryStore list ranges', () => {
  const ipos = exhaustiveIpos();
  const snapshots = snapshotsFor(ipos);
  const days = Array.from({ length: 14 }, (_, d) => addDays(FIRST, d - 2));

  it('matches the reference for every status on every boundary day, with every page cut', async () => {
    const store = memoryStore();
    expect(await store.writeDataset({ ipos, snapshots })).toEqual([]);
    for (const today of days) {
      for (const status of IPO_STATUSES) {
        const n = referenceList(ipos, query({ status, today })).count;
        for (const [offset, limit] of [[0, 1000], [0, 1], [1, 2], [n - 1, 3], [n, 1], [Math.floor(n / 2), 3], [2 ** 31, 5]] as const) {
          if (offset < 0) continue;
          await expectSameList(store, ipos, snapshots, query({ status, today, offset, limit }));
        }
      }
    }
  });

  it('matches the reference with every filter alone and combined, on every day', async () => {
    const store = memoryStore();
    expect(await store.writeDataset({ ipos, snapshots })).toEqual([]);
    const filters: Array<Partial<ListQuery>> = [
      { types: ['SME'] },
      { types: ['EQ', 'DEBT'] },
      { types: [] },
      { source: 'nse' },
      { source: 'bse', types: ['EQ'] },
      { startDate: addDays(FIRST, 2) },
      { endDate: addDays(FIRST, 3) },
      { startDate: addDays(FIRST, 1), endDate: addDays(FIRST, 4) },
      { year: '2026' },
      { year: '2027' },
      { year: '2027', startDate: addDays(FIRST, 6) },
      { year: '2026', endDate: addDays(FIRST, 5), source: 'nse' },
    ];
    for (const today of days) {
      for (const status of IPO_STATUSES) {
        for (const f of filters) {
          await expectSameList(store, ipos, snapshots, query({ status, today, ...f }));
          await expectSameList(store, ipos, snapshots, query({ status, today, ...f, offset: 1, limit: 2, gmpAt: Date.UTC(2026, 11, 28, 12) }));
        }
      }
    }
  });

  it('stays correct on data that breaks the transitions (long periods, odd orders, dates without startDate)', async () => {
    const day = fc.integer({ min: 0, max: 60 }).map((d) => addDays('2026-11-01', d));
    const record = fc
      .record({
        k: fc.nat(),
        startDate: fc.option(day, { nil: null }),
        endDate: fc.option(day, { nil: null }),
        listingDate: fc.option(day, { nil: null }),
        type: fc.constantFrom(...TYPES),
        exchanges: fc.constantFrom(...EXCHANGES),
      })
      .map((r) => ({ ...r, name: ['b', 'a', 'B'][r.k % 3] ?? 'a' }));
    const arb = fc.tuple(
      fc.uniqueArray(record, { maxLength: 40, selector: (r) => r.k }),
      fc.array(fc.record({ status: fc.constantFrom(...IPO_STATUSES), today: day, offset: fc.nat(5), limit: fc.integer({ min: 1, max: 6 }) }), { minLength: 1, maxLength: 15 }),
      fc.option(day, { nil: null }),
      fc.option(day, { nil: null }),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ([records, queries, startDate, endDate]) => {
        const data = records.map((r) => makeIpo({ id: `x${r.k}`, name: r.name, startDate: r.startDate, endDate: r.endDate, listingDate: r.listingDate, type: r.type, exchanges: r.exchanges }));
        const store = memoryStore();
        expect(await store.writeDataset({ ipos: data, snapshots: [] })).toEqual([]);
        for (const q of queries) {
          await expectSameList(store, data, [], query(q));
          await expectSameList(store, data, [], query({ ...q, offset: 0, limit: 1000 }));
          await expectSameList(store, data, [], query({ ...q, startDate, endDate }));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('type and source filters read groups of bits, and year and endDate cut the listed range, as the reference does', async () => {
    // Seeded: 1,500 valid IPOs with every type and exchange set, periods of 0 to 6 days,
    // listings 0 to 40 days after closing or never, over half a year across a year boundary.
    let seed = 20_261_120;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return Math.floor((seed / 2_147_483_648) * n);
    };
    const data: IpoRecord[] = [];
    for (let k = 0; k < 1_500; k++) {
      const dated = random(20) > 0;
      const start = dated ? addDays('2026-10-01', random(180)) : null;
      const end = start === null || random(4) === 0 ? null : addDays(start, random(7));
      const listing = start === null || random(5) === 0 ? null : addDays(end ?? start, random(3) === 0 ? random(41) : random(6));
      data.push(makeIpo({ id: `p${k}`, name: ['b', 'a', 'c'][random(3)] ?? 'a', startDate: start, endDate: end, listingDate: listing, type: TYPES[random(3)] ?? 'EQ', exchanges: EXCHANGES[random(4)] ?? [] }));
    }
    const store = memoryStore();
    expect(await store.writeDataset({ ipos: data, snapshots: [] })).toEqual([]);
    const filters: Array<Partial<ListQuery>> = [
      {},
      { types: ['SME'] },
      { types: ['EQ', 'DEBT'] },
      { source: 'nse' },
      { source: 'bse', types: ['DEBT'] },
      { year: '2026' },
      { year: '2027', types: ['SME'], source: 'nse' },
      { endDate: '2026-12-15' },
      { endDate: '2027-01-20', source: 'bse' },
      { startDate: '2026-12-01' },
      { startDate: '2026-11-01', endDate: '2026-12-31', types: ['EQ'] },
    ];
    for (const today of ['2026-09-30', '2026-11-15', '2027-01-02', '2027-03-31', '2027-06-01']) {
      for (const status of IPO_STATUSES) {
        for (const f of filters) {
          const all = referenceList(data, query({ status, today, ...f, limit: 1_000_000 }));
          const n = all.count;
          for (const [offset, limit] of [[0, 100], [0, 1], [1, 3], [7, 5], [Math.floor(n / 2), 100], [n - 1, 3], [n, 1], [2 ** 31, 5]] as const) {
            if (offset < 0) continue;
            const got = await store.listIpos(query({ status, today, ...f, offset, limit }));
            expect(got, JSON.stringify({ status, today, f, offset, limit })).toEqual({ count: n, rows: all.rows.slice(offset, offset + limit) });
          }
        }
      }
    }
  });

  it('closed merges IPOs without a listing date with those listing later, at every offset', async () => {
    const data: IpoRecord[] = [];
    for (let k = 0; k < 30; k++) {
      const start = addDays('2026-10-01', k % 10);
      const end = addDays(start, k % 3);
      data.push(makeIpo({ id: `c${k}`, startDate: start, endDate: k % 4 === 0 ? null : end, listingDate: k % 2 === 0 ? null : addDays(end, 1 + (k % 25)) }));
    }
    const store = memoryStore();
    expect(await store.writeDataset({ ipos: data, snapshots: [] })).toEqual([]);
    for (let d = 0; d < 45; d++) {
      const today = addDays('2026-10-01', d);
      const n = referenceList(data, query({ status: 'closed', today })).count;
      for (let offset = 0; offset <= n + 1; offset++) {
        for (const limit of [1, 3]) await expectSameList(store, data, [], query({ status: 'closed', today, offset, limit }));
      }
    }
  });

  it('reflects every write and delete in the next list (indexes rebuilt)', async () => {
    const store = memoryStore();
    const today = '2026-11-20';
    const a = makeIpo({ id: 'a', startDate: '2026-11-25' });
    const b = makeIpo({ id: 'b', startDate: '2026-11-26' });
    await store.writeDataset({ ipos: [a, b], snapshots: [] });
    expect((await store.listIpos(query({ status: 'upcoming', today }))).rows.map((r) => r.ipo.id)).toEqual(['a', 'b']);
    const a2 = makeIpo({ id: 'a', startDate: '2026-11-10', listingDate: '2026-11-15' });
    await store.writeDataset({ ipos: [a2], snapshots: [] });
    expect((await store.listIpos(query({ status: 'upcoming', today }))).rows.map((r) => r.ipo.id)).toEqual(['b']);
    expect((await store.listIpos(query({ status: 'listed', today }))).rows.map((r) => r.ipo.id)).toEqual(['a']);
    expect(await store.deleteIpos(['b'])).toEqual({ ipos: 1, snapshots: 0 });
    expect(await store.listIpos(query({ status: 'upcoming', today }))).toEqual({ count: 0, rows: [] });
  });
});

describe('memoryStore GMP', () => {
  const W0 = Date.UTC(2026, 10, 2);
  const ipo = makeIpo({ id: 'g1', symbol: 'G1' });

  it('buckets equal the reference on every grid, and the latest snapshot is found at every boundary', async () => {
    const snapshots = Array.from({ length: 300 }, (_, k) => makeSnapshot('g1', W0 + k * 37 * 60_000 + (k % 5), k % 7 === 0 ? {} : { a: k * 11 - 900, b: k }));
    const store = memoryStore();
    expect(await store.writeDataset({ ipos: [ipo], snapshots })).toEqual([]);
    const grids = [5 * 60_000, 3_600_000, DAY, 7 * DAY].map((size) => ({ size, origin: size === 7 * DAY ? 4 * DAY : 0 }));
    const edges = snapshots.flatMap((s) => [s.timestamp - 1, s.timestamp, s.timestamp + 1]).filter((_, i) => i % 17 === 0);
    for (const grid of grids) {
      for (const field of ['mean', 'median', 'min', 'max', 'mode'] as const) {
        for (const [from, to] of [[0, Number.MAX_SAFE_INTEGER], [edges[3] ?? 0, edges[20] ?? 0], [edges[5] ?? 0, edges[5] ?? 0], [W0 + DAY, W0]] as const) {
          const q = { ipoId: 'g1', field, from, to, ...grid };
          expect(await store.gmpBuckets(q)).toEqual(referenceBuckets(snapshots, q));
        }
      }
    }
    for (const at of [0, W0 - 1, ...edges, Number.MAX_SAFE_INTEGER]) {
      expect(await store.findIpo({ identifier: 'g1', gmpAt: at })).toEqual(referenceFind([ipo], 'g1', at, snapshots));
    }
  });

  it('sums switch to bigint beyond the safe range and back to a number when the bucket ends inside it', async () => {
    const big = Number.MAX_SAFE_INTEGER;
    const snapshots = [
      makeSnapshot('g1', W0, { a: big }),
      makeSnapshot('g1', W0 + 1, { a: 5 }),
      makeSnapshot('g1', W0 + 2, { a: -big }),
      makeSnapshot('g1', W0 + DAY, { a: big }),
      makeSnapshot('g1', W0 + DAY + 1, { a: 1 }),
    ];
    const store = memoryStore();
    expect(await store.writeDataset({ ipos: [ipo], snapshots })).toEqual([]);
    expect(await store.gmpBuckets({ ipoId: 'g1', field: 'mean', from: 0, to: W0 + 2 * DAY, size: DAY, origin: 0 })).toEqual([
      { start: W0, sum: 5, count: 3 },
      { start: W0 + DAY, sum: BigInt(big) + 1n, count: 2 },
    ]);
  });

  it('a replaced snapshot and a later append are seen by the next read', async () => {
    const store = memoryStore();
    await store.writeDataset({ ipos: [ipo], snapshots: [makeSnapshot('g1', W0, { a: 100 }), makeSnapshot('g1', W0 + 10, { a: 300 })] });
    const q = { ipoId: 'g1', field: 'mean' as const, from: 0, to: W0 + DAY, size: DAY, origin: 0 };
    expect(await store.gmpBuckets(q)).toEqual([{ start: W0, sum: 400, count: 2 }]);
    await store.writeDataset({ ipos: [], snapshots: [makeSnapshot('g1', W0, { a: 150 }), makeSnapshot('g1', W0 + 5, { a: 1 })] });
    expect(await store.gmpBuckets(q)).toEqual([{ start: W0, sum: 451, count: 3 }]);
    expect((await store.findIpo({ identifier: 'G1', gmpAt: W0 + 9 }))?.gmp?.timestamp).toBe(W0 + 5);
    expect(await store.deleteIpos(['g1'])).toEqual({ ipos: 1, snapshots: 3 });
    expect(await store.gmpBuckets(q)).toEqual([]);
  });
});

describe('memoryStore writes', () => {
  it('copies what it is given: later changes to the caller objects do not reach the store', async () => {
    const store = memoryStore();
    const ipo = makeIpo({ id: 'a1', symbol: 'A1', exchanges: ['nse'], schedule: [{ event: 'Open', date: '2026-11-20' }], strengths: ['s'] });
    const snapshot = makeSnapshot('a1', 1000, { x: 5 });
    const expected = structuredClone({ ipo, snapshot });
    await store.writeDataset({ ipos: [ipo], snapshots: [snapshot] });
    ipo.name = 'changed';
    ipo.exchanges.push('bse');
    (ipo.schedule[0] as { event: string }).event = 'changed';
    ipo.strengths.length = 0;
    (snapshot.sources[0] as { paise: number }).paise = 9;
    snapshot.aggregations.mean = 9;
    expect(await store.findIpo({ identifier: 'a1', gmpAt: 1000 })).toEqual({ ipo: expected.ipo, gmp: expected.snapshot });
  });

  it('reports every conflict and writes nothing; a symbol may move between IPOs written together', async () => {
    const store = memoryStore();
    const x = makeIpo({ id: 'x1', symbol: 'ABC', slug: 'sx' });
    const y = makeIpo({ id: 'y1', symbol: 'DEF', slug: 'sy' });
    expect(await store.writeDataset({ ipos: [x, y], snapshots: [] })).toEqual([]);
    const z = makeIpo({ id: 'z1', symbol: 'abc', slug: 'sy' });
    expect(await store.writeDataset({ ipos: [z], snapshots: [makeSnapshot('q', 1, { a: 1 }), makeSnapshot('z1', 1, { a: 1 })] })).toEqual([
      { kind: 'symbol-taken', ipo: 0, holder: 'x1' },
      { kind: 'slug-taken', ipo: 0, holder: 'y1' },
      { kind: 'unknown-ipo', snapshot: 0 },
    ]);
    expect(await store.findIpo({ identifier: 'z1', gmpAt: null })).toBeNull();
    // Hand-over: x1 gives ABC up, z1 takes it, in one write.
    expect(await store.writeDataset({ ipos: [makeIpo({ id: 'x1', symbol: 'NEW', slug: 'sx' }), makeIpo({ id: 'z1', symbol: 'Abc', slug: 'sz' })], snapshots: [] })).toEqual([]);
    expect((await store.findIpo({ identifier: 'abc', gmpAt: null }))?.ipo.id).toBe('z1');
    expect((await store.findIpo({ identifier: 'new', gmpAt: null }))?.ipo.id).toBe('x1');
    expect((await store.findIpo({ identifier: 'SY', gmpAt: null }))?.ipo.id).toBe('y1');
  });

  it('folds ASCII only (the core\'s asciiLower, which the table uses)', () => {
    expect(asciiLower('AbC-É\u212A')).toBe('abc-É\u212A');
    expect(asciiLower('already-low')).toBe('already-low');
  });
});

describe('memoryStore accounts and keys', () => {
  const limits = { free: 1, paid: 3, pro: Infinity };
  const account = (id: string, plan: 'free' | 'paid' | 'pro') => ({ id, name: id, plan, gmpAddon: false, createdAt: '2026-11-20T10:00:00.000Z' });
  const key = (id: string, accountId: string, createdAt = '2026-11-20T10:00:00.000Z') => ({ id, accountId, hash: `h-${id}`, prefix: 'ipk_00000000', label: id, createdAt, revokedAt: null, expiresAt: null, lastUsedAt: null });
  const now = '2026-11-21T12:00:00.000Z';

  it('holds the active-key limits under concurrent inserts and plan changes', async () => {
    const store = memoryStore();
    await store.insertAccount(account('a', 'paid'));
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.insertApiKey({ key: key(`k${i}`, 'a'), maxActiveKeys: limits, now })));
    expect(results.filter((r) => r === 'ok')).toHaveLength(3);
    expect(await store.updateAccount({ id: 'a', plan: 'free', maxActiveKeys: limits, now })).toBe('too-many-keys');
    expect(await store.revokeApiKey({ id: 'k0', at: '2026-11-21T00:00:00.000Z' })).toBe(true);
    expect(await store.revokeApiKey({ id: 'k0', at: '2026-11-22T00:00:00.000Z' })).toBe(true);
    expect(await store.revokeApiKey({ id: 'k1', at: '2026-11-21T00:00:00.000Z' })).toBe(true);
    expect(await store.updateAccount({ id: 'a', plan: 'free', maxActiveKeys: limits, now })).toMatchObject({ plan: 'free' });
    expect(await store.insertApiKey({ key: key('k9', 'a'), maxActiveKeys: limits, now })).toBe('too-many-keys');
    expect(await store.findApiKey('h-k0')).toEqual({ keyId: 'k0', accountId: 'a', plan: 'free', gmpAddon: false, revoked: true, expiresAt: null });
    expect((await store.listApiKeys('a'))?.find((k) => k.id === 'k0')?.revokedAt).toBe('2026-11-21T00:00:00.000Z');
  });

  it('lists keys by createdAt, then id in code-point order', async () => {
    const store = memoryStore();
    await store.insertAccount(account('a', 'pro'));
    for (const [id, at] of [['b', '2026-11-20T10:00:01.000Z'], ['\u{1F600}', '2026-11-20T10:00:00.000Z'], ['\uFFFD', '2026-11-20T10:00:00.000Z'], ['a', '2026-11-20T10:00:01.000Z']] as const) {
      expect(await store.insertApiKey({ key: key(id, 'a', at), maxActiveKeys: limits, now })).toBe('ok');
    }
    expect((await store.listApiKeys('a'))?.map((k) => k.id)).toEqual(['\uFFFD', '\u{1F600}', 'a', 'b']);
  });
});

describe('memoryStore rate limits', () => {
  it('forgets windows whose hits have all left: memory stays bounded under a stream of distinct keys', () => {
    const windows = new RateWindows(256);
    const windowMs = 60_000;
    let now = Date.UTC(2026, 10, 20);
    let largest = 0;
    let admitted = 0;
    // 200,000 distinct client addresses, one request every 20 ms: 3,000 live windows at a time.
    for (let i = 0; i < 200_000; i++) {
      now += 20;
      if (windows.hit({ now, windows: [{ key: `addr:${i}`, quota: 6, ms: windowMs }] }).admitted) admitted++;
      largest = Math.max(largest, windows.size);
    }
    expect(admitted).toBe(200_000);
    expect(largest).toBeLessThanOrEqual(2 * 3_000 + 256 + 1);
    now += windowMs;
    windows.sweep(now);
    expect(windows.size).toBe(0);
  });

  it('frees idle windows on a timer too: no request needs to come for them to go', () => {
    const windows = new RateWindows(1_000_000);
    const windowMs = 60_000;
    const t0 = Date.UTC(2026, 10, 20);
    for (let i = 0; i < 20_000; i++) windows.hit({ now: t0, windows: [{ key: `addr:${i}`, quota: 6, ms: windowMs }] });
    expect(windows.size).toBe(20_000);
    // The timer's ticks, on a monotonic clock (ms). The first tick after requests only notes
    // when it saw the request clock's latest time; later ticks move that time on by the
    // monotonic time elapsed, which never runs ahead of the request clock.
    windows.sweepIdle(1_000);
    expect(windows.size).toBe(20_000);
    windows.sweepIdle(1_000 + windowMs - 1);
    expect(windows.size).toBe(20_000);
    windows.sweepIdle(1_000 + windowMs + 20_000);
    expect(windows.size).toBe(0);
    // a hit after the sweep is counted afresh, and ticks with requests in between free nothing early
    expect(windows.hit({ now: t0 + 200_000, windows: [{ key: 'addr:x', quota: 1, ms: windowMs }] }).admitted).toBe(true);
    windows.sweepIdle(500_000);
    windows.sweepIdle(500_000 + windowMs - 1);
    expect(windows.hit({ now: t0 + 200_001, windows: [{ key: 'addr:x', quota: 1, ms: windowMs }] }).admitted).toBe(false);
    // that request moved the request clock on: the next tick notes it, the one after frees
    windows.sweepIdle(500_000 + windowMs);
    expect(windows.size).toBe(1);
    windows.sweepIdle(500_000 + 2 * windowMs);
    expect(windows.size).toBe(0);
  });

  it('sweeps idle windows every minute until it is closed, on a timer that keeps no process alive', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const sweeps = vi.spyOn(RateWindows.prototype, 'sweepIdle');
    try {
      const store = memoryStore();
      vi.advanceTimersByTime(60_000);
      expect(sweeps).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(120_000);
      expect(sweeps).toHaveBeenCalledTimes(3);
      await store.close?.();
      vi.advanceTimersByTime(600_000);
      expect(sweeps).toHaveBeenCalledTimes(3);
    } finally {
      sweeps.mockRestore();
      vi.useRealTimers();
    }
  });

  it('keeps a window while a hit is inside it, and only up to quota hits', async () => {
    const store = memoryStore({ rateLimitSweepEvery: 1 });
    const w = [{ key: 'acct:a', quota: 2, ms: 60_000 }];
    const t = 1_000_000;
    expect((await store.hitRateLimit({ now: t, windows: w })).admitted).toBe(true);
    for (let k = 1; k < 5; k++) await store.hitRateLimit({ now: t + k, windows: [{ key: `addr:${k}`, quota: 1, ms: 60_000 }] });
    expect(await store.hitRateLimit({ now: t + 59_999, windows: w })).toEqual({ admitted: true, windows: [{ count: 2, oldest: t, blocking: t }] });
    expect(await store.hitRateLimit({ now: t + 60_000, windows: w })).toEqual({ admitted: true, windows: [{ count: 2, oldest: t + 59_999, blocking: t + 59_999 }] });
  });

  it('rejects a bad option', () => {
    expect(() => memoryStore({ rateLimitSweepEvery: 0 })).toThrow(/rateLimitSweepEvery/);
  });

  it('a quota of 1,000,000 costs O(1) per hit: 2,000,000 hits decided exactly, at most quota hits kept, memory given back', () => {
    const Q = 1_000_000;
    const PER_MS = 50;
    const windowMs = 60_000;
    const T0 = Date.UTC(2026, 10, 20);
    const windows = new RateWindows();
    const w = [{ key: 'acct:big', quota: Q, ms: windowMs }];
    const wrong: string[] = [];
    const expectHit = (now: number, want: RateLimitOutcome): void => {
      const got = windows.hit({ now, windows: w });
      const a = got.windows[0];
      const b = want.windows[0];
      if (got.admitted !== want.admitted || a?.count !== b?.count || a?.oldest !== b?.oldest || a?.blocking !== b?.blocking) {
        if (wrong.length < 5) wrong.push(`at +${now - T0}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
      }
    };
    const state = (admitted: boolean, count: number, oldest: number, blocking: number | null): RateLimitOutcome => ({ admitted, windows: [{ count, oldest, blocking }] });
    const started = performance.now();
    // 50 hits in each millisecond from T0: the window fills in 20 s...
    for (let i = 0; i < Q; i++) expectHit(T0 + Math.floor(i / PER_MS), state(true, i + 1, T0, i + 1 === Q ? T0 : null));
    // ...and refuses until the first hits leave, 60 s after T0, charging nothing.
    for (const dt of [19_999, 20_000, 40_000, 59_999]) expectHit(T0 + dt, state(false, Q, T0, T0));
    // Then each millisecond frees 50 places: 50 admitted, the 51st refused.
    for (let ms = 0; ms < Q / PER_MS; ms++) {
      const now = T0 + windowMs + ms;
      // Once the first minute's hits have all left, the oldest is the first of this stage.
      const oldest = ms + 1 < Q / PER_MS ? T0 + ms + 1 : T0 + windowMs;
      for (let c = 0; c < PER_MS; c++) expectHit(now, state(true, Q - PER_MS + c + 1, oldest, c === PER_MS - 1 ? oldest : null));
      expectHit(now, state(false, Q, oldest, oldest));
    }
    const elapsed = performance.now() - started;
    expect(wrong).toEqual([]);
    // Copying the hit list per hit (O(quota)) would take hours; O(1) takes about a second.
    expect(elapsed).toBeLessThan(20_000);
    const kept = windows.kept('acct:big');
    expect(kept?.hits).toBe(Q);
    expect(kept?.capacity).toBe(2 ** 20);
    // Once every hit has left, each admitted hit halves the ring until it is small again.
    const later = T0 + 10 * windowMs;
    for (let k = 0; k < 20; k++) expectHit(later + k, state(true, k + 1, later, null));
    expect(wrong).toEqual([]);
    expect(windows.kept('acct:big')).toEqual({ hits: 20, capacity: 32 });
    windows.sweep(later + 20 + windowMs);
    expect(windows.kept('acct:big')).toBeNull();
  }, 60_000);

  it('equals rateLimitHit, state by state, with large quotas, clocks that go back, windows of other lengths and days, a key named twice (no sweep)', () => {
    const keys = ['acct:a', 'gmp:a', 'addr:1.2.3.4'];
    const lengths = [60_000, 1_000, 120_000];
    const request = fc.record({
      dt: fc.oneof(fc.constantFrom(0, 0, 1, 60_000), fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: -30_000, max: 0 })),
      windows: fc.array(
        fc.record({
          key: fc.constantFrom(...keys),
          quota: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 100, max: 400 })),
          ms: fc.constantFrom(60_000, 60_000, 60_000, 1_000, 120_000, DAY),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      burst: fc.integer({ min: 1, max: 120 }),
    });
    fc.assert(
      fc.property(fc.array(request, { minLength: 1, maxLength: 40 }), (requests) => {
        const windows = new RateWindows(Number.MAX_SAFE_INTEGER);
        const hits = new Map<string, number[]>();
        let now = Date.UTC(2026, 10, 20);
        // a day window is a calendar window on a UTC day here (the store takes any start)
        const asked = (w: { key: string; quota: number; ms: number }): RateLimitWindow => (w.ms === DAY ? { ...w, start: Math.floor(now / DAY) * DAY } : w);
        const id = (w: RateLimitWindow): string => `${w.key}|${w.ms}|${w.start ?? ''}`;
        for (const r of requests) {
          now += r.dt;
          for (let b = 0; b < r.burst; b++) {
            const ws = r.windows.map(asked);
            const want = rateLimitHit({ now, windows: ws.map((w) => ({ ...w, hits: hits.get(id(w)) ?? [] })) });
            if (want.admitted) ws.forEach((w, i) => hits.set(id(w), want.hits[i] ?? []));
            expect(windows.hit({ now, windows: ws })).toEqual({ admitted: want.admitted, windows: want.windows });
          }
        }
        for (const key of keys) for (const ms of lengths) expect(windows.kept(key, ms)?.hits ?? 0).toBe(hits.get(`${key}|${ms}|`)?.length ?? 0);
      }),
      { numRuns: 200 },
    );
  });
});

describe('memoryStore close', () => {
  it('resolves, twice, and every later call rejects with ERR:UNAVAILABLE', async () => {
    const store = memoryStore();
    await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [] });
    await expect(store.close?.()).resolves.toBeUndefined();
    await expect(store.close?.()).resolves.toBeUndefined();
    const err = await Promise.resolve(store.findIpo({ identifier: 'a', gmpAt: null })).catch((e: unknown) => e);
    expect(isIpokitError(err, 'ERR:UNAVAILABLE')).toBe(true);
    await expect(store.listIpos(query({ status: 'announced', today: '2026-11-20' }))).rejects.toMatchObject({ code: 'ERR:UNAVAILABLE' });
  });
});

describe('helpers', () => {
  it('binary searches find both bounds', () => {
    const keys = Float64Array.of(1, 3, 3, 5);
    expect([0, 1, 3, 4, 6].map((x) => lowerBound(keys, x))).toEqual([0, 0, 1, 3, 4]);
    expect([0, 1, 3, 4, 6].map((x) => upperBound(keys, x))).toEqual([0, 1, 3, 3, 4]);
  });

  it('the numeric status agrees with deriveStatus (through single-IPO lists)', async () => {
    const store = memoryStore();
    const ipos = exhaustiveIpos();
    await store.writeDataset({ ipos, snapshots: [] });
    for (let d = -2; d < 12; d++) {
      const today = addDays(FIRST, d);
      const seen = new Map<string, IpoStatus>();
      for (const status of IPO_STATUSES) {
        for (const row of (await store.listIpos(query({ status, today }))).rows) seen.set(row.ipo.id, status);
      }
      for (const ipo of ipos) expect(seen.get(ipo.id), `${ipo.id} on ${today}`).toBe(deriveStatus(ipo, today));
    }
  });
});

describe('memoryStore: stored IPOs are its own, frozen copies', () => {
  it('keeps no reference to what was written, nested values (schedule, lead managers, listing prices) included', async () => {
    const store = memoryStore();
    const ipo = makeIpo({
      id: 'a1',
      schedule: [{ event: 'Open', date: '2026-11-20' }],
      leadManagers: ['Axis Capital'],
      listingPrices: [{ exchange: 'nse', open: 100, high: 110, low: 95, close: 105 }],
    });
    const copy = structuredClone(ipo);
    expect(await store.writeDataset({ ipos: [ipo], snapshots: [] })).toEqual([]);
    ipo.leadManagers.push('Changed');
    ipo.listingPrices[0]!.close = 1;
    ipo.schedule[0]!.event = 'Changed';
    const stored = (await store.findIpo({ identifier: 'a1', gmpAt: null }))?.ipo;
    expect(stored).toEqual(copy);
    expect(Object.isFrozen(stored)).toBe(true);
    expect(Object.isFrozen(stored?.leadManagers)).toBe(true);
    expect(Object.isFrozen(stored?.listingPrices)).toBe(true);
    expect(Object.isFrozen(stored?.listingPrices[0])).toBe(true);
    await store.close?.();
  });
});
