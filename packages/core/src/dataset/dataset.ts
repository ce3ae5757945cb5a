/**
 * Validation of a whole dataset (docs/spec.md#ipo-object, #status, #numbers, #datasets): every IPO record, GMP snapshot
 * and subscription snapshot is checked, problems are collected in dataset order, and a valid dataset comes back as
 * the normalised records stores keep. The same rules run one record at a time for a
 * dataset streamed from a file too large for memory (`createDatasetChecker`);
 * `validateDataset` is built on them.
 */
import { asciiLower } from '../model/ascii.js';
import { aggregatePaise } from '../model/aggregate.js';
import { dateToEpochMs, EARLIEST_INSTANT, LATEST_INSTANT, parseInstant } from '../model/dates.js';
import { IpokitError, type DatasetProblem } from '../model/errors.js';
import { paiseToRupees, toPaise } from '../model/numbers.js';
import { compareCodePoints } from '../model/status.js';
import { fullTimes, isSubscriptionTimes } from '../model/subscription.js';
import {
  EXCHANGES,
  SUBSCRIPTION_CATEGORIES,
  type Exchange,
  type IpoRecord,
  type IpoType,
  type ListingPrice,
  type ScheduleEvent,
  type SnapshotRecord,
  type Store,
  type SubscriptionRecord,
  type SubscriptionTimes,
} from '../model/types.js';
import {
  ID_PATTERN,
  IPO_FIELDS,
  LISTING_GAIN_PATTERN,
  MAX_INT32,
  MAX_SLUG_LENGTH,
  MAX_TEXT_LENGTH,
  PRICE_LIMIT,
  PRICE_RANGE_PATTERN,
  SLUG_PATTERN,
  SYMBOL_PATTERN,
  type IpoFieldCheck,
  type IpoFieldName,
} from '../model/ipo-fields.js';

/** How many problems an `ERR:DATASET` error lists at most (`problemCount` gives the total). */
export const MAX_DATASET_PROBLEMS = 1000;


/** Earliest snapshot instant accepted: 2000-01-01T00:00:00.000Z. */
const MIN_SNAPSHOT_INSTANT = EARLIEST_INSTANT;

/** Latest snapshot instant accepted: 9999-12-31T23:59:59.999Z. */
const MAX_SNAPSHOT_INSTANT = LATEST_INSTANT;

/** How much of a bad value a message quotes, in code points. */
const QUOTE_LENGTH = 50;
/** How much of a key a problem's path shows, in code points: a key can be megabytes long. */
const PATH_KEY_LENGTH = 100;

// The forms of docs/spec.md#ipo-object, as the OpenAPI document states them (model/ipo-fields.ts).
const ID_RE = new RegExp(ID_PATTERN);
const SYMBOL_RE = new RegExp(SYMBOL_PATTERN);
const SLUG_RE = new RegExp(SLUG_PATTERN);
const PRICE_RANGE_RE = new RegExp(PRICE_RANGE_PATTERN);
const LISTING_GAIN_RE = new RegExp(LISTING_GAIN_PATTERN);
const LEADING_ZEROS_RE = /^0+(?=\d)/;

const ID_FORM = 'an id is 1 to 64 of A-Z, a-z, 0-9, ".", "_" and "-", starting with a letter or digit';
const SYMBOL_FORM = 'a symbol is 1 to 32 of A-Z, a-z, 0-9, "&", ".", "_" and "-", starting with a letter or digit';
const SLUG_FORM = 'a slug is lowercase letters and digits in parts joined by single "-"';

/** The top-level arrays of a dataset, in dataset order (the order their problems are reported in). */
const TOP_LEVEL_KEYS: ReadonlySet<string> = new Set(['ipos', 'gmp', 'subscription']);

/**
 * Fields an IPO record may carry: those of IpoRecord plus the derived ones (`status`,
 * `subscription`, ...), which are ignored, so that the API's output imports back (docs/spec.md#datasets).
 */
const IPO_KEYS: ReadonlySet<string> = new Set(Object.keys(IPO_FIELDS));

/** The checks of an IPO record's fields, in wire order (the order problems are reported in), made once from IPO_FIELDS. */
const IPO_CHECKS: ReadonlyArray<{ name: IpoFieldName; check: Exclude<IpoFieldCheck, 'derived'>; minimum: number; maximum: number }> = (
  Object.keys(IPO_FIELDS) as IpoFieldName[]
).flatMap((name) => {
  const { check, schema } = IPO_FIELDS[name];
  if (check === 'derived') return [];
  const bounds = schema as { minimum?: number; maximum?: number };
  return [{ name, check, minimum: bounds.minimum ?? 0, maximum: bounds.maximum ?? MAX_INT32 }];
});
const SCHEDULE_KEYS: ReadonlySet<string> = new Set(['event', 'date']);
const SNAPSHOT_KEYS: ReadonlySet<string> = new Set(['ipoId', 'timestamp', 'sources']);
const SOURCE_KEYS: ReadonlySet<string> = new Set(['name', 'gmpPrice']);
const SUBSCRIPTION_KEYS: ReadonlySet<string> = new Set(['ipoId', 'timestamp', 'times']);
const CATEGORY_KEYS: ReadonlySet<string> = new Set(SUBSCRIPTION_CATEGORIES);
/** The categories as messages list them: `"qib", "nii", ... and "total"`. */
const CATEGORY_LIST = `${SUBSCRIPTION_CATEGORIES.slice(0, -1).map((c) => `"${c}"`).join(', ')} and "${SUBSCRIPTION_CATEGORIES.at(-1)!}"`;
const LISTING_PRICE_KEYS: ReadonlySet<string> = new Set(['exchange', 'open', 'high', 'low', 'close']);

type PlainObject = Record<string, unknown>;

/** Problems of one part of a dataset: keeps the first {@link MAX_DATASET_PROBLEMS}, counts them all. */
class Problems {
  readonly list: DatasetProblem[] = [];
  /** The index of the record each kept problem is on (to merge in what is found at the end). */
  readonly at: number[] = [];
  count = 0;

  add(path: string, message: string, at = 0): void {
    this.count += 1;
    if (this.list.length < MAX_DATASET_PROBLEMS) {
      this.list.push({ path, message });
      this.at.push(at);
    }
  }
}

/** Where a record's problems go: `add('endDate', ...)` reports at `ipos[2].endDate`. */
class RecordScope {
  constructor(
    private readonly problems: Problems,
    private readonly part: DatasetPart,
    private readonly index: number,
  ) {}

  /** Problems reported so far (in every record): compare before and after a check. */
  get count(): number {
    return this.problems.count;
  }

  add(label: string, message: string): void {
    // The path is built only when there is a problem: valid records cost no strings.
    this.problems.add(`${this.part}[${this.index}].${label}`, message, this.index);
  }
}

/**
 * One piece of a dataset as a streaming reader meets it, in the order of the file:
 * - `not-an-object`: the whole dataset is this value, which is not an object (a reader
 *   may give an empty array or object in place of a large one: only its kind is named);
 * - `key`: a top-level key, once per occurrence;
 * - `value`: the value of the top-level `ipos`, `gmp` or `subscription` (any array when it
 *   is one, whose elements then follow as `ipo`, `snapshot` or `subscription` items; an
 *   empty object in place of an object);
 * - `ipo`, `snapshot`, `subscription`: one element of the `ipos`, `gmp` or `subscription`
 *   array, with its index there;
 * - `refused`: a value the reader would not hold (see {@link DatasetChecker.refused}), in
 *   place of the element `record` when it is in one.
 */
export type DatasetItem =
  | { kind: 'not-an-object'; value: unknown }
  | { kind: 'key'; key: string }
  | { kind: 'value'; key: DatasetPart; value: unknown }
  | { kind: 'ipo'; index: number; value: unknown }
  | { kind: 'snapshot'; index: number; value: unknown }
  | { kind: 'subscription'; index: number; value: unknown }
  | { kind: 'refused'; record: DatasetRecordPlace | null; path: string; message: string };

/** A top-level array of a dataset: IPO records, GMP snapshots or subscription snapshots. */
export type DatasetPart = 'ipos' | 'gmp' | 'subscription';

/** Which element of a dataset: `ipos[index]`, `gmp[index]` or `subscription[index]`. */
export interface DatasetRecordPlace {
  part: DatasetPart;
  index: number;
}

/** How many records of each kind a dataset holds (what an import reports). */
export interface DatasetCounts {
  ipos: number;
  snapshots: number;
  subscription: number;
}

