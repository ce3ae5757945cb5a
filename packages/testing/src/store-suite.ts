/**
 * The storage conformance suite: every check a Store must pass, written once and run
 * against every backend (unstorage's `testDriver` pattern). Each check compares the store
 * with the naive reference implementations of `reference.ts` or with exact expected values.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AccountStore, createAccount, createApiKey, type Exchange, GMP_FIELDS, type GmpField, type IpoStatus, type IpoStore, type IpoType, isIpokitError, listApiKeys, type Plan, type RateLimiter, revokeApiKey, rotateApiKey, type Store, updateAccount, type UsageRow } from '@ipokit/core';
import { type AccountRecord, type ActiveKeyLimits, addDays, type ApiKeyRecord, type DatasetConflict, type GmpBucket, type GmpBucketQuery, IPO_STATUSES, type IpoRecord, type IpoRow, type ListQuery, type RateLimitWindow, type SnapshotRecord, type UsageCharge, type UsageRoute } from '@ipokit/core/backend';
import { referenceBuckets, referenceFind, referenceList, referenceSubscriptionSeries } from './reference.js';
import { rateLimitModel } from './limiter-model.js';
import { referenceStore } from './reference-store.js';
import {
  ARBITRARY_DAYS,
  ARBITRARY_FIRST_DAY,
  datasetArbitrary,
  instantArbitrary,
  ipoIdArbitrary,
  isoDateArbitrary,
  makeIpo,
  makeSnapshot,
  makeSubscription,
  symbolArbitrary,
  type RecordDataset,
} from './arbitraries.js';

/** Options of {@link testStore}. */
export interface TestStoreOptions {
  /** Name of the `describe` block; default `'Store'`. */
  name?: string;
  /**
   * Returns an EMPTY store: no IPOs, snapshots, accounts, keys or rate-limit hits. It is
   * called before every check (and before every run of a property), so it may reuse an
   * existing database and truncate its tables instead of creating one.
   */
  createStore: () => Store | Promise<Store>;
  /**
   * Called after every check and property run with the store `createStore` returned,
   * also after the check that calls `store.close()` itself.
   */
  destroyStore?: (store: Store) => void | Promise<void>;
}

/** Options of {@link testIpoStore}: as {@link TestStoreOptions}, for the IPO data alone. */
export interface TestIpoStoreOptions {
  /** Name of the `describe` block; default `'IpoStore'`. */
  name?: string;
  /** Returns an EMPTY IPO store (no IPOs, no snapshots), before every check and property run. */
  createStore: () => IpoStore | Promise<IpoStore>;
  /** Called after every check and property run with what `createStore` returned. */
  destroyStore?: (store: IpoStore) => void | Promise<void>;
}

/** Options of {@link testAccountStore}: as {@link TestStoreOptions}, for accounts and keys alone. */
export interface TestAccountStoreOptions {
  /** Name of the `describe` block; default `'AccountStore'`. */
  name?: string;
  /** Returns an EMPTY account store (no accounts, no keys), before every check. */
  createStore: () => AccountStore | Promise<AccountStore>;
  /** Called after every check with what `createStore` returned. */
  destroyStore?: (store: AccountStore) => void | Promise<void>;
}

/** Options of {@link testLimiter}. */
export interface TestLimiterOptions {
  /** Name of the `describe` block; default `'RateLimiter'`. */
  name?: string;
  /** Returns a limiter holding NO hits, before every check and property run. */
  createLimiter: () => RateLimiter | Promise<RateLimiter>;
  /** Called after every check and property run with what `createLimiter` returned. */
  destroyLimiter?: (limiter: RateLimiter) => void | Promise<void>;
}

/**
 * Registers the whole storage conformance suite as a vitest `describe` block: the checks
 * of {@link testIpoStore}, {@link testAccountStore} and {@link testLimiter}, each on a
 * fresh store from `createStore`, which MUST be empty, and `close()`. No check reads the
 * real clock.
 *
 * @example
 * ```ts
 * // memory-store.test.ts
 * import { testStore } from '@ipokit/testing';
 * import { memoryStore } from '@ipokit/core/backend';
 *
 * testStore({ name: 'memoryStore', createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
 * ```
 */
export function testStore(options: TestStoreOptions): void {
  const [check, withStore] = harness(options.createStore, options.destroyStore);
  describe(options.name ?? 'Store', () => {
    ipoStoreChecks(check, withStore);
    accountStoreChecks(check, withStore);
    limiterChecks(check, withStore);
    describe('close', () => {
      check('close(), when the store has it, resolves', async (store) => {
        if (store.close !== undefined) await expect(store.close()).resolves.toBeUndefined();
      });
    });
  });
}

/**
 * The checks of the IPO data capability alone: writeDataset (conflicts, upserts,
 * atomicity), deleteIpos, listIpos and findIpo against the reference on hand-picked and
 * random data, and gmpBuckets on every interval the core uses.
 *
 * @example
 * ```ts
 * testIpoStore({ name: 'my IPO store', createStore: () => myIpoStore(), destroyStore: (s) => s.close?.() });
 * ```
 */
export function testIpoStore(options: TestIpoStoreOptions): void {
  const [check, withStore] = harness(options.createStore, options.destroyStore);
  describe(options.name ?? 'IpoStore', () => ipoStoreChecks(check, withStore));
}

/**
 * The checks of the accounts and keys capability alone: accounts, listing, plan changes,
 * keys with the one-active-key rule under races, order, revocation, expiry, rotation and
 * last use, and random sequences of them against the reference store.
 *
 * @example
 * ```ts
 * testAccountStore({ name: 'my account store', createStore: () => myAccountStore() });
 * ```
 */
export function testAccountStore(options: TestAccountStoreOptions): void {
  const [check, withStore] = harness(options.createStore, options.destroyStore);
  describe(options.name ?? 'AccountStore', () => accountStoreChecks(check, withStore));
}

/**
 * The checks of the rate-limiter capability alone: hitRateLimit (exactness at the window's
 * edges, atomicity across windows, races, keys of any length, random sequences against the
 * core's `rateLimitHit`) and peekRateLimit (the same states, nothing charged). A
 * limiter kept apart from the store (`ipoRouter(store, { limiter })`) passes this suite.
 *
 * @example
 * ```ts
 * testLimiter({ name: 'redisLimiter', createLimiter: () => redisLimiter({ client, prefix: `t${n++}:` }) });
 * ```
 */
export function testLimiter(options: TestLimiterOptions): void {
  const [check, withLimiter] = harness(options.createLimiter, options.destroyLimiter);
  describe(options.name ?? 'RateLimiter', () => limiterChecks(check, withLimiter));
}

function ipoStoreChecks(check: Check<IpoStore>, withStore: WithStore<IpoStore>): void {
  describe('writeDataset', () => writeDatasetChecks(check));
  describe('deleteIpos', () => deleteChecks(check));
  describe('listIpos', () => listChecks(check, withStore));
  describe('findIpo', () => findChecks(check, withStore));
  describe('gmpBuckets', () => bucketChecks(check, withStore));
  describe('subscription snapshots', () => subscriptionChecks(check, withStore));
  describe('listIpos q', () => qChecks(check, withStore));
}

function accountStoreChecks(check: Check<AccountStore>, withStore: WithStore<AccountStore>): void {
  describe('accounts and keys', () => accountChecks(check, withStore));
}

function limiterChecks(check: Check<RateLimiter>, withStore: WithStore<RateLimiter>): void {
  describe('hitRateLimit and peekRateLimit', () => rateLimitChecks(check, withStore));
}

/** A fresh subject per check (and per property run), destroyed after it whatever happens. */
function harness<S>(create: () => S | Promise<S>, destroy?: (subject: S) => void | Promise<void>): [Check<S>, WithStore<S>] {
  const withSubject: WithStore<S> = async (fn) => {
    const subject = await create();
    try {
      await fn(subject);
    } finally {
      await destroy?.(subject);
    }
  };
  return [(name, fn, timeout) => it(name, () => withSubject(fn), timeout), withSubject];
}

type WithStore<S> = (fn: (store: S) => Promise<void>) => Promise<void>;
type Check<S> = (name: string, fn: (store: S) => Promise<void>, timeout?: number) => void;

// ---------------------------------------------------------------------------------------
// Fixed instants and settings: the suite never reads the clock.

const TODAY = '2026-11-20';
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const WEEK = 7 * DAY;
/** 9999-12-31T23:59:59.999Z: every stored snapshot is at or before it. */
const FAR_FUTURE = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const FIELDS: readonly GmpField[] = GMP_FIELDS;
/** The bucket grids of the core (docs/spec.md#gmp-series): weekly buckets start on Monday 1970-01-05. */
const GRIDS: ReadonlyArray<{ name: string; size: number; origin: number }> = [
  { name: '5m', size: 5 * MINUTE, origin: 0 },
  { name: '10m', size: 10 * MINUTE, origin: 0 },
  { name: '15m', size: 15 * MINUTE, origin: 0 },
  { name: '30m', size: 30 * MINUTE, origin: 0 },
  { name: 'hourly', size: HOUR, origin: 0 },
  { name: 'daily', size: DAY, origin: 0 },
  { name: 'weekly', size: WEEK, origin: 4 * DAY },
];
const WEEKLY = { size: WEEK, origin: 4 * DAY };
const DAILY = { size: DAY, origin: 0 };
const FIVE_MIN = { size: 5 * MINUTE, origin: 0 };
/** The free plan's one active key, and no cap on paid and pro (the core's `maxKeysPerAccount: Infinity`). */
const CORE_LIMITS: ActiveKeyLimits = { free: 1, paid: Infinity, pro: Infinity };
/** Finite limits on every plan, to see that the store uses the limits it is given. */
const FINITE_LIMITS: ActiveKeyLimits = { free: 1, paid: 3, pro: 5 };
const RATE_WINDOW = 60_000;
/** Property runs: modest, so that a database-backed store finishes in seconds. */
const RUNS = 25;
const PROPERTY_TIMEOUT = 120_000;

// ---------------------------------------------------------------------------------------
// writeDataset

function writeDatasetChecks(check: Check<IpoStore>): void {
  check('stores IPO records exactly as given (every field, Unicode, schedule order) and answers []', async (store) => {
    const data = { ipos: [richIpo(), minimalIpo(), makeIpo({ id: 'debt1', type: 'DEBT', startDate: '2026-11-01' })], snapshots: [] };
    expect(await store.writeDataset(data)).toEqual([]);
    await expectContents(store, data);
    for (const ipo of data.ipos) {
      expect(withoutGmp(await store.findIpo({ identifier: ipo.id, gmpAt: null }))).toEqual({ ipo });
    }
  });

  check('stores snapshot records exactly as given (source order, null aggregations)', async (store) => {
    const ipo = makeIpo({ id: 'x1', symbol: 'X1' });
    const snapshots = [
      makeSnapshot('x1', Date.UTC(2026, 10, 18, 9, 30), { ipowatch: 4210, investorgain: -5, 'B\u{1F600}': 0, '\uE000': 999_999_999 }),
      makeSnapshot('x1', Date.UTC(2026, 10, 18, 9, 30, 0, 1), {}),
      makeSnapshot('x1', Date.UTC(2000, 0, 1), { a: -999_999_999 }),
    ];
    expect(await store.writeDataset({ ipos: [ipo], snapshots })).toEqual([]);
    await expectContents(store, { ipos: [ipo], snapshots });
  });

  check('replaces a stored IPO with the same id whole (fields, symbol, slug)', async (store) => {
    const before = richIpo();
    expect(await store.writeDataset({ ipos: [before], snapshots: [] })).toEqual([]);
    const after = makeIpo({ id: before.id, name: 'Renamed', symbol: 'NEWSYM', slug: 'new-slug', type: 'SME' });
    expect(await store.writeDataset({ ipos: [after], snapshots: [] })).toEqual([]);
    await expectContents(store, { ipos: [after], snapshots: [] });
    expect(await store.findIpo({ identifier: before.symbol ?? '', gmpAt: null })).toBeNull();
    expect(await store.findIpo({ identifier: before.slug, gmpAt: null })).toBeNull();
    expect(withoutGmp(await store.findIpo({ identifier: 'newsym', gmpAt: null }))).toEqual({ ipo: after });
  });

  check('replaces a snapshot with the same (ipoId, timestamp) and keeps every other', async (store) => {
    const x = makeIpo({ id: 'x1', symbol: 'X1' });
    const y = makeIpo({ id: 'y1', symbol: 'Y1' });
    const t1 = Date.UTC(2026, 10, 18, 9, 30);
    const t2 = t1 + 10 * MINUTE;
    const first = [makeSnapshot('x1', t1, { a: 100 }), makeSnapshot('x1', t2, { a: 200 }), makeSnapshot('y1', t1, { a: 300 })];
    expect(await store.writeDataset({ ipos: [x, y], snapshots: first })).toEqual([]);
    const replacement = makeSnapshot('x1', t1, { a: 150, b: 170 });
    expect(await store.writeDataset({ ipos: [], snapshots: [replacement] })).toEqual([]);
    await expectContents(store, { ipos: [x, y], snapshots: [replacement, first[1] as SnapshotRecord, first[2] as SnapshotRecord] });
  });

  check('a dataset of snapshots alone appends GMP data to stored IPOs', async (store) => {
    const x = makeIpo({ id: 'x1' });
    expect(await store.writeDataset({ ipos: [x], snapshots: [] })).toEqual([]);
    const s = makeSnapshot('x1', Date.UTC(2026, 10, 18), { a: 1 });
    expect(await store.writeDataset({ ipos: [], snapshots: [s] })).toEqual([]);
    await expectContents(store, { ipos: [x], snapshots: [s] });
  });

  check('reports each snapshot of an unknown IPO by its index and writes nothing', async (store) => {
    const x = makeIpo({ id: 'x1', symbol: 'X1' });
    const sx = makeSnapshot('x1', Date.UTC(2026, 10, 1), { a: 1 });
    expect(await store.writeDataset({ ipos: [x], snapshots: [sx] })).toEqual([]);
    const y = makeIpo({ id: 'y1', symbol: 'Y1' });
    const t = Date.UTC(2026, 10, 2);
    const input = {
      ipos: [y],
      snapshots: [
        makeSnapshot('x1', t, { a: 2 }), // stored IPO
        makeSnapshot('z1', t, { a: 3 }), // unknown
        makeSnapshot('y1', t, { a: 4 }), // IPO of this write
        makeSnapshot('X1', t, { a: 5 }), // ids are exact: unknown
      ],
    };
    expect(sortConflicts(await store.writeDataset(input))).toEqual(
      sortConflicts([
        { kind: 'unknown-ipo', snapshot: 1 },
        { kind: 'unknown-ipo', snapshot: 3 },
      ]),
    );
    await expectContents(store, { ipos: [x], snapshots: [sx] }, ['y1', 'z1', 'X1']);
  });

  check('reports a symbol held by another stored IPO, ignoring ASCII case, and writes nothing', async (store) => {
    const x = makeIpo({ id: 'x1', symbol: 'AbC', slug: 'x' });
    expect(await store.writeDataset({ ipos: [x], snapshots: [] })).toEqual([]);
    for (const symbol of ['AbC', 'abc', 'ABC']) {
      const input = {
        ipos: [makeIpo({ id: 'z1', symbol: 'ZZ', slug: 'z' }), makeIpo({ id: 'y1', symbol, slug: 'y' })],
        snapshots: [makeSnapshot('z1', Date.UTC(2026, 10, 2), { a: 1 })],
      };
      expect(await store.writeDataset(input)).toEqual([{ kind: 'symbol-taken', ipo: 1, holder: 'x1' }]);
    }
    await expectContents(store, { ipos: [x], snapshots: [] }, ['z1', 'y1']);
  });

  check('reports a slug held by another stored IPO and writes nothing', async (store) => {
    const x = makeIpo({ id: 'x1', symbol: 'X1', slug: 'shared-slug' });
    expect(await store.writeDataset({ ipos: [x], snapshots: [] })).toEqual([]);
    const input = { ipos: [makeIpo({ id: 'y1', symbol: 'Y1', slug: 'shared-slug' })], snapshots: [] };
    expect(await store.writeDataset(input)).toEqual([{ kind: 'slug-taken', ipo: 0, holder: 'x1' }]);
    await expectContents(store, { ipos: [x], snapshots: [] }, ['y1']);
  });

  check('reports every conflict of every kind at once, with the right indexes and holders', async (store) => {
    const x = makeIpo({ id: 'x1', symbol: 'S1', slug: 's-one' });
    const y = makeIpo({ id: 'y1', symbol: 'T1', slug: 't-one' });
    const sx = makeSnapshot('x1', Date.UTC(2026, 10, 1), { a: 7 });
    expect(await store.writeDataset({ ipos: [x, y], snapshots: [sx] })).toEqual([]);
    const t = Date.UTC(2026, 10, 3);
    const input = {
      ipos: [
        makeIpo({ id: 'a1', symbol: 's1', slug: 't-one' }),
        makeIpo({ id: 'b1', symbol: 'OK', slug: 'ok' }),
        makeIpo({ id: 'c1', symbol: 't1', slug: 's-one' }),
        makeIpo({ id: 'd1', symbol: null, slug: 'd-one', type: 'DEBT' }),
      ],
      snapshots: [
        makeSnapshot('a1', t, { a: 1 }),
        makeSnapshot('q1', t, { a: 1 }),
        makeSnapshot('b1', t, { a: 1 }),
        makeSnapshot('r1', t, { a: 1 }),
        makeSnapshot('x1', t, { a: 1 }),
      ],
    };
    const expected: DatasetConflict[] = [
      { kind: 'symbol-taken', ipo: 0, holder: 'x1' },
      { kind: 'slug-taken', ipo: 0, holder: 'y1' },
      { kind: 'symbol-taken', ipo: 2, holder: 'y1' },
      { kind: 'slug-taken', ipo: 2, holder: 'x1' },
      { kind: 'unknown-ipo', snapshot: 1 },
      { kind: 'unknown-ipo', snapshot: 3 },
    ];
    expect(sortConflicts(await store.writeDataset(input))).toEqual(sortConflicts(expected));
    await expectContents(store, { ipos: [x, y], snapshots: [sx] }, ['a1', 'b1', 'c1', 'd1', 'q1', 'r1']);
  });

  check('a symbol or slug may move between IPOs written together (a swap, a hand-over)', async (store) => {
    const x = makeIpo({ id: 'x1', symbol: 'ABC', slug: 'slug-x' });
    const y = makeIpo({ id: 'y1', symbol: 'DEF', slug: 'slug-y' });
    expect(await store.writeDataset({ ipos: [x, y], snapshots: [] })).toEqual([]);
    const swapped = [makeIpo({ id: 'x1', symbol: 'def', slug: 'slug-y' }), makeIpo({ id: 'y1', symbol: 'abc', slug: 'slug-x' })];
    expect(await store.writeDataset({ ipos: swapped, snapshots: [] })).toEqual([]);
    await expectContents(store, { ipos: swapped, snapshots: [] });
    expect((await store.findIpo({ identifier: 'ABC', gmpAt: null }))?.ipo.id).toBe('y1');
    expect((await store.findIpo({ identifier: 'slug-y', gmpAt: null }))?.ipo.id).toBe('x1');

    const handOver = [makeIpo({ id: 'y1', symbol: 'NEW', slug: 'slug-new' }), makeIpo({ id: 'z1', symbol: 'ABC', slug: 'slug-x' })];
    expect(await store.writeDataset({ ipos: handOver, snapshots: [] })).toEqual([]);
    await expectContents(store, { ipos: [swapped[0] as IpoRecord, ...handOver], snapshots: [] });
    expect((await store.findIpo({ identifier: 'abc', gmpAt: null }))?.ipo.id).toBe('z1');
  });

  check('an IPO rewritten with its own symbol and slug is no conflict', async (store) => {
    const x = makeIpo({ id: 'x1', symbol: 'ABC', slug: 'abc' });
    expect(await store.writeDataset({ ipos: [x], snapshots: [] })).toEqual([]);
    const again = { ...x, symbol: 'abc', name: 'Changed' };
    expect(await store.writeDataset({ ipos: [again], snapshots: [] })).toEqual([]);
    await expectContents(store, { ipos: [again], snapshots: [] });
  });

  check('folds ASCII case only: É and é, or the Kelvin sign and k, are different symbols', async (store) => {
    // Beyond the dataset's symbol alphabet on purpose: a store that folds with SQL lower()
    // or toLowerCase() would report conflicts here.
    const stored = [makeIpo({ id: 'x1', symbol: 'É1' }), makeIpo({ id: 'x2', symbol: 'k1' }), makeIpo({ id: 'x3', symbol: 'ss' })];
    expect(await store.writeDataset({ ipos: stored, snapshots: [] })).toEqual([]);
    const fresh = [makeIpo({ id: 'y1', symbol: 'é1' }), makeIpo({ id: 'y2', symbol: '\u212A1' }), makeIpo({ id: 'y3', symbol: 'ß' })];
    expect(await store.writeDataset({ ipos: fresh, snapshots: [] })).toEqual([]);
    await expectContents(store, { ipos: [...stored, ...fresh], snapshots: [] });
  });

  check('IPOs without a symbol never conflict with each other', async (store) => {
    const a = makeIpo({ id: 'd1', type: 'DEBT', symbol: null });
    const b = makeIpo({ id: 'd2', type: 'DEBT', symbol: null });
    expect(await store.writeDataset({ ipos: [a], snapshots: [] })).toEqual([]);
    expect(await store.writeDataset({ ipos: [b], snapshots: [] })).toEqual([]);
    await expectContents(store, { ipos: [a, b], snapshots: [] });
  });

  check('writing the same data again changes nothing', async (store) => {
    const data = listFixture();
    expect(await store.writeDataset(data)).toEqual([]);
    const first = await everything(store, data.ipos.map((i) => i.id));
    expect(await store.writeDataset(structuredClone(data))).toEqual([]);
    expect(await everything(store, data.ipos.map((i) => i.id))).toEqual(first);
    await expectContents(store, data);
  });

  check('a concurrent reader sees all of a write or none of it', async (store) => {
    const ipos = Array.from({ length: 20 }, (_, i) => makeIpo({ id: `n${String(i).padStart(2, '0')}`, name: `N${i}` }));
    const snapshots = ipos.map((ipo, i) => makeSnapshot(ipo.id, Date.UTC(2026, 10, 1) + i, { a: i }));
    const read = () => store.listIpos(listQuery({ status: 'announced', gmpAt: FAR_FUTURE }));
    const [before, , during1, during2] = await Promise.all([read(), store.writeDataset({ ipos, snapshots }), read(), read()]);
    const after = await read();
    expect(after).toEqual(referenceList(ipos, listQuery({ status: 'announced', gmpAt: FAR_FUTURE }), snapshots));
    for (const seen of [before, during1, during2]) {
      expect([0, 20]).toContain(seen.count);
      if (seen.count === 20) expect(seen).toEqual(after);
      else expect(seen.rows).toEqual([]);
    }
  });

  check('concurrent writes claiming one symbol or slug: exactly one wins', async (store) => {
    const bySymbol = await Promise.all([
      store.writeDataset({ ipos: [makeIpo({ id: 'a1', symbol: 'SAME', slug: 'a' })], snapshots: [] }),
      store.writeDataset({ ipos: [makeIpo({ id: 'b1', symbol: 'same', slug: 'b' })], snapshots: [] }),
    ]);
    const symbolWinner = bySymbol[0]?.length === 0 ? 'a1' : 'b1';
    const symbolLoser = symbolWinner === 'a1' ? 'b1' : 'a1';
    expect(bySymbol.filter((c) => c.length === 0)).toHaveLength(1);
    expect(bySymbol.flat()).toEqual([{ kind: 'symbol-taken', ipo: 0, holder: symbolWinner }]);

    const bySlug = await Promise.all([
      store.writeDataset({ ipos: [makeIpo({ id: 'c1', symbol: 'C1', slug: 'same-slug' })], snapshots: [] }),
      store.writeDataset({ ipos: [makeIpo({ id: 'd1', symbol: 'D1', slug: 'same-slug' })], snapshots: [] }),
    ]);
    const slugWinner = bySlug[0]?.length === 0 ? 'c1' : 'd1';
    expect(bySlug.filter((c) => c.length === 0)).toHaveLength(1);
    expect(bySlug.flat()).toEqual([{ kind: 'slug-taken', ipo: 0, holder: slugWinner }]);

    const all = await everything(store, []);
    const ids = all.lists.flatMap((l) => l.rows.map((r) => r.ipo.id)).sort();
    expect(ids).toEqual([symbolWinner, slugWinner].sort());
    expect(ids).not.toContain(symbolLoser);
  });
}

