/**
 * Builders and fast-check arbitraries of valid store records (docs/spec.md#ipo-object, #status, #storage): ids,
 * symbols and slugs in their forms and unique (symbols ignoring ASCII case), dates in
 * status order, snapshots whose aggregations are computed by `aggregatePaise`.
 *
 * The alphabets are small on purpose: ties in dates and names, ids that equal another
 * IPO's symbol or slug, and symbols that differ only in case come up often.
 */
import fc from 'fast-check';
import { addDays, aggregatePaise, asciiLower, compareCodePoints, DAY_MS, IPO_FIELDS, type IpoRecord, MAX_GMP_PAISE, paiseToRupees, type SnapshotRecord, type SubscriptionRecord, toIsoUtc } from '@ipokit/core/backend';
import { type Dataset, EXCHANGES, SUBSCRIPTION_CATEGORIES, type SubscriptionTimes, type Exchange, type IpoDates, type IpoType, type ListingPrice, type ScheduleEvent } from '@ipokit/core';

/** The first day the date arbitraries draw from by default. */
export const ARBITRARY_FIRST_DAY = '2026-12-10';
/** How many days the date arbitraries span by default (across a year boundary). */
export const ARBITRARY_DAYS = 40;
/** The first instant the snapshot arbitraries draw from by default: 2026-12-01T00:00:00Z. */
export const ARBITRARY_FIRST_INSTANT = Date.UTC(2026, 11, 1);
/** How many days of instants the snapshot arbitraries span by default. */
export const ARBITRARY_INSTANT_DAYS = 35;

/** Where the date arbitraries draw from: `days` days starting at `firstDay`. */
export interface DateRangeOptions {
  /** `YYYY-MM-DD`; default {@link ARBITRARY_FIRST_DAY}. */
  firstDay?: string;
  /** Default {@link ARBITRARY_DAYS}. */
  days?: number;
}

/** Options of {@link ipoRecordsArbitrary} and {@link datasetArbitrary}. */
export interface DatasetArbitraryOptions extends DateRangeOptions {
  /** Fewest IPOs; default 0. */
  minIpos?: number;
  /** Most IPOs; default 40. */
  maxIpos?: number;
  /** Most snapshots; default 200. */
  maxSnapshots?: number;
  /** Most subscription snapshots; default 60. */
  maxSubscription?: number;
  /** First instant of snapshots (ms); default {@link ARBITRARY_FIRST_INSTANT}. */
  firstInstant?: number;
  /** Days of snapshot instants; default {@link ARBITRARY_INSTANT_DAYS}. */
  instantDays?: number;
}

/** A dataset as a store's `writeDataset` takes it. */
export interface RecordDataset {
  ipos: IpoRecord[];
  snapshots: SnapshotRecord[];
  /** Subscription snapshots (absent: none). */
  subscription?: SubscriptionRecord[];
}

/**
 * A valid IPO record from the fields that matter to a test: every other field is null
 * or empty (as `IPO_FIELDS` declares it: `[]` for a list, else `null`), `name` defaults to
 * the id, `slug` to `ipo-` and the hex of the id's code points (unique per ASCII id; pass
 * `slug` explicitly for ids over 62 characters), `type` to EQ.
 *
 * @example
 * ```ts
 * makeIpo({ id: 'a1', symbol: 'ABC', startDate: '2026-11-20', endDate: '2026-11-24' });
 * ```
 */
export function makeIpo(fields: Partial<IpoRecord> & Pick<IpoRecord, 'id'>): IpoRecord {
  const given = fields as Partial<Record<string, unknown>>;
  const record: Record<string, unknown> = {};
  for (const name of STORED_FIELDS) {
    const value = given[name];
    if (value !== undefined && value !== null) record[name] = value;
    else if (name === 'name') record[name] = fields.id;
    else if (name === 'slug') record[name] = `ipo-${[...fields.id].map((c) => (c.codePointAt(0) ?? 0).toString(16)).join('')}`;
    else if (name === 'type') record[name] = 'EQ';
    else record[name] = (IPO_FIELDS[name].schema as { type?: unknown }).type === 'array' ? [] : null;
  }
  return record as unknown as IpoRecord;
}