/** A valid dataset's records, normalised as stores keep them, in dataset order. */
export interface DatasetRecords {
  ipos: IpoRecord[];
  snapshots: SnapshotRecord[];
  subscription: SubscriptionRecord[];
}

/**
 * The rules of {@link validateDataset}, applied one record at a time, so that a dataset too
 * large for memory can be checked as it streams by (the CLI's import): no record is kept.
 * Feed it the pieces of a dataset in any order (a file may hold `gmp` before `ipos`), the
 * GMP snapshots in index order from 0, and the subscription snapshots too; `finish()` then
 * reports exactly what `validateDataset` reports for the same dataset (the same problems,
 * in dataset order, and count).
 *
 * What it keeps between records: the ids, folded symbols and slugs of the IPOs, and 12
 * bytes per snapshot, GMP or subscription (its instant and IPO), to find duplicate
 * snapshots, which are looked for in `finish()` (they are reported as `validateDataset`
 * reports them, on the later record).
 */
export interface DatasetChecker {
  /** The dataset is `value`, which is not an object. */
  notAnObject(value: unknown): void;
  /** A top-level key, in file order (unknown keys and a repeated `ipos`, `gmp` or `subscription` are problems). */
  topLevelKey(key: string): void;
  /** The value of the top-level `ipos`, `gmp` or `subscription`: a problem unless it is an array. */
  topLevelValue(key: DatasetPart, value: unknown): void;
  /** Checks `ipos[index]`: the normalised record, or `null` when it has a problem. */
  ipo(value: unknown, index: number): IpoRecord | null;
  /**
   * Checks `gmp[index]` (indexes 0, 1, 2, ... in order): the normalised record, or `null`
   * when it has a problem. A duplicate of an earlier snapshot is found in `finish()`.
   */
  snapshot(value: unknown, index: number): SnapshotRecord | null;
  /**
   * Checks `subscription[index]` (indexes 0, 1, 2, ... in order, apart from the GMP
   * snapshots'): the normalised record (every category, null when not given), or `null`
   * when it has a problem. A duplicate of an earlier one is found in `finish()`.
   */
  subscription(value: unknown, index: number): SubscriptionRecord | null;
  /**
   * A value a streaming reader would not hold (nested too deep, a number or a record too
   * large, ...) is a problem at `path`, of the element `record` (which takes its place in
   * the dataset and is not checked further) or of the top level (`record` null). Reported
   * with the others, in dataset order.
   */
  refused(path: string, message: string, record: DatasetRecordPlace | null): void;
  /** Feeds one {@link DatasetItem}: the record for `ipo`, `snapshot` and `subscription` items, as above. */
  feed(item: DatasetItem): IpoRecord | SnapshotRecord | SubscriptionRecord | null;
  /** Problems found so far (duplicate snapshots are counted only by `finish()`). */
  readonly problemCount: number;
  /** Whether `finish()` will throw: {@link problemCount}, duplicate snapshots included. */
  hasProblems(): boolean;
  /**
   * The store's part, for a dataset that is refused anyway: the well-formed ipoIds that
   * snapshots (GMP or subscription) name and no IPO record of the dataset has (the store
   * must hold them), each once. Empty when the dataset's IPOs are not known for sure (a
   * repeated `ipos`, a refused value).
   */
  outsideIpoIds(): string[];
  /**
   * Of {@link outsideIpoIds}, those the store does not hold: every snapshot naming one (GMP
   * or subscription) is a problem (`ipoId "x" names no IPO in the dataset or the store`, as
   * a store reports it), after the other problems of its record. Lets a refusal name them in the same pass as
   * the dataset's own problems, instead of on the next attempt.
   */
  unknownIpos(ids: Iterable<string>): void;
  /**
   * Ends the check: how many IPO records, GMP snapshots and subscription snapshots were checked.
   *
   * @throws {IpokitError} `ERR:DATASET`, as {@link validateDataset} throws it, when any
   * problem was found.
   */
  finish(): DatasetCounts;
}

/**
 * Creates a {@link DatasetChecker}: {@link validateDataset} one record at a time.
 *
 * @example
 * ```ts
 * const checker = createDatasetChecker();
 * checker.topLevelKey('gmp');
 * checker.topLevelValue('gmp', []);
 * checker.snapshot({ ipoId: 'a1', timestamp: '2026-11-18T09:30:00Z', sources: [] }, 0);
 * checker.snapshot({ ipoId: 'a1', timestamp: '2026-11-18T15:00:00+05:30', sources: [] }, 1);
 * checker.finish();
 * // throws IpokitError ERR:DATASET, problems: [{ path: 'gmp[1].timestamp',
 * //   message: 'a snapshot of ipoId "a1" at 2026-11-18T09:30:00.000Z is already given by gmp[0]' }]
 * ```
 */
export function createDatasetChecker(): DatasetChecker {
  return new Checker();
}

/**
 * Checks a whole dataset (docs/spec.md#datasets) and returns its records normalised as stores keep
 * them, in dataset order: IPOs with every field present (unknown `null`, lists `[]`),
 * exchanges as `nse` before `bse`, the schedule stably sorted by date, the derived fields
 * dropped; GMP snapshots with epoch-ms timestamps, the numeric sources in paise sorted by
 * name in code-point order, and their aggregations; subscription snapshots with epoch-ms
 * timestamps and every category in `times` (null when not given).
 *
 * Whether a snapshot's IPO exists, and conflicts with stored IPOs, are the store's part
 * (`importDataset`); duplicates within the dataset are checked here.
 *
 * @throws {IpokitError} `ERR:DATASET` when anything is wrong, with `problems` (the first
 * {@link MAX_DATASET_PROBLEMS}, in dataset order) and `problemCount` (all of them). Any
 * input, however malformed, fails this way and no other.
 *
 * @example
 * ```ts
 * const { ipos, snapshots } = validateDataset({
 *   ipos: [{ id: 'a1', name: 'Acme', slug: 'acme', type: 'EQ', exchanges: ['bse', 'nse'] }],
 *   gmp: [{ ipoId: 'a1', timestamp: '2026-11-18T15:00:00+05:30', sources: [{ name: 'ipowatch', gmpPrice: 42 }] }],
 * });
 * ipos[0]?.exchanges;       // ['nse', 'bse']
 * snapshots[0]?.timestamp;  // Date.UTC(2026, 10, 18, 9, 30)
 * snapshots[0]?.sources;    // [{ name: 'ipowatch', paise: 4200 }]
 *
 * validateDataset({ subscription: [{ ipoId: 'a1', timestamp: '2026-11-20T17:00:00+05:30', times: { qib: 1.5, total: 3.25 } }] }).subscription[0];
 * // { ipoId: 'a1', timestamp: Date.UTC(2026, 10, 20, 11, 30),
 * //   times: { qib: 1.5, nii: null, bnii: null, snii: null, retail: null, employee: null, shareholder: null, total: 3.25 } }
 *
 * validateDataset({ ipos: [{ id: 'a1', name: 'Acme', slug: 'acme', type: 'EQ', startDate: '2026-12-10', endDate: '2026-12-05' }] });
 * // throws IpokitError ERR:DATASET, problems:
 * // [{ path: 'ipos[0].endDate', message: 'endDate 2026-12-05 is before startDate 2026-12-10' }]
 * ```
 */
export function validateDataset(input: unknown): DatasetRecords {
  const checker = new Checker();
  const records = checkInput(checker, input);
  checker.finish();
  return records;
}

/**
 * {@link validateDataset} with the store's part of the check when the dataset is refused
 * anyway: a snapshot (GMP or subscription) whose ipoId names no IPO in the dataset nor in
 * `store` is reported with the other problems, in the same pass. (A valid dataset's conflicts with stored data
 * are for `store.writeDataset` to find, atomically with the write.)
 *
 * @throws {IpokitError} `ERR:DATASET` as {@link validateDataset}; `ERR:UNAVAILABLE` when
 * the store fails.
 *
 * @example
 * ```ts
 * await validateDatasetForStore({ ipos: [{ id: 'a1', name: 'A', slug: 'a', type: 'X' }], gmp: [{ ipoId: 'zz', timestamp: '2026-11-18T09:30:00Z', sources: [] }] }, store);
 * // throws IpokitError ERR:DATASET, problems: [{ path: 'ipos[0].type', ... },
 * //   { path: 'gmp[0].ipoId', message: 'ipoId "zz" names no IPO in the dataset or the store' }]
 * ```
 */