// ---------------------------------------------------------------------------------------
// deleteIpos

function deleteChecks(check: Check<IpoStore>): void {
  const t = Date.UTC(2026, 10, 1);
  const x = makeIpo({ id: 'x1', symbol: 'X1', slug: 'x-one' });
  const y = makeIpo({ id: 'y1', symbol: 'Y1', slug: 'y-one' });
  const z = makeIpo({ id: 'z1', symbol: 'Z1', slug: 'z-one' });
  const snapshots = [
    makeSnapshot('x1', t, { a: 1 }),
    makeSnapshot('x1', t + HOUR, { a: 2 }),
    makeSnapshot('x1', t + DAY, {}),
    makeSnapshot('y1', t, { a: 3 }),
    makeSnapshot('y1', t + HOUR, { a: 4 }),
  ];
  const ySnapshots = snapshots.filter((s) => s.ipoId === 'y1');

  check('removes the IPOs with all their snapshots and counts both', async (store) => {
    expect(await store.writeDataset({ ipos: [x, y, z], snapshots })).toEqual([]);
    expect(await store.deleteIpos(['x1', 'z1'])).toEqual({ ipos: 2, snapshots: 3 });
    await expectContents(store, { ipos: [y], snapshots: ySnapshots }, ['x1', 'z1']);
  });

  check('skips unknown ids', async (store) => {
    expect(await store.writeDataset({ ipos: [x, y, z], snapshots })).toEqual([]);
    expect(await store.deleteIpos([])).toEqual({ ipos: 0, snapshots: 0 });
    expect(await store.deleteIpos(['nope', 'X1'])).toEqual({ ipos: 0, snapshots: 0 });
    expect(await store.deleteIpos(['nope', 'y1'])).toEqual({ ipos: 1, snapshots: 2 });
    expect(await store.deleteIpos(['y1'])).toEqual({ ipos: 0, snapshots: 0 });
    await expectContents(store, { ipos: [x, z], snapshots: snapshots.filter((s) => s.ipoId === 'x1') }, ['y1']);
  });

  check('a deleted IPO frees its symbol and slug, and its id takes no more snapshots', async (store) => {
    expect(await store.writeDataset({ ipos: [x, y], snapshots })).toEqual([]);
    expect(await store.deleteIpos(['x1'])).toEqual({ ipos: 1, snapshots: 3 });
    expect(await store.writeDataset({ ipos: [], snapshots: [makeSnapshot('x1', t + WEEK, { a: 1 })] })).toEqual([
      { kind: 'unknown-ipo', snapshot: 0 },
    ]);
    const heir = makeIpo({ id: 'w1', symbol: 'x1', slug: 'x-one' });
    expect(await store.writeDataset({ ipos: [heir], snapshots: [] })).toEqual([]);
    await expectContents(store, { ipos: [y, heir], snapshots: ySnapshots }, ['x1']);
  });
}

// ---------------------------------------------------------------------------------------
// listIpos

