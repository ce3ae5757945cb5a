import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createDatasetChecker, MAX_DATASET_PROBLEMS, validateDataset, type DatasetItem, type DatasetRecords } from './dataset.js';
import { IpokitError } from '../model/errors.js';
import { fullTimes } from '../model/subscription.js';
import { datasetArbitrary, makeIpo, makeSnapshot, toDataset } from '@ipokit/testing';
import { SUBSCRIPTION_CATEGORIES, type IpoRecord, type SnapshotRecord, type SubscriptionRecord } from '../model/types.js';

// The streaming checker must say exactly what validateDataset says about the same data,
// whatever order a file gives the top-level keys in.

type Outcome = { ok: DatasetRecords } | { code: string; message: string; problems: unknown; problemCount: number | undefined };

function outcome(run: () => DatasetRecords): Outcome {
  try {
    return { ok: run() };
  } catch (err) {
    if (!(err instanceof IpokitError)) throw err;
    return { code: err.code, message: err.message, problems: err.problems, problemCount: err.problemCount };
  }
}

/** The items a streaming reader meets in a JSON file written with these top-level entries, in order. */
function* itemsOf(entries: ReadonlyArray<readonly [string, unknown]>): Generator<DatasetItem> {
  for (const [key, value] of entries) {
    yield { kind: 'key', key };
    if (key !== 'ipos' && key !== 'gmp' && key !== 'subscription') continue;
    yield { kind: 'value', key, value: Array.isArray(value) ? [] : value };
    if (!Array.isArray(value)) continue;
    const kind = key === 'ipos' ? 'ipo' : key === 'gmp' ? 'snapshot' : 'subscription';
    for (let index = 0; index < value.length; index++) yield { kind, index, value: value[index] };
  }
}

/** Feeds the checker item by item, keeping the records it returns, as a streaming import would. */
function streamed(items: Iterable<DatasetItem>): DatasetRecords {
  const checker = createDatasetChecker();
  const ipos: IpoRecord[] = [];
  const snapshots: SnapshotRecord[] = [];
  const subscription: SubscriptionRecord[] = [];
  for (const item of items) {
    const record = checker.feed(item);
    if (record === null) continue;
    if (item.kind === 'ipo') ipos.push(record as IpoRecord);
    else if (item.kind === 'snapshot') snapshots.push(record as SnapshotRecord);
    else subscription.push(record as SubscriptionRecord);
  }
  const counts = checker.finish();
  expect(counts).toEqual({ ipos: ipos.length, snapshots: snapshots.length, subscription: subscription.length });
  return { ipos, snapshots, subscription };
}

/** The JSON text of these entries, as a file would hold them (keys in this order). */
function jsonText(entries: ReadonlyArray<readonly [string, unknown]>): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
}

const TS = '2026-11-18T09:30:00.000Z';
const MINIMAL = { id: 'a1', name: 'Acme', slug: 'acme', type: 'EQ' };