export async function validateDatasetForStore(
  input: unknown,
  store: Pick<Store, 'findIpo'>,
): Promise<DatasetRecords> {
  const checker = new Checker();
  const records = checkInput(checker, input);
  if (checker.hasProblems()) {
    const outside = checker.outsideIpoIds();
    if (outside.length > 0) checker.unknownIpos(await unstoredIpoIds(store, outside));
  }
  checker.finish();
  return records;
}

/** Stores answer one IPO at a time: this many questions are asked at once. */
const LOOKUPS_AT_ONCE = 32;

/**
 * Those of `ids` that no stored IPO has as its id (an IPO found by symbol or slug does not
 * count), in the order given: what a check that names unknown IPOs asks the store.
 *
 * @throws {IpokitError} `ERR:UNAVAILABLE` when the store fails.
 *
 * @example
 * ```ts
 * await unstoredIpoIds(store, ['2026000001', 'nope']); // ['nope']
 * ```
 */
export async function unstoredIpoIds(store: Pick<Store, 'findIpo'>, ids: readonly string[]): Promise<string[]> {
  const unstored: string[] = [];
  for (let i = 0; i < ids.length; i += LOOKUPS_AT_ONCE) {
    const slice = ids.slice(i, i + LOOKUPS_AT_ONCE);
    let rows;
    try {
      rows = await Promise.all(slice.map((id) => store.findIpo({ identifier: id, gmpAt: null })));
    } catch (err) {
      if (err instanceof IpokitError) throw err;
      throw new IpokitError('ERR:UNAVAILABLE', 'The store failed.', { cause: err });
    }
    // findIpo also answers to a symbol or slug: only an IPO with this very id counts.
    slice.forEach((id, k) => {
      if (rows[k]?.ipo.id !== id) unstored.push(id);
    });
  }
  return unstored;
}

/** Feeds a dataset held in memory to the checker: the valid records, while all are. */
function checkInput(checker: Checker, input: unknown): DatasetRecords {
  const ipos: IpoRecord[] = [];
  const snapshots: SnapshotRecord[] = [];
  const subscription: SubscriptionRecord[] = [];
  try {
    if (!isPlainObject(input)) checker.notAnObject(input);
    else {
      for (const key of Object.keys(input)) checker.topLevelKey(key);
      const iposValue = own(input, 'ipos');
      const gmpValue = own(input, 'gmp');
      const subscriptionValue = own(input, 'subscription');
      if (iposValue !== undefined) checker.topLevelValue('ipos', iposValue);
      if (gmpValue !== undefined) checker.topLevelValue('gmp', gmpValue);
      if (subscriptionValue !== undefined) checker.topLevelValue('subscription', subscriptionValue);
      if (Array.isArray(iposValue)) {
        for (let i = 0; i < iposValue.length; i++) {
          const record = checker.ipo(iposValue[i], i);
          // Records are kept only while they can still be returned.
          if (record !== null && checker.problemCount === 0) ipos.push(record);
        }
      }
      if (Array.isArray(gmpValue)) {
        for (let j = 0; j < gmpValue.length; j++) {
          const record = checker.snapshot(gmpValue[j], j);
          if (record !== null && checker.problemCount === 0) snapshots.push(record);
        }
      }
      if (Array.isArray(subscriptionValue)) {
        for (let j = 0; j < subscriptionValue.length; j++) {
          const record = checker.subscription(subscriptionValue[j], j);
          if (record !== null && checker.problemCount === 0) subscription.push(record);
        }
      }
    }
  } catch (err) {
    // Only exotic objects get here (a getter or a proxy that throws): refuse them cleanly,
    // without touching the thrown value, which may be just as exotic.
    const { list, count } = checker.collect();
    const problem = { path: '$', message: 'the dataset could not be read as plain JSON data (reading it threw an error)' };
    throw new IpokitError('ERR:DATASET', `The dataset could not be read as plain JSON data (reading it threw an error).`, {
      cause: err,
      problems: [...list, problem].slice(0, MAX_DATASET_PROBLEMS),
      problemCount: count + 1,
    });
  }
  return { ipos, snapshots, subscription };
}

/** The one implementation of {@link DatasetChecker}. */
class Checker implements DatasetChecker {
  /** Unknown and repeated top-level keys. */
  private readonly keys = new TopLevelKeys();
  /** The dataset that is not an object, then `ipos`, `gmp` and `subscription` that are not arrays. */
  private notObject: DatasetProblem | null = null;
  private readonly partValue: Record<DatasetPart, DatasetProblem | null> = { ipos: null, gmp: null, subscription: null };
  /** Values a reader refused outside any record. */
  private readonly topProblems = new Problems();
  private readonly ipoProblems = new Problems();
  private readonly snapshotProblems = new Problems();
  private readonly subscriptionProblems = new Problems();
  private readonly seen: Seen = { ids: new Map(), symbols: new Map(), slugs: new Map() };
  private readonly snapshotKeys = new SnapshotKeys('gmp');
  private readonly subscriptionKeys = new SnapshotKeys('subscription');
  private ipoCount = 0;
  /** Which IPOs the dataset holds is not known for sure: no ipoId is called unknown. */
  private iposUncertain = false;
  /** ipoIds that name no IPO in the dataset or the store ({@link unknownIpos}). */
  private readonly unknown = new Set<string>();

  get problemCount(): number {
    return (
      this.keys.count +
      (this.notObject === null ? 0 : 1) +
      (this.partValue.ipos === null ? 0 : 1) +
      (this.partValue.gmp === null ? 0 : 1) +
      (this.partValue.subscription === null ? 0 : 1) +
      this.topProblems.count +
      this.ipoProblems.count +
      this.snapshotProblems.count +
      this.subscriptionProblems.count
    );
  }

  notAnObject(value: unknown): void {
    this.notObject = { path: '$', message: `the dataset must be an object with "ipos", "gmp" and/or "subscription" arrays, got ${describe(value)}` };
  }

  topLevelKey(key: string): void {
    // A repeated `ipos`: JSON.parse keeps the last array, a streaming reader the first.
    if (this.keys.add(key) && key === 'ipos') this.iposUncertain = true;
  }

  topLevelValue(key: DatasetPart, value: unknown): void {
    if (Array.isArray(value)) return;
    this.partValue[key] ??= { path: key, message: `${key} must be an array of ${PART_ELEMENTS[key]}, got ${describe(value)}` };
  }

  ipo(value: unknown, index: number): IpoRecord | null {
    this.ipoCount += 1;
    return checkIpo(value, index, this.ipoProblems, this.seen);
  }

  snapshot(value: unknown, index: number): SnapshotRecord | null {
    const keys = this.snapshotKeys;
    keys.expect(index);
    try {
      return checkSnapshot(value, index, this.snapshotProblems, keys);
    } finally {
      // A record that could not be read to its end still takes its place.
      if (keys.size === index) keys.add(null, null);
    }
  }

  subscription(value: unknown, index: number): SubscriptionRecord | null {
    const keys = this.subscriptionKeys;
    keys.expect(index);
    try {
      return checkSubscription(value, index, this.subscriptionProblems, keys);
    } finally {
      if (keys.size === index) keys.add(null, null);
    }
  }

  refused(path: string, message: string, record: DatasetRecordPlace | null): void {
    // The refused value may have held an IPO's id, or the reader stopped before the rest.
    this.iposUncertain = true;
    if (record === null) this.topProblems.add(path, message);
    else if (record.part === 'ipos') {
      this.ipoCount += 1;
      this.ipoProblems.add(path, message, record.index);
    } else {
      const keys = record.part === 'gmp' ? this.snapshotKeys : this.subscriptionKeys;
      keys.expect(record.index);
      keys.add(null, null);
      (record.part === 'gmp' ? this.snapshotProblems : this.subscriptionProblems).add(path, message, record.index);
    }
  }

  hasProblems(): boolean {
    if (this.problemCount > 0) return true;
    for (const keys of [this.snapshotKeys, this.subscriptionKeys]) {
      if (keys.duplicates().count > 0 || keys.naming(this.unknown).count > 0) return true;
    }
    return false;
  }

  outsideIpoIds(): string[] {
    if (this.iposUncertain) return [];
    const named = new Set([...this.snapshotKeys.ipoIdsNamed(), ...this.subscriptionKeys.ipoIdsNamed()]);
    return [...named].filter((id) => !this.seen.ids.has(id));
  }

  unknownIpos(ids: Iterable<string>): void {
    for (const id of ids) this.unknown.add(id);
  }