function listChecks(check: Check<IpoStore>, withStore: WithStore<IpoStore>): void {
  const data = listFixture();
  const ids = (rows: IpoRow[]) => rows.map((r) => r.ipo.id);
  const expectList = async (store: IpoStore, query: ListQuery, expectedIds?: string[]) => {
    const got = await store.listIpos(query);
    const want = referenceList(data.ipos, query, data.snapshots);
    expect(query.gmpAt === null ? withoutRowGmp(got) : got, JSON.stringify(query)).toEqual(want);
    if (expectedIds !== undefined) expect(ids(got.rows)).toEqual(expectedIds);
  };

  check('an empty store lists nothing, on any page', async (store) => {
    for (const status of IPO_STATUSES) {
      for (const offset of [0, 5, 2 ** 31]) {
        expect(await store.listIpos(listQuery({ status, offset, limit: 3 }))).toEqual({ count: 0, rows: [] });
      }
    }
  });

  check('upcoming and open: startDate ascending, ties by id in code-point order', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    await expectList(store, listQuery({ status: 'upcoming' }), ['up9', 'up-2', 'up.3', 'upA', 'up_1', 'upa', 'upz']);
    await expectList(store, listQuery({ status: 'open' }), ['OP2', 'op1', 'op3', 'op0']);
  });

  check('announced: name in code-point order (U+E000-U+FFFF before characters above U+FFFF), ties by id', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    await expectList(store, listQuery({ status: 'announced' }), ['An8', 'an4', 'an6', 'an5', 'anA', 'an9', 'an7', 'an3', 'an2', 'an1']);
  });

  check('closed: endDate descending with startDate standing in for a null endDate, ties by id', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    await expectList(store, listQuery({ status: 'closed' }), ['cl4', 'cl0', 'cl1', 'cl3', 'cl2', 'cl5']);
  });

  check('listed: listingDate descending, ties by id', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    await expectList(store, listQuery({ status: 'listed' }), ['Li2', 'li1', 'li3', 'li4', 'li0']);
  });

  check('derives status from the given today, for every status and many days', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    for (const today of ['2025-01-01', '2025-12-31', '2026-10-02', '2026-11-14', '2026-11-20', '2026-11-25', '2027-01-06', '2099-12-31']) {
      for (const status of IPO_STATUSES) await expectList(store, listQuery({ status, today }));
    }
  });

  check('applies every filter as the contract says, alone and combined', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    await expectList(store, listQuery({ status: 'upcoming', types: ['SME'] }), ['up9', 'up.3', 'upa']);
    await expectList(store, listQuery({ status: 'upcoming', types: ['EQ', 'DEBT'] }), ['up-2', 'upA', 'up_1', 'upz']);
    await expectList(store, listQuery({ status: 'upcoming', types: ['EQ', 'SME', 'DEBT'] }), ['up9', 'up-2', 'up.3', 'upA', 'up_1', 'upa', 'upz']);
    await expectList(store, listQuery({ status: 'upcoming', source: 'bse' }), ['up9', 'up-2', 'up.3', 'upa']);
    await expectList(store, listQuery({ status: 'upcoming', source: 'nse', types: ['EQ', 'DEBT'] }), ['up-2', 'up_1', 'upz']);
    await expectList(store, listQuery({ status: 'upcoming', startDate: '2026-11-25' }), ['up-2', 'up.3', 'upA', 'up_1', 'upa', 'upz']);
    await expectList(store, listQuery({ status: 'upcoming', startDate: '2026-11-26' }), ['upz']);
    await expectList(store, listQuery({ status: 'closed', endDate: '2026-11-14' }), ['cl1', 'cl3']);
    await expectList(store, listQuery({ status: 'closed', endDate: '2026-11-13' }), []);
    await expectList(store, listQuery({ status: 'open', endDate: '2026-11-20' }), ['op1']);
    await expectList(store, listQuery({ status: 'closed', year: '2025' }), ['cl5']);
    await expectList(store, listQuery({ status: 'listed', year: '2025' }), ['li0']);
    await expectList(store, listQuery({ status: 'listed', year: '2026' }), ['Li2', 'li1', 'li3', 'li4']);
    await expectList(store, listQuery({ status: 'listed', year: '2027' }), []);
    await expectList(store, listQuery({ status: 'upcoming', year: '2027' }), ['upz']);
    await expectList(store, listQuery({ status: 'open', startDate: '2026-11-21', endDate: '2026-11-20' }), []);
    await expectList(store, listQuery({ status: 'announced', startDate: '2000-01-01' }), []);
    await expectList(store, listQuery({ status: 'announced', endDate: '2099-12-31' }), []);
    await expectList(store, listQuery({ status: 'announced', year: '2026' }), []);
    await expectList(store, listQuery({ status: 'announced', types: ['DEBT'] }), ['an6', 'an5']);
    await expectList(store, listQuery({ status: 'announced', source: 'nse' }), ['an4', 'an9', 'an1']);
    await expectList(
      store,
      listQuery({ status: 'listed', types: ['EQ'], source: 'nse', startDate: '2026-09-01', endDate: '2026-11-12', year: '2026' }),
      ['Li2', 'li1'],
    );
  });

  check('pages: every limit and offset, past the end, above 2^31, with count always all matches', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    for (const status of IPO_STATUSES) {
      const n = referenceList(data.ipos, listQuery({ status }), data.snapshots).count;
      const limits = unique([1, 2, 3, n, n + 1, 100, 2 ** 31]).filter((v) => v >= 1);
      const offsets = unique([0, 1, 2, n - 1, n, n + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 1, 1e11, Number.MAX_SAFE_INTEGER]).filter((v) => v >= 0);
      for (const limit of limits) {
        for (const offset of offsets) await expectList(store, listQuery({ status, limit, offset }));
      }
    }
  });

  check('gmpAt: each row carries its latest snapshot at or before gmpAt (inclusive), or null', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    const gmpOf = async (status: IpoStatus, gmpAt: number, id: string) => {
      const { rows } = await store.listIpos(listQuery({ status, gmpAt }));
      const row = rows.find((r) => r.ipo.id === id);
      expect(row).toBeDefined();
      return row?.gmp;
    };
    const snap = (id: string, t: number) => data.snapshots.find((s) => s.ipoId === id && s.timestamp === t);
    expect(await gmpOf('upcoming', T2, 'up9')).toEqual(snap('up9', T2));
    expect(await gmpOf('upcoming', T2 - 1, 'up9')).toEqual(snap('up9', T1));
    expect(await gmpOf('upcoming', T1 - 1, 'up9')).toBeNull();
    expect(await gmpOf('open', T2, 'op1')).toBeNull(); // its only snapshot is after gmpAt
    expect(await gmpOf('open', T3, 'op1')).toEqual(snap('op1', T3));
    expect(await gmpOf('closed', T2, 'cl1')).toEqual(snap('cl1', T2));
    expect(await gmpOf('closed', T2 - 1, 'cl1')).toBeNull();
    expect(await gmpOf('announced', T2, 'an1')).toEqual(snap('an1', T1));
    expect(await gmpOf('listed', FAR_FUTURE, 'li1')).toBeNull(); // no snapshot at all
    for (const status of IPO_STATUSES) {
      for (const gmpAt of [0, T1 - 1, T1, T2 - 1, T2, T3 - 1, T3, FAR_FUTURE]) {
        await expectList(store, listQuery({ status, gmpAt }));
        await expectList(store, listQuery({ status, gmpAt, offset: 1, limit: 2, source: 'nse' }));
      }
    }
  });

  it(
    'agrees with referenceList on random datasets, statuses, filters (q included), pages, gmpAt and subscriptionAt (property)',
    async () => {
      // Random queries, plus every status's whole list (where order and gmp show most).
      const arb = datasetArbitrary().chain((dataset) =>
        fc.tuple(
          fc.constant(dataset),
          fc.array(listQueryArbitrary(dataset), { minLength: 1, maxLength: 10 }),
          fc.record({ today: todayArbitrary(dataset), gmpAt: gmpAtArbitrary(dataset), subscriptionAt: subscriptionAtArbitrary(dataset) }),
        ),
      );
      await fc.assert(
        fc.asyncProperty(arb, async ([dataset, queries, whole]) => {
          await withStore(async (store) => {
            expect(await store.writeDataset(dataset)).toEqual([]);
            for (const q of [...queries, ...IPO_STATUSES.map((status) => listQuery({ status, ...whole }))]) {
              const got = await store.listIpos(q);
              expect(asAsked(got, q), JSON.stringify(q)).toEqual(referenceList(dataset.ipos, q, dataset.snapshots, dataset.subscription));
            }
          });
        }),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT,
  );
}

// ---------------------------------------------------------------------------------------
// findIpo

function findChecks(check: Check<IpoStore>, withStore: WithStore<IpoStore>): void {
  const ipos = [
    makeIpo({ id: 'abc', symbol: 'ZZ1', slug: 'a-slug' }),
    makeIpo({ id: 'b1', symbol: 'ABC', slug: 'b-slug' }),
    makeIpo({ id: 'c1', symbol: 'CS', slug: 'abc' }),
    makeIpo({ id: 'd1', symbol: 'Q1', slug: 'd-slug' }),
    makeIpo({ id: 'e1', symbol: 'E1', slug: 'q1' }),
    makeIpo({ id: 'MixedCase', symbol: null, slug: 'mixed', type: 'DEBT' }),
    makeIpo({ id: 'g1', symbol: 'K2', slug: 'k3' }),
    makeIpo({ id: 'h1', symbol: 'S4', slug: 's5' }),
    makeIpo({ id: 'i0', symbol: 'I6', slug: 'i7' }),
  ];
  const t1 = Date.UTC(2026, 10, 18, 9, 30);
  const t2 = t1 + DAY;
  const snapshots = [makeSnapshot('b1', t1, { a: 100 }), makeSnapshot('b1', t2, { a: 200, b: 300 }), makeSnapshot('c1', t2, {})];
  const expectFind = async (store: IpoStore, identifier: string, expectedId: string | null, gmpAt: number | null = null) => {
    const got = await store.findIpo({ identifier, gmpAt });
    const want = referenceFind(ipos, identifier, gmpAt, snapshots);
    expect(gmpAt === null ? withoutGmp(got) : got, identifier).toEqual(want);
    expect(got?.ipo.id ?? null, identifier).toBe(expectedId);
  };

  check('null on an empty store', async (store) => {
    expect(await store.findIpo({ identifier: 'abc', gmpAt: null })).toBeNull();
    expect(await store.findIpo({ identifier: 'abc', gmpAt: FAR_FUTURE })).toBeNull();
  });

  check('resolves the id first, then the symbol, then the slug', async (store) => {
    expect(await store.writeDataset({ ipos, snapshots })).toEqual([]);
    await expectFind(store, 'abc', 'abc'); // id beats b1's symbol and c1's slug
    await expectFind(store, 'ABC', 'b1'); // no id is 'ABC': symbol beats c1's slug
    await expectFind(store, 'q1', 'd1'); // symbol Q1 beats e1's slug q1
    await expectFind(store, 'Q1', 'd1');
    await expectFind(store, 'cs', 'c1');
    await expectFind(store, 'a-slug', 'abc');
  });

  check('matches the id exactly, the symbol and the slug ignoring ASCII case', async (store) => {
    expect(await store.writeDataset({ ipos, snapshots })).toEqual([]);
    await expectFind(store, 'MixedCase', 'MixedCase');
    await expectFind(store, 'mixedcase', null);
    await expectFind(store, 'MIXED', 'MixedCase'); // by slug
    await expectFind(store, 'aBc', 'b1');
    await expectFind(store, 'zz1', 'abc');
    await expectFind(store, 'A-SLUG', 'abc');
    await expectFind(store, 'B1', null); // ids are exact, and no symbol or slug is 'b1'
  });

  check('folds ASCII case only: the Kelvin sign, long s and dotted I match nothing', async (store) => {
    expect(await store.writeDataset({ ipos, snapshots })).toEqual([]);
    await expectFind(store, 'k2', 'g1');
    await expectFind(store, '\u212A2', null);
    await expectFind(store, '\u212A3', null);
    await expectFind(store, 's4', 'h1');
    await expectFind(store, '\u017F4', null);
    await expectFind(store, '\u017F5', null);
    await expectFind(store, 'i6', 'i0');
    await expectFind(store, '\u01306', null);
    await expectFind(store, '\u01307', null);
  });

  check('null for unknown identifiers, with no trimming and no wildcards', async (store) => {
    expect(await store.writeDataset({ ipos, snapshots })).toEqual([]);
    for (const identifier of ['nope', 'ABC ', ' abc', 'a_c', 'A_C', 'ab%', '%', '_', 'a-slu', 'abcd', 'b', 'q']) {
      await expectFind(store, identifier, null);
    }
  });

  check('gmpAt: the row carries the latest snapshot at or before gmpAt, or null', async (store) => {
    expect(await store.writeDataset({ ipos, snapshots })).toEqual([]);
    for (const gmpAt of [0, t1 - 1, t1, t2 - 1, t2, FAR_FUTURE]) {
      for (const identifier of ['ABC', 'b1', 'abc', 'CS']) await expectFind(store, identifier, referenceFind(ipos, identifier, null)?.ipo.id ?? null, gmpAt);
    }
    expect(await store.findIpo({ identifier: 'abc', gmpAt: FAR_FUTURE })).toEqual({ ipo: ipos[0], gmp: null });
    expect(await store.findIpo({ identifier: 'ABC', gmpAt: t2 - 1 })).toEqual({ ipo: ipos[1], gmp: snapshots[0] });
  });

  it(
    'agrees with referenceFind on random datasets and identifiers in any case, with gmpAt and subscriptionAt (property)',
    async () => {
      const arb = datasetArbitrary({ maxIpos: 25, maxSnapshots: 60 }).chain((dataset) => {
        const known = dataset.ipos.flatMap((i) => [i.id, i.slug, ...(i.symbol === null ? [] : [i.symbol])]);
        const base = known.length > 0 ? fc.oneof(fc.constantFrom(...known), ipoIdArbitrary(), symbolArbitrary()) : ipoIdArbitrary();
        // Each character: kept, its ASCII case swapped, or a Unicode lookalike
        // that folds to it outside ASCII (Kelvin sign, long s).
        const identifier = fc
          .tuple(base, fc.array(fc.constantFrom('keep', 'swap', 'lookalike'), { minLength: 8, maxLength: 8 }))
          .map(([s, edits]) => [...s].map((c, i) => editChar(c, edits[i % 8] ?? 'keep')).join(''));
        const probe = fc.record({ identifier, gmpAt: gmpAtArbitrary(dataset), subscriptionAt: subscriptionAtArbitrary(dataset) });
        return fc.tuple(fc.constant(dataset), fc.array(probe, { minLength: 1, maxLength: 10 }));
      });
      await fc.assert(
        fc.asyncProperty(arb, async ([dataset, probes]) => {
          await withStore(async (store) => {
            expect(await store.writeDataset(dataset)).toEqual([]);
            for (const p of probes) {
              const got = await store.findIpo(p);
              const want = referenceFind(dataset.ipos, p.identifier, p.gmpAt, dataset.snapshots, p.subscriptionAt, dataset.subscription);
              expect(got === null ? null : rowAsAsked(got, p), JSON.stringify(p)).toEqual(want);
            }
          });
        }),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT,
  );
}

// ---------------------------------------------------------------------------------------
// gmpBuckets

/** Monday 2026-11-02T00:00:00Z. */
const W0 = Date.UTC(2026, 10, 2);

function bucketChecks(check: Check<IpoStore>, withStore: WithStore<IpoStore>): void {
  const ipos = [makeIpo({ id: 'g1', symbol: 'G1' }), makeIpo({ id: 'h1', symbol: 'H1' })];
  const snapshots = [
    makeSnapshot('g1', W0 - 1, { a: 100 }), // Sunday 23:59:59.999
    makeSnapshot('g1', W0, { a: 200 }),
    makeSnapshot('g1', W0 + 5 * MINUTE - 1, { a: 300 }),
    makeSnapshot('g1', W0 + 5 * MINUTE, { a: 400 }),
    makeSnapshot('g1', W0 + 10 * MINUTE + 5, {}), // no numeric source
    makeSnapshot('g1', W0 + 10 * MINUTE + 6, {}),
    makeSnapshot('g1', W0 + HOUR - 1, { a: 500 }),
    makeSnapshot('g1', W0 + HOUR, { a: 600 }),
    makeSnapshot('g1', W0 + DAY - 1, { a: 700 }),
    makeSnapshot('g1', W0 + DAY, { a: 800 }),
    makeSnapshot('g1', W0 + 2 * DAY + 123, { a: -250 }),
    makeSnapshot('g1', W0 + 2 * DAY + 456, { a: -101, b: 0, c: 1000 }), // mean 300, median 0, min -101, max 1000, mode -101
    makeSnapshot('g1', W0 + WEEK - 1, { a: 900 }),
    makeSnapshot('g1', W0 + WEEK, { a: 1000 }),
    makeSnapshot('h1', W0, { a: 5 }), // another IPO: never in g1's buckets
    makeSnapshot('h1', W0 + 1, { a: 7 }),
  ];
  const data = { ipos, snapshots };
  const q = (over: Partial<GmpBucketQuery>): GmpBucketQuery => ({
    ipoId: 'g1',
    field: 'mean',
    from: W0 - DAY,
    to: W0 + 8 * DAY,
    ...DAILY,
    ...over,
  });
  const expectBuckets = async (store: IpoStore, query: GmpBucketQuery, expected?: Array<[number, number, number]>) => {
    const got = await store.gmpBuckets(query);
    expect(exactBuckets(got), JSON.stringify(query)).toEqual(exactBuckets(referenceBuckets(snapshots, query)));
    if (expected !== undefined) {
      expect(exactBuckets(got)).toEqual(expected.map(([start, sum, count]) => ({ start, sum: BigInt(sum), count })));
    }
  };

  check('nothing for an empty store, an unknown IPO, a range without snapshots, or from after to', async (store) => {
    expect(await store.gmpBuckets(q({}))).toEqual([]);
    expect(await store.writeDataset(data)).toEqual([]);
    await expectBuckets(store, q({ ipoId: 'nope' }), []);
    await expectBuckets(store, q({ ipoId: 'G1' }), []);
    await expectBuckets(store, q({ from: W0 + 3 * DAY, to: W0 + 6 * DAY }), []);
    await expectBuckets(store, q({ from: W0 + 1, to: W0 }), []);
  });

  check('daily buckets start at 00:00Z and hold exact sums and counts', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    await expectBuckets(store, q({}), [
      [W0 - DAY, 100, 1],
      [W0, 2700, 6],
      [W0 + DAY, 800, 1],
      [W0 + 2 * DAY, 50, 2],
      [W0 + 6 * DAY, 900, 1],
      [W0 + 7 * DAY, 1000, 1],
    ]);
    await expectBuckets(store, q({ field: 'min' }), [
      [W0 - DAY, 100, 1],
      [W0, 2700, 6],
      [W0 + DAY, 800, 1],
      [W0 + 2 * DAY, -351, 2],
      [W0 + 6 * DAY, 900, 1],
      [W0 + 7 * DAY, 1000, 1],
    ]);
  });

  check('weekly buckets start on Monday 00:00Z (origin 1970-01-05)', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    await expectBuckets(store, q({ ...WEEKLY }), [
      [W0 - WEEK, 100, 1],
      [W0, 4450, 10],
      [W0 + WEEK, 1000, 1],
    ]);
    await expectBuckets(store, q({ ...WEEKLY, field: 'max' }), [
      [W0 - WEEK, 100, 1],
      [W0, 200 + 300 + 400 + 500 + 600 + 700 + 800 - 250 + 1000 + 900, 10],
      [W0 + WEEK, 1000, 1],
    ]);
  });

  check('bounds are inclusive at both ends', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    const a = W0 + 5 * MINUTE - 1;
    const b = W0 + 5 * MINUTE;
    await expectBuckets(store, q({ ...FIVE_MIN, from: a, to: b }), [
      [W0, 300, 1],
      [b, 400, 1],
    ]);
    await expectBuckets(store, q({ ...FIVE_MIN, from: a + 1, to: b }), [[b, 400, 1]]);
    await expectBuckets(store, q({ ...FIVE_MIN, from: a, to: b - 1 }), [[W0, 300, 1]]);
    await expectBuckets(store, q({ ...FIVE_MIN, from: b, to: b }), [[b, 400, 1]]);
    await expectBuckets(store, q({ ...DAILY, from: W0, to: W0 + DAY - 1 }), [[W0, 2700, 6]]);
  });

  check('a bucket whose values are all null exists with sum 0 and count 0', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    await expectBuckets(store, q({ ...FIVE_MIN, from: W0, to: W0 + HOUR }), [
      [W0, 500, 2],
      [W0 + 5 * MINUTE, 400, 1],
      [W0 + 10 * MINUTE, 0, 0],
      [W0 + 55 * MINUTE, 500, 1],
      [W0 + HOUR, 600, 1],
    ]);
  });

  check('negative values sum exactly, for every field', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    const day2 = { from: W0 + 2 * DAY, to: W0 + 3 * DAY - 1 };
    await expectBuckets(store, q({ ...day2, field: 'mean' }), [[W0 + 2 * DAY, 50, 2]]);
    await expectBuckets(store, q({ ...day2, field: 'median' }), [[W0 + 2 * DAY, -250, 2]]);
    await expectBuckets(store, q({ ...day2, field: 'min' }), [[W0 + 2 * DAY, -351, 2]]);
    await expectBuckets(store, q({ ...day2, field: 'max' }), [[W0 + 2 * DAY, 750, 2]]);
    await expectBuckets(store, q({ ...day2, field: 'mode' }), [[W0 + 2 * DAY, -351, 2]]);
  });

  check('agrees with referenceBuckets on every interval of the core, every field and several ranges', async (store) => {
    expect(await store.writeDataset(data)).toEqual([]);
    const ranges: Array<[number, number]> = [
      [W0 - DAY, W0 + 8 * DAY],
      [W0, W0 + DAY - 1],
      [W0 + 1, W0 + WEEK - 1],
      [W0 + 5 * MINUTE, W0 + 5 * MINUTE],
      [W0 - 1, W0 + HOUR],
    ];
    for (const grid of GRIDS) {
      for (const field of FIELDS) {
        for (const [from, to] of ranges) await expectBuckets(store, q({ size: grid.size, origin: grid.origin, field, from, to }));
      }
    }
  });

  check('a sum beyond Number.MAX_SAFE_INTEGER is exact (a bigint)', async (store) => {
    // Values beyond the dataset's range (|paise| < 1e9) on purpose: reaching 2^53 with valid
    // values would take millions of snapshots. The store keeps what it is given.
    const big = Number.MAX_SAFE_INTEGER;
    const values = [big, big - 1, big - 2];
    const bigIpo = makeIpo({ id: 'big1', symbol: 'BIG' });
    const bigSnapshots = [
      ...values.map((v, i) => makeSnapshot('big1', W0 + i * MINUTE, { a: v })),
      ...values.map((v, i) => makeSnapshot('big1', W0 + DAY + i * MINUTE, { a: -v })),
      makeSnapshot('big1', W0 + 2 * DAY, { a: big }),
      makeSnapshot('big1', W0 + 2 * DAY + 1, { a: -big }),
    ];
    expect(await store.writeDataset({ ipos: [bigIpo], snapshots: bigSnapshots })).toEqual([]);
    const got = await store.gmpBuckets({ ipoId: 'big1', field: 'mean', from: W0, to: W0 + 3 * DAY, ...DAILY });
    const total = values.reduce((s, v) => s + BigInt(v), 0n);
    expect(exactBuckets(got)).toEqual([
      { start: W0, sum: total, count: 3 },
      { start: W0 + DAY, sum: -total, count: 3 },
      { start: W0 + 2 * DAY, sum: 0n, count: 2 },
    ]);
    expect(typeof got[0]?.sum).toBe('bigint');
    expect(typeof got[1]?.sum).toBe('bigint');
  });

  it(
    'agrees with referenceBuckets on random snapshots, intervals, fields and ranges (property)',
    async () => {
      const arb = datasetArbitrary({ minIpos: 1, maxIpos: 4, maxSnapshots: 200 }).chain((dataset) => {
        const query = fc
          .record({
            ipoId: fc.constantFrom(...dataset.ipos.map((i) => i.id), 'unknown-ipo'),
            field: fc.constantFrom(...FIELDS),
            grid: fc.constantFrom(...GRIDS),
            a: boundaryArbitrary(dataset),
            b: boundaryArbitrary(dataset),
            ordered: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
          })
          .map(({ ipoId, field, grid, a, b, ordered }): GmpBucketQuery => {
            const [from, to] = ordered ? [Math.min(a, b), Math.max(a, b)] : [Math.max(a, b), Math.min(a, b)];
            return { ipoId, field, from, to, size: grid.size, origin: grid.origin };
          });
        return fc.tuple(fc.constant(dataset), fc.array(query, { minLength: 1, maxLength: 8 }));
      });
      await fc.assert(
        fc.asyncProperty(arb, async ([dataset, queries]) => {
          await withStore(async (store) => {
            expect(await store.writeDataset(dataset)).toEqual([]);
            for (const query of queries) {
              expect(exactBuckets(await store.gmpBuckets(query))).toEqual(exactBuckets(referenceBuckets(dataset.snapshots, query)));
            }
          });
        }),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT,
  );
}

// ---------------------------------------------------------------------------------------
// Accounts and keys

function accountChecks(check: Check<AccountStore>, withStore: WithStore<AccountStore>): void {
  const account = (id: string, plan: Plan, gmpAddon = false): AccountRecord => ({
    id,
    name: `Acme ${id} \u{1F600}`,
    plan,
    gmpAddon,
    createdAt: '2026-11-20T10:00:00.000Z',
  });
  const insertKey = (store: AccountStore, key: ApiKeyRecord, limits: ActiveKeyLimits = CORE_LIMITS, now = KEY_NOW) => store.insertApiKey({ key, maxActiveKeys: limits, now });
  const activeCount = async (store: AccountStore, accountId: string) => ((await store.listApiKeys(accountId)) ?? []).filter((k) => k.revokedAt === null).length;

  check('insertAccount then getAccount returns it; an unknown id is null', async (store) => {
    const a = account('acct_1', 'pro', true);
    const b = account('acct_2', 'free');
    await store.insertAccount(a);
    await store.insertAccount(b);
    expect(await store.getAccount('acct_1')).toEqual(a);
    expect(await store.getAccount('acct_2')).toEqual(b);
    expect(await store.getAccount('acct_3')).toBeNull();
    expect(await store.getAccount('ACCT_1')).toBeNull();
  });

  check('listAccounts: ascending by id in code-point order, after an id (exclusive), at most limit', async (store) => {
    // code-point order differs from UTF-16 order above U+FFFF, and from locale order
    const ids = ['acct_b', 'acct_A', 'acct_\u{1F600}', 'acct_\uFFFD', 'acct_a', 'acct_a0', 'acct_Z'];
    for (const id of ids) await store.insertAccount(account(id, 'paid'));
    const sorted = ['acct_A', 'acct_Z', 'acct_a', 'acct_a0', 'acct_b', 'acct_\uFFFD', 'acct_\u{1F600}'];
    expect((await store.listAccounts({ after: null, limit: 100 })).map((a) => a.id)).toEqual(sorted);
    expect(await store.listAccounts({ after: null, limit: 1 })).toEqual([account('acct_A', 'paid')]);
    expect((await store.listAccounts({ after: 'acct_a', limit: 2 })).map((a) => a.id)).toEqual(['acct_a0', 'acct_b']);
    expect((await store.listAccounts({ after: 'acct_aa', limit: 100 })).map((a) => a.id)).toEqual(['acct_b', 'acct_\uFFFD', 'acct_\u{1F600}']);
    expect((await store.listAccounts({ after: 'acct_\uFFFD', limit: 100 })).map((a) => a.id)).toEqual(['acct_\u{1F600}']);
    expect(await store.listAccounts({ after: 'acct_\u{1F600}', limit: 100 })).toEqual([]);
    // pages of 3 visit every account once
    const seen: string[] = [];
    for (let after: string | null = null; ; ) {
      const page = await store.listAccounts({ after, limit: 3 });
      if (page.length === 0) break;
      seen.push(...page.map((a) => a.id));
      after = page[page.length - 1]!.id;
    }
    expect(seen).toEqual(sorted);
  });

  check('updateAccount changes plan and add-on, each alone or both, and resolves to the account', async (store) => {
    const a = account('acct_1', 'free');
    await store.insertAccount(a);
    expect(await store.updateAccount({ id: 'acct_1', plan: 'pro', maxActiveKeys: CORE_LIMITS, now: KEY_NOW })).toEqual({ ...a, plan: 'pro' });
    expect(await store.updateAccount({ id: 'acct_1', gmpAddon: true, maxActiveKeys: CORE_LIMITS, now: KEY_NOW })).toEqual({ ...a, plan: 'pro', gmpAddon: true });
    expect(await store.updateAccount({ id: 'acct_1', maxActiveKeys: CORE_LIMITS, now: KEY_NOW })).toEqual({ ...a, plan: 'pro', gmpAddon: true });
    expect(await store.updateAccount({ id: 'acct_1', plan: 'paid', gmpAddon: false, maxActiveKeys: CORE_LIMITS, now: KEY_NOW })).toEqual({ ...a, plan: 'paid' });
    expect(await store.getAccount('acct_1')).toEqual({ ...a, plan: 'paid' });
  });

  check("updateAccount: 'not-found' for an unknown account", async (store) => {
    await store.insertAccount(account('acct_1', 'free'));
    expect(await store.updateAccount({ id: 'acct_9', plan: 'pro', maxActiveKeys: CORE_LIMITS, now: KEY_NOW })).toBe('not-found');
    expect(await store.getAccount('acct_9')).toBeNull();
  });

  check("updateAccount: 'too-many-keys' for a move to a plan with fewer keys, changing nothing; revoked keys do not count", async (store) => {
    const a = account('acct_1', 'paid');
    await store.insertAccount(a);
    expect(await insertKey(store, apiKey('k1', 'acct_1'))).toBe('ok');
    expect(await insertKey(store, apiKey('k2', 'acct_1'))).toBe('ok');
    expect(await store.updateAccount({ id: 'acct_1', plan: 'free', gmpAddon: true, maxActiveKeys: CORE_LIMITS, now: KEY_NOW })).toBe('too-many-keys');
    expect(await store.getAccount('acct_1')).toEqual(a);
    expect(await store.findApiKey(hashOf('k1'))).toMatchObject({ plan: 'paid', gmpAddon: false });
    expect(await store.revokeApiKey({ id: 'k1', at: '2026-11-20T11:00:00.000Z' })).toBe(true);
    expect(await store.updateAccount({ id: 'acct_1', plan: 'free', maxActiveKeys: CORE_LIMITS, now: KEY_NOW })).toEqual({ ...a, plan: 'free' });

    const b = account('acct_2', 'pro');
    await store.insertAccount(b);
    for (const id of ['p1', 'p2', 'p3', 'p4']) expect(await insertKey(store, apiKey(id, 'acct_2'), FINITE_LIMITS)).toBe('ok');
    expect(await store.updateAccount({ id: 'acct_2', plan: 'paid', maxActiveKeys: FINITE_LIMITS, now: KEY_NOW })).toBe('too-many-keys');
    expect(await store.updateAccount({ id: 'acct_2', plan: 'free', maxActiveKeys: FINITE_LIMITS, now: KEY_NOW })).toBe('too-many-keys');
    expect(await store.revokeApiKey({ id: 'p2', at: '2026-11-20T11:00:00.000Z' })).toBe(true);
    expect(await store.updateAccount({ id: 'acct_2', plan: 'paid', maxActiveKeys: FINITE_LIMITS, now: KEY_NOW })).toEqual({ ...b, plan: 'paid' });
  });

  check("insertApiKey: 'not-found' for an unknown account, storing nothing", async (store) => {
    expect(await insertKey(store, apiKey('k1', 'acct_9'))).toBe('not-found');
    expect(await store.findApiKey(hashOf('k1'))).toBeNull();
    expect(await store.listApiKeys('acct_9')).toBeNull();
  });

  check('insertApiKey: free holds one active key; a revoked key frees the slot', async (store) => {
    await store.insertAccount(account('acct_1', 'free'));
    expect(await insertKey(store, apiKey('k1', 'acct_1'))).toBe('ok');
    expect(await insertKey(store, apiKey('k2', 'acct_1'))).toBe('too-many-keys');
    expect(await store.findApiKey(hashOf('k2'))).toBeNull();
    expect(await store.revokeApiKey({ id: 'k1', at: '2026-11-20T11:00:00.000Z' })).toBe(true);
    expect(await insertKey(store, apiKey('k3', 'acct_1'))).toBe('ok');
    expect(await insertKey(store, apiKey('k4', 'acct_1'))).toBe('too-many-keys');
    expect((await store.listApiKeys('acct_1'))?.map((k) => k.id)).toEqual(['k1', 'k3']);
  });

  check('insertApiKey uses the limits it is given, per the current plan (Infinity: no limit)', async (store) => {
    await store.insertAccount(account('acct_1', 'paid'));
    for (const id of ['k1', 'k2', 'k3']) expect(await insertKey(store, apiKey(id, 'acct_1'), FINITE_LIMITS)).toBe('ok');
    expect(await insertKey(store, apiKey('k4', 'acct_1'), FINITE_LIMITS)).toBe('too-many-keys');
    expect(await insertKey(store, apiKey('k5', 'acct_1'), CORE_LIMITS)).toBe('ok');
    expect(await store.updateAccount({ id: 'acct_1', plan: 'pro', maxActiveKeys: CORE_LIMITS, now: KEY_NOW })).toMatchObject({ plan: 'pro' });
    expect(await insertKey(store, apiKey('k6', 'acct_1'), FINITE_LIMITS)).toBe('ok'); // 4 active: pro allows 5
    expect(await insertKey(store, apiKey('k7', 'acct_1'), FINITE_LIMITS)).toBe('too-many-keys');
    expect(await activeCount(store, 'acct_1')).toBe(5);
    expect(await insertKey(store, apiKey('k8', 'acct_1'), { free: 0, paid: 0, pro: 0 })).toBe('too-many-keys');
  });

  check('concurrent insertApiKey calls admit exactly the limit', async (store) => {
    await store.insertAccount(account('acct_f', 'free'));
    await store.insertAccount(account('acct_p', 'paid'));
    const free = await Promise.all(Array.from({ length: 10 }, (_, i) => insertKey(store, apiKey(`f${i}`, 'acct_f'))));
    expect(free.filter((r) => r === 'ok')).toHaveLength(1);
    expect(free.filter((r) => r === 'too-many-keys')).toHaveLength(9);
    expect(await activeCount(store, 'acct_f')).toBe(1);
    const paid = await Promise.all(Array.from({ length: 10 }, (_, i) => insertKey(store, apiKey(`p${i}`, 'acct_p'), FINITE_LIMITS)));
    expect(paid.filter((r) => r === 'ok')).toHaveLength(3);
    expect(await activeCount(store, 'acct_p')).toBe(3);
  });

  check('a move to free racing a key creation never leaves a free account with two active keys', async (store) => {
    for (const [i, first] of (['update', 'insert', 'update', 'insert'] as const).entries()) {
      const id = `acct_${i}`;
      await store.insertAccount(account(id, 'paid'));
      expect(await insertKey(store, apiKey(`${id}_k1`, id))).toBe('ok');
      const update = () => store.updateAccount({ id, plan: 'free', maxActiveKeys: CORE_LIMITS, now: KEY_NOW });
      const insert = () => insertKey(store, apiKey(`${id}_k2`, id));
      const [u, k] = first === 'update' ? await Promise.all([update(), insert()]) : (await Promise.all([insert(), update()])).reverse();
      const moved = typeof u === 'object';
      expect(moved).toBe(k !== 'ok'); // exactly one of the two succeeds
      expect(moved ? k : u).toBe('too-many-keys');
      const plan = (await store.getAccount(id))?.plan;
      expect(plan).toBe(moved ? 'free' : 'paid');
      expect(await activeCount(store, id)).toBe(moved ? 1 : 2);
    }
  });

  check('listApiKeys: ordered by createdAt, then id; [] without keys; null for an unknown account', async (store) => {
    await store.insertAccount(account('acct_1', 'pro'));
    await store.insertAccount(account('acct_2', 'pro'));
    const keys = [
      apiKey('k-b', 'acct_1', '2026-11-20T10:00:01.000Z'),
      apiKey('k-a', 'acct_1', '2026-11-20T10:00:01.000Z'),
      apiKey('k-z', 'acct_1', '2026-11-20T10:00:00.999Z'),
      apiKey('k-B', 'acct_1', '2026-11-20T10:00:01.000Z'),
      apiKey('k-_', 'acct_1', '2026-11-20T10:00:01.000Z'),
      apiKey('k-c', 'acct_1', '2026-11-21T00:00:00.000Z'),
    ];
    for (const k of keys) expect(await insertKey(store, k)).toBe('ok');
    expect(await store.listApiKeys('acct_2')).toEqual([]);
    expect(await store.listApiKeys('acct_3')).toBeNull();
    const byId = new Map(keys.map((k) => [k.id, k]));
    expect(await store.listApiKeys('acct_1')).toEqual(['k-z', 'k-B', 'k-_', 'k-a', 'k-b', 'k-c'].map((id) => byId.get(id)));
  });

  check('revokeApiKey is idempotent and keeps the first revokedAt; false for an unknown id', async (store) => {
    await store.insertAccount(account('acct_1', 'pro'));
    const k1 = apiKey('k1', 'acct_1');
    const k2 = apiKey('k2', 'acct_1');
    expect(await insertKey(store, k1)).toBe('ok');
    expect(await insertKey(store, k2)).toBe('ok');
    expect(await store.revokeApiKey({ id: 'k1', at: '2026-11-20T11:00:00.000Z' })).toBe(true);
    expect(await store.revokeApiKey({ id: 'k1', at: '2026-11-20T12:00:00.000Z' })).toBe(true);
    expect(await store.revokeApiKey({ id: 'k1', at: '2026-11-20T10:30:00.000Z' })).toBe(true);
    expect(await store.revokeApiKey({ id: 'nope', at: '2026-11-20T11:00:00.000Z' })).toBe(false);
    expect(await store.revokeApiKey({ id: 'K1', at: '2026-11-20T11:00:00.000Z' })).toBe(false);
    expect(await store.listApiKeys('acct_1')).toEqual([{ ...k1, revokedAt: '2026-11-20T11:00:00.000Z' }, k2]);
  });

  check('findApiKey: the key with the current plan of its account, revoked after revocation; null for an unknown hash', async (store) => {
    await store.insertAccount(account('acct_1', 'free'));
    expect(await insertKey(store, apiKey('k1', 'acct_1'))).toBe('ok');
    const grant = { keyId: 'k1', accountId: 'acct_1', plan: 'free', gmpAddon: false, revoked: false, expiresAt: null };
    expect(await store.findApiKey(hashOf('k1'))).toEqual(grant);
    expect(await store.findApiKey(hashOf('k2'))).toBeNull();
    expect(await store.findApiKey(hashOf('k1').toUpperCase())).toBeNull();
    expect(await store.updateAccount({ id: 'acct_1', plan: 'pro', gmpAddon: true, maxActiveKeys: CORE_LIMITS, now: KEY_NOW })).toMatchObject({ plan: 'pro' });
    expect(await store.findApiKey(hashOf('k1'))).toEqual({ ...grant, plan: 'pro', gmpAddon: true });
    expect(await store.revokeApiKey({ id: 'k1', at: '2026-11-20T11:00:00.000Z' })).toBe(true);
    expect(await store.findApiKey(hashOf('k1'))).toEqual({ ...grant, plan: 'pro', gmpAddon: true, revoked: true });
  });

  // Key expiry, rotation and last use (docs/spec.md#keys).
  const at = (minutes: number) => new Date(Date.parse(KEY_NOW) + minutes * MINUTE).toISOString();
  const rotate = (store: AccountStore, id: string, newId: string, now: string, overlapEndsAt: string, limits: ActiveKeyLimits = CORE_LIMITS) => {
    const { hash, prefix } = apiKey(newId, '');
    return store.rotateApiKey({ id, key: { id: newId, hash, prefix, createdAt: now }, now, overlapEndsAt, maxActiveKeys: limits });
  };

  check('a key expired at now is not active: insertApiKey and updateAccount count the keys active at their now', async (store) => {
    await store.insertAccount(account('acct_1', 'free'));
    expect(await insertKey(store, apiKey('k1', 'acct_1', at(-60), at(10)))).toBe('ok');
    expect(await insertKey(store, apiKey('k2', 'acct_1', at(0)), CORE_LIMITS, at(0))).toBe('too-many-keys');
    expect(await insertKey(store, apiKey('k2', 'acct_1', at(9)), CORE_LIMITS, at(9))).toBe('too-many-keys');
    // from expiresAt on (equal included) the key is expired
    expect(await insertKey(store, apiKey('k2', 'acct_1', at(10)), CORE_LIMITS, at(10))).toBe('ok');
    expect((await store.listApiKeys('acct_1'))?.map((k) => [k.id, k.expiresAt])).toEqual([['k1', at(10)], ['k2', null]]);

    const b = account('acct_2', 'paid');
    await store.insertAccount(b);
    expect(await insertKey(store, apiKey('p1', 'acct_2', at(0), at(30)))).toBe('ok');
    expect(await insertKey(store, apiKey('p2', 'acct_2'))).toBe('ok');
    expect(await store.updateAccount({ id: 'acct_2', plan: 'free', maxActiveKeys: CORE_LIMITS, now: at(29) })).toBe('too-many-keys');
    expect(await store.updateAccount({ id: 'acct_2', plan: 'free', maxActiveKeys: CORE_LIMITS, now: at(30) })).toEqual({ ...b, plan: 'free' });
    // an expired key stays listed and found, with its expiry (the core refuses it)
    expect(await store.findApiKey(hashOf('p1'))).toEqual({ keyId: 'p1', accountId: 'acct_2', plan: 'free', gmpAddon: false, revoked: false, expiresAt: at(30) });
  });

  check("rotateApiKey: a new key with the old one's account, label and expiresAt, rotatedFrom the old one; the old key expires at the earlier of its own expiry and the overlap's end", async (store) => {
    await store.insertAccount(account('acct_1', 'paid'));
    expect(await insertKey(store, apiKey('k1', 'acct_1'))).toBe('ok');
    expect(await insertKey(store, apiKey('k2', 'acct_1', '2026-11-20T10:00:00.000Z', at(5)))).toBe('ok');
    expect(await insertKey(store, apiKey('k3', 'acct_1', '2026-11-20T10:00:00.000Z', at(100)))).toBe('ok');
    // a trial key rotated stays a trial key: the new one expires when the old one would have
    expect(await rotate(store, 'k2', 'n2', at(1), at(61))).toEqual({ ...apiKey('n2', 'acct_1', at(1), at(5)), label: apiKey('k2', '').label, rotatedFrom: 'k2' });
    const created = await rotate(store, 'k1', 'n1', at(0), at(60));
    const expected = { ...apiKey('n1', 'acct_1', at(0)), label: apiKey('k1', '').label, rotatedFrom: 'k1' };
    expect(created).toEqual(expected);
    expect(await rotate(store, 'k3', 'n3', at(1), at(61))).toEqual({ ...apiKey('n3', 'acct_1', at(1), at(100)), label: apiKey('k3', '').label, rotatedFrom: 'k3' });
    const keys = await store.listApiKeys('acct_1');
    expect(keys?.map((k) => [k.id, k.expiresAt, k.revokedAt, k.rotatedFrom])).toEqual([
      ['k1', at(60), null, null],
      ['k2', at(5), null, null],
      ['k3', at(61), null, null],
      ['n1', null, null, 'k1'],
      ['n2', at(5), null, 'k2'],
      ['n3', at(100), null, 'k3'],
    ]);
    expect(keys?.find((k) => k.id === 'n1')).toEqual(expected);
    expect(await store.findApiKey(hashOf('n1'))).toEqual({ keyId: 'n1', accountId: 'acct_1', plan: 'paid', gmpAddon: false, revoked: false, expiresAt: null });
    expect(await store.findApiKey(hashOf('n2'))).toEqual({ keyId: 'n2', accountId: 'acct_1', plan: 'paid', gmpAddon: false, revoked: false, expiresAt: at(5) });
    expect(await store.findApiKey(hashOf('k1'))).toMatchObject({ keyId: 'k1', revoked: false, expiresAt: at(60) });
    // a shorter overlap moves the expiry earlier again; a longer one never later
    expect(await rotate(store, 'k1', 'n4', at(2), at(30))).toMatchObject({ id: 'n4', rotatedFrom: 'k1' });
    expect(await rotate(store, 'k1', 'n5', at(3), at(90))).toMatchObject({ id: 'n5', rotatedFrom: 'k1' });
    expect((await store.listApiKeys('acct_1'))?.find((k) => k.id === 'k1')?.expiresAt).toBe(at(30));
    // the rotated key of a rotated key: the expiry carried along, the chain visible
    expect(await rotate(store, 'n2', 'n6', at(4), at(64))).toEqual({ ...apiKey('n6', 'acct_1', at(4), at(5)), label: apiKey('k2', '').label, rotatedFrom: 'n2' });
  });

  check('insertApiKey stores a key that replaced none: rotatedFrom reads null', async (store) => {
    await store.insertAccount(account('acct_1', 'pro'));
    expect(await insertKey(store, apiKey('k1', 'acct_1', KEY_NOW, at(30)))).toBe('ok');
    expect(await store.listApiKeys('acct_1')).toEqual([{ ...apiKey('k1', 'acct_1', KEY_NOW, at(30)), rotatedFrom: null }]);
  });

  it(
    "rotation never extends a key's life: for any expiry and overlap the new key expires with the old one, which ends at the earlier of its own and the overlap's end (property)",
    async () => {
      await withStore(async (store) => {
        let n = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.option(fc.integer({ min: 1, max: 20_000 }), { nil: null }),
            fc.integer({ min: 0, max: 10_080 }),
            fc.integer({ min: 0, max: 3 }),
            async (expires, overlap, chain) => {
              const accountId = `acct_${n++}`;
              await store.insertAccount(account(accountId, 'paid'));
              const expiresAt = expires === null ? null : at(expires);
              expect(await insertKey(store, apiKey(`${accountId}_k0`, accountId, at(0), expiresAt))).toBe('ok');
              // rotate the newest key `chain + 1` times, at the same instant, each with the same overlap
              let previous = `${accountId}_k0`;
              for (let i = 1; i <= chain + 1; i++) {
                const made = await rotate(store, previous, `${accountId}_k${i}`, at(0), at(overlap));
                expect(made).toEqual({ ...apiKey(`${accountId}_k${i}`, accountId, at(0), expiresAt), label: apiKey(`${accountId}_k0`, '').label, rotatedFrom: previous });
                previous = `${accountId}_k${i}`;
              }
              const ends = expiresAt === null || at(overlap) < expiresAt ? at(overlap) : expiresAt;
              const keys = await store.listApiKeys(accountId);
              const byId = new Map((keys ?? []).map((k) => [k.id, k]));
              for (let i = 0; i <= chain + 1; i++) {
                const k = byId.get(`${accountId}_k${i}`);
                expect(k?.expiresAt).toBe(i === chain + 1 ? expiresAt : ends);
                expect(k?.rotatedFrom).toBe(i === 0 ? null : `${accountId}_k${i - 1}`);
              }
            },
          ),
          { numRuns: RUNS },
        );
      });
    },
    PROPERTY_TIMEOUT,
  );

  check("rotateApiKey: 'not-found' for an unknown key, 'inactive' for a revoked or expired one, changing nothing", async (store) => {
    await store.insertAccount(account('acct_1', 'pro'));
    expect(await insertKey(store, apiKey('k1', 'acct_1'))).toBe('ok');
    expect(await insertKey(store, apiKey('k2', 'acct_1', '2026-11-20T10:00:00.000Z', at(10)))).toBe('ok');
    expect(await store.revokeApiKey({ id: 'k1', at: at(-1) })).toBe(true);
    const before = await store.listApiKeys('acct_1');
    expect(await rotate(store, 'nope', 'n1', at(0), at(60))).toBe('not-found');
    expect(await rotate(store, 'K2', 'n1', at(0), at(60))).toBe('not-found');
    expect(await rotate(store, 'k1', 'n1', at(0), at(60))).toBe('inactive');
    expect(await rotate(store, 'k2', 'n1', at(10), at(60))).toBe('inactive');
    expect(await rotate(store, 'k2', 'n1', at(11), at(60))).toBe('inactive');
    expect(await store.listApiKeys('acct_1')).toEqual(before);
    expect(await store.findApiKey(hashOf('n1'))).toBeNull();
    expect(await rotate(store, 'k2', 'n1', at(9), at(60))).toMatchObject({ id: 'n1' });
  });

  check('rotateApiKey on free: the one key rotates; during the overlap no key rotates again and none is created; after it, both can', async (store) => {
    const a = account('acct_1', 'free');
    await store.insertAccount(a);
    expect(await insertKey(store, apiKey('k1', 'acct_1'))).toBe('ok');
    expect(await rotate(store, 'k1', 'n1', at(0), at(60))).toMatchObject({ id: 'n1', accountId: 'acct_1' });
    expect(await rotate(store, 'k1', 'n2', at(1), at(61))).toBe('too-many-keys');
    expect(await rotate(store, 'n1', 'n2', at(1), at(61))).toBe('too-many-keys');
    expect(await insertKey(store, apiKey('n2', 'acct_1', at(1)), CORE_LIMITS, at(1))).toBe('too-many-keys');
    expect(await store.updateAccount({ id: 'acct_1', plan: 'paid', maxActiveKeys: CORE_LIMITS, now: at(1) })).toEqual({ ...a, plan: 'paid' });
    expect(await store.updateAccount({ id: 'acct_1', plan: 'free', maxActiveKeys: CORE_LIMITS, now: at(1) })).toBe('too-many-keys');
    expect(await store.updateAccount({ id: 'acct_1', plan: 'free', maxActiveKeys: CORE_LIMITS, now: at(60) })).toEqual(a);
    expect(await rotate(store, 'k1', 'n2', at(60), at(120))).toBe('inactive');
    expect(await rotate(store, 'n1', 'n2', at(60), at(120))).toMatchObject({ id: 'n2' });
    expect((await store.listApiKeys('acct_1'))?.map((k) => [k.id, k.expiresAt])).toEqual([['k1', at(60)], ['n1', at(120)], ['n2', null]]);
    // limits as given: a plan of 2 keys holding 2 rotates one, then neither during the overlap
    await store.insertAccount(account('acct_2', 'paid'));
    const two = { ...FINITE_LIMITS, paid: 2 };
    expect(await insertKey(store, apiKey('p1', 'acct_2'), two)).toBe('ok');
    expect(await insertKey(store, apiKey('p2', 'acct_2'), two)).toBe('ok');
    expect(await rotate(store, 'p1', 'q1', at(0), at(60), two)).toMatchObject({ id: 'q1' });
    expect(await rotate(store, 'p2', 'q2', at(1), at(60), two)).toBe('too-many-keys');
    expect(await rotate(store, 'q1', 'q2', at(1), at(60), two)).toBe('too-many-keys');
    expect(await store.revokeApiKey({ id: 'p1', at: at(2) })).toBe(true);
    expect(await rotate(store, 'p2', 'q2', at(2), at(60), two)).toMatchObject({ id: 'q2' });
  });

  check('concurrent rotations of one free key, and a rotation racing a key creation: exactly one succeeds', async (store) => {
    await store.insertAccount(account('acct_1', 'free'));
    expect(await insertKey(store, apiKey('k1', 'acct_1'))).toBe('ok');
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => rotate(store, 'k1', `n${i}`, at(0), at(60))));
    expect(results.filter((r) => typeof r === 'object')).toHaveLength(1);
    expect(results.filter((r) => r === 'too-many-keys')).toHaveLength(9);
    expect(await activeCount(store, 'acct_1')).toBe(2);
    for (const [i, first] of (['rotate', 'insert', 'rotate', 'insert'] as const).entries()) {
      const id = `acct_r${i}`;
      await store.insertAccount(account(id, 'free'));
      expect(await insertKey(store, apiKey(`${id}_k1`, id))).toBe('ok');
      const r = () => rotate(store, `${id}_k1`, `${id}_n1`, at(0), at(60));
      const k = () => insertKey(store, apiKey(`${id}_k2`, id, at(0)), CORE_LIMITS, at(0));
      const [rotated, inserted] = first === 'rotate' ? await Promise.all([r(), k()]) : ((await Promise.all([k(), r()])).reverse() as [Awaited<ReturnType<typeof r>>, Awaited<ReturnType<typeof k>>]);
      expect([typeof rotated === 'object', inserted === 'ok'].filter(Boolean)).toHaveLength(1);
      expect(typeof rotated === 'object' ? inserted : rotated).toBe('too-many-keys');
    }
  });

  // The key cap of paid and pro (docs/spec.md#keys), as the core's functions apply it to the store.
  check(
    'createApiKey: a paid or pro account holds at most maxKeysPerAccount active keys (default 100): one more is ERR:PLAN naming the limit; a revoked key frees a slot; a key at the cap still rotates',
    async (store) => {
      const clock = { now: () => new Date(KEY_NOW) };
      for (const plan of ['paid', 'pro'] as const) {
        const acct = await createAccount(store, { name: `Acme ${plan}`, plan }, clock);
        const made = [];
        for (let i = 0; i < 100; i++) made.push(await createApiKey(store, { accountId: acct.id, label: `k${i}` }, clock));
        const refused = await createApiKey(store, { accountId: acct.id, label: 'k100' }, clock).catch((e: unknown) => e);
        expect(isIpokitError(refused, 'ERR:PLAN'), String(refused)).toBe(true);
        expect((refused as Error).message).toMatch(/\b100\b/);
        expect((refused as Error).message).toMatch(/revoke/i);
        expect(await listApiKeys(store, { accountId: acct.id })).toHaveLength(100);
        // a slot freed by a revocation is taken again, once
        await revokeApiKey(store, made[0]!.id, clock);
        expect((await createApiKey(store, { accountId: acct.id, label: 'again' }, clock)).label).toBe('again');
        expect(isIpokitError(await createApiKey(store, { accountId: acct.id, label: 'more' }, clock).catch((e: unknown) => e), 'ERR:PLAN')).toBe(true);
        // at the cap a key rotates (the new key takes its place); during the overlap no other does
        const next = await rotateApiKey(store, made[1]!.id, { overlapSeconds: 60 }, clock);
        expect(next.label).toBe('k1');
        expect(isIpokitError(await rotateApiKey(store, made[2]!.id, {}, clock).catch((e: unknown) => e), 'ERR:PLAN')).toBe(true);
        // the cap is the option's: a larger one admits more, Infinity any number
        expect((await createApiKey(store, { accountId: acct.id, label: 'x' }, { ...clock, maxKeysPerAccount: 102 })).label).toBe('x');
        expect((await createApiKey(store, { accountId: acct.id, label: 'y' }, { ...clock, maxKeysPerAccount: Infinity })).label).toBe('y');
        expect(isIpokitError(await createApiKey(store, { accountId: acct.id, label: 'z' }, { ...clock, maxKeysPerAccount: 103 }).catch((e: unknown) => e), 'ERR:PLAN')).toBe(true);
      }
      // a smaller cap, and the free plan's one key whatever the cap says
      const small = await createAccount(store, { name: 'Small', plan: 'paid' }, clock);
      for (const label of ['a', 'b']) await createApiKey(store, { accountId: small.id, label }, { ...clock, maxKeysPerAccount: 2 });
      const third = await createApiKey(store, { accountId: small.id, label: 'c' }, { ...clock, maxKeysPerAccount: 2 }).catch((e: unknown) => e);
      expect(isIpokitError(third, 'ERR:PLAN') && /\b2\b/.test(third.message), String(third)).toBe(true);
      const free = await createAccount(store, { name: 'Free', plan: 'free' }, clock);
      await createApiKey(store, { accountId: free.id, label: 'one' }, { ...clock, maxKeysPerAccount: 5 });
      expect(isIpokitError(await createApiKey(store, { accountId: free.id, label: 'two' }, { ...clock, maxKeysPerAccount: 5 }).catch((e: unknown) => e), 'ERR:PLAN')).toBe(true);
      // a move to paid or pro with more active keys than the cap is refused, naming it; an
      // add-on change alone moves no plan (an account over a cap that predates it may make one)
      const big = await createAccount(store, { name: 'Big', plan: 'pro' }, clock);
      for (const label of ['a', 'b', 'c']) await createApiKey(store, { accountId: big.id, label }, clock);
      const moved = await updateAccount(store, { accountId: big.id, plan: 'paid' }, { ...clock, maxKeysPerAccount: 2 }).catch((e: unknown) => e);
      expect(isIpokitError(moved, 'ERR:PLAN') && /\b2\b/.test(moved.message), String(moved)).toBe(true);
      expect(await updateAccount(store, { accountId: big.id, gmpAddon: true }, { ...clock, maxKeysPerAccount: 2 })).toMatchObject({ plan: 'pro', gmpAddon: true });
      expect(await updateAccount(store, { accountId: big.id, plan: 'paid' }, { ...clock, maxKeysPerAccount: 3 })).toMatchObject({ plan: 'paid' });
    },
    PROPERTY_TIMEOUT,
  );

  check('recordKeyUse keeps the latest instant whatever the order; an unknown id is no error', async (store) => {
    await store.insertAccount(account('acct_1', 'pro'));
    expect(await insertKey(store, apiKey('k1', 'acct_1'))).toBe('ok');
    expect(await insertKey(store, apiKey('k2', 'acct_1'))).toBe('ok');
    const lastUsed = async () => (await store.listApiKeys('acct_1'))?.map((k) => k.lastUsedAt);
    expect(await lastUsed()).toEqual([null, null]);
    await store.recordKeyUse({ id: 'k1', at: at(5) });
    expect(await lastUsed()).toEqual([at(5), null]);
    await store.recordKeyUse({ id: 'k1', at: at(3) });
    await Promise.all([at(7), at(6), at(9), at(8)].map((t) => store.recordKeyUse({ id: 'k2', at: t })));
    expect(await lastUsed()).toEqual([at(5), at(9)]);
    await store.recordKeyUse({ id: 'nope', at: at(10) });
    await store.recordKeyUse({ id: 'K1', at: at(10) });
    expect(await lastUsed()).toEqual([at(5), at(9)]);
    // a use changes nothing else, revoked keys included
    expect(await store.revokeApiKey({ id: 'k1', at: at(6) })).toBe(true);
    await store.recordKeyUse({ id: 'k1', at: at(7) });
    expect((await store.listApiKeys('acct_1'))?.[0]).toEqual({ ...apiKey('k1', 'acct_1'), revokedAt: at(6), lastUsedAt: at(7) });
  });

  it(
    'agrees with referenceStore on random key creations, rotations, revocations, plan moves and uses at moving instants (property)',
    async () => {
      const op = fc.oneof(
        fc.record({ kind: fc.constant('insert' as const), account: fc.nat(1), expires: fc.option(fc.integer({ min: 1, max: 30 }), { nil: null }) }),
        fc.record({ kind: fc.constant('rotate' as const), key: fc.nat(12), overlap: fc.integer({ min: 0, max: 30 }) }),
        fc.record({ kind: fc.constant('revoke' as const), key: fc.nat(12) }),
        fc.record({ kind: fc.constant('plan' as const), account: fc.nat(1), plan: fc.constantFrom<Plan>('free', 'paid', 'pro') }),
        fc.record({ kind: fc.constant('use' as const), key: fc.nat(12), minutes: fc.integer({ min: -5, max: 5 }) }),
        fc.record({ kind: fc.constant('wait' as const), minutes: fc.integer({ min: 0, max: 20 }) }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
          await withStore(async (store) => {
            const model = referenceStore();
            let minute = 0;
            let made = 0;
            const ids: string[] = [];
            for (const s of [store, model]) {
              await s.insertAccount(account('acct_0', 'free'));
              await s.insertAccount(account('acct_1', 'paid'));
            }
            for (const o of ops) {
              const now = at(minute);
              const both = async <T>(call: (s: AccountStore) => Promise<T>): Promise<T> => {
                const [got, want] = [await call(store), await call(model)];
                expect(got, JSON.stringify({ o, now })).toEqual(want);
                return got;
              };
              if (o.kind === 'wait') minute += o.minutes;
              else if (o.kind === 'insert') {
                const key = apiKey(`k${made++}`, `acct_${o.account}`, now, o.expires === null ? null : at(minute + o.expires));
                if ((await both((s) => s.insertApiKey({ key, maxActiveKeys: FINITE_LIMITS, now }))) === 'ok') ids.push(key.id);
              } else if (o.kind === 'rotate') {
                const id = ids[o.key % Math.max(ids.length, 1)] ?? 'none';
                const result = await both((s) => rotate(s, id, `k${made}`, now, at(minute + o.overlap), FINITE_LIMITS));
                made++;
                if (typeof result === 'object') ids.push(result.id);
              } else if (o.kind === 'revoke') {
                const id = ids[o.key % Math.max(ids.length, 1)] ?? 'none';
                await both((s) => s.revokeApiKey({ id, at: now }));
              } else if (o.kind === 'plan') {
                await both((s) => s.updateAccount({ id: `acct_${o.account}`, plan: o.plan, maxActiveKeys: FINITE_LIMITS, now }));
              } else {
                const id = ids[o.key % Math.max(ids.length, 1)] ?? 'none';
                await both(async (s) => s.recordKeyUse({ id, at: at(minute + o.minutes) }));
              }
            }
            for (const accountId of ['acct_0', 'acct_1']) expect(await store.listApiKeys(accountId)).toEqual(await model.listApiKeys(accountId));
            for (const id of ids) expect(await store.findApiKey(hashOf(id))).toEqual(await model.findApiKey(hashOf(id)));
          });
        }),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT,
  );
}