/** The fields of an IPO record, in order: those of `IPO_FIELDS` that are not derived. */
const STORED_FIELDS = (Object.keys(IPO_FIELDS) as Array<keyof typeof IPO_FIELDS>).filter((name) => IPO_FIELDS[name].check !== 'derived');

/**
 * A snapshot record from its prices in paise by source name (a name with a `null`
 * price did not report and is left out); sources are sorted by name in code-point order
 * and the aggregations computed with `aggregatePaise`, as the core does at import.
 *
 * @example
 * ```ts
 * makeSnapshot('a1', '2026-11-18T09:30:00.000Z', { ipowatch: 4200, investorgain: null });
 * ```
 */
export function makeSnapshot(ipoId: string, timestamp: number | string, prices: Readonly<Record<string, number | null>>): SnapshotRecord {
  const sources = Object.entries(prices)
    .flatMap(([name, paise]) => (paise === null ? [] : [{ name, paise }]))
    .sort((a, b) => compareCodePoints(a.name, b.name));
  return {
    ipoId,
    timestamp: typeof timestamp === 'number' ? timestamp : Date.parse(timestamp),
    sources,
    aggregations: aggregatePaise(sources.map((s) => s.paise)),
  };
}

/**
 * A subscription snapshot record from the categories given (every other one null), keys
 * in the order of `SUBSCRIPTION_CATEGORIES`, as stores keep it.
 *
 * @example
 * ```ts
 * makeSubscription('a1', '2026-11-18T09:30:00.000Z', { retail: 4.12, total: 2.5 });
 * ```
 */
export function makeSubscription(ipoId: string, timestamp: number | string, times: Partial<SubscriptionTimes>): SubscriptionRecord {
  const full = {} as SubscriptionTimes;
  for (const category of SUBSCRIPTION_CATEGORIES) full[category] = times[category] ?? null;
  return { ipoId, timestamp: typeof timestamp === 'number' ? timestamp : Date.parse(timestamp), times: full };
}

/** What {@link toDataset} returns: `ipos` and `gmp` always, `subscription` when the records have it. */
export type RecordsAsDataset = Required<Pick<Dataset, 'ipos' | 'gmp'>> & Pick<Dataset, 'subscription'>;

/**
 * The dataset form (docs/spec.md#datasets) of store records, for `importDataset`: snapshot
 * timestamps as ISO strings and prices in rupees; the `subscription` part (every category
 * written out) only when the records have one.
 *
 * @example
 * ```ts
 * await importDataset(store, toDataset({ ipos, snapshots }));
 * ```
 */
export function toDataset(records: RecordDataset): RecordsAsDataset {
  const dataset: RecordsAsDataset = {
    ipos: records.ipos.map((ipo) => ({ ...ipo })),
    gmp: records.snapshots.map((s) => ({
      ipoId: s.ipoId,
      timestamp: toIsoUtc(s.timestamp),
      sources: s.sources.map((src) => ({ name: src.name, gmpPrice: paiseToRupees(src.paise) })),
    })),
  };
  if (records.subscription !== undefined) {
    dataset.subscription = records.subscription.map((s) => ({ ipoId: s.ipoId, timestamp: toIsoUtc(s.timestamp), times: { ...s.times } }));
  }
  return dataset;
}

/**
 * A real calendar day `YYYY-MM-DD` among `days` days from `firstDay`.
 *
 * @example
 * ```ts
 * fc.sample(isoDateArbitrary({ firstDay: '2026-01-01', days: 31 }), 1); // e.g. ['2026-01-17']
 * ```
 */
export function isoDateArbitrary(options: DateRangeOptions = {}): fc.Arbitrary<string> {
  const first = options.firstDay ?? ARBITRARY_FIRST_DAY;
  const days = options.days ?? ARBITRARY_DAYS;
  return fc.integer({ min: 0, max: days - 1 }).map((n) => addDays(first, n));
}