  feed(item: DatasetItem): IpoRecord | SnapshotRecord | SubscriptionRecord | null {
    switch (item.kind) {
      case 'not-an-object':
        this.notAnObject(item.value);
        return null;
      case 'key':
        this.topLevelKey(item.key);
        return null;
      case 'value':
        this.topLevelValue(item.key, item.value);
        return null;
      case 'ipo':
        return this.ipo(item.value, item.index);
      case 'snapshot':
        return this.snapshot(item.value, item.index);
      case 'subscription':
        return this.subscription(item.value, item.index);
      case 'refused':
        this.refused(item.path, item.message, item.record);
        return null;
    }
  }

  finish(): DatasetCounts {
    const { list, count } = this.collect();
    if (count > 0) {
      const first = list[0];
      const where = first === undefined ? '' : `, ${count === 1 ? '' : 'the first '}at ${cut(first.path, 100)}: ${first.message}`;
      throw new IpokitError('ERR:DATASET', `The dataset has ${count} problem${count === 1 ? '' : 's'}${where}.`, {
        problems: list,
        problemCount: count,
      });
    }
    return { ipos: this.ipoCount, snapshots: this.snapshotKeys.size, subscription: this.subscriptionKeys.size };
  }

  /** Every problem so far in dataset order (the first {@link MAX_DATASET_PROBLEMS}), and their count. */
  collect(): { list: DatasetProblem[]; count: number } {
    const list: DatasetProblem[] = this.keys.problems();
    for (const p of [this.notObject, this.partValue.ipos, this.partValue.gmp, this.partValue.subscription]) if (p !== null) list.push(p);
    for (const p of [...this.topProblems.list, ...this.ipoProblems.list]) {
      if (list.length >= MAX_DATASET_PROBLEMS) break;
      list.push(p);
    }
    let found = 0;
    for (const [problems, keys] of [
      [this.snapshotProblems, this.snapshotKeys],
      [this.subscriptionProblems, this.subscriptionKeys],
    ] as const) {
      const duplicates = keys.duplicates();
      const unknown = keys.naming(this.unknown);
      found += duplicates.count + unknown.count;
      mergeSnapshotProblems(list, problems, duplicates.first, unknown.first);
    }
    return { list: list.slice(0, MAX_DATASET_PROBLEMS), count: this.problemCount + found };
  }
}

/** What each top-level array holds, for the message of one that is not an array. */
const PART_ELEMENTS: Readonly<Record<DatasetPart, string>> = { ipos: 'IPO records', gmp: 'GMP snapshots', subscription: 'subscription snapshots' };

/**
 * Appends the problems of one part's snapshots to `list` (up to {@link MAX_DATASET_PROBLEMS})
 * in dataset order. Found last, the duplicates and then the unknown IPOs go after the other
 * problems of their record (a duplicate is checked last in a record, the store after the
 * record) and before those of later records.
 */
function mergeSnapshotProblems(
  list: DatasetProblem[],
  problems: Problems,
  duplicates: ReadonlyArray<{ index: number; problem: DatasetProblem }>,
  unknown: ReadonlyArray<{ index: number; problem: DatasetProblem }>,
): void {
  const { list: kept, at } = problems;
  const streams = [kept.map((problem, k) => ({ index: at[k] ?? 0, problem })), duplicates, unknown];
  const next = [0, 0, 0];
  while (list.length < MAX_DATASET_PROBLEMS) {
    let pick = -1;
    for (let s = 0; s < streams.length; s++) {
      const head = streams[s]![next[s]!];
      if (head !== undefined && (pick < 0 || head.index < streams[pick]![next[pick]!]!.index)) pick = s;
    }
    if (pick < 0) break;
    list.push(streams[pick]![next[pick]!++]!.problem);
  }
}

/**
 * The unknown and repeated top-level keys, reported in the order `Object.keys` gives the
 * keys of a parsed object: integer-like keys ascending, then the others as they came
 * (a key repeated in a file is listed once, where it first came, as `JSON.parse` keeps it).
 */
class TopLevelKeys {
  private readonly seen = new Set<string>();
  private indexed: Array<{ n: number; problem: DatasetProblem }> = [];
  private readonly named: DatasetProblem[] = [];
  count = 0;

  /** Notes a key; whether it was given before. */
  add(key: string): boolean {
    if (this.seen.has(key)) {
      // `JSON.parse` would keep the last array and drop the first: refused, never guessed.
      if (TOP_LEVEL_KEYS.has(key)) this.report(key, `the top-level key ${quote(key)} is given more than once: a dataset holds one ${quote(key)} array`);
      return true;
    }
    this.seen.add(key);
    if (!TOP_LEVEL_KEYS.has(key)) this.report(key, `unknown top-level key ${quote(key)}: a dataset holds only "ipos", "gmp" and "subscription"`);
    return false;
  }

  problems(): DatasetProblem[] {
    this.trim();
    return [...this.indexed.map((x) => x.problem), ...this.named].slice(0, MAX_DATASET_PROBLEMS);
  }

  private report(key: string, message: string): void {
    this.count += 1;
    const problem = { path: cut(key, PATH_KEY_LENGTH), message };
    if (ARRAY_INDEX_RE.test(key) && Number(key) <= MAX_ARRAY_INDEX) {
      this.indexed.push({ n: Number(key), problem });
      if (this.indexed.length > 2 * MAX_DATASET_PROBLEMS) this.trim();
    } else if (this.named.length < MAX_DATASET_PROBLEMS) this.named.push(problem);
  }

  /** Keeps the smallest integer-like keys: they come first. */
  private trim(): void {
    this.indexed.sort((a, b) => a.n - b.n);
    if (this.indexed.length > MAX_DATASET_PROBLEMS) this.indexed.length = MAX_DATASET_PROBLEMS;
  }
}

/** Keys that objects order first, ascending (ECMAScript array indexes). */
const ARRAY_INDEX_RE = /^(?:0|[1-9]\d{0,9})$/;
const MAX_ARRAY_INDEX = 2 ** 32 - 2;

/** The IPO number of a snapshot without a well-formed ipoId. */
const NO_IPO = 0xffff_ffff;

/** Snapshot slots per chunk of {@link SnapshotKeys}. */
const CHUNK_BITS = 16;
const CHUNK = 1 << CHUNK_BITS;

/**
 * The (IPO, instant) key of every snapshot of one part (`gmp` or `subscription`: each part
 * has its own), to find duplicates, in 12 bytes a snapshot (an instant and an IPO number,
 * in typed-array chunks, no object per snapshot). Each IPO remembers whether its snapshots
 * came in strictly ascending time (so without duplicates, the usual case, which
 * `duplicates()` skips); only the others are sorted.
 */
class SnapshotKeys {
  constructor(private readonly part: 'gmp' | 'subscription') {}

  private readonly ordinalOf = new Map<string, number>();
  private readonly ipoIds: string[] = [];
  /** Per IPO number: the latest instant, how many snapshots, whether any came out of order. */
  private latest = new Float64Array(64);
  private counts = new Uint32Array(64);
  private unordered = new Uint8Array(64);
  private anyUnordered = false;
  /**
   * Per snapshot index: its instant (NaN: none, the record is refused anyway) and IPO
   * number ({@link NO_IPO}: no well-formed ipoId).
   */
  private readonly instants: Float64Array[] = [];
  private readonly ordinals: Uint32Array[] = [];
  size = 0;
  /** The last answer of `duplicates()`, until a snapshot is added (`hasProblems()` then `finish()` ask twice). */
  private found: { count: number; first: Array<{ index: number; problem: DatasetProblem }> } | null = null;

  /** Throws unless `index` is the next snapshot's (the checker is fed them in order). */
  expect(index: number): void {
    if (index !== this.size) {
      throw new RangeError(`createDatasetChecker: snapshots are checked in order; expected ${this.part}[${this.size}], got ${this.part}[${index}]`);
    }
  }