// ---------------------------------------------------------------------------------------
// hitRateLimit

/** 2026-11-20T12:00:00Z. */
const N0 = Date.UTC(2026, 10, 20, 12);

/** A window as the checks write it: a minute window unless it says otherwise. */
type CheckWindow = Omit<RateLimitWindow, 'ms'> & { ms?: number };

function rateLimitChecks(check: Check<RateLimiter>, withStore: WithStore<RateLimiter>): void {
  const full = (windows: CheckWindow[], windowMs = RATE_WINDOW): RateLimitWindow[] => windows.map((w) => ({ ...w, ms: w.ms ?? windowMs }));
  const hit = (store: RateLimiter, now: number, windows: CheckWindow[], windowMs = RATE_WINDOW) => store.hitRateLimit({ now, windows: full(windows, windowMs) });
  const state = (count: number, oldest: number | null, blocking: number | null) => ({ count, oldest, blocking });

  check('admits exactly quota hits in a window; refused hits charge nothing', async (store) => {
    const w = [{ key: 'acct:a', quota: 3 }];
    expect(await hit(store, N0, w)).toEqual({ admitted: true, windows: [state(1, N0, null)] });
    expect(await hit(store, N0 + 10, w)).toEqual({ admitted: true, windows: [state(2, N0, null)] });
    expect(await hit(store, N0 + 20, w)).toEqual({ admitted: true, windows: [state(3, N0, N0)] });
    for (const t of [N0 + 20, N0 + 30, N0 + 30_000, N0 + 59_999]) {
      expect(await hit(store, t, w)).toEqual({ admitted: false, windows: [state(3, N0, N0)] });
    }
    expect(await hit(store, N0 + 60_000, w)).toEqual({ admitted: true, windows: [state(3, N0 + 10, N0 + 10)] });
    expect(await hit(store, N0 + 60_005, w)).toEqual({ admitted: false, windows: [state(3, N0 + 10, N0 + 10)] });
    expect(await hit(store, N0 + 60_010, w)).toEqual({ admitted: true, windows: [state(3, N0 + 20, N0 + 20)] });
    // 200 s later every hit has left.
    expect(await hit(store, N0 + 200_000, w)).toEqual({ admitted: true, windows: [state(1, N0 + 200_000, null)] });
  });

  check('a hit leaves a sliding window exactly when now - t >= ms', async (store) => {
    const w = [{ key: 'addr:1.2.3.4', quota: 1 }];
    expect((await hit(store, N0, w)).admitted).toBe(true);
    expect(await hit(store, N0 + 59_999, w)).toEqual({ admitted: false, windows: [state(1, N0, N0)] });
    expect(await hit(store, N0 + 60_000, w)).toEqual({ admitted: true, windows: [state(1, N0 + 60_000, N0 + 60_000)] });
  });

  check('uses the window length it is given', async (store) => {
    const w = [{ key: 'acct:a', quota: 1 }];
    expect((await hit(store, N0, w, 1000)).admitted).toBe(true);
    expect((await hit(store, N0 + 999, w, 1000)).admitted).toBe(false);
    expect((await hit(store, N0 + 1000, w, 1000)).admitted).toBe(true);
  });

  check('a request refused by one window is charged to none; states follow the order of windows', async (store) => {
    const acct = { key: 'acct:a', quota: 5 };
    const gmp = { key: 'gmp:a', quota: 1 };
    expect(await hit(store, N0, [acct, gmp])).toEqual({ admitted: true, windows: [state(1, N0, null), state(1, N0, N0)] });
    expect(await hit(store, N0 + 1, [acct, gmp])).toEqual({ admitted: false, windows: [state(1, N0, null), state(1, N0, N0)] });
    expect(await hit(store, N0 + 2, [acct])).toEqual({ admitted: true, windows: [state(2, N0, null)] });
    expect(await hit(store, N0 + 3, [gmp, acct])).toEqual({ admitted: false, windows: [state(1, N0, N0), state(2, N0, null)] });
    expect(await hit(store, N0 + 60_000, [gmp, acct])).toEqual({ admitted: true, windows: [state(1, N0 + 60_000, N0 + 60_000), state(2, N0 + 2, null)] });
  });

  check('quota 0 refuses every request, and charges the other windows nothing', async (store) => {
    const open = { key: 'acct:a', quota: 5 };
    const shut = { key: 'gmp:a', quota: 0 };
    expect(await hit(store, N0, [open, shut])).toEqual({ admitted: false, windows: [state(0, null, null), state(0, null, null)] });
    expect(await hit(store, N0 + 1, [shut])).toEqual({ admitted: false, windows: [state(0, null, null)] });
    expect(await hit(store, N0 + 2, [open])).toEqual({ admitted: true, windows: [state(1, N0 + 2, null)] });
  });

  check('windows are independent per key', async (store) => {
    const a = { key: 'addr:2001:db8::', quota: 1 };
    const b = { key: 'addr:2001:db8:0:1::', quota: 1 };
    const c = { key: 'acct:a', quota: 2 };
    expect((await hit(store, N0, [a])).admitted).toBe(true);
    expect((await hit(store, N0, [b])).admitted).toBe(true);
    expect((await hit(store, N0 + 1, [a])).admitted).toBe(false);
    expect(await hit(store, N0 + 1, [c])).toEqual({ admitted: true, windows: [state(1, N0 + 1, null)] });
    expect((await hit(store, N0 + 2, [b])).admitted).toBe(false);
  });

  check('takes window keys of any length and content (a store bounds what it keeps itself)', async (store) => {
    // 4,096 characters that compress badly: a btree index entry refuses about 2.7 KB
    let text = '';
    for (let i = 0; text.length < 4_096; i++) text += ((i * 2_654_435_761) >>> 0).toString(36);
    const long = { key: `addr:${text}`, quota: 1 };
    const other = { key: `addr:${text.slice(0, -1)}\u00e9`, quota: 1 };
    expect(await hit(store, N0, [long])).toEqual({ admitted: true, windows: [state(1, N0, N0)] });
    expect(await hit(store, N0 + 1, [long])).toEqual({ admitted: false, windows: [state(1, N0, N0)] });
    expect((await hit(store, N0 + 2, [other])).admitted).toBe(true);
    expect((await hit(store, N0 + 3, [long, other])).admitted).toBe(false);
  });

  check('states equal those of rateLimitHit over a scripted sequence', async (store) => {
    const model = rateLimitModel();
    const acct = { key: 'acct:x', quota: 4 };
    const gmp = { key: 'gmp:x', quota: 2 };
    const addr = { key: 'addr:10.0.0.1', quota: 3 };
    const script: Array<[number, CheckWindow[]]> = [
      [0, [acct, gmp]], [0, [acct, gmp]], [1, [acct, gmp]], [2, [acct]], [5_000, [addr]], [5_000, [acct]],
      [6_000, [acct]], [30_000, [addr]], [59_999, [acct, gmp]], [60_000, [acct, gmp]], [60_001, [gmp, acct]],
      [61_999, [addr]], [65_000, [addr]], [90_000, [acct]], [119_999, [acct, gmp]], [120_000, [acct, gmp]],
      [185_000, [addr, acct, gmp]], [185_000, [addr, acct, gmp]], [185_000, [addr, acct, gmp]], [185_001, [addr]],
    ];
    for (const [dt, windows] of script) {
      const now = N0 + dt;
      expect(await hit(store, now, windows), `at +${dt}`).toEqual(model.hit({ now, windows: full(windows) }));
    }
  });

  check('a key named twice in one request is charged once, and both places describe it alike', async (store) => {
    const w = { key: 'acct:twice', quota: 3 };
    expect(await hit(store, N0, [w, w])).toEqual({ admitted: true, windows: [state(1, N0, null), state(1, N0, null)] });
    expect(await hit(store, N0 + 1, [w, { key: 'acct:twice', quota: 2 }])).toEqual({ admitted: true, windows: [state(2, N0, null), state(2, N0, N0)] });
    expect(await hit(store, N0 + 2, [w])).toEqual({ admitted: true, windows: [state(3, N0, N0)] });
    expect(await hit(store, N0 + 3, [w, w])).toEqual({ admitted: false, windows: [state(3, N0, N0), state(3, N0, N0)] });
  });

  check('peekRateLimit describes each window as a hit would, and charges nothing', async (store) => {
    const acct = { key: 'acct:p', quota: 3 };
    const gmp = { key: 'gmp:p', quota: 1 };
    const peek = (now: number, windows: CheckWindow[]) => store.peekRateLimit({ now, windows: full(windows) });
    expect(await peek(N0, [acct, gmp])).toEqual([state(0, null, null), state(0, null, null)]);
    expect(await peek(N0, [])).toEqual([]);
    expect((await hit(store, N0, [acct, gmp])).admitted).toBe(true);
    expect((await hit(store, N0 + 10, [acct])).admitted).toBe(true);
    for (let i = 0; i < 5; i++) expect(await peek(N0 + 20, [gmp, acct])).toEqual([state(1, N0, N0), state(2, N0, null)]);
    // the peeks charged nothing: one more fits
    expect(await hit(store, N0 + 30, [acct])).toEqual({ admitted: true, windows: [state(3, N0, N0)] });
    expect(await peek(N0 + 59_999, [acct])).toEqual([state(3, N0, N0)]);
    expect(await peek(N0 + 60_000, [acct, gmp])).toEqual([state(2, N0 + 10, null), state(0, null, null)]);
    expect(await peek(N0 + 60_030, [acct])).toEqual([state(0, null, null)]);
    // a lower quota than the hits were recorded under: blocking is the (count - quota)-th oldest
    expect(await peek(N0 + 40, [{ key: 'acct:p', quota: 1 }])).toEqual([state(3, N0, N0 + 30)]);
  });

  check('50 concurrent hits on one key admit exactly the quota', async (store) => {
    const w = [{ key: 'acct:a', quota: 7 }];
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => hit(store, N0, w)));
    expect(outcomes.filter((o) => o.admitted)).toHaveLength(7);
    for (const o of outcomes) if (!o.admitted) expect(o.windows).toEqual([state(7, N0, N0)]);
    expect(await hit(store, N0 + 1, w)).toEqual({ admitted: false, windows: [state(7, N0, N0)] });

    const acct = { key: 'acct:b', quota: 10 };
    const gmp = { key: 'gmp:b', quota: 3 };
    const both = await Promise.all(Array.from({ length: 20 }, () => hit(store, N0, [acct, gmp])));
    expect(both.filter((o) => o.admitted)).toHaveLength(3);
    expect(await hit(store, N0 + 1, [acct])).toEqual({ admitted: true, windows: [state(4, N0, null)] });
  });

  check('windows of one key with other lengths or periods share nothing', async (store) => {
    const minute = { key: 'acct:m', quota: 2, ms: RATE_WINDOW };
    const hour = { key: 'acct:m', quota: 3, ms: 3_600_000 };
    const day = { key: 'acct:m', quota: 4, ms: 86_400_000, start: N0 - 1_000 };
    const nextDay = { ...day, start: day.start + 86_400_000 };
    expect(await hit(store, N0, [minute, hour, day])).toEqual({ admitted: true, windows: [state(1, N0, null), state(1, N0, null), state(1, day.start, null)] });
    expect(await hit(store, N0 + 1, [minute])).toEqual({ admitted: true, windows: [state(2, N0, N0)] });
    // the minute window is full, the others are not: refused, and charged to none
    expect(await hit(store, N0 + 2, [minute, hour, day])).toEqual({ admitted: false, windows: [state(2, N0, N0), state(1, N0, null), state(1, day.start, null)] });
    expect(await hit(store, N0 + 3, [hour, day])).toEqual({ admitted: true, windows: [state(2, N0, null), state(2, day.start, null)] });
    // a minute later the minute window has room; the hour window fills
    expect(await hit(store, N0 + 60_000, [minute, hour, day])).toEqual({ admitted: true, windows: [state(2, N0 + 1, N0 + 1), state(3, N0, N0), state(3, day.start, null)] });
    expect(await hit(store, N0 + 119_999, [minute, hour])).toEqual({ admitted: false, windows: [state(1, N0 + 60_000, null), state(3, N0, N0)] });
    expect(await hit(store, N0 + 120_001, [day])).toEqual({ admitted: true, windows: [state(4, day.start, day.start)] });
    expect(await hit(store, N0 + 120_002, [day])).toEqual({ admitted: false, windows: [state(4, day.start, day.start)] });
    // the next day is another window, empty; the hour window frees its oldest after 3,600 s
    expect(await hit(store, N0 + 120_003, [nextDay])).toEqual({ admitted: true, windows: [state(1, nextDay.start, null)] });
    expect(await hit(store, N0 + 3_600_000, [hour])).toEqual({ admitted: true, windows: [state(3, N0 + 3, N0 + 3)] });
  });

  check('a calendar window counts every hit charged to it, whatever the time, and is described by its start', async (store) => {
    const start = N0 - 5_000;
    const day = { key: 'addr:10.0.0.9', quota: 2, ms: 86_400_000, start };
    expect(await hit(store, N0, [day])).toEqual({ admitted: true, windows: [state(1, start, null)] });
    // a process whose clock is far ahead still charges the same window: the caller says which
    expect(await hit(store, N0 + 90_000_000, [day])).toEqual({ admitted: true, windows: [state(2, start, start)] });
    expect(await hit(store, N0 + 1, [day])).toEqual({ admitted: false, windows: [state(2, start, start)] });
    expect(await store.peekRateLimit({ now: N0 + 2, windows: [day, { ...day, quota: 5 }] })).toEqual([state(2, start, start), state(2, start, null)]);
  });

  check('an hour window of quota 360 admits exactly 360 in any 3,600 s', async (store) => {
    const hour = { key: 'acct:h', quota: 360, ms: 3_600_000 };
    for (let i = 0; i < 360; i++) expect((await hit(store, N0 + i * 5_000, [hour])).admitted).toBe(true);
    expect(await hit(store, N0 + 1_799_999, [hour])).toEqual({ admitted: false, windows: [state(360, N0, N0)] });
    expect(await hit(store, N0 + 3_599_999, [hour])).toEqual({ admitted: false, windows: [state(360, N0, N0)] });
    expect(await hit(store, N0 + 3_600_000, [hour])).toEqual({ admitted: true, windows: [state(360, N0 + 5_000, N0 + 5_000)] });
  });

  check('usage: a keyed hit counts as admitted or refused in the same step, by key, route and day', async (store) => {
    const w = [{ key: 'acct:u', quota: 2 }];
    const usage = (keyId: string, route: UsageRoute, day = '2026-11-20'): UsageCharge => ({ accountId: 'u', keyId, route, day });
    expect(await store.readUsage({ accountId: 'u', from: '2026-11-01', to: '2026-11-30' })).toEqual([]);
    const outcomes = [
      await store.hitRateLimit({ now: N0, windows: full(w), usage: usage('key_b', 'list') }),
      await store.hitRateLimit({ now: N0 + 1, windows: full(w), usage: usage('key_a', 'gmp') }),
      await store.hitRateLimit({ now: N0 + 2, windows: full(w), usage: usage('key_a', 'gmp') }),
      await store.hitRateLimit({ now: N0 + 3, windows: full(w), usage: usage('key_a', 'ipo', '2026-11-21') }),
      // no windows at all (every quota off): still counted
      await store.hitRateLimit({ now: N0 + 4, windows: [], usage: usage('key_a', 'ipo', '2026-11-21') }),
      await store.hitRateLimit({ now: N0 + 5, windows: full(w) }),
    ];
    expect(outcomes.map((o) => o.admitted)).toEqual([true, true, false, false, true, false]);
    const row = (day: string, keyId: string, route: UsageRoute, admitted: number, refused: number): UsageRow => ({ day, keyId, route, admitted, refused });
    expect(await store.readUsage({ accountId: 'u', from: '2026-11-20', to: '2026-11-21' })).toEqual([
      row('2026-11-20', 'key_a', 'gmp', 1, 1),
      row('2026-11-20', 'key_b', 'list', 1, 0),
      row('2026-11-21', 'key_a', 'ipo', 1, 1),
    ]);
    expect(await store.readUsage({ accountId: 'u', from: '2026-11-21', to: '2026-11-21' })).toEqual([row('2026-11-21', 'key_a', 'ipo', 1, 1)]);
    expect(await store.readUsage({ accountId: 'u', from: '2026-11-20', to: '2026-11-21', keyId: 'key_b' })).toEqual([row('2026-11-20', 'key_b', 'list', 1, 0)]);
    expect(await store.readUsage({ accountId: 'v', from: '2026-11-20', to: '2026-11-21' })).toEqual([]);
    expect(await store.readUsage({ accountId: 'u', from: '2026-11-22', to: '2026-12-31' })).toEqual([]);
  });

  check('usage under 40 concurrent hits: exactly the admitted and the refused, no more', async (store) => {
    const w = full([{ key: 'acct:c', quota: 7 }]);
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => store.hitRateLimit({ now: N0, windows: w, usage: { accountId: 'c', keyId: `key_${i % 2}`, route: 'list', day: '2026-11-20' } })),
    );
    const admitted = (k: number) => outcomes.filter((o, i) => i % 2 === k && o.admitted).length;
    expect(admitted(0) + admitted(1)).toBe(7);
    expect(await store.readUsage({ accountId: 'c', from: '2026-11-20', to: '2026-11-20' })).toEqual(
      [0, 1].map((k) => ({ day: '2026-11-20', keyId: `key_${k}`, route: 'list', admitted: admitted(k), refused: 20 - admitted(k) })),
    );
  });

  it(
    'agrees with a model built on rateLimitHit over random sequences of hits, peeks and usage (property)',
    async () => {
      // Windows of three owners and three rules: a minute, an hour (scaled down to 5 s in
      // half the runs, so that hits leave), and IST-like days whose start moves on.
      const arb = fc.record({
        quotas: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 9, maxLength: 9 }),
        hourMs: fc.constantFrom(3_600_000, 5_000),
        requests: fc.array(
          fc.record({
            peek: fc.boolean(),
            dt: fc.oneof(fc.constantFrom(0, 0, 1), fc.constantFrom(5_000, 15_000, 30_000, 60_000, 3_600_000, 86_400_000), fc.integer({ min: 0, max: 60_000 })),
            windows: fc.shuffledSubarray([0, 1, 2, 3, 4, 5, 6, 7, 8], { minLength: 0, maxLength: 4 }),
            usage: fc.option(fc.record({ keyId: fc.constantFrom('key_a', 'key_b'), route: fc.constantFrom<UsageRoute>('list', 'ipo', 'gmp') }), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 40, size: 'medium' },
        ),
      });
      const owners = ['acct:a', 'gmp:a', 'addr:1.2.3.4'];
      await fc.assert(
        fc.asyncProperty(arb, async ({ quotas, hourMs, requests }) => {
          await withStore(async (store) => {
            const model = rateLimitModel();
            let now = N0;
            for (const r of requests) {
              now += r.dt;
              const dayStart = Math.floor(now / 86_400_000) * 86_400_000 - 19_800_000;
              const windows: RateLimitWindow[] = r.windows.map((i) => {
                const key = owners[i % 3]!;
                const quota = quotas[i]!;
                if (i < 3) return { key, quota, ms: RATE_WINDOW };
                if (i < 6) return { key, quota, ms: hourMs };
                return { key, quota, ms: 86_400_000, start: dayStart };
              });
              if (r.peek) {
                expect(await store.peekRateLimit({ now, windows })).toEqual(model.peek({ now, windows }));
              } else {
                const usage = r.usage === undefined ? undefined : { accountId: 'a', day: isoDay(now), ...r.usage };
                const input = usage === undefined ? { now, windows } : { now, windows, usage };
                expect(await store.hitRateLimit(input)).toEqual(model.hit(input));
              }
            }
            const query = { accountId: 'a', from: '2020-01-01', to: '2020-12-31' };
            expect(await store.readUsage(query)).toEqual(model.readUsage(query));
          });
        }),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT,
  );
}

/** The UTC calendar day of an instant: a stand-in for the IST day in the property. */
function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------
// Subscription snapshots (docs/spec.md#subscription)

/** Every category given, with 0, 2 decimals and the largest value allowed. */
const FULL_TIMES = { qib: 120.45, nii: 0, bnii: 9_999_999.99, snii: 0.01, retail: 3, employee: 1.5, shareholder: 77.7, total: 45.12 };

function subscriptionChecks(check: Check<IpoStore>, withStore: WithStore<IpoStore>): void {
  const x = makeIpo({ id: 'x1', symbol: 'X1', slug: 'x-one' });
  const y = makeIpo({ id: 'y1', symbol: 'Y1', slug: 'y-one' });
  const t = Date.UTC(2026, 10, 18, 9, 30);
  const series = [
    makeSubscription('x1', t, { qib: 0.5, total: 1.25 }),
    makeSubscription('x1', t + HOUR, FULL_TIMES),
    makeSubscription('x1', t + DAY, {}), // every category null
    makeSubscription('x1', Date.UTC(2000, 0, 1), { retail: 0 }),
    makeSubscription('y1', t, { retail: 2 }),
  ];
  const ofX = (from: number, to: number) => referenceSubscriptionSeries(series, { ipoId: 'x1', from, to });

  check('stores subscription snapshots exactly as given (every category, nulls, 0, the largest value) and answers []', async (store) => {
    expect(await store.writeDataset({ ipos: [x, y], snapshots: [], subscription: series })).toEqual([]);
    await expectContents(store, { ipos: [x, y], snapshots: [], subscription: series });
    const got = await store.subscriptionSeries({ ipoId: 'x1', from: 0, to: FAR_FUTURE });
    expect(got).toEqual(ofX(0, FAR_FUTURE));
    // Keys in SUBSCRIPTION_CATEGORIES order: a store that builds times from columns keeps it.
    for (const s of got) expect(Object.keys(s.times)).toEqual(['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total']);
  });

  check('a write without `subscription` stores none and keeps those stored', async (store) => {
    expect(await store.writeDataset({ ipos: [x, y], snapshots: [] })).toEqual([]);
    expect(await store.subscriptionSeries({ ipoId: 'x1', from: 0, to: FAR_FUTURE })).toEqual([]);
    expect(await store.writeDataset({ ipos: [], snapshots: [], subscription: series })).toEqual([]);
    expect(await store.writeDataset({ ipos: [x], snapshots: [makeSnapshot('x1', t, { a: 1 })] })).toEqual([]);
    await expectContents(store, { ipos: [x, y], snapshots: [makeSnapshot('x1', t, { a: 1 })], subscription: series });
  });

  check('replaces a subscription snapshot with the same (ipoId, timestamp) and keeps every other (GMP snapshots at that instant too)', async (store) => {
    const gmp = [makeSnapshot('x1', t, { a: 100 })];
    expect(await store.writeDataset({ ipos: [x, y], snapshots: gmp, subscription: series })).toEqual([]);
    const replacement = makeSubscription('x1', t, { retail: 9, total: null });
    expect(await store.writeDataset({ ipos: [], snapshots: [], subscription: [replacement] })).toEqual([]);
    await expectContents(store, { ipos: [x, y], snapshots: gmp, subscription: [replacement, ...series.slice(1)] });
    // An IPO rewritten keeps its subscription snapshots.
    expect(await store.writeDataset({ ipos: [{ ...x, name: 'Renamed' }], snapshots: [] })).toEqual([]);
    await expectContents(store, { ipos: [{ ...x, name: 'Renamed' }, y], snapshots: gmp, subscription: [replacement, ...series.slice(1)] });
  });

  check('reports each subscription snapshot of an unknown IPO by its index and writes nothing, subscription included', async (store) => {
    const sx = makeSubscription('x1', t, { total: 1 });
    expect(await store.writeDataset({ ipos: [x], snapshots: [], subscription: [sx] })).toEqual([]);
    const input = {
      ipos: [y],
      snapshots: [makeSnapshot('y1', t, { a: 1 })],
      subscription: [
        makeSubscription('x1', t + 1, { total: 2 }), // stored IPO
        makeSubscription('z1', t, { total: 3 }), // unknown
        makeSubscription('y1', t, { total: 4 }), // IPO of this write
        makeSubscription('X1', t, { total: 5 }), // ids are exact: unknown
      ],
    };
    expect(sortConflicts(await store.writeDataset(input))).toEqual(
      sortConflicts([
        { kind: 'unknown-ipo-subscription', snapshot: 1 },
        { kind: 'unknown-ipo-subscription', snapshot: 3 },
      ]),
    );
    await expectContents(store, { ipos: [x], snapshots: [], subscription: [sx] }, ['y1', 'z1', 'X1']);
  });

  check('a conflict of another kind writes no subscription snapshot either; every kind is reported at once', async (store) => {
    const sx = makeSubscription('x1', t, { total: 1 });
    expect(await store.writeDataset({ ipos: [x, y], snapshots: [], subscription: [sx] })).toEqual([]);
    const input = {
      ipos: [makeIpo({ id: 'a1', symbol: 'x1', slug: 'a-one' })],
      snapshots: [makeSnapshot('q1', t, { a: 1 })],
      subscription: [makeSubscription('x1', t, { total: 99 }), makeSubscription('a1', t, { total: 2 }), makeSubscription('q1', t, { total: 3 })],
    };
    expect(sortConflicts(await store.writeDataset(input))).toEqual(
      sortConflicts([
        { kind: 'symbol-taken', ipo: 0, holder: 'x1' },
        { kind: 'unknown-ipo', snapshot: 0 },
        { kind: 'unknown-ipo-subscription', snapshot: 2 },
      ]),
    );
    await expectContents(store, { ipos: [x, y], snapshots: [], subscription: [sx] }, ['a1', 'q1']);
    // A symbol conflict alone also keeps the subscription part out.
    const alone = { ipos: [makeIpo({ id: 'b1', symbol: 'Y1', slug: 'b-one' })], snapshots: [], subscription: [makeSubscription('x1', t + 5, { total: 5 })] };
    expect(await store.writeDataset(alone)).toEqual([{ kind: 'symbol-taken', ipo: 0, holder: 'y1' }]);
    await expectContents(store, { ipos: [x, y], snapshots: [], subscription: [sx] }, ['b1']);
  });

  check('subscriptionAt: the latest snapshot at or before it (inclusive), later ones invisible, null when none', async (store) => {
    expect(await store.writeDataset({ ipos: [x, y, makeIpo({ id: 'z1' })], snapshots: [], subscription: series })).toEqual([]);
    const find = async (identifier: string, subscriptionAt: number) => (await store.findIpo({ identifier, gmpAt: null, subscriptionAt }))?.subscription;
    expect(await find('x1', t + HOUR)).toEqual(series[1]);
    expect(await find('X1', t + HOUR - 1)).toEqual(series[0]);
    expect(await find('x-one', t - 1)).toEqual(series[3]);
    expect(await find('x1', Date.UTC(2000, 0, 1) - 1)).toBeNull();
    expect(await find('x1', FAR_FUTURE)).toEqual(series[2]);
    expect(await find('z1', FAR_FUTURE)).toBeNull();
    expect(await find('y1', t - 1)).toBeNull();
    const ipos = [x, y, makeIpo({ id: 'z1' })];
    for (const subscriptionAt of [0, t - 1, t, t + HOUR - 1, t + HOUR, t + DAY, FAR_FUTURE]) {
      const q = listQuery({ status: 'announced', subscriptionAt });
      expect(asAsked(await store.listIpos(q), q)).toEqual(referenceList(ipos, q, [], series));
      const both = listQuery({ status: 'announced', subscriptionAt, gmpAt: subscriptionAt, limit: 2, offset: 1 });
      expect(asAsked(await store.listIpos(both), both)).toEqual(referenceList(ipos, both, [], series));
    }
  });

  check('subscriptionSeries: bounds inclusive, ascending, one IPO only, [] for none', async (store) => {
    expect(await store.writeDataset({ ipos: [x, y], snapshots: [makeSnapshot('x1', t + 2 * HOUR, { a: 1 })], subscription: [...series].reverse() })).toEqual([]);
    const read = (ipoId: string, from: number, to: number) => store.subscriptionSeries({ ipoId, from, to });
    expect((await read('x1', 0, FAR_FUTURE)).map((s) => s.timestamp)).toEqual([Date.UTC(2000, 0, 1), t, t + HOUR, t + DAY]);
    expect(await read('x1', t, t + HOUR)).toEqual(ofX(t, t + HOUR));
    expect((await read('x1', t, t + HOUR)).length).toBe(2);
    expect(await read('x1', t + 1, t + HOUR - 1)).toEqual([]);
    expect(await read('x1', t + HOUR, t + HOUR)).toEqual([series[1]]);
    expect(await read('y1', 0, FAR_FUTURE)).toEqual([series[4]]);
    expect(await read('X1', 0, FAR_FUTURE)).toEqual([]); // an id, not an identifier
    expect(await read('nope', 0, FAR_FUTURE)).toEqual([]);
    expect(await read('x1', t + HOUR, t)).toEqual([]);
  });

  check('deleteIpos removes the IPO\'s subscription snapshots (counting GMP snapshots only), and its id takes no more', async (store) => {
    const gmp = [makeSnapshot('x1', t, { a: 1 })];
    expect(await store.writeDataset({ ipos: [x, y], snapshots: gmp, subscription: series })).toEqual([]);
    expect(await store.deleteIpos(['x1'])).toEqual({ ipos: 1, snapshots: 1 });
    await expectContents(store, { ipos: [y], snapshots: [], subscription: series.filter((s) => s.ipoId === 'y1') }, ['x1']);
    expect(await store.writeDataset({ ipos: [], snapshots: [], subscription: [makeSubscription('x1', t, { total: 1 })] })).toEqual([
      { kind: 'unknown-ipo-subscription', snapshot: 0 },
    ]);
    // An IPO written again with the deleted id starts without subscription snapshots.
    expect(await store.writeDataset({ ipos: [x], snapshots: [] })).toEqual([]);
    expect(await store.subscriptionSeries({ ipoId: 'x1', from: 0, to: FAR_FUTURE })).toEqual([]);
    expect(await store.deleteIpos(['y1'])).toEqual({ ipos: 1, snapshots: 0 });
    await expectContents(store, { ipos: [x], snapshots: [], subscription: [] }, ['y1']);
  });

  check('a concurrent reader sees all of a write or none of it, subscription included', async (store) => {
    const ipos = Array.from({ length: 20 }, (_, i) => makeIpo({ id: `n${String(i).padStart(2, '0')}`, name: `N${i}` }));
    const subscription = ipos.map((ipo, i) => makeSubscription(ipo.id, Date.UTC(2026, 10, 1) + i, { total: i }));
    const query = listQuery({ status: 'announced', subscriptionAt: FAR_FUTURE });
    const read = () => store.listIpos(query);
    const [before, , during1, during2] = await Promise.all([read(), store.writeDataset({ ipos, snapshots: [], subscription }), read(), read()]);
    const after = asAsked(await read(), query);
    expect(after).toEqual(referenceList(ipos, query, [], subscription));
    for (const seen of [before, during1, during2]) {
      expect([0, 20]).toContain(seen.count);
      if (seen.count === 20) expect(asAsked(seen, query)).toEqual(after);
      else expect(seen.rows).toEqual([]);
    }
  });

  it(
    'agrees with the reference store on random writes, deletions, subscriptionAt and series (property)',
    async () => {
      const arb = datasetArbitrary({ maxIpos: 12, maxSnapshots: 10, maxSubscription: 40 }).chain((dataset) => {
        const ids = dataset.ipos.map((i) => i.id);
        const id = ids.length === 0 ? ipoIdArbitrary() : fc.oneof(fc.constantFrom(...ids), ipoIdArbitrary());
        const own = (dataset.subscription ?? []).map((s) => s.timestamp);
        const at = own.length === 0 ? instantArbitrary() : fc.oneof(fc.tuple(fc.constantFrom(...own), fc.constantFrom(0, -1, 1)).map(([v, d]) => v + d), instantArbitrary());
        const step = fc.oneof(
          { weight: 3, arbitrary: fc.record({ kind: fc.constant('series' as const), ipoId: id, a: at, b: at }) },
          { weight: 2, arbitrary: fc.record({ kind: fc.constant('find' as const), identifier: id, at }) },
          { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), ids: fc.array(id, { maxLength: 2 }) }) },
          {
            weight: 2,
            arbitrary: fc.record({ kind: fc.constant('write' as const), subscription: fc.array(fc.record({ ipoId: id, timestamp: at, total: fc.option(fc.integer({ min: 0, max: 99_999 }), { nil: null }) }), { maxLength: 3 }) }),
          },
        );
        return fc.tuple(fc.constant(dataset), fc.array(step, { minLength: 1, maxLength: 12 }));
      });
      await fc.assert(
        fc.asyncProperty(arb, async ([dataset, steps]) => {
          await withStore(async (store) => {
            const model = referenceStore();
            expect(await store.writeDataset(dataset)).toEqual(await model.writeDataset(dataset));
            for (const step of steps) {
              const label = JSON.stringify(step);
              if (step.kind === 'series') {
                const query = { ipoId: step.ipoId, from: Math.min(step.a, step.b), to: Math.max(step.a, step.b) };
                expect(await store.subscriptionSeries(query), label).toEqual(await model.subscriptionSeries(query));
              } else if (step.kind === 'find') {
                const query = { identifier: step.identifier, gmpAt: null, subscriptionAt: step.at };
                const got = await store.findIpo(query);
                expect(got === null ? null : rowAsAsked(got, query), label).toEqual(await model.findIpo(query));
              } else if (step.kind === 'delete') {
                expect(await store.deleteIpos(step.ids), label).toEqual(await model.deleteIpos(step.ids));
              } else {
                // Unique by (ipoId, timestamp) within one write, as a checked dataset is.
                const byKey = new Map(step.subscription.map((s) => [`${s.ipoId}\u0000${s.timestamp}`, s]));
                const subscription = [...byKey.values()].map((s) => makeSubscription(s.ipoId, s.timestamp, { total: s.total === null ? null : s.total / 100 }));
                const input = { ipos: [], snapshots: [], subscription };
                expect(sortConflicts(await store.writeDataset(input)), label).toEqual(sortConflicts(await model.writeDataset(input)));
              }
            }
            for (const status of IPO_STATUSES) {
              const q = listQuery({ status, today: TODAY, subscriptionAt: FAR_FUTURE });
              expect(asAsked(await store.listIpos(q), q)).toEqual(await model.listIpos(q));
            }
          });
        }),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT,
  );
}