const value = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', 'nse', 'bse', 'EQ', '2026-02-30', '2026-12-01', '1-2', '\uD800', 'a\u0000', 1.005, 1e7, 'a1', 'b2', TS, '2026-11-18T15:00:00+05:30'),
  },
);
const ipo = fc.oneof(
  { weight: 3, arbitrary: fc.dictionary(fc.constantFrom('id', 'name', 'symbol', 'slug', 'type', 'exchanges', 'startDate', 'endDate', 'typo'), value) },
  { weight: 2, arbitrary: fc.record({ id: fc.constantFrom('a1', 'b2', 'A1'), name: fc.constant('n'), symbol: fc.constantFrom('S', 's', null), slug: fc.constantFrom('x', 'y'), type: fc.constant('EQ') }) },
  { weight: 1, arbitrary: value },
);
const snapshot = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        ipoId: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('a1', 'b2', 'c3') }, { weight: 1, arbitrary: value }),
        timestamp: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(TS, '2026-11-18T15:00:00+05:30', '2026-11-18T10:00:00Z', '2026-11-19T10:00:00.5Z') }, { weight: 1, arbitrary: value }),
        sources: fc.oneof(fc.constant([]), fc.array(fc.dictionary(fc.constantFrom('name', 'gmpPrice', 'x'), value), { maxLength: 3 }), value),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: value },
);
const times = fc.oneof(
  { weight: 5, arbitrary: fc.dictionary(fc.constantFrom(...SUBSCRIPTION_CATEGORIES, 'x', 'QIB'), fc.oneof(fc.constantFrom(0, 1.5, 12.25, null, -0, -1, 1.005, 1e7, 9_999_999.99), value), { maxKeys: 4 }) },
  { weight: 1, arbitrary: value },
);
const subscriptionSnapshot = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        ipoId: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('a1', 'b2', 'c3') }, { weight: 1, arbitrary: value }),
        timestamp: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(TS, '2026-11-18T15:00:00+05:30', '2026-11-18T10:00:00Z') }, { weight: 1, arbitrary: value }),
        times,
        x: value,
      },
      { requiredKeys: ['ipoId', 'timestamp'] },
    ),
  },
  { weight: 1, arbitrary: value },
);
/** Top-level entries in file order, unique keys (a repeated key is a separate rule). */
const entries = fc.uniqueArray(
  fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constant('ipos'), fc.oneof({ weight: 5, arbitrary: fc.array(ipo, { maxLength: 20 }) }, { weight: 1, arbitrary: value })) },
    { weight: 4, arbitrary: fc.tuple(fc.constant('gmp'), fc.oneof({ weight: 5, arbitrary: fc.array(snapshot, { maxLength: 40 }) }, { weight: 1, arbitrary: value })) },
    {
      weight: 4,
      arbitrary: fc.tuple(fc.constant('subscription'), fc.oneof({ weight: 5, arbitrary: fc.array(subscriptionSnapshot, { maxLength: 30 }) }, { weight: 1, arbitrary: value })),
    },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom('x', '1', '0', '10', '007', '4294967294', '4294967295', '__proto__', 'ipos ', 'GMP'), value) },
  ),
  { selector: ([k]) => k, maxLength: 6 },
);

/**
 * Valid subscription snapshots of these IPOs, as a dataset gives them (some categories, any
 * offset), with the records `validateDataset` makes of them: (ipoId, instant) unique.
 */
function subscriptionArbitrary(ipoIds: readonly string[]): fc.Arbitrary<Array<{ given: unknown; record: SubscriptionRecord }>> {
  if (ipoIds.length === 0) return fc.constant([]);
  const category = fc.constantFrom(...SUBSCRIPTION_CATEGORIES);
  const one = fc.record({
    ipoId: fc.constantFrom(...ipoIds),
    minute: fc.integer({ min: 0, max: 600 }),
    offset: fc.constantFrom(0, 330, -90),
    times: fc
      .uniqueArray(fc.tuple(category, fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 999_999_999 }).map((n) => n / 100))), { minLength: 1, maxLength: 8, selector: ([c]) => c })
      .map((list) => Object.fromEntries(list) as Record<string, number | null>),
  });
  return fc.uniqueArray(one, { maxLength: 30, selector: (s) => `${s.ipoId} ${s.minute}` }).map((list) =>
    list.map(({ ipoId, minute, offset, times: given }) => {
      const at = Date.UTC(2026, 10, 18) + minute * 60_000;
      return { given: { ipoId, timestamp: withOffset(at, offset), times: given }, record: { ipoId, timestamp: at, times: fullTimes(given) } };
    }),
  );
}