  /** Notes the next snapshot's IPO and instant; `null` for one it does not have (a refused field). */
  add(ipoId: string | null, instant: number | null): void {
    this.found = null;
    const index = this.size;
    const c = index >>> CHUNK_BITS;
    const k = index & (CHUNK - 1);
    if (k === 0) {
      this.instants.push(new Float64Array(256));
      this.ordinals.push(new Uint32Array(256));
    } else if (k === this.instants[c]!.length) {
      // The first chunk grows to full size, so that small datasets stay small.
      const size = Math.min(CHUNK, k * 4);
      const instants = new Float64Array(size);
      instants.set(this.instants[c]!);
      this.instants[c] = instants;
      const ordinals = new Uint32Array(size);
      ordinals.set(this.ordinals[c]!);
      this.ordinals[c] = ordinals;
    }
    this.size = index + 1;
    if (ipoId === null) {
      this.instants[c]![k] = NaN;
      this.ordinals[c]![k] = NO_IPO;
      return;
    }
    let ordinal = this.ordinalOf.get(ipoId);
    if (ordinal === undefined) {
      ordinal = this.ipoIds.length;
      const kept = detached(ipoId);
      this.ordinalOf.set(kept, ordinal);
      this.ipoIds.push(kept);
      if (ordinal === this.latest.length) {
        this.latest = grown(this.latest, new Float64Array(ordinal * 2));
        this.counts = grown(this.counts, new Uint32Array(ordinal * 2));
        this.unordered = grown(this.unordered, new Uint8Array(ordinal * 2));
      }
    }
    this.ordinals[c]![k] = ordinal;
    if (instant === null) {
      this.instants[c]![k] = NaN;
      return;
    }
    // `counts` counts the snapshots with an instant: the first one sets `latest`.
    if (this.counts[ordinal] === 0 || instant > this.latest[ordinal]!) {
      this.latest[ordinal] = instant;
    } else {
      this.unordered[ordinal] = 1;
      this.anyUnordered = true;
    }
    this.counts[ordinal] = this.counts[ordinal]! + 1;
    this.instants[c]![k] = instant;
  }

  /** The well-formed ipoIds the snapshots name, each once. */
  ipoIdsNamed(): readonly string[] {
    return this.ipoIds;
  }

  /**
   * The snapshots that name one of `unknown` as their IPO: how many, and the first
   * {@link MAX_DATASET_PROBLEMS} by index, each with its problem.
   */
  naming(unknown: ReadonlySet<string>): { count: number; first: Array<{ index: number; problem: DatasetProblem }> } {
    const first: Array<{ index: number; problem: DatasetProblem }> = [];
    if (unknown.size === 0) return { count: 0, first };
    const flagged = new Uint8Array(this.ipoIds.length);
    let any = false;
    this.ipoIds.forEach((id, o) => {
      if (unknown.has(id)) flagged[o] = 1;
      any ||= unknown.has(id);
    });
    if (!any) return { count: 0, first };
    let count = 0;
    for (let i = 0; i < this.size; i++) {
      const o = this.ordinals[i >>> CHUNK_BITS]![i & (CHUNK - 1)]!;
      if (o === NO_IPO || flagged[o] !== 1) continue;
      count += 1;
      if (first.length < MAX_DATASET_PROBLEMS) {
        first.push({ index: i, problem: { path: `${this.part}[${i}].ipoId`, message: `ipoId ${quote(this.ipoIds[o]!)} names no IPO in the dataset or the store` } });
      }
    }
    return { count, first };
  }

  /**
   * The snapshots that repeat the key of an earlier one: how many, and the first
   * {@link MAX_DATASET_PROBLEMS} by index, each with its problem (naming the first snapshot
   * with that key, as `validateDataset` always has).
   */
  duplicates(): { count: number; first: Array<{ index: number; problem: DatasetProblem }> } {
    this.found ??= this.findDuplicates();
    return this.found;
  }

  private findDuplicates(): { count: number; first: Array<{ index: number; problem: DatasetProblem }> } {
    let count = 0;
    let found: Array<{ index: number; earlier: number; ordinal: number }> = [];
    const keep = (): void => {
      found.sort((a, b) => a.index - b.index);
      if (found.length > MAX_DATASET_PROBLEMS) found.length = MAX_DATASET_PROBLEMS;
    };
    if (this.anyUnordered) {
      // The snapshots of the IPOs that came out of order, grouped by IPO, in index order.
      const n = this.ipoIds.length;
      const start = new Float64Array(n).fill(-1);
      let total = 0;
      for (let o = 0; o < n; o++) {
        if (this.unordered[o] === 1) {
          start[o] = total;
          total += this.counts[o]!;
        }
      }
      const positions = new Uint32Array(total);
      const next = start.slice();
      for (let i = 0; i < this.size; i++) {
        const instant = this.instantAt(i);
        if (instant !== instant) continue; // NaN
        const o = this.ordinals[i >>> CHUNK_BITS]![i & (CHUNK - 1)]!;
        const p = next[o]!;
        if (p >= 0) {
          positions[p] = i;
          next[o] = p + 1;
        }
      }
      for (let o = 0; o < n; o++) {
        const from = start[o]!;
        if (from < 0) continue;
        const group = positions.subarray(from, from + this.counts[o]!);
        const sorted = Float64Array.from(group, (i) => this.instantAt(i)).sort();
        let repeated: Set<number> | null = null;
        for (let k = 1; k < sorted.length; k++) if (sorted[k] === sorted[k - 1]) (repeated ??= new Set()).add(sorted[k]!);
        if (repeated === null) continue;
        const firstAt = new Map<number, number>();
        for (const i of group) {
          const instant = this.instantAt(i);
          if (!repeated.has(instant)) continue;
          const earlier = firstAt.get(instant);
          if (earlier === undefined) firstAt.set(instant, i);
          else {
            count += 1;
            found.push({ index: i, earlier, ordinal: o });
            if (found.length > 4 * MAX_DATASET_PROBLEMS) keep();
          }
        }
      }
      keep();
    }
    const what = this.part === 'gmp' ? 'a snapshot' : 'a subscription snapshot';
    const first = found.map(({ index, earlier, ordinal }) => ({
      index,
      problem: {
        path: `${this.part}[${index}].timestamp`,
        message: `${what} of ipoId ${quote(this.ipoIds[ordinal] ?? '')} at ${new Date(this.instantAt(index)).toISOString()} is already given by ${this.part}[${earlier}]`,
      },
    }));
    found = [];
    return { count, first };
  }

  private instantAt(i: number): number {
    return this.instants[i >>> CHUNK_BITS]![i & (CHUNK - 1)]!;
  }
}

/**
 * `text` on its own. A string cut from a larger one (as a streaming JSON parser cuts values
 * from the block of text it read) may keep that whole block alive; the checker keeps ids,
 * symbols and slugs for the rest of the dataset, so it keeps copies (V8 flattens the
 * concatenation into a new string of this length, which the slice then refers to).
 */
function detached(text: string): string {
  return text.length < 13 ? text : ` ${text}`.slice(1);
}

/** `into` holding `from` at its start. */
function grown<T extends Float64Array | Uint32Array | Uint8Array>(from: T, into: T): T {
  into.set(from);
  return into;
}

/** Earlier records' ids, folded symbols and slugs, with their index. */
interface Seen {
  ids: Map<string, number>;
  symbols: Map<string, number>;
  slugs: Map<string, number>;
}