// ---------------------------------------------------------------------------------------
// listIpos: the filter q (docs/spec.md#list)

function qChecks(check: Check<IpoStore>, withStore: WithStore<IpoStore>): void {
  const upcoming = { startDate: '2026-11-25', endDate: '2026-11-27' };
  const ipos: IpoRecord[] = [
    makeIpo({ id: 'q1', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', ...upcoming, type: 'EQ', exchanges: ['nse'] }),
    makeIpo({ id: 'q2', name: 'Orbital Holdings', symbol: 'ORBH', ...upcoming, type: 'SME', exchanges: ['bse'] }),
    makeIpo({ id: 'q0', name: 'Zeta Foods', symbol: 'ZORB', startDate: '2026-11-22', endDate: '2026-11-26', type: 'EQ', exchanges: ['nse', 'bse'] }),
    makeIpo({ id: 'q3', name: 'Éclair Bakes', symbol: 'ECLAIR', ...upcoming, type: 'EQ' }),
    makeIpo({ id: 'q4', name: 'éclair foods', symbol: null, ...upcoming, type: 'DEBT' }),
    makeIpo({ id: 'q5', name: '100% Pure Oils', symbol: 'PURE_1', ...upcoming, type: 'EQ', exchanges: ['nse'] }),
    makeIpo({ id: 'q6', name: 'Back\\slash & Co', symbol: 'B&C', ...upcoming, type: 'SME' }),
    makeIpo({ id: 'q7', name: 'Kelvin Tools', symbol: 'KT1', ...upcoming, type: 'EQ' }),
    makeIpo({ id: 'q8', name: 'Smile \u{1F600} Ltd', symbol: 'SMILE', ...upcoming, type: 'EQ' }),
    makeIpo({ id: 'q9', name: 'Plain Name', symbol: 'PN', ...upcoming, type: 'EQ', exchanges: ['bse'] }),
    makeIpo({ id: 'a1', name: 'Orbit Listed', symbol: 'ORBL', startDate: '2026-10-01', endDate: '2026-10-03', listingDate: '2026-10-08', exchanges: ['nse'] }),
    makeIpo({ id: 'a2', name: 'Unannounced orbit', symbol: null, type: 'DEBT' }),
  ];
  const ids = async (store: IpoStore, over: Partial<ListQuery> & Pick<ListQuery, 'status'>): Promise<string[]> => {
    const query = listQuery(over);
    const got = await store.listIpos(query);
    const want = referenceList(ipos, query);
    expect(asAsked(got, query), JSON.stringify(query)).toEqual(want);
    return got.rows.map((r) => r.ipo.id);
  };

  check('keeps IPOs whose name or symbol contains q, ASCII case ignored, order unchanged', async (store) => {
    expect(await store.writeDataset({ ipos, snapshots: [] })).toEqual([]);
    expect(await ids(store, { status: 'upcoming' })).toEqual(['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7', 'q8', 'q9']);
    expect(await ids(store, { status: 'upcoming', q: 'orb' })).toEqual(['q0', 'q1', 'q2']); // q0 by symbol ZORB
    expect(await ids(store, { status: 'upcoming', q: 'ORBIT' })).toEqual(['q1', 'q2']); // q2 by name Orbital
    expect(await ids(store, { status: 'upcoming', q: 'oRbIt aErOsPaCe lTd' })).toEqual(['q1']);
    expect(await ids(store, { status: 'upcoming', q: 'orbh' })).toEqual(['q2']);
    expect(await ids(store, { status: 'upcoming', q: 'aerospace ltd ' })).toEqual([]); // no trimming
    expect(await ids(store, { status: 'upcoming', q: 'foods' })).toEqual(['q0', 'q4']);
    expect(await ids(store, { status: 'upcoming', q: '\u{1F600}' })).toEqual(['q8']);
    expect(await ids(store, { status: 'upcoming', q: 'smile \u{1F600} ltd' })).toEqual(['q8']);
    expect(await ids(store, { status: 'upcoming', q: 'nothing here' })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: null })).toEqual(['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7', 'q8', 'q9']);
  });

  check('folds ASCII case only: É is not é, the Kelvin sign is not k', async (store) => {
    expect(await store.writeDataset({ ipos, snapshots: [] })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: 'éclair' })).toEqual(['q4']);
    expect(await ids(store, { status: 'upcoming', q: 'ÉCLAIR' })).toEqual(['q3']);
    expect(await ids(store, { status: 'upcoming', q: 'Éclair' })).toEqual(['q3']);
    expect(await ids(store, { status: 'upcoming', q: 'eclair' })).toEqual(['q3']); // by symbol ECLAIR
    expect(await ids(store, { status: 'upcoming', q: 'clair' })).toEqual(['q3', 'q4']);
    expect(await ids(store, { status: 'upcoming', q: '\u212Aelvin' })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: 'kelvin' })).toEqual(['q7']);
    expect(await ids(store, { status: 'upcoming', q: '\u017Fmile' })).toEqual([]); // long s
  });

  check('%, _ and \\ are literal characters, not wildcards or escapes', async (store) => {
    expect(await store.writeDataset({ ipos, snapshots: [] })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: '%' })).toEqual(['q5']);
    expect(await ids(store, { status: 'upcoming', q: '100%' })).toEqual(['q5']);
    expect(await ids(store, { status: 'upcoming', q: '1%0' })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: '%pure' })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: '_' })).toEqual(['q5']);
    expect(await ids(store, { status: 'upcoming', q: 'pure_1' })).toEqual(['q5']);
    expect(await ids(store, { status: 'upcoming', q: 'pure_' })).toEqual(['q5']);
    expect(await ids(store, { status: 'upcoming', q: 'o_bit' })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: 'z_ta' })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: '\\' })).toEqual(['q6']);
    expect(await ids(store, { status: 'upcoming', q: 'k\\s' })).toEqual(['q6']);
    expect(await ids(store, { status: 'upcoming', q: '\\s' })).toEqual(['q6']);
    expect(await ids(store, { status: 'upcoming', q: '\\%' })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: '\\_' })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: "'" })).toEqual([]);
  });

  check('combines with status, type, source and date filters; count honours it; pages cut the filtered list', async (store) => {
    expect(await store.writeDataset({ ipos, snapshots: [] })).toEqual([]);
    expect(await ids(store, { status: 'upcoming', q: 'orb', types: ['EQ'] })).toEqual(['q0', 'q1']);
    expect(await ids(store, { status: 'upcoming', q: 'orb', source: 'bse' })).toEqual(['q0', 'q2']);
    expect(await ids(store, { status: 'upcoming', q: 'orb', startDate: '2026-11-23' })).toEqual(['q1', 'q2']);
    expect(await ids(store, { status: 'upcoming', q: 'orb', endDate: '2026-11-26' })).toEqual(['q0']);
    expect(await ids(store, { status: 'upcoming', q: 'orb', year: '2027' })).toEqual([]);
    expect(await ids(store, { status: 'listed', q: 'orb' })).toEqual(['a1']);
    expect(await ids(store, { status: 'announced', q: 'ORBIT' })).toEqual(['a2']);
    const query = listQuery({ status: 'upcoming', q: 'o', offset: 1, limit: 2 });
    const page = await store.listIpos(query);
    expect(asAsked(page, query)).toEqual(referenceList(ipos, query));
    expect(page.count).toBe(referenceList(ipos, listQuery({ status: 'upcoming', q: 'o' })).count);
    expect(page.count).toBeLessThan(10);
    expect((await store.listIpos(listQuery({ status: 'upcoming', q: 'orb', offset: 5 }))).count).toBe(3);
  });

  check('q with gmpAt and subscriptionAt: the rows kept carry both', async (store) => {
    const snapshots = [makeSnapshot('q1', T1, { a: 1 })];
    const subscription = [makeSubscription('q1', T1, { total: 2 }), makeSubscription('q2', T2, { qib: 1 })];
    expect(await store.writeDataset({ ipos, snapshots, subscription })).toEqual([]);
    const query = listQuery({ status: 'upcoming', q: 'ORBIT', gmpAt: FAR_FUTURE, subscriptionAt: T2 - 1 });
    expect(await store.listIpos(query)).toEqual(referenceList(ipos, query, snapshots, subscription));
    expect((await store.listIpos(query)).rows.map((r) => r.subscription?.timestamp ?? null)).toEqual([T1, null]);
  });

  it(
    'agrees with referenceList on random names, symbols and q (property)',
    async () => {
      const arb = datasetArbitrary({ maxIpos: 20, maxSnapshots: 0, maxSubscription: 0 }).chain((dataset) =>
        fc.tuple(fc.constant(dataset), fc.array(qArbitrary(dataset), { minLength: 1, maxLength: 8 })),
      );
      await fc.assert(
        fc.asyncProperty(arb, async ([dataset, qs]) => {
          await withStore(async (store) => {
            expect(await store.writeDataset(dataset)).toEqual([]);
            for (const q of qs) {
              for (const status of IPO_STATUSES) {
                const query = listQuery({ status, q });
                expect(asAsked(await store.listIpos(query), query), JSON.stringify(query)).toEqual(referenceList(dataset.ipos, query));
              }
            }
          });
        }),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT,
  );
}

// ---------------------------------------------------------------------------------------
// Fixtures and helpers

const T1 = Date.UTC(2026, 10, 18, 9, 30);
const T2 = T1 + 3 * HOUR;
const T3 = Date.UTC(2026, 10, 21);

/**
 * IPOs of every status on 2026-11-20 with ties on every sort key, ids whose code-point
 * order differs from locale order, names around U+FFFF, and null endDates among closed.
 */
function listFixture(): RecordDataset {
  const upcoming = { startDate: '2026-11-25', endDate: '2026-11-27', listingDate: '2026-12-02' };
  const ipos: IpoRecord[] = [
    makeIpo({ id: 'up_1', ...upcoming, type: 'EQ', exchanges: ['nse'] }),
    makeIpo({ id: 'upA', ...upcoming, type: 'DEBT', exchanges: [] }),
    makeIpo({ id: 'up-2', ...upcoming, type: 'EQ', exchanges: ['nse', 'bse'] }),
    makeIpo({ id: 'up.3', ...upcoming, type: 'SME', exchanges: ['bse'] }),
    makeIpo({ id: 'upa', ...upcoming, type: 'SME', exchanges: ['nse', 'bse'] }),
    makeIpo({ id: 'up9', startDate: '2026-11-21', type: 'SME', exchanges: ['bse'] }),
    makeIpo({ id: 'upz', startDate: '2027-01-05', endDate: '2027-01-07', type: 'DEBT', exchanges: ['nse'] }),

    makeIpo({ id: 'op1', startDate: '2026-11-18', endDate: '2026-11-20', type: 'EQ', exchanges: ['nse'] }),
    makeIpo({ id: 'OP2', startDate: '2026-11-18', endDate: '2026-11-22', type: 'SME', exchanges: ['bse'] }),
    makeIpo({ id: 'op0', startDate: '2026-11-20', type: 'EQ', exchanges: ['nse', 'bse'] }),
    makeIpo({ id: 'op3', startDate: '2026-11-19', endDate: '2026-11-21', listingDate: '2026-11-26', type: 'DEBT' }),

    makeIpo({ id: 'cl1', startDate: '2026-11-10', endDate: '2026-11-14', listingDate: '2026-11-21', exchanges: ['nse'] }),
    makeIpo({ id: 'cl3', startDate: '2026-11-12', endDate: '2026-11-14', type: 'SME', exchanges: ['bse'] }),
    makeIpo({ id: 'cl0', startDate: '2026-11-14', exchanges: ['nse', 'bse'] }),
    makeIpo({ id: 'cl2', startDate: '2026-11-13', type: 'DEBT' }),
    makeIpo({ id: 'cl4', startDate: '2026-11-11', endDate: '2026-11-19', exchanges: ['nse'] }),
    makeIpo({ id: 'cl5', startDate: '2025-12-30', type: 'SME', exchanges: ['bse'] }),

    makeIpo({ id: 'li1', startDate: '2026-10-01', endDate: '2026-10-03', listingDate: '2026-10-08', exchanges: ['nse'] }),
    makeIpo({ id: 'li3', startDate: '2026-10-02', endDate: '2026-10-03', listingDate: '2026-10-08', type: 'SME', exchanges: ['bse'] }),
    makeIpo({ id: 'Li2', startDate: '2026-11-10', endDate: '2026-11-12', listingDate: '2026-11-20', exchanges: ['nse', 'bse'] }),
    makeIpo({ id: 'li0', startDate: '2025-12-29', endDate: '2026-01-02', listingDate: '2026-01-07', type: 'DEBT' }),
    makeIpo({ id: 'li4', startDate: '2026-09-01', listingDate: '2026-09-01', exchanges: ['nse'] }),

    makeIpo({ id: 'an1', name: '\u{1F600} smile', exchanges: ['nse'] }),
    makeIpo({ id: 'an2', name: '\uFFFD replacement', type: 'SME' }),
    makeIpo({ id: 'an3', name: '\uE000 private', exchanges: ['bse'] }),
    makeIpo({ id: 'an4', name: 'Zeta', exchanges: ['nse', 'bse'] }),
    makeIpo({ id: 'an6', name: 'Zeta', type: 'DEBT' }),
    makeIpo({ id: 'An8', name: 'Zeta', type: 'SME' }),
    makeIpo({ id: 'an5', name: 'alpha', type: 'DEBT' }),
    makeIpo({ id: 'an9', name: 'alpha\u{1F600}', exchanges: ['nse'] }),
    makeIpo({ id: 'anA', name: 'alpha\uFFFD' }),
    makeIpo({ id: 'an7', name: 'éclair' }),
  ];
  const snapshots = [
    makeSnapshot('up9', T1, { a: 100 }),
    makeSnapshot('up9', T2, { a: 200, b: 250 }),
    makeSnapshot('up9', T3, { a: 300 }),
    makeSnapshot('op1', T3, { a: 1 }),
    makeSnapshot('cl1', T2, { x: -50 }),
    makeSnapshot('an1', T1, {}),
  ];
  return { ipos, snapshots };
}

/** An IPO with every field set, Unicode above U+FFFF, and same-day schedule events out of name order. */
function richIpo(): IpoRecord {
  return makeIpo({
    id: 'Rich.IPO_1-x',
    name: 'Rich \u{1F600} Ltd — "quoted" \\ back\'slash %_',
    symbol: 'RICH&CO.X-1_',
    slug: 'rich-ipo-1',
    type: 'SME',
    exchanges: ['nse', 'bse'],
    infoUrl: 'https://example.com/ipo/rich?x=1&y=%20',
    nseInfoUrl: 'https://nse.test/rich',
    prospectusUrl: 'https://example.com/rich.pdf',
    logo: 'https://example.com/\u{1F600}.png',
    startDate: '2026-11-20',
    endDate: '2026-11-24',
    listingDate: '2026-11-27',
    priceRange: '95.5-100',
    minQty: 2_147_483_647,
    minAmount: 0,
    issueSize: '1,200.5cr',
    listingGain: '-2.75',
    schedule: [
      { event: 'Open', date: '2026-11-20' },
      { event: 'Zeta event', date: '2026-11-24' },
      { event: 'Alpha event', date: '2026-11-24' },
      { event: 'Listing \u{10000}', date: '2026-11-27' },
    ],
    about: 'Line one\nLine two\t\u00e9\u{1F600}',
    strengths: ['b', 'a', 'a', '\uE000'],
    risks: ['\u{1F600}'],
    mediaCoverageLinks: ['https://news.test/2', 'https://news.test/1'],
    registrar: 'Registrar \u{1F600} Pvt "Ltd"',
    leadManagers: ['Zeta Capital', 'Alpha \u{10000} Securities', 'Zeta Capital'],
    marketMaker: 'Maker \\ & Co',
    sector: '\uE000 Sector',
    listingPrices: [
      { exchange: 'nse', open: 101.25, high: 9_999_999.99, low: 0, close: 0.01 },
      { exchange: 'bse', open: 100.1, high: 105.55, low: 99.95, close: 105.55 },
    ],
  });
}

/** An IPO with only the required fields. */
function minimalIpo(): IpoRecord {
  return makeIpo({ id: '0', name: 'x', slug: '0' });
}

function listQuery(over: Partial<ListQuery> & Pick<ListQuery, 'status'>): ListQuery {
  return { today: TODAY, types: null, source: null, startDate: null, endDate: null, year: null, offset: 0, limit: 1000, gmpAt: null, ...over };
}

/** Rows without `gmp`: without a gmpAt the contract leaves it unspecified. */
function withoutRowGmp(result: { count: number; rows: IpoRow[] }): { count: number; rows: IpoRow[] } {
  return { count: result.count, rows: result.rows.map((r) => ({ ipo: r.ipo })) };
}

function withoutGmp(row: IpoRow | null): IpoRow | null {
  return row === null ? null : { ipo: row.ipo };
}

/**
 * Checks that the store holds exactly `expected`: every status list (with each IPO's
 * latest snapshot, and its latest subscription snapshot), every snapshot as the latest one
 * at its own instant, and the buckets and subscription series of every IPO (also of
 * `absentIds`, which must have none). No `subscription` in `expected` means none stored.
 */
async function expectContents(store: IpoStore, expected: RecordDataset, absentIds: string[] = []): Promise<void> {
  const { ipos, snapshots } = expected;
  const subscription = expected.subscription ?? [];
  for (const status of IPO_STATUSES) {
    const query = listQuery({ status, subscriptionAt: FAR_FUTURE });
    expect(asAsked(await store.listIpos(query), query), `${status} with subscriptionAt`).toEqual(referenceList(ipos, query, snapshots, subscription));
  }
  for (const s of subscription) {
    const query = { identifier: s.ipoId, gmpAt: null, subscriptionAt: s.timestamp };
    const got = await store.findIpo(query);
    expect(got === null ? null : rowAsAsked(got, query)).toEqual(referenceFind(ipos, s.ipoId, null, snapshots, s.timestamp, subscription));
  }
  for (const ipoId of unique([...ipos.map((i) => i.id), ...absentIds])) {
    const query = { ipoId, from: 0, to: FAR_FUTURE };
    expect(await store.subscriptionSeries(query), `subscription of ${ipoId}`).toEqual(referenceSubscriptionSeries(subscription, query));
  }
  for (const status of IPO_STATUSES) {
    const query = listQuery({ status, gmpAt: FAR_FUTURE });
    expect(await store.listIpos(query), status).toEqual(referenceList(ipos, query, snapshots));
  }
  for (const s of snapshots) {
    expect(await store.findIpo({ identifier: s.ipoId, gmpAt: s.timestamp })).toEqual(referenceFind(ipos, s.ipoId, s.timestamp, snapshots));
  }
  for (const ipoId of unique([...ipos.map((i) => i.id), ...absentIds])) {
    for (const field of ['mean', 'min'] as const) {
      const query: GmpBucketQuery = { ipoId, field, from: 0, to: FAR_FUTURE, ...FIVE_MIN };
      expect(exactBuckets(await store.gmpBuckets(query)), ipoId).toEqual(exactBuckets(referenceBuckets(snapshots, query)));
    }
  }
}

/** Everything observable about the IPOs and the snapshots of `ipoIds`. */
async function everything(
  store: IpoStore,
  ipoIds: string[],
): Promise<{ lists: Array<{ count: number; rows: IpoRow[] }>; buckets: Array<Array<{ start: number; sum: bigint; count: number }>> }> {
  const lists: Array<{ count: number; rows: IpoRow[] }> = [];
  for (const status of IPO_STATUSES) lists.push(await store.listIpos(listQuery({ status, gmpAt: FAR_FUTURE })));
  const buckets: Array<Array<{ start: number; sum: bigint; count: number }>> = [];
  for (const ipoId of ipoIds) {
    for (const field of FIELDS) buckets.push(exactBuckets(await store.gmpBuckets({ ipoId, field, from: 0, to: FAR_FUTURE, ...FIVE_MIN })));
  }
  return { lists, buckets };
}

/**
 * Buckets with their sums as bigints, after checking that each sum is exact: a bigint,
 * or a number within the safe-integer range.
 */
function exactBuckets(buckets: readonly GmpBucket[]): Array<{ start: number; sum: bigint; count: number }> {
  return buckets.map((b) => {
    if (typeof b.sum === 'number') expect(Number.isSafeInteger(b.sum), `sum ${b.sum} is not a safe integer`).toBe(true);
    return { start: b.start, sum: BigInt(b.sum), count: b.count };
  });
}

function sortConflicts(conflicts: readonly DatasetConflict[]): DatasetConflict[] {
  const key = (c: DatasetConflict) => JSON.stringify(c);
  return [...conflicts].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function apiKey(id: string, accountId: string, createdAt = '2026-11-20T10:00:00.000Z', expiresAt: string | null = null): ApiKeyRecord {
  return { id, accountId, hash: hashOf(id), prefix: `ipk_${id}`.slice(0, 12).padEnd(12, '0'), label: `label ${id} \u{1F600}`, createdAt, revokedAt: null, expiresAt, lastUsedAt: null, rotatedFrom: null };
}

/** The instant the account checks count active keys at, unless they say otherwise. */
const KEY_NOW = '2026-11-20T12:00:00.000Z';

function hashOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function editChar(c: string, edit: 'keep' | 'swap' | 'lookalike'): string {
  if (edit === 'keep') return c;
  if (edit === 'lookalike') return c === 'k' || c === 'K' ? '\u212A' : c === 's' || c === 'S' ? '\u017F' : c;
  if (c >= 'a' && c <= 'z') return c.toUpperCase();
  if (c >= 'A' && c <= 'Z') return c.toLowerCase();
  return c;
}

/** Usually null; else a random date or one of the dataset's own dates (to hit bounds exactly). */
function filterDateArbitrary(dataset: RecordDataset): fc.Arbitrary<string | null> {
  const own = dataset.ipos.flatMap((i) => [i.startDate, i.endDate, i.listingDate]).filter((d): d is string => d !== null);
  const some = own.length > 0 ? fc.oneof(isoDateArbitrary(), fc.constantFrom(...own)) : isoDateArbitrary();
  return fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: some });
}