/** The instant `ms` written with an offset of `minutes` east of UTC. */
function withOffset(ms: number, minutes: number): string {
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, 19);
  if (minutes === 0) return `${local}Z`;
  const abs = Math.abs(minutes);
  return `${local}${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** Every order a file may give the three parts in. */
const PART_ORDERS = [
  ['ipos', 'gmp', 'subscription'],
  ['ipos', 'subscription', 'gmp'],
  ['gmp', 'ipos', 'subscription'],
  ['gmp', 'subscription', 'ipos'],
  ['subscription', 'ipos', 'gmp'],
  ['subscription', 'gmp', 'ipos'],
] as const;

describe('createDatasetChecker', () => {
  it('gives exactly validateDataset’s records or error, fed item by item in file order (property)', () => {
    fc.assert(
      fc.property(entries, (list) => {
        const parsed: unknown = JSON.parse(jsonText(list));
        const fed = outcome(() => streamed(itemsOf(list)));
        expect(fed).toEqual(outcome(() => validateDataset(parsed)));
      }),
      { numRuns: 1500 },
    );
  });

  it('gives exactly validateDataset’s records on valid generated datasets, the parts in any order (property)', () => {
    const arb = datasetArbitrary({ maxIpos: 12, maxSnapshots: 60 }).chain((records) =>
      fc.tuple(fc.constant(records), subscriptionArbitrary(records.ipos.map((i) => i.id)), fc.constantFrom(...PART_ORDERS)),
    );
    fc.assert(
      fc.property(arb, ([records, subscription, order]) => {
        const { ipos, gmp } = JSON.parse(JSON.stringify(toDataset(records))) as { ipos: unknown[]; gmp: unknown[] };
        const dataset: Record<string, unknown> = { ipos, gmp, subscription: subscription.map((s) => s.given) };
        const list = order.map((key) => [key, dataset[key]] as const);
        expect(streamed(itemsOf(list))).toEqual(validateDataset(dataset));
        expect(validateDataset(dataset)).toEqual({ ipos: records.ipos, snapshots: records.snapshots, subscription: subscription.map((s) => s.record) });
      }),
      { numRuns: 200 },
    );
  });

  it('finds duplicate snapshots in any order, reported in dataset order on the later one, naming the first (property)', () => {
    const keyed = fc.array(
      fc.oneof(
        { weight: 6, arbitrary: fc.record({ ipo: fc.integer({ min: 0, max: 3 }), minute: fc.integer({ min: 0, max: 6 }), bad: fc.boolean() }) },
        { weight: 1, arbitrary: fc.constant(null) },
      ),
      { maxLength: 80 },
    );
    fc.assert(
      fc.property(keyed, (list) => {
        const gmp = list.map((k) =>
          k === null
            ? 'not a snapshot'
            : { ipoId: `i${k.ipo}`, timestamp: new Date(Date.UTC(2026, 10, 1) + k.minute * 60_000).toISOString(), sources: k.bad ? 5 : [] },
        );
        // The reference: a Map of every (ipoId, instant) seen, as the rule reads.
        const expected: Array<{ path: string; message: string }> = [];
        const first = new Map<string, number>();
        list.forEach((k, index) => {
          if (k === null) {
            expected.push({ path: `gmp[${index}]`, message: 'a GMP snapshot must be an object with "ipoId", "timestamp" and "sources", got the string "not a snapshot"' });
            return;
          }
          const ts = new Date(Date.UTC(2026, 10, 1) + k.minute * 60_000).toISOString();
          if (k.bad) expected.push({ path: `gmp[${index}].sources`, message: 'sources must be an array of { "name", "gmpPrice" } objects, got the number 5' });
          const key = `i${k.ipo} ${ts}`;
          const earlier = first.get(key);
          if (earlier === undefined) first.set(key, index);
          else expected.push({ path: `gmp[${index}].timestamp`, message: `a snapshot of ipoId "i${k.ipo}" at ${ts} is already given by gmp[${earlier}]` });
        });
        const got = outcome(() => streamed(itemsOf([['gmp', gmp]])));
        if (expected.length === 0) expect(got).toHaveProperty('ok');
        else expect(got).toMatchObject({ code: 'ERR:DATASET', problems: expected, problemCount: expected.length });
      }),
      { numRuns: 500 },
    );
  });

  it(`keeps the first ${MAX_DATASET_PROBLEMS} of many duplicates merged with other problems, and counts them all`, () => {
    // 3,000 snapshots of 3 IPOs in descending time, the second 1,500 repeating the first:
    // each of those is a duplicate; every 7th record also has a bad source list.
    const gmp: unknown[] = [];
    for (let i = 0; i < 3000; i++) {
      const k = i % 1500;
      gmp.push({ ipoId: `i${k % 3}`, timestamp: new Date(Date.UTC(2026, 10, 1) + (1500 - k) * 60_000).toISOString(), sources: i % 7 === 0 ? 'x' : [] });
    }
    const err = outcome(() => streamed(itemsOf([['gmp', gmp], ['ipos', [5]]])));
    const expected = outcome(() => validateDataset({ ipos: [5], gmp }));
    expect(err).toEqual(expected);
    expect(err).toMatchObject({ code: 'ERR:DATASET' });
    if ('problems' in err) {
      expect(err.problems).toHaveLength(MAX_DATASET_PROBLEMS);
      expect((err.problems as Array<{ path: string }>)[0]?.path).toBe('ipos[0]');
      expect(err.problemCount).toBe(1 + Math.ceil(3000 / 7) + 1500);
      expect(err.problems).toContainEqual({ path: 'gmp[1501].timestamp', message: expect.stringMatching(/already given by gmp\[1\]$/) as unknown });
    }
  });

  it('reports a top-level key given twice, and an unknown one once however often it comes', () => {
    const checker = createDatasetChecker();
    for (const key of ['gmp', 'x', 'ipos', 'x', 'gmp', '2', '1']) checker.topLevelKey(key);
    expect(() => checker.finish()).toThrow(IpokitError);
    try {
      checker.finish();
    } catch (err) {
      expect((err as IpokitError).problems).toEqual([
        { path: '1', message: 'unknown top-level key "1": a dataset holds only "ipos", "gmp" and "subscription"' },
        { path: '2', message: 'unknown top-level key "2": a dataset holds only "ipos", "gmp" and "subscription"' },
        { path: 'x', message: 'unknown top-level key "x": a dataset holds only "ipos", "gmp" and "subscription"' },
        { path: 'gmp', message: 'the top-level key "gmp" is given more than once: a dataset holds one "gmp" array' },
      ]);
    }
  });

  it('refuses snapshots fed out of index order (a reader’s mistake, not the data’s)', () => {
    const checker = createDatasetChecker();
    checker.snapshot({ ipoId: 'a1', timestamp: TS, sources: [] }, 0);
    expect(() => checker.snapshot({ ipoId: 'a1', timestamp: TS, sources: [] }, 2)).toThrow(RangeError);
  });

  it('returns normalised records as it goes and counts them at the end', () => {
    const checker = createDatasetChecker();
    checker.topLevelKey('ipos');
    checker.topLevelValue('ipos', []);
    expect(checker.ipo({ ...MINIMAL, exchanges: ['bse', 'nse'] }, 0)).toEqual(makeIpo({ id: 'a1', name: 'Acme', slug: 'acme', exchanges: ['nse', 'bse'] }));
    expect(checker.snapshot({ ipoId: 'a1', timestamp: '2026-11-18T15:00:00+05:30', sources: [{ name: 'w', gmpPrice: 4.2 }] }, 0)).toEqual(
      makeSnapshot('a1', TS, { w: 420 }),
    );
    expect(checker.ipo({ ...MINIMAL, id: 'b1', slug: 'b1', type: 'X' }, 1)).toBeNull();
    expect(checker.problemCount).toBe(1);
    expect(() => checker.finish()).toThrow(/^The dataset has 1 problem, at ipos\[1\]\.type: type "X" is not one of "EQ", "SME" and "DEBT"\.$/);
  });

  it('keeps 12 bytes per snapshot, not a Map entry: 300,000 snapshots out of order check in little memory', () => {
    const gc = collector();
    const checker = createDatasetChecker();
    const sources: unknown[] = [];
    gc();
    const before = process.memoryUsage();
    // Interleaved IPOs, time descending within each: every IPO is out of order, so the
    // end sorts all of them; one duplicate at the very end.
    const n = 300_000;
    for (let i = 0; i < n; i++) {
      checker.snapshot({ ipoId: `I${i % 1000}`, timestamp: new Date(Date.UTC(2027, 0, 1) - Math.floor(i / 1000) * 60_000).toISOString(), sources }, i);
    }
    checker.snapshot({ ipoId: 'I7', timestamp: new Date(Date.UTC(2027, 0, 1)).toISOString(), sources }, n);
    gc();
    const after = process.memoryUsage();
    const perSnapshot = (after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers)) / n;
    // A Map per IPO of instant -> index took about 60 bytes a snapshot; this takes 12 and change.
    expect(perSnapshot).toBeLessThan(20);
    expect(() => checker.finish()).toThrow('The dataset has 1 problem, at gmp[300000].timestamp: a snapshot of ipoId "I7" at 2027-01-01T00:00:00.000Z is already given by gmp[7].');
  });
});

describe('createDatasetChecker: what a reader refused, and the store’s part', () => {
  const at = (ipoId: unknown, minute: number, more: object = {}) => ({
    ipoId,
    timestamp: new Date(Date.UTC(2026, 10, 18) + minute * 60_000).toISOString(),
    sources: [],
    ...more,
  });

  it('reports a value a reader refused at its place in dataset order, the record counted but not checked', () => {
    const checker = createDatasetChecker();
    const items: DatasetItem[] = [
      { kind: 'key', key: 'x' },
      { kind: 'refused', record: null, path: 'x', message: 'too deep' },
      { kind: 'key', key: 'gmp' },
      { kind: 'value', key: 'gmp', value: [] },
      { kind: 'snapshot', index: 0, value: at('a1', 1, { typo: 1 }) },
      { kind: 'refused', record: { part: 'gmp', index: 1 }, path: 'gmp[1].sources[0].gmpPrice', message: 'too long' },
      { kind: 'snapshot', index: 2, value: at('a1', 2) },
      { kind: 'key', key: 'ipos' },
      { kind: 'value', key: 'ipos', value: [] },
      { kind: 'refused', record: { part: 'ipos', index: 0 }, path: 'ipos[0].minQty', message: 'too long' },
      { kind: 'ipo', index: 1, value: { ...MINIMAL, type: 'X' } },
    ];
    for (const item of items) checker.feed(item);
    expect(checker.problemCount).toBe(6);
    expect(checker.hasProblems()).toBe(true);
    expect(() => checker.finish()).toThrow(IpokitError);
    try {
      checker.finish();
    } catch (err) {
      expect((err as IpokitError).problems).toEqual([
        { path: 'x', message: 'unknown top-level key "x": a dataset holds only "ipos", "gmp" and "subscription"' },
        { path: 'x', message: 'too deep' },
        { path: 'ipos[0].minQty', message: 'too long' },
        { path: 'ipos[1].type', message: 'type "X" is not one of "EQ", "SME" and "DEBT"' },
        { path: 'gmp[0].typo', message: 'unknown field "typo" in a GMP snapshot' },
        { path: 'gmp[1].sources[0].gmpPrice', message: 'too long' },
      ]);
    }
    // The IPO records could not all be read: which ids the dataset holds is not known.
    expect(checker.outsideIpoIds()).toEqual([]);
  });

  it('names the ipoIds no IPO of the dataset has, and reports the snapshots of those the store lacks in their places', () => {
    const checker = createDatasetChecker();
    checker.topLevelKey('gmp');
    checker.topLevelValue('gmp', []);
    const gmp = [at('ghost', 1), at('held', 2), at('a1', 3), at('b2', 4), at('ghost', 5, { sources: 5 }), at('ghost', 1), at('', 6), at('phantom', 7, { timestamp: null })];
    gmp.forEach((s, i) => checker.snapshot(s, i));
    checker.topLevelKey('ipos');
    checker.topLevelValue('ipos', []);
    checker.ipo(MINIMAL, 0);
    checker.ipo({ id: 'b2', name: 'n', slug: 'b2' }, 1);
    expect(checker.outsideIpoIds().sort()).toEqual(['ghost', 'held', 'phantom']);
    checker.unknownIpos(['ghost', 'phantom']);
    let problems: unknown;
    try {
      checker.finish();
    } catch (err) {
      problems = (err as IpokitError).problems;
      expect((err as IpokitError).problemCount).toBe(9);
    }
    const unknown = (i: number, id: string) => ({ path: `gmp[${i}].ipoId`, message: `ipoId "${id}" names no IPO in the dataset or the store` });
    expect(problems).toEqual([
      { path: 'ipos[1].type', message: 'type is required' },
      unknown(0, 'ghost'),
      { path: 'gmp[4].sources', message: 'sources must be an array of { "name", "gmpPrice" } objects, got the number 5' },
      unknown(4, 'ghost'),
      { path: 'gmp[5].timestamp', message: 'a snapshot of ipoId "ghost" at 2026-11-18T00:01:00.000Z is already given by gmp[0]' },
      unknown(5, 'ghost'),
      { path: 'gmp[6].ipoId', message: 'ipoId is an empty string' },
      { path: 'gmp[7].timestamp', message: 'timestamp is required' },
      unknown(7, 'phantom'),
    ]);
  });

  it('finds problems before finish(), duplicates included', () => {
    const checker = createDatasetChecker();
    checker.snapshot(at('a1', 2), 0);
    checker.snapshot(at('a1', 1), 1);
    expect(checker.hasProblems()).toBe(false);
    checker.snapshot(at('a1', 2), 2);
    expect(checker.problemCount).toBe(0);
    expect(checker.hasProblems()).toBe(true);
  });
});

describe('createDatasetChecker: subscription snapshots', () => {
  const sub = (ipoId: unknown, minute: number, more: object = {}) => ({
    ipoId,
    timestamp: new Date(Date.UTC(2026, 10, 18) + minute * 60_000).toISOString(),
    times: { total: 1 },
    ...more,
  });
  const gmpAt = (ipoId: string, minute: number) => ({ ipoId, timestamp: new Date(Date.UTC(2026, 10, 18) + minute * 60_000).toISOString(), sources: [] });

  it('returns the normalised record as it goes, in its own index order, and counts them at the end', () => {
    const checker = createDatasetChecker();
    checker.topLevelKey('subscription');
    checker.topLevelValue('subscription', []);
    expect(checker.subscription({ ipoId: 'a1', timestamp: '2026-11-18T15:00:00+05:30', times: { qib: 1.25, retail: null, total: 0 } }, 0)).toEqual({
      ipoId: 'a1',
      timestamp: Date.parse(TS),
      times: { qib: 1.25, nii: null, bnii: null, snii: null, retail: null, employee: null, shareholder: null, total: 0 },
    });
    // GMP snapshots count from 0 on their own.
    expect(checker.snapshot({ ipoId: 'a1', timestamp: TS, sources: [] }, 0)).not.toBeNull();
    expect(checker.subscription({ ipoId: 'a1', timestamp: TS, times: {} }, 1)).toBeNull();
    expect(() => checker.subscription(sub('a1', 1), 3)).toThrow(new RangeError('createDatasetChecker: snapshots are checked in order; expected subscription[2], got subscription[3]'));
    let problems: unknown;
    try {
      checker.finish();
    } catch (err) {
      problems = (err as IpokitError).problems;
    }
    expect(problems).toEqual([
      { path: 'subscription[1].times', message: expect.stringMatching(/^times gives no category/) as unknown },
      { path: 'subscription[1].timestamp', message: 'a subscription snapshot of ipoId "a1" at 2026-11-18T09:30:00.000Z is already given by subscription[0]' },
    ]);
    const valid = createDatasetChecker();
    valid.subscription(sub('a1', 1), 0);
    valid.subscription(sub('a1', 2), 1);
    expect(valid.finish()).toEqual({ ipos: 0, snapshots: 0, subscription: 2 });
  });

  it('finds duplicates within subscription only: a GMP snapshot at the same instant is no duplicate', () => {
    const checker = createDatasetChecker();
    [gmpAt('a1', 1), gmpAt('a1', 2)].forEach((s, i) => checker.snapshot(s, i));
    [sub('a1', 2), sub('a1', 1), sub('b2', 1), sub('a1', 2, { times: { qib: 3 } })].forEach((s, i) => checker.subscription(s, i));
    expect(checker.problemCount).toBe(0);
    expect(checker.hasProblems()).toBe(true);
    expect(outcome(() => streamed(itemsOf([['subscription', [sub('a1', 2), sub('a1', 1), sub('b2', 1), sub('a1', 2)]], ['gmp', [gmpAt('a1', 2)]]])))).toMatchObject({
      problems: [{ path: 'subscription[3].timestamp', message: 'a subscription snapshot of ipoId "a1" at 2026-11-18T00:02:00.000Z is already given by subscription[0]' }],
      problemCount: 1,
    });
  });

  it('finds duplicate subscription snapshots in any order, as the rule reads (property)', () => {
    const keyed = fc.array(fc.record({ ipo: fc.integer({ min: 0, max: 2 }), minute: fc.integer({ min: 0, max: 5 }), bad: fc.boolean() }), { maxLength: 60 });
    fc.assert(
      fc.property(keyed, (list) => {
        const subscription = list.map((k) => sub(`i${k.ipo}`, k.minute, k.bad ? { times: {} } : {}));
        const expected: Array<{ path: string; message: string }> = [];
        const first = new Map<string, number>();
        list.forEach((k, index) => {
          if (k.bad) expected.push({ path: `subscription[${index}].times`, message: expect.stringMatching(/^times gives no category/) as unknown as string });
          const key = `${k.ipo} ${k.minute}`;
          const earlier = first.get(key);
          if (earlier === undefined) first.set(key, index);
          else {
            const ts = new Date(Date.UTC(2026, 10, 18) + k.minute * 60_000).toISOString();
            expected.push({ path: `subscription[${index}].timestamp`, message: `a subscription snapshot of ipoId "i${k.ipo}" at ${ts} is already given by subscription[${earlier}]` });
          }
        });
        const got = outcome(() => streamed(itemsOf([['subscription', subscription]])));
        expect(got).toEqual(outcome(() => validateDataset({ subscription })));
        if (expected.length === 0) expect(got).toHaveProperty('ok');
        else expect(got).toMatchObject({ code: 'ERR:DATASET', problems: expected, problemCount: expected.length });
      }),
      { numRuns: 300 },
    );
  });

  it('places a refused subscription snapshot in its part, after the GMP snapshots’ problems', () => {
    const checker = createDatasetChecker();
    const items: DatasetItem[] = [
      { kind: 'key', key: 'subscription' },
      { kind: 'value', key: 'subscription', value: [] },
      { kind: 'refused', record: { part: 'subscription', index: 0 }, path: 'subscription[0].times.qib', message: 'too long' },
      { kind: 'subscription', index: 1, value: sub('a1', 1, { times: { qib: -1 } }) },
      { kind: 'key', key: 'gmp' },
      { kind: 'value', key: 'gmp', value: 5 },
      { kind: 'key', key: 'subscription' },
    ];
    for (const item of items) checker.feed(item);
    expect(() => checker.refused('x', 'y', { part: 'subscription', index: 5 })).toThrow(RangeError);
    let problems: unknown;
    try {
      checker.finish();
    } catch (err) {
      problems = (err as IpokitError).problems;
    }
    expect(problems).toEqual([
      { path: 'subscription', message: 'the top-level key "subscription" is given more than once: a dataset holds one "subscription" array' },
      { path: 'gmp', message: 'gmp must be an array of GMP snapshots, got the number 5' },
      { path: 'subscription[0].times.qib', message: 'too long' },
      { path: 'subscription[1].times.qib', message: 'times.qib -1 is negative' },
    ]);
    expect(checker.outsideIpoIds()).toEqual([]);
  });

  it('names the ipoIds of GMP and subscription snapshots alike, once each, and reports both parts’ snapshots of unknown IPOs', () => {
    const checker = createDatasetChecker();
    checker.ipo(MINIMAL, 0);
    [gmpAt('ghost', 1), gmpAt('a1', 1)].forEach((s, i) => checker.snapshot(s, i));
    [sub('a1', 1), sub('ghost', 1), sub('phantom', 2, { times: { total: 'x' } }), sub('ghost', 1)].forEach((s, i) => checker.subscription(s, i));
    expect(checker.outsideIpoIds().sort()).toEqual(['ghost', 'phantom']);
    checker.unknownIpos(['ghost', 'phantom']);
    let err: IpokitError | null = null;
    try {
      checker.finish();
    } catch (e) {
      err = e as IpokitError;
    }
    const unknown = (part: string, i: number, id: string) => ({ path: `${part}[${i}].ipoId`, message: `ipoId "${id}" names no IPO in the dataset or the store` });
    expect(err?.problems).toEqual([
      unknown('gmp', 0, 'ghost'),
      unknown('subscription', 1, 'ghost'),
      { path: 'subscription[2].times.total', message: 'times.total must be a number or null, got the string "x"' },
      unknown('subscription', 2, 'phantom'),
      { path: 'subscription[3].timestamp', message: 'a subscription snapshot of ipoId "ghost" at 2026-11-18T00:01:00.000Z is already given by subscription[1]' },
      unknown('subscription', 3, 'ghost'),
    ]);
    expect(err?.problemCount).toBe(6);
  });
});

describe('createDatasetChecker: what it keeps', () => {
  it('keeps its own copies of ids, symbols and slugs, not the larger text a parser cut them from', () => {
    const gc = collector();
    const checker = createDatasetChecker();
    gc();
    const before = process.memoryUsage().heapUsed;
    // Each record's strings are cut from a 200 kB block, as a streaming parser cuts values
    // from the text it read: 200 blocks kept alive would be 40 MB.
    for (let i = 0; i < 200; i++) {
      const block = `${'x'.repeat(100_000)}"id-${i}-abcdefghijkl","SYM${i}ABCDEFGHIJ","slug-${i}-abcdefghijkl","ipo-${i}-abcdefghijklmnop",${'y'.repeat(100_000)}`;
      const cut = (n: number) => block.slice(100_000).split(',')[n]!.slice(1, -1);
      expect(checker.ipo({ id: cut(0), name: 'n', symbol: cut(1), slug: cut(2), type: 'EQ' }, i)).not.toBeNull();
      checker.snapshot({ ipoId: cut(3), timestamp: TS, sources: [] }, i);
    }
    gc();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(4_000_000);
    expect(checker.finish()).toEqual({ ipos: 200, snapshots: 200, subscription: 0 });
  });
});

/** A full garbage collection on demand, without starting node with --expose-gc. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