function checkIpo(value: unknown, index: number, problems: Problems, seen: Seen): IpoRecord | null {
  if (!isPlainObject(value)) {
    problems.add(`ipos[${index}]`, `an IPO record must be an object, got ${describe(value)}`, index);
    return null;
  }
  const scope = new RecordScope(problems, 'ipos', index);
  const before = problems.count;
  unknownKeys(scope, value, IPO_KEYS, 'an IPO record');

  // Each field in wire order: the simple kinds straight from IPO_FIELDS, the others with
  // their own code (docs/spec.md#datasets).
  const record: Record<string, unknown> = {};
  let idOk = false;
  let symbolOk = false;
  let slugOk = false;
  let startDate: string | null | typeof INVALID = null;
  let endDate: string | null | typeof INVALID = null;
  let listingDate: string | null | typeof INVALID = null;
  for (const { name, check, minimum, maximum } of IPO_CHECKS) {
    const given = own(value, name);
    switch (check) {
      case 'required-text':
        record[name] = requiredText(scope, name, given);
        break;
      case 'text':
      case 'url':
        record[name] = optionalText(scope, name, given);
        break;
      case 'date': {
        const date = optionalDate(scope, name, given);
        if (name === 'startDate') startDate = date;
        else if (name === 'endDate') endDate = date;
        else if (name === 'listingDate') listingDate = date;
        record[name] = date === INVALID ? null : date;
        break;
      }
      case 'integer':
        record[name] = optionalInteger(scope, name, given, minimum, maximum);
        break;
      case 'texts':
        record[name] = textList(scope, name, given);
        break;
      case 'id': {
        const id = requiredText(scope, name, given);
        idOk = id !== null && matches(scope, name, id, ID_RE, ID_FORM);
        record[name] = id;
        break;
      }
      case 'symbol': {
        const symbol = optionalText(scope, name, given);
        symbolOk = symbol !== null && matches(scope, name, symbol, SYMBOL_RE, SYMBOL_FORM);
        record[name] = symbol;
        break;
      }
      case 'slug': {
        const slug = requiredText(scope, name, given);
        if (slug !== null && matches(scope, name, slug, SLUG_RE, SLUG_FORM)) {
          if (slug.length > MAX_SLUG_LENGTH) scope.add(name, `slug ${quote(slug)} is longer than ${MAX_SLUG_LENGTH} characters (${slug.length})`);
          else slugOk = true;
        }
        record[name] = slug;
        break;
      }
      case 'type':
        record[name] = checkType(scope, given);
        break;
      case 'exchanges':
        record[name] = checkExchanges(scope, given);
        break;
      case 'price-range':
        record[name] = checkPriceRange(scope, given);
        break;
      case 'listing-gain': {
        const listingGain = optionalText(scope, name, given);
        if (listingGain !== null && !LISTING_GAIN_RE.test(listingGain)) {
          scope.add(name, `listingGain ${quote(listingGain)} is not a decimal number such as "15.5" or "-2"`);
        }
        record[name] = listingGain;
        break;
      }
      case 'schedule':
        record[name] = checkSchedule(scope, given);
        break;
      case 'listing-prices':
        record[name] = checkListingPrices(scope, given);
        break;
    }
  }
  const { id, symbol, slug } = record as Partial<Pick<IpoRecord, 'id' | 'symbol' | 'slug'>>;

  // Status transitions (docs/spec.md#status), only between dates that are themselves valid.
  if (startDate !== INVALID && endDate !== INVALID && endDate !== null) {
    if (startDate === null) scope.add('endDate', `endDate ${endDate} is set but startDate is null`);
    else if (endDate < startDate) scope.add('endDate', `endDate ${endDate} is before startDate ${startDate}`);
  }
  if (startDate !== INVALID && endDate !== INVALID && listingDate !== INVALID && listingDate !== null) {
    if (startDate === null) scope.add('listingDate', `listingDate ${listingDate} is set but startDate is null`);
    else if (endDate !== null && listingDate < endDate) scope.add('listingDate', `listingDate ${listingDate} is before endDate ${endDate}`);
    else if (endDate === null && listingDate < startDate) {
      scope.add('listingDate', `listingDate ${listingDate} is before startDate ${startDate}`);
    }
  }

  // Duplicates within the dataset, reported on the later record.
  if (idOk && typeof id === 'string') firstOrDuplicate(scope, seen.ids, id, index, 'id', `id ${quote(id)}`);
  if (symbolOk && typeof symbol === 'string') {
    firstOrDuplicate(scope, seen.symbols, asciiLower(symbol), index, 'symbol', `symbol ${quote(symbol)} (ignoring ASCII case)`);
  }
  if (slugOk && typeof slug === 'string') firstOrDuplicate(scope, seen.slugs, slug, index, 'slug', `slug ${quote(slug)}`);

  // A record with a problem is dropped; the required fields are non-null when there is none.
  if (problems.count !== before) return null;
  return record as unknown as IpoRecord;
}

function firstOrDuplicate(scope: RecordScope, seen: Map<string, number>, key: string, index: number, label: string, what: string): void {
  const earlier = seen.get(key);
  if (earlier === undefined) seen.set(detached(key), index);
  else scope.add(label, `${what} is already used by ipos[${earlier}]`);
}

function checkType(scope: RecordScope, value: unknown): IpoType | null {
  const type = requiredText(scope, 'type', value);
  if (type === null) return null;
  if (type === 'EQ' || type === 'SME' || type === 'DEBT') return type;
  scope.add('type', `type ${quote(type)} is not one of "EQ", "SME" and "DEBT"`);
  return null;
}

function checkExchanges(scope: RecordScope, value: unknown): Exchange[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    scope.add('exchanges', `exchanges must be an array of "nse" and/or "bse" or null, got ${describe(value)}`);
    return [];
  }
  let nse = false;
  let bse = false;
  for (let k = 0; k < value.length; k++) {
    const label = `exchanges[${k}]`;
    const item = exchangeOf(scope, label, value[k]);
    if (item === null) continue;
    if (item === 'nse' ? nse : bse) scope.add(label, `exchange "${item}" is listed more than once`);
    if (item === 'nse') nse = true;
    else bse = true;
  }
  const out: Exchange[] = [];
  if (nse) out.push('nse');
  if (bse) out.push('bse');
  return out;
}

function checkPriceRange(scope: RecordScope, value: unknown): string | null {
  const text = optionalText(scope, 'priceRange', value);
  if (text === null) return null;
  const m = PRICE_RANGE_RE.exec(text);
  if (m === null) {
    scope.add('priceRange', `priceRange ${quote(text)} is not "<low>-<high>" with prices such as "95" or "99.50"`);
    return null;
  }
  if (compareDecimals(m[1] ?? '', m[3] ?? '', m[4] ?? '', m[6] ?? '') > 0) {
    scope.add('priceRange', `priceRange ${quote(text)} has its low price above its high price`);
    return null;
  }
  return text;
}

/** Compares two non-negative decimals given as digits: integer part and up to 2 decimals. */
function compareDecimals(aInt: string, aFrac: string, bInt: string, bFrac: string): number {
  const a = aInt.replace(LEADING_ZEROS_RE, '');
  const b = bInt.replace(LEADING_ZEROS_RE, '');
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  if (a !== b) return a < b ? -1 : 1;
  const af = aFrac.padEnd(2, '0');
  const bf = bFrac.padEnd(2, '0');
  return af === bf ? 0 : af < bf ? -1 : 1;
}

function optionalInteger(scope: RecordScope, label: string, value: unknown, min: number, max: number): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number') {
    scope.add(label, `${label} must be an integer or null, got ${describe(value)}`);
    return null;
  }
  if (!Number.isInteger(value)) {
    scope.add(label, `${label} ${String(value)} is not an integer`);
    return null;
  }
  if (value < min || value > max) {
    scope.add(label, `${label} ${String(value)} is outside ${min} to ${max}`);
    return null;
  }
  return value + 0; // -0 becomes 0
}

function checkSchedule(scope: RecordScope, value: unknown): ScheduleEvent[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    scope.add('schedule', `schedule must be an array of { "event", "date" } objects or null, got ${describe(value)}`);
    return [];
  }
  const events: ScheduleEvent[] = [];
  for (let k = 0; k < value.length; k++) {
    const label = `schedule[${k}]`;
    const item: unknown = value[k];
    if (!isPlainObject(item)) {
      scope.add(label, `a schedule entry must be an object with "event" and "date", got ${describe(item)}`);
      continue;
    }
    unknownKeys(scope, item, SCHEDULE_KEYS, 'a schedule entry', `${label}.`);
    const event = requiredText(scope, `${label}.event`, own(item, 'event'));
    const date = requiredDate(scope, `${label}.date`, own(item, 'date'));
    if (event !== null && date !== null) events.push({ event, date });
  }
  // Array.prototype.sort is stable: same-day events keep their order.
  return events.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
}

/** A listing price's prices, in the order problems are reported in. */
const LISTING_PRICE_FIELDS = ['open', 'high', 'low', 'close'] as const;

function checkListingPrices(scope: RecordScope, value: unknown): ListingPrice[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    scope.add('listingPrices', `listingPrices must be an array of { "exchange", "open", "high", "low", "close" } objects or null, got ${describe(value)}`);
    return [];
  }
  const byExchange: Partial<Record<Exchange, ListingPrice>> = {};
  const seen: Partial<Record<Exchange, number>> = {};
  for (let k = 0; k < value.length; k++) {
    const label = `listingPrices[${k}]`;
    const item: unknown = value[k];
    if (!isPlainObject(item)) {
      scope.add(label, `a listing price must be an object with "exchange", "open", "high", "low" and "close", got ${describe(item)}`);
      continue;
    }
    const before = scope.count;
    unknownKeys(scope, item, LISTING_PRICE_KEYS, 'a listing price', `${label}.`);
    const exchange = checkListingExchange(scope, `${label}.exchange`, own(item, 'exchange'));
    if (exchange !== null) {
      const earlier = seen[exchange];
      if (earlier === undefined) seen[exchange] = k;
      else scope.add(`${label}.exchange`, `exchange "${exchange}" is already given by listingPrices[${earlier}]`);
    }
    const paise: Partial<Record<(typeof LISTING_PRICE_FIELDS)[number], number>> = {};
    for (const name of LISTING_PRICE_FIELDS) {
      const p = checkPrice(scope, `${label}.${name}`, own(item, name));
      if (p !== null) paise[name] = p;
    }
    const { open, high, low, close } = paise;
    if (low !== undefined && high !== undefined) {
      if (low > high) scope.add(`${label}.low`, `low ${rupees(low)} is above high ${rupees(high)}`);
      else {
        if (open !== undefined && (open < low || open > high)) scope.add(`${label}.open`, `open ${rupees(open)} is outside low ${rupees(low)} to high ${rupees(high)}`);
        if (close !== undefined && (close < low || close > high)) scope.add(`${label}.close`, `close ${rupees(close)} is outside low ${rupees(low)} to high ${rupees(high)}`);
      }
    }
    if (scope.count === before && exchange !== null && open !== undefined && high !== undefined && low !== undefined && close !== undefined) {
      byExchange[exchange] ??= { exchange, open: rupees(open), high: rupees(high), low: rupees(low), close: rupees(close) };
    }
  }
  const out: ListingPrice[] = [];
  for (const exchange of EXCHANGES) {
    const prices = byExchange[exchange];
    if (prices !== undefined) out.push(prices);
  }
  return out;
}