/** An instant near or exactly at one of the dataset's snapshots, or anywhere. */
function boundaryArbitrary(dataset: RecordDataset): fc.Arbitrary<number> {
  const own = dataset.snapshots.map((s) => s.timestamp);
  if (own.length === 0) return instantArbitrary();
  return fc.oneof(fc.tuple(fc.constantFrom(...own), fc.constantFrom(0, -1, 1, 0)).map(([t, d]) => t + d), instantArbitrary());
}

/** null, or an instant that is often exactly a snapshot's timestamp. */
function gmpAtArbitrary(dataset: RecordDataset): fc.Arbitrary<number | null> {
  return fc.oneof({ weight: 2, arbitrary: boundaryArbitrary(dataset) }, { weight: 1, arbitrary: fc.constant(null) });
}

/** A day around the dataset's dates, often one of them. */
function todayArbitrary(dataset: RecordDataset): fc.Arbitrary<string> {
  const own = dataset.ipos.flatMap((i) => [i.startDate, i.endDate, i.listingDate]).filter((d): d is string => d !== null);
  return fc.oneof(isoDateArbitrary({ firstDay: addDays(ARBITRARY_FIRST_DAY, -3), days: ARBITRARY_DAYS + 10 }), fc.constantFrom(TODAY, ...own));
}