/**
 * Dates that follow the transitions of docs/spec.md#status: no endDate or listingDate without a
 * startDate, and startDate <= endDate <= listingDate (listingDate >= startDate when
 * endDate is null). About one in five is announced (all null); start dates cluster on a
 * few days so that ties are common.
 *
 * @example
 * ```ts
 * fc.sample(ipoDatesArbitrary(), 1); // e.g. [{ startDate: '2026-12-14', endDate: null, listingDate: '2026-12-19' }]
 * ```
 */
export function ipoDatesArbitrary(options: DateRangeOptions = {}): fc.Arbitrary<IpoDates> {
  const announced = fc.constant<IpoDates>({ startDate: null, endDate: null, listingDate: null });
  // A few "busy" days make ties on every sort key common.
  const days = options.days ?? ARBITRARY_DAYS;
  const busy = fc.constantFrom(...[5, 21, 22, 30].filter((d) => d < days)).map((d) => addDays(options.firstDay ?? ARBITRARY_FIRST_DAY, d));
  const dated = fc
    .tuple(
      days > 30 ? fc.oneof(isoDateArbitrary(options), busy) : isoDateArbitrary(options),
      fc.option(fc.integer({ min: 0, max: 5 }), { nil: null }),
      fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }),
    )
    .map(([start, endAfter, listingAfter]): IpoDates => {
      const endDate = endAfter === null ? null : addDays(start, endAfter);
      const listingDate = listingAfter === null ? null : addDays(endDate ?? start, listingAfter);
      return { startDate: start, endDate, listingDate };
    });
  return fc.oneof({ weight: 1, arbitrary: announced }, { weight: 4, arbitrary: dated });
}

/**
 * An IPO id `[A-Za-z0-9][A-Za-z0-9._-]{0,63}` from a small alphabet (so that ids tie
 * with symbols and slugs of other IPOs and differ only in case).
 *
 * @example
 * ```ts
 * fc.sample(ipoIdArbitrary(), 3); // e.g. ['a', 'B1.', 'b-a']
 * ```
 */
export function ipoIdArbitrary(): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...'aAbB1'), fc.string({ unit: fc.constantFrom(...'aAbB1._-'), maxLength: 3 }))
    .map(([first, rest]) => first + rest);
}

/**
 * A ticker symbol `[A-Za-z0-9][A-Za-z0-9&._-]{0,31}` from a small alphabet (with `k`
 * and `s`, whose Unicode lookalikes fold to them outside ASCII).
 *
 * @example
 * ```ts
 * fc.sample(symbolArbitrary(), 3); // e.g. ['AB', 'a&1', 'b-']
 * ```
 */
export function symbolArbitrary(): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...'aAbBkS1'), fc.string({ unit: fc.constantFrom(...'aAbBkKsS1&._-'), maxLength: 3 }))
    .map(([first, rest]) => first + rest);
}

/**
 * A slug `[a-z0-9]+(-[a-z0-9]+)*` from a small alphabet.
 *
 * @example
 * ```ts
 * fc.sample(slugArbitrary(), 3); // e.g. ['a', 'ab-1', 'b1']
 * ```
 */
export function slugArbitrary(): fc.Arbitrary<string> {
  const part = fc.string({ unit: fc.constantFrom(...'abks1'), minLength: 1, maxLength: 3 });
  return fc.array(part, { minLength: 1, maxLength: 2 }).map((parts) => parts.join('-'));
}

/**
 * An IPO name that exercises code-point order: ASCII of both cases, `é`, characters in
 * U+E000-U+FFFF (which UTF-16 order puts after surrogates) and above U+FFFF. Short, so
 * that names tie.
 *
 * @example
 * ```ts
 * fc.sample(ipoNameArbitrary(), 3); // e.g. ['Z', 'a\u{1F600}', '\uE000']
 * ```
 */
export function ipoNameArbitrary(): fc.Arbitrary<string> {
  return fc.string({ unit: fc.constantFrom('a', 'B', 'Z', 'é', '\uE000', '\uFFFD', '\u{10000}', '\u{1F600}'), minLength: 1, maxLength: 3 });
}