function checkListingExchange(scope: RecordScope, label: string, value: unknown): Exchange | null {
  if (value === undefined || value === null) {
    scope.add(label, `${label} is required`);
    return null;
  }
  return exchangeOf(scope, label, value);
}

/** An exchange as a dataset names it (`exchanges[k]`, `listingPrices[k].exchange`), or null with its problem added. */
function exchangeOf(scope: RecordScope, label: string, value: unknown): Exchange | null {
  if (value === 'nse' || value === 'bse') return value;
  if (typeof value === 'string') {
    const text = checkedText(scope, label, value, false);
    if (text !== null) scope.add(label, `exchange ${quote(text)} is not "nse" or "bse"`);
  } else {
    scope.add(label, `an exchange must be the string "nse" or "bse", got ${describe(value)}`);
  }
  return null;
}

/** A price (docs/spec.md#numbers): a number >= 0 with at most 2 decimals, below 10,000,000; in paise, or null when refused. */
function checkPrice(scope: RecordScope, label: string, value: unknown): number | null {
  if (value === undefined || value === null) {
    scope.add(label, `${label} is required`);
    return null;
  }
  if (typeof value !== 'number') {
    scope.add(label, `${label} must be a number, got ${describe(value)}`);
    return null;
  }
  if (!Number.isFinite(value)) {
    scope.add(label, `${label} ${String(value)} is not a finite number`);
    return null;
  }
  if (value < 0) {
    scope.add(label, `${label} ${String(value)} is negative`);
    return null;
  }
  if (value >= PRICE_LIMIT) {
    scope.add(label, `${label} ${String(value)} is ${thousands(PRICE_LIMIT)} or more`);
    return null;
  }
  const paise = toPaise(value);
  if (paise === null) {
    scope.add(label, `${label} ${String(value)} has more than 2 decimals`);
    return null;
  }
  return paise;
}

/** Paise as the rupee number the wire shows. */
function rupees(paise: number): number {
  return paiseToRupees(paise);
}

function textList(scope: RecordScope, label: string, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    scope.add(label, `${label} must be an array of strings or null, got ${describe(value)}`);
    return [];
  }
  const out: string[] = [];
  for (let k = 0; k < value.length; k++) {
    const itemLabel = `${label}[${k}]`;
    const item: unknown = value[k];
    if (typeof item !== 'string') {
      scope.add(itemLabel, `${itemLabel} must be a string, got ${describe(item)}`);
      continue;
    }
    const text = checkedText(scope, itemLabel, item, false);
    if (text !== null) out.push(text);
  }
  return out;
}

/** Marks a date field whose value was refused (a problem is already reported). */
const INVALID = Symbol('invalid');

function optionalDate(scope: RecordScope, label: string, value: unknown): string | null | typeof INVALID {
  if (value === undefined || value === null) return null;
  const date = dateText(scope, label, value, true);
  return date ?? INVALID;
}

function requiredDate(scope: RecordScope, label: string, value: unknown): string | null {
  if (value === undefined || value === null) {
    scope.add(label, `${label} is required`);
    return null;
  }
  return dateText(scope, label, value, false);
}

function dateText(scope: RecordScope, label: string, value: unknown, nullable: boolean): string | null {
  if (typeof value !== 'string') {
    scope.add(label, `${label} must be a "YYYY-MM-DD" date${nullable ? ' or null' : ''}, got ${describe(value)}`);
    return null;
  }
  const text = checkedText(scope, label, value, nullable);
  if (text === null) return null;
  if (dateToEpochMs(text) === null) {
    scope.add(label, `${label} ${quote(text)} is not a real "YYYY-MM-DD" date`);
    return null;
  }
  return text;
}

function checkSnapshot(value: unknown, index: number, problems: Problems, keys: SnapshotKeys): SnapshotRecord | null {
  if (!isPlainObject(value)) {
    problems.add(`gmp[${index}]`, `a GMP snapshot must be an object with "ipoId", "timestamp" and "sources", got ${describe(value)}`, index);
    return null;
  }
  const scope = new RecordScope(problems, 'gmp', index);
  const before = problems.count;
  unknownKeys(scope, value, SNAPSHOT_KEYS, 'a GMP snapshot');

  const ipoId = requiredText(scope, 'ipoId', own(value, 'ipoId'));
  const ipoIdOk = ipoId !== null && matches(scope, 'ipoId', ipoId, ID_RE, ID_FORM);
  const timestamp = checkTimestamp(scope, own(value, 'timestamp'));
  const sources = checkSources(scope, own(value, 'sources'));

  // A duplicate (ipoId, instant) is reported on the later record by `duplicates()`; an
  // unknown IPO (the store's part) by `naming()`, which needs the ipoId even without an instant.
  keys.add(ipoIdOk ? ipoId : null, timestamp);

  if (problems.count !== before || ipoId === null || timestamp === null || sources === null) return null;
  sources.sort((a, b) => compareCodePoints(a.name, b.name));
  return { ipoId, timestamp, sources, aggregations: aggregatePaise(sources.map((s) => s.paise)) };
}

function checkTimestamp(scope: RecordScope, value: unknown): number | null {
  if (value === undefined || value === null) {
    scope.add('timestamp', 'timestamp is required');
    return null;
  }
  if (typeof value !== 'string') {
    scope.add('timestamp', `timestamp must be an ISO-8601 instant string, got ${describe(value)}`);
    return null;
  }
  const text = checkedText(scope, 'timestamp', value, false);
  if (text === null) return null;
  const ms = parseInstant(text);
  if (ms === null) {
    scope.add(
      'timestamp',
      `timestamp ${quote(text)} is not an ISO-8601 instant with "Z" or an offset and at most 3 fractional digits`,
    );
    return null;
  }
  if (ms < MIN_SNAPSHOT_INSTANT || ms > MAX_SNAPSHOT_INSTANT) {
    scope.add('timestamp', `timestamp ${quote(text)} is outside 2000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z`);
    return null;
  }
  return ms;
}

function checkSources(scope: RecordScope, value: unknown): Array<{ name: string; paise: number }> | null {
  if (value === undefined || value === null) {
    scope.add('sources', 'sources is required (an array, possibly empty)');
    return null;
  }
  if (!Array.isArray(value)) {
    scope.add('sources', `sources must be an array of { "name", "gmpPrice" } objects, got ${describe(value)}`);
    return null;
  }
  const out: Array<{ name: string; paise: number }> = [];
  const names = new Map<string, number>();
  for (let k = 0; k < value.length; k++) {
    const label = `sources[${k}]`;
    const item: unknown = value[k];
    if (!isPlainObject(item)) {
      scope.add(label, `a source must be an object with "name" and "gmpPrice", got ${describe(item)}`);
      continue;
    }
    unknownKeys(scope, item, SOURCE_KEYS, 'a source', `${label}.`);
    const name = requiredText(scope, `${label}.name`, own(item, 'name'));
    const paise = checkGmpPrice(scope, `${label}.gmpPrice`, item);
    if (name !== null) {
      const earlier = names.get(name);
      if (earlier === undefined) names.set(name, k);
      else scope.add(`${label}.name`, `source name ${quote(name)} is already used by sources[${earlier}] of this snapshot`);
    }
    if (name !== null && typeof paise === 'number') out.push({ name, paise });
  }
  return out;
}