/** A random list query whose filters often fall on the dataset's own dates and instants. */
function listQueryArbitrary(dataset: RecordDataset): fc.Arbitrary<ListQuery> {
  const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
  return fc.record({
    status: fc.constantFrom(...IPO_STATUSES),
    today: todayArbitrary(dataset),
    types: rarely(fc.subarray<IpoType>(['EQ', 'SME', 'DEBT'], { minLength: 1 })),
    source: rarely(fc.constantFrom<Exchange>('nse', 'bse')),
    startDate: filterDateArbitrary(dataset),
    endDate: filterDateArbitrary(dataset),
    year: rarely(fc.constantFrom('2025', '2026', '2027')),
    offset: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 45 }) },
      { weight: 1, arbitrary: fc.constantFrom(2 ** 32 + 1, 2 ** 31, 1e11) },
    ),
    limit: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 50 })),
    gmpAt: gmpAtArbitrary(dataset),
    q: qArbitrary(dataset),
    subscriptionAt: subscriptionAtArbitrary(dataset),
  });
}

/**
 * Usually null; else a piece of an IPO's name or symbol (whole code points) with some ASCII
 * case swapped or a non-ASCII case variant, or a short text of letters and LIKE wildcards.
 */
function qArbitrary(dataset: RecordDataset): fc.Arbitrary<string | null> {
  const texts = dataset.ipos.flatMap((i) => [i.name, ...(i.symbol === null ? [] : [i.symbol])]);
  const wild = fc.string({ unit: fc.constantFrom('a', 'B', 'k', 'é', 'É', '%', '_', '\\', '\u212A', '\u{1F600}'), minLength: 1, maxLength: 3 });
  const piece =
    texts.length === 0
      ? wild
      : fc
          .tuple(fc.constantFrom(...texts), fc.nat(), fc.nat(), fc.array(fc.constantFrom<'keep' | 'swap' | 'lookalike'>('keep', 'swap', 'lookalike'), { minLength: 4, maxLength: 4 }))
          .map(([text, a, b, edits]) => {
            const chars = [...text];
            const start = a % chars.length;
            const end = start + 1 + (b % (chars.length - start));
            return chars
              .slice(start, end)
              .map((c, i) => (c === 'é' && edits[i % 4] === 'lookalike' ? 'É' : editChar(c, edits[i % 4] ?? 'keep')))
              .join('');
          });
  return fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: piece }, { weight: 1, arbitrary: wild });
}

