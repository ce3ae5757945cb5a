import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createDatasetChecker, MAX_DATASET_PROBLEMS, validateDataset, type DatasetItem } from './dataset.js';
import { IpokitError } from '../model/errors.js';
import { datasetArbitrary, makeIpo, makeSnapshot, toDataset } from '@ipokit/testing';
import type { IpoRecord, SnapshotRecord } from '../model/types.js';

// The streaming checker must say exactly what validateDataset says about the same data,
// whatever order a file gives the top-level keys in.

type Outcome =
  | { ok: { ipos: IpoRecord[]; snapshots: SnapshotRecord[] } }
  | { code: string; message: string; problems: unknown; problemCount: number | undefined };

function outcome(run: () => { ipos: IpoRecord[]; snapshots: SnapshotRecord[] }): Outcome {
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
    if (key !== 'ipos' && key !== 'gmp') continue;
    yield { kind: 'value', key, value: Array.isArray(value) ? [] : value };
    if (!Array.isArray(value)) continue;
    for (let index = 0; index < value.length; index++) {
      yield key === 'ipos' ? { kind: 'ipo', index, value: value[index] } : { kind: 'snapshot', index, value: value[index] };
    }
  }
}

/** Feeds the checker item by item, keeping the records it returns, as a streaming import would. */
function streamed(items: Iterable<DatasetItem>): { ipos: IpoRecord[]; snapshots: SnapshotRecord[] } {
  const checker = createDatasetChecker();
  const ipos: IpoRecord[] = [];
  const snapshots: SnapshotRecord[] = [];
  for (const item of items) {
    const record = checker.feed(item);
    if (record === null) continue;
    if (item.kind === 'ipo') ipos.push(record as IpoRecord);
    else snapshots.push(record as SnapshotRecord);
  }
  const counts = checker.finish();
  expect(counts).toEqual({ ipos: ipos.length, snapshots: snapshots.length });
  return { ipos, snapshots };
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
/** Top-level entries in file order, unique keys (a repeated key is a separate rule). */
const entries = fc.uniqueArray(
  fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constant('ipos'), fc.oneof({ weight: 5, arbitrary: fc.array(ipo, { maxLength: 20 }) }, { weight: 1, arbitrary: value })) },
    { weight: 4, arbitrary: fc.tuple(fc.constant('gmp'), fc.oneof({ weight: 5, arbitrary: fc.array(snapshot, { maxLength: 40 }) }, { weight: 1, arbitrary: value })) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom('x', '1', '0', '10', '007', '4294967294', '4294967295', '__proto__', 'ipos ', 'GMP'), value) },
  ),
  { selector: ([k]) => k, maxLength: 6 },
);

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

  it('gives exactly validateDataset’s records on valid generated datasets, gmp before ipos or after (property)', () => {
    fc.assert(
      fc.property(datasetArbitrary({ maxIpos: 12, maxSnapshots: 60 }), fc.boolean(), (records, gmpFirst) => {
        const dataset = JSON.parse(JSON.stringify(toDataset(records))) as { ipos: unknown[]; gmp: unknown[] };
        const list: Array<[string, unknown]> = gmpFirst ? [['gmp', dataset.gmp], ['ipos', dataset.ipos]] : [['ipos', dataset.ipos], ['gmp', dataset.gmp]];
        expect(streamed(itemsOf(list))).toEqual(validateDataset(dataset));
        expect(validateDataset(dataset)).toEqual(records);
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
        { path: '1', message: 'unknown top-level key "1": a dataset holds only "ipos" and "gmp"' },
        { path: '2', message: 'unknown top-level key "2": a dataset holds only "ipos" and "gmp"' },
        { path: 'x', message: 'unknown top-level key "x": a dataset holds only "ipos" and "gmp"' },
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
        { path: 'x', message: 'unknown top-level key "x": a dataset holds only "ipos" and "gmp"' },
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
    expect(checker.finish()).toEqual({ ipos: 200, snapshots: 200 });
  });
});

/** A full garbage collection on demand, without starting node with --expose-gc. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