/** The price in paise, `null` for a source without a price, `undefined` when refused. */
function checkGmpPrice(scope: RecordScope, label: string, item: PlainObject): number | null | undefined {
  if (!Object.prototype.hasOwnProperty.call(item, 'gmpPrice') || item['gmpPrice'] === undefined) {
    scope.add(label, 'gmpPrice is required (a number, or null when the source has no price)');
    return undefined;
  }
  const value = item['gmpPrice'];
  if (value === null) return null;
  if (typeof value !== 'number') {
    scope.add(label, `gmpPrice must be a number or null, got ${describe(value)}`);
    return undefined;
  }
  // Whole rupees are the common case: exact without the decimal-string work of toPaise.
  if (Number.isInteger(value) && Math.abs(value) < 10_000_000) return value * 100 + 0;
  const paise = toPaise(value);
  if (paise !== null) return paise;
  if (!Number.isFinite(value)) scope.add(label, `gmpPrice ${String(value)} is not a finite number`);
  else if (Math.abs(value) >= 10_000_000) scope.add(label, `gmpPrice ${String(value)} has a magnitude of 10,000,000 or more`);
  else scope.add(label, `gmpPrice ${String(value)} has more than 2 decimals`);
  return undefined;
}

/**
 * A GMP price as a dataset's source gives it (`gmpPrice`, docs/spec.md#datasets), checked by
 * the same rule: its paise, null for null, or the problem's message. For data that carries
 * prices outside a dataset (a source's GMP reports, docs/spec.md#sources).
 *
 * @example
 * ```ts
 * readGmpPrice(42.5);   // { paise: 4250 }
 * readGmpPrice(null);   // { paise: null }
 * readGmpPrice(1.234);  // { problem: 'gmpPrice 1.234 has more than 2 decimals' }
 * ```
 */
export function readGmpPrice(value: unknown): { paise: number | null } | { problem: string } {
  const problems = new Problems();
  const paise = checkGmpPrice(new RecordScope(problems, 'gmp', 0), 'gmpPrice', { gmpPrice: value });
  if (paise === undefined) return { problem: problems.list[0]?.message ?? 'gmpPrice is not a price' };
  return { paise };
}

function checkSubscription(value: unknown, index: number, problems: Problems, keys: SnapshotKeys): SubscriptionRecord | null {
  if (!isPlainObject(value)) {
    problems.add(`subscription[${index}]`, `a subscription snapshot must be an object with "ipoId", "timestamp" and "times", got ${describe(value)}`, index);
    return null;
  }
  const scope = new RecordScope(problems, 'subscription', index);
  const before = problems.count;
  unknownKeys(scope, value, SUBSCRIPTION_KEYS, 'a subscription snapshot');

  const ipoId = requiredText(scope, 'ipoId', own(value, 'ipoId'));
  const ipoIdOk = ipoId !== null && matches(scope, 'ipoId', ipoId, ID_RE, ID_FORM);
  const timestamp = checkTimestamp(scope, own(value, 'timestamp'));
  const times = checkTimes(scope, own(value, 'times'));

  // Duplicates and unknown IPOs as for GMP snapshots (see checkSnapshot), in their own part.
  keys.add(ipoIdOk ? ipoId : null, timestamp);

  if (problems.count !== before || ipoId === null || timestamp === null || times === null) return null;
  return { ipoId, timestamp, times: fullTimes(times) };
}

/**
 * A subscription snapshot's `times`: an object of categories only, at least one given, each
 * a number of times subscribed or null (docs/spec.md#datasets). The categories given, or
 * null when refused.
 */
function checkTimes(scope: RecordScope, value: unknown): Partial<SubscriptionTimes> | null {
  if (value === undefined || value === null) {
    scope.add('times', `times is required (an object giving at least one of ${CATEGORY_LIST})`);
    return null;
  }
  if (!isPlainObject(value)) {
    scope.add('times', `times must be an object of times subscribed by category, got ${describe(value)}`);
    return null;
  }
  const before = scope.count;
  for (const key of Object.keys(value)) {
    if (!CATEGORY_KEYS.has(key)) scope.add(`times.${cut(key, PATH_KEY_LENGTH)}`, `unknown category ${quote(key)} in times: the categories are ${CATEGORY_LIST}`);
  }
  const times: Partial<SubscriptionTimes> = {};
  let given = 0;
  for (const category of SUBSCRIPTION_CATEGORIES) {
    const item = own(value, category);
    if (item === undefined) continue;
    given += 1;
    const label = `times.${category}`;
    if (item === null) times[category] = null;
    else if (typeof item !== 'number') scope.add(label, `${label} must be a number or null, got ${describe(item)}`);
    else if (!Number.isFinite(item)) scope.add(label, `${label} ${String(item)} is not a finite number`);
    else if (item < 0) scope.add(label, `${label} ${String(item)} is negative`);
    else if (item >= PRICE_LIMIT) scope.add(label, `${label} ${String(item)} is ${thousands(PRICE_LIMIT)} or more`);
    else if (!isSubscriptionTimes(item)) scope.add(label, `${label} ${String(item)} has more than 2 decimals`);
    else times[category] = item;
  }
  if (given === 0) scope.add('times', `times gives no category: give at least one of ${CATEGORY_LIST} (null for one the issue does not have)`);
  return scope.count === before ? times : null;
}

// ---- shared checks ----------------------------------------------------------------

function unknownKeys(scope: RecordScope, value: PlainObject, allowed: ReadonlySet<string>, what: string, prefix = ''): void {
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) scope.add(`${prefix}${cut(key, PATH_KEY_LENGTH)}`, `unknown field ${quote(key)} in ${what}`);
  }
}

function requiredText(scope: RecordScope, label: string, value: unknown): string | null {
  if (value === undefined || value === null) {
    scope.add(label, `${label} is required`);
    return null;
  }
  if (typeof value !== 'string') {
    scope.add(label, `${label} must be a string, got ${describe(value)}`);
    return null;
  }
  return checkedText(scope, label, value, false);
}

function optionalText(scope: RecordScope, label: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    scope.add(label, `${label} must be a string or null, got ${describe(value)}`);
    return null;
  }
  return checkedText(scope, label, value, true);
}

/** The docs/spec.md#datasets rules every string obeys; reports and returns null when one fails. */
function checkedText(scope: RecordScope, label: string, text: string, nullable: boolean): string | null {
  if (text.length === 0) {
    scope.add(label, `${label} is an empty string${nullable ? ' (write null for an unknown value)' : ''}`);
    return null;
  }
  if (!text.isWellFormed()) {
    scope.add(label, `${label} ${quote(text)} is not valid Unicode (it holds a lone surrogate)`);
    return null;
  }
  if (text.includes('\u0000')) {
    scope.add(label, `${label} ${quote(text)} holds a NUL character`);
    return null;
  }
  if (text.length > MAX_TEXT_LENGTH) {
    const length = codePointLength(text);
    if (length > MAX_TEXT_LENGTH) {
      // Without the length: a streaming reader keeps only the start of a longer string.
      scope.add(label, `${label} ${quote(text)} is longer than ${thousands(MAX_TEXT_LENGTH)} characters`);
      return null;
    }
  }
  return text;
}

function matches(scope: RecordScope, label: string, text: string, re: RegExp, form: string): boolean {
  if (re.test(text)) return true;
  scope.add(label, `${label} ${quote(text)} is not valid: ${form}`);
  return false;
}

/** Code points of a well-formed string: its length less one per surrogate pair. */
function codePointLength(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n -= 1;
  }
  return n;
}

function isPlainObject(value: unknown): value is PlainObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.prototype.toString.call(value) === '[object Object]'
  );
}

/** An own property's value (never an inherited one such as `toString`). */
function own(value: PlainObject, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined;
}

/** A string cut to `max` code points, with "…" when cut. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = '';
  let n = 0;
  for (const ch of text) {
    if (n === max) return `${out}…`;
    out += ch;
    n += 1;
  }
  return out;
}

/**
 * A value as a dataset problem's message quotes it (docs/spec.md#datasets): a JSON string of
 * at most 50 code points, then `…` when cut (lone surrogates and NUL escaped). For the
 * problems found elsewhere (a store's conflicts) to read as the checker's do.
 *
 * @example
 * ```ts
 * quote('acme');          // '"acme"'
 * quote('x'.repeat(60));  // '"xxx…x"…' (the first 50 x's inside the quotes)
 * ```
 */
export function quote(text: string): string {
  const short = cut(text, QUOTE_LENGTH);
  return short === text ? JSON.stringify(text) : `${JSON.stringify(short.slice(0, -1))}…`;
}

/** What a value of the wrong type is, for messages. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return `the string ${quote(value)}`;
    case 'number':
      return `the number ${String(value)}`;
    case 'boolean':
      return `the boolean ${String(value)}`;
    case 'bigint':
      return `the bigint ${cut(String(value), QUOTE_LENGTH)}`;
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

/** A whole number with thousands separators, `10,000` (as messages write limits). */
function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