/**
 * A non-empty text field: well-formed Unicode without NUL, at most 8 characters, with
 * quotes, backslashes and SQL wildcards now and then.
 *
 * @example
 * ```ts
 * fc.sample(textArbitrary(), 2); // e.g. ['%_', 'ꡛ𛇭']
 * ```
 */
export function textArbitrary(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).filter((s) => s.length > 0 && !s.includes('\u0000') && s.isWellFormed()),
    fc.constantFrom('a', 'é', '\u{1F600}', `O'Brien "q"`, '\\', '%_', 'line\nbreak'),
  );
}

/**
 * A complete, valid IPO record (docs/spec.md#ipo-object, #datasets). Uniqueness across records is the job of
 * {@link ipoRecordsArbitrary}.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(ipoRecordArbitrary(), (ipo) => ipo.slug.length <= 128));
 * ```
 */
export function ipoRecordArbitrary(options: DateRangeOptions = {}): fc.Arbitrary<IpoRecord> {
  const optText = fc.option(textArbitrary(), { nil: null, freq: 2 });
  const url = fc.option(fc.constantFrom('https://example.com/a', 'https://example.com/ipo?x=1&y=%20', 'http://x.test/\u{1F600}'), { nil: null });
  const exchanges = fc.constantFrom<Exchange[]>([], ['nse'], ['bse'], ['nse', 'bse']).map((e) => [...e]);
  const price = fc.integer({ min: 1, max: 99_999 }).map((p) => (p % 7 === 0 ? (p / 100).toFixed(2) : String(p)));
  const priceRange = fc.option(
    fc.tuple(price, price).map(([a, b]) => (Number(a) <= Number(b) ? `${a}-${b}` : `${b}-${a}`)),
    { nil: null },
  );
  const schedule = fc
    .array(fc.record({ event: textArbitrary(), date: isoDateArbitrary(options) }), { maxLength: 4 })
    // Array.prototype.sort is stable: same-day events keep their order.
    .map((events: ScheduleEvent[]) => [...events].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)));
  const texts = fc.array(textArbitrary(), { maxLength: 3 });
  return fc
    .record({
      id: ipoIdArbitrary(),
      name: ipoNameArbitrary(),
      symbol: fc.option(symbolArbitrary(), { nil: null, freq: 6 }),
      slug: slugArbitrary(),
      type: fc.constantFrom<IpoType>('EQ', 'SME', 'DEBT'),
      exchanges,
      infoUrl: url,
      nseInfoUrl: url,
      prospectusUrl: url,
      logo: url,
      dates: ipoDatesArbitrary(options),
      priceRange,
      minQty: fc.option(fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.constant(2_147_483_647)), { nil: null }),
      minAmount: fc.option(fc.oneof(fc.integer({ min: 0, max: 10_000_000 }), fc.constant(2_147_483_647)), { nil: null }),
      issueSize: fc.option(fc.constantFrom('192cr', '1,200.5cr', '50 lakh'), { nil: null }),
      listingGain: fc.option(fc.constantFrom('15.5', '-2', '0', '120.25'), { nil: null }),
      schedule,
      about: optText,
      strengths: texts,
      risks: texts,
      mediaCoverageLinks: fc.array(fc.constantFrom('https://news.test/1', 'https://news.test/2'), { maxLength: 2 }),
      registrar: optText,
      leadManagers: texts,
      marketMaker: optText,
      sector: fc.option(fc.constantFrom('Banking', 'Retail', 'Aerospace & Defence'), { nil: null }),
      listingPrices: listingPricesArbitrary(),
    })
    .map(({ dates, ...fields }) => makeIpo({ ...fields, ...dates }));
}