/** null, or an instant that is often exactly a subscription snapshot's timestamp. */
function subscriptionAtArbitrary(dataset: RecordDataset): fc.Arbitrary<number | null> {
  const own = (dataset.subscription ?? []).map((s) => s.timestamp);
  const near = own.length === 0 ? instantArbitrary() : fc.oneof(fc.tuple(fc.constantFrom(...own), fc.constantFrom(0, -1, 1)).map(([t, d]) => t + d), instantArbitrary());
  return fc.oneof({ weight: 2, arbitrary: near }, { weight: 1, arbitrary: fc.constant(null) });
}

/** A row with `gmp` only when `gmpAt` was a number and `subscription` only when `subscriptionAt` was: what the contract specifies. */
function rowAsAsked(row: IpoRow, q: { gmpAt: number | null; subscriptionAt?: number | null }): IpoRow {
  const out: IpoRow = { ipo: row.ipo };
  if (q.gmpAt !== null) out.gmp = row.gmp;
  if (typeof q.subscriptionAt === 'number') out.subscription = row.subscription;
  return out;
}

/** {@link rowAsAsked} of every row. */
function asAsked(result: { count: number; rows: IpoRow[] }, q: ListQuery): { count: number; rows: IpoRow[] } {
  return { count: result.count, rows: result.rows.map((r) => rowAsAsked(r, q)) };
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