/**
 * An IPO record's `listingPrices`: none, or one entry for `nse` and/or `bse` (in that order)
 * with rupee prices of at most 2 decimals, below 10,000,000, and low <= open, close <= high.
 *
 * @example
 * ```ts
 * fc.sample(listingPricesArbitrary(), 1); // e.g. [[{ exchange: 'nse', open: 101.5, high: 104, low: 99.95, close: 103 }]]
 * ```
 */
export function listingPricesArbitrary(): fc.Arbitrary<ListingPrice[]> {
  const paise = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 200_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: MAX_GMP_PAISE - 1 }) });
  const prices = (exchange: Exchange): fc.Arbitrary<ListingPrice> =>
    fc.array(paise, { minLength: 4, maxLength: 4 }).map((four) => {
      const [low, open, close, high] = [...four].sort((a, b) => a - b).map(paiseToRupees) as [number, number, number, number];
      return { exchange, open, high, low, close };
    });
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant<ListingPrice[]>([]) },
    { weight: 3, arbitrary: fc.subarray([...EXCHANGES], { minLength: 1 }).chain((exchanges) => fc.tuple(...exchanges.map(prices)).map((list): ListingPrice[] => [...list])) },
  );
}

/**
 * IPO records with unique ids, unique slugs and symbols unique ignoring ASCII case: a
 * valid `ipos` part of a dataset.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(ipoRecordsArbitrary({ maxIpos: 10 }), (ipos) => new Set(ipos.map((i) => i.id)).size === ipos.length));
 * ```
 */
export function ipoRecordsArbitrary(options: DatasetArbitraryOptions = {}): fc.Arbitrary<IpoRecord[]> {
  return fc.uniqueArray(ipoRecordArbitrary(options), {
    minLength: options.minIpos ?? 0,
    maxLength: options.maxIpos ?? 40,
    size: 'medium',
    comparator: (a, b) =>
      a.id === b.id || a.slug === b.slug || (a.symbol !== null && b.symbol !== null && asciiLower(a.symbol) === asciiLower(b.symbol)),
  });
}

/**
 * A snapshot instant: often on or next to a bucket boundary (5 min to a week), else
 * anywhere in the range.
 *
 * @example
 * ```ts
 * fc.sample(instantArbitrary(), 1); // e.g. [1764892800000]
 * ```
 */
export function instantArbitrary(options: { firstInstant?: number; instantDays?: number } = {}): fc.Arbitrary<number> {
  const first = options.firstInstant ?? ARBITRARY_FIRST_INSTANT;
  const days = options.instantDays ?? ARBITRARY_INSTANT_DAYS;
  const nearBoundary = fc
    .tuple(
      fc.integer({ min: 0, max: days - 1 }),
      fc.constantFrom(0, 4, 5, 9, 10, 14, 15, 29, 30, 59, 60, 61, 719, 1439),
      fc.constantFrom(0, 1, 999, 59_999),
    )
    .map(([d, minute, ms]) => first + d * DAY_MS + minute * 60_000 + ms);
  return fc.oneof(nearBoundary, fc.integer({ min: first, max: first + days * DAY_MS - 1 }));
}

/**
 * A snapshot record of one of `ipoIds`: up to 4 sources (unique names, prices in paise
 * within the contract's range, often small), aggregations from `aggregatePaise`.
 *
 * @example
 * ```ts
 * fc.sample(snapshotRecordArbitrary(['a1']), 1); // e.g. [{ ipoId: 'a1', timestamp: ..., sources: [...], aggregations: {...} }]
 * ```
 */
export function snapshotRecordArbitrary(
  ipoIds: readonly string[],
  options: { firstInstant?: number; instantDays?: number } = {},
): fc.Arbitrary<SnapshotRecord> {
  const paise = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: -2_000, max: 20_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: -(MAX_GMP_PAISE - 1), max: MAX_GMP_PAISE - 1 }) },
  );
  const name = fc.oneof(fc.constantFrom('ipowatch', 'investorgain', 'B', 'a', '\uE000x', '\u{1F600}'), textArbitrary());
  const sources = fc.uniqueArray(fc.record({ name, paise }), { maxLength: 4, selector: (s) => s.name });
  return fc
    .record({ ipoId: fc.constantFrom(...ipoIds), timestamp: instantArbitrary(options), sources })
    .map(({ ipoId, timestamp, sources: list }) => {
      const sorted = [...list].sort((a, b) => compareCodePoints(a.name, b.name));
      return { ipoId, timestamp, sources: sorted, aggregations: aggregatePaise(sorted.map((s) => s.paise)) };
    });
}

/**
 * A category's times subscribed: a number >= 0 with at most 2 decimals below 10,000,000,
 * often small, sometimes 0 or the largest allowed.
 *
 * @example
 * ```ts
 * fc.sample(subscriptionValueArbitrary(), 3); // e.g. [0, 12.34, 9999999.99]
 * ```
 */
export function subscriptionValueArbitrary(): fc.Arbitrary<number> {
  return fc
    .oneof(
      { weight: 5, arbitrary: fc.integer({ min: 0, max: 50_000 }) },
      { weight: 1, arbitrary: fc.constantFrom(0, 1, 999_999_999) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 999_999_999 }) },
    )
    .map((hundredths) => paiseToRupees(hundredths));
}

/**
 * A full `times` object: every category, each a value or null (about one in three).
 *
 * @example
 * ```ts
 * fc.sample(subscriptionTimesArbitrary(), 1); // e.g. [{ qib: 1.5, nii: null, ..., total: 3.25 }]
 * ```
 */
export function subscriptionTimesArbitrary(): fc.Arbitrary<SubscriptionTimes> {
  const value = fc.option(subscriptionValueArbitrary(), { nil: null, freq: 3 });
  return fc.tuple(...SUBSCRIPTION_CATEGORIES.map(() => value)).map((values) => {
    const times = {} as SubscriptionTimes;
    SUBSCRIPTION_CATEGORIES.forEach((category, i) => {
      times[category] = values[i] ?? null;
    });
    return times;
  });
}

/**
 * A subscription snapshot record of one of `ipoIds` (instants as {@link instantArbitrary}).
 *
 * @example
 * ```ts
 * fc.sample(subscriptionRecordArbitrary(['a1']), 1); // e.g. [{ ipoId: 'a1', timestamp: ..., times: {...} }]
 * ```
 */
export function subscriptionRecordArbitrary(
  ipoIds: readonly string[],
  options: { firstInstant?: number; instantDays?: number } = {},
): fc.Arbitrary<SubscriptionRecord> {
  return fc.record({ ipoId: fc.constantFrom(...ipoIds), timestamp: instantArbitrary(options), times: subscriptionTimesArbitrary() });
}

/**
 * A valid dataset of store records: unique IPOs ({@link ipoRecordsArbitrary}), GMP
 * snapshots and subscription snapshots of those IPOs, each unique by (ipoId, timestamp).
 *
 * @example
 * ```ts
 * fc.assert(fc.asyncProperty(datasetArbitrary({ maxIpos: 10 }), async (data) => {
 *   expect(await store.writeDataset(data)).toEqual([]);
 * }));
 * ```
 */
export function datasetArbitrary(options: DatasetArbitraryOptions = {}): fc.Arbitrary<RecordDataset> {
  return ipoRecordsArbitrary(options).chain((ipos) => {
    if (ipos.length === 0) return fc.constant<RecordDataset>({ ipos, snapshots: [], subscription: [] });
    const ids = ipos.map((i) => i.id);
    const snapshots = fc.uniqueArray(snapshotRecordArbitrary(ids, options), {
      maxLength: options.maxSnapshots ?? 200,
      size: 'medium',
      selector: (s) => `${s.timestamp}\u0000${s.ipoId}`,
    });
    const subscription = fc.uniqueArray(subscriptionRecordArbitrary(ids, options), {
      maxLength: options.maxSubscription ?? 60,
      size: 'small',
      selector: (s) => `${s.timestamp}\u0000${s.ipoId}`,
    });
    return fc.tuple(snapshots, subscription).map(([list, subs]) => ({ ipos, snapshots: list, subscription: subs }));
  });
}
