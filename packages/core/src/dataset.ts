/**
 * Validation of a whole dataset (CONTRACT 1, 2, 6, 9): every IPO record and GMP snapshot
 * is checked, problems are collected in dataset order, and a valid dataset comes back as
 * the normalised records stores keep.
 */
import { aggregatePaise } from './aggregate.js';
import { dateToEpochMs, parseInstant } from './dates.js';
import { IpokitError, type DatasetProblem } from './errors.js';
import { toPaise } from './numbers.js';
import { compareCodePoints } from './status.js';
import type { Exchange, IpoRecord, IpoType, ScheduleEvent, SnapshotRecord } from './types.js';

/** How many problems an `ERR:DATASET` error lists at most (`problemCount` gives the total). */
export const MAX_DATASET_PROBLEMS = 1000;

/** The longest string a dataset may hold, in code points. */
const MAX_DATASET_STRING_LENGTH = 10_000;

/** Earliest snapshot instant accepted: 2000-01-01T00:00:00.000Z. */
const MIN_SNAPSHOT_INSTANT = Date.UTC(2000, 0, 1);

/** Latest snapshot instant accepted: 9999-12-31T23:59:59.999Z. */
const MAX_SNAPSHOT_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const MAX_SLUG_LENGTH = 128;
const MAX_INT32 = 2_147_483_647;
/** How much of a bad value a message quotes, in code points. */
const QUOTE_LENGTH = 50;

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const SYMBOL_RE = /^[A-Za-z0-9][A-Za-z0-9&._-]{0,31}$/;
const SLUG_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const PRICE_RANGE_RE = /^(\d+)(?:\.(\d{1,2}))?-(\d+)(?:\.(\d{1,2}))?$/;
const LISTING_GAIN_RE = /^-?\d+(?:\.\d+)?$/;
const UPPER_RE = /[A-Z]/;
const LEADING_ZEROS_RE = /^0+(?=\d)/;

const ID_FORM = 'an id is 1 to 64 of A-Z, a-z, 0-9, ".", "_" and "-", starting with a letter or digit';

const TOP_LEVEL_KEYS: ReadonlySet<string> = new Set(['ipos', 'gmp']);

/** Fields an IPO record may carry: those of IpoRecord plus the derived ones, which are ignored. */
const IPO_KEYS: ReadonlySet<string> = new Set([
  'id',
  'name',
  'symbol',
  'slug',
  'type',
  'isSme',
  'exchanges',
  'infoUrl',
  'nseInfoUrl',
  'prospectusUrl',
  'logo',
  'startDate',
  'endDate',
  'listingDate',
  'priceRange',
  'minQty',
  'lotSize',
  'minAmount',
  'issueSize',
  'listingGain',
  'status',
  'schedule',
  'about',
  'strengths',
  'risks',
  'mediaCoverageLinks',
  'gmp',
]);
const SCHEDULE_KEYS: ReadonlySet<string> = new Set(['event', 'date']);
const SNAPSHOT_KEYS: ReadonlySet<string> = new Set(['ipoId', 'timestamp', 'sources']);
const SOURCE_KEYS: ReadonlySet<string> = new Set(['name', 'gmpPrice']);

type PlainObject = Record<string, unknown>;

/** Collects problems: keeps the first {@link MAX_DATASET_PROBLEMS}, counts them all. */
class Problems {
  readonly list: DatasetProblem[] = [];
  count = 0;

  add(path: string, message: string): void {
    this.count += 1;
    if (this.list.length < MAX_DATASET_PROBLEMS) this.list.push({ path, message });
  }
}

/** Where a record's problems go: `add('endDate', ...)` reports at `ipos[2].endDate`. */
class RecordScope {
  constructor(
    private readonly problems: Problems,
    private readonly part: 'ipos' | 'gmp',
    private readonly index: number,
  ) {}

  add(label: string, message: string): void {
    // The path is built only when there is a problem: valid records cost no strings.
    this.problems.add(`${this.part}[${this.index}].${label}`, message);
  }
}

/**
 * Checks a whole dataset (CONTRACT 9) and returns its records normalised as stores keep
 * them, in dataset order: IPOs with every field present (unknown `null`, lists `[]`),
 * exchanges as `nse` before `bse`, the schedule stably sorted by date, the derived fields
 * dropped; snapshots with epoch-ms timestamps, the numeric sources in paise sorted by name
 * in code-point order, and their aggregations.
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
 * validateDataset({ ipos: [{ id: 'a1', name: 'Acme', slug: 'acme', type: 'EQ', startDate: '2026-12-10', endDate: '2026-12-05' }] });
 * // throws IpokitError ERR:DATASET, problems:
 * // [{ path: 'ipos[0].endDate', message: 'endDate 2026-12-05 is before startDate 2026-12-10' }]
 * ```
 */
export function validateDataset(input: unknown): { ipos: IpoRecord[]; snapshots: SnapshotRecord[] } {
  const problems = new Problems();
  let result: { ipos: IpoRecord[]; snapshots: SnapshotRecord[] };
  try {
    result = checkDataset(input, problems);
  } catch (err) {
    // Only exotic objects get here (a getter or a proxy that throws): refuse them cleanly,
    // without touching the thrown value, which may be just as exotic.
    const problem = { path: '$', message: 'the dataset could not be read as plain JSON data (reading it threw an error)' };
    throw new IpokitError('ERR:DATASET', `The dataset could not be read as plain JSON data (reading it threw an error).`, {
      cause: err,
      problems: [...problems.list, problem].slice(0, MAX_DATASET_PROBLEMS),
      problemCount: problems.count + 1,
    });
  }
  if (problems.count > 0) {
    const first = problems.list[0];
    const where =
      first === undefined ? '' : `, ${problems.count === 1 ? '' : 'the first '}at ${cut(first.path, 100)}: ${first.message}`;
    throw new IpokitError(
      'ERR:DATASET',
      `The dataset has ${problems.count} problem${problems.count === 1 ? '' : 's'}${where}.`,
      { problems: problems.list, problemCount: problems.count },
    );
  }
  return result;
}

function checkDataset(input: unknown, problems: Problems): { ipos: IpoRecord[]; snapshots: SnapshotRecord[] } {
  const ipos: IpoRecord[] = [];
  const snapshots: SnapshotRecord[] = [];
  if (!isPlainObject(input)) {
    problems.add('$', `the dataset must be an object with "ipos" and/or "gmp" arrays, got ${describe(input)}`);
    return { ipos, snapshots };
  }
  for (const key of Object.keys(input)) {
    if (!TOP_LEVEL_KEYS.has(key)) {
      problems.add(key, `unknown top-level key ${quote(key)}: a dataset holds only "ipos" and "gmp"`);
    }
  }
  const iposValue = own(input, 'ipos');
  const gmpValue = own(input, 'gmp');
  if (iposValue !== undefined && !Array.isArray(iposValue)) {
    problems.add('ipos', `ipos must be an array of IPO records, got ${describe(iposValue)}`);
  }
  if (gmpValue !== undefined && !Array.isArray(gmpValue)) {
    problems.add('gmp', `gmp must be an array of GMP snapshots, got ${describe(gmpValue)}`);
  }

  if (Array.isArray(iposValue)) {
    const seen: Seen = { ids: new Map(), symbols: new Map(), slugs: new Map() };
    for (let i = 0; i < iposValue.length; i++) {
      const record = checkIpo(iposValue[i], i, problems, seen);
      if (record !== null && problems.count === 0) ipos.push(record);
    }
  }
  if (Array.isArray(gmpValue)) {
    const seen: SeenSnapshots = new Map();
    for (let j = 0; j < gmpValue.length; j++) {
      const record = checkSnapshot(gmpValue[j], j, problems, seen);
      if (record !== null && problems.count === 0) snapshots.push(record);
    }
  }
  return { ipos, snapshots };
}

/** Earlier records' ids, folded symbols and slugs, with their index. */
interface Seen {
  ids: Map<string, number>;
  symbols: Map<string, number>;
  slugs: Map<string, number>;
}

function checkIpo(value: unknown, index: number, problems: Problems, seen: Seen): IpoRecord | null {
  if (!isPlainObject(value)) {
    problems.add(`ipos[${index}]`, `an IPO record must be an object, got ${describe(value)}`);
    return null;
  }
  const scope = new RecordScope(problems, 'ipos', index);
  const before = problems.count;
  unknownKeys(scope, value, IPO_KEYS, 'an IPO record');

  const id = requiredText(scope, 'id', own(value, 'id'));
  const idOk = id !== null && matches(scope, 'id', id, ID_RE, ID_FORM);
  const name = requiredText(scope, 'name', own(value, 'name'));
  const symbol = optionalText(scope, 'symbol', own(value, 'symbol'));
  const symbolOk =
    symbol !== null &&
    matches(scope, 'symbol', symbol, SYMBOL_RE, 'a symbol is 1 to 32 of A-Z, a-z, 0-9, "&", ".", "_" and "-", starting with a letter or digit');
  const slug = requiredText(scope, 'slug', own(value, 'slug'));
  let slugOk = false;
  if (slug !== null && matches(scope, 'slug', slug, SLUG_RE, 'a slug is lowercase letters and digits in parts joined by single "-"')) {
    if (slug.length > MAX_SLUG_LENGTH) scope.add('slug', `slug ${quote(slug)} is longer than ${MAX_SLUG_LENGTH} characters (${slug.length})`);
    else slugOk = true;
  }
  const type = checkType(scope, own(value, 'type'));
  const exchanges = checkExchanges(scope, own(value, 'exchanges'));
  const infoUrl = optionalText(scope, 'infoUrl', own(value, 'infoUrl'));
  const nseInfoUrl = optionalText(scope, 'nseInfoUrl', own(value, 'nseInfoUrl'));
  const prospectusUrl = optionalText(scope, 'prospectusUrl', own(value, 'prospectusUrl'));
  const logo = optionalText(scope, 'logo', own(value, 'logo'));
  const startDate = optionalDate(scope, 'startDate', own(value, 'startDate'));
  const endDate = optionalDate(scope, 'endDate', own(value, 'endDate'));
  const listingDate = optionalDate(scope, 'listingDate', own(value, 'listingDate'));
  const priceRange = checkPriceRange(scope, own(value, 'priceRange'));
  const minQty = optionalInteger(scope, 'minQty', own(value, 'minQty'), 1);
  const minAmount = optionalInteger(scope, 'minAmount', own(value, 'minAmount'), 0);
  const issueSize = optionalText(scope, 'issueSize', own(value, 'issueSize'));
  const listingGain = optionalText(scope, 'listingGain', own(value, 'listingGain'));
  if (listingGain !== null && !LISTING_GAIN_RE.test(listingGain)) {
    scope.add('listingGain', `listingGain ${quote(listingGain)} is not a decimal number such as "15.5" or "-2"`);
  }
  const schedule = checkSchedule(scope, own(value, 'schedule'));
  const about = optionalText(scope, 'about', own(value, 'about'));
  const strengths = textList(scope, 'strengths', own(value, 'strengths'));
  const risks = textList(scope, 'risks', own(value, 'risks'));
  const mediaCoverageLinks = textList(scope, 'mediaCoverageLinks', own(value, 'mediaCoverageLinks'));

  // Status transitions (CONTRACT 2), only between dates that are themselves valid.
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
  if (idOk && id !== null) firstOrDuplicate(scope, seen.ids, id, index, 'id', `id ${quote(id)}`);
  if (symbolOk && symbol !== null) {
    firstOrDuplicate(scope, seen.symbols, asciiLower(symbol), index, 'symbol', `symbol ${quote(symbol)} (ignoring ASCII case)`);
  }
  if (slugOk && slug !== null) firstOrDuplicate(scope, seen.slugs, slug, index, 'slug', `slug ${quote(slug)}`);

  if (problems.count !== before || id === null || name === null || slug === null || type === null) return null;
  return {
    id,
    name,
    symbol,
    slug,
    type,
    exchanges,
    infoUrl,
    nseInfoUrl,
    prospectusUrl,
    logo,
    startDate: startDate === INVALID ? null : startDate,
    endDate: endDate === INVALID ? null : endDate,
    listingDate: listingDate === INVALID ? null : listingDate,
    priceRange,
    minQty,
    minAmount,
    issueSize,
    listingGain,
    schedule,
    about,
    strengths,
    risks,
    mediaCoverageLinks,
  };
}

function firstOrDuplicate(scope: RecordScope, seen: Map<string, number>, key: string, index: number, label: string, what: string): void {
  const earlier = seen.get(key);
  if (earlier === undefined) seen.set(key, index);
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
    const item: unknown = value[k];
    if (item === 'nse' || item === 'bse') {
      if (item === 'nse' ? nse : bse) scope.add(label, `exchange "${item}" is listed more than once`);
      if (item === 'nse') nse = true;
      else bse = true;
    } else if (typeof item === 'string') {
      const text = checkedText(scope, label, item, false);
      if (text !== null) scope.add(label, `exchange ${quote(text)} is not "nse" or "bse"`);
    } else {
      scope.add(label, `an exchange must be the string "nse" or "bse", got ${describe(item)}`);
    }
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
  if (compareDecimals(m[1] ?? '', m[2] ?? '', m[3] ?? '', m[4] ?? '') > 0) {
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

function optionalInteger(scope: RecordScope, label: string, value: unknown, min: number): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number') {
    scope.add(label, `${label} must be an integer or null, got ${describe(value)}`);
    return null;
  }
  if (!Number.isInteger(value)) {
    scope.add(label, `${label} ${String(value)} is not an integer`);
    return null;
  }
  if (value < min || value > MAX_INT32) {
    scope.add(label, `${label} ${String(value)} is outside ${min} to ${MAX_INT32}`);
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

/** Earlier snapshots' indexes by ipoId, then by instant. */
type SeenSnapshots = Map<string, Map<number, number>>;

function checkSnapshot(value: unknown, index: number, problems: Problems, seen: SeenSnapshots): SnapshotRecord | null {
  if (!isPlainObject(value)) {
    problems.add(`gmp[${index}]`, `a GMP snapshot must be an object with "ipoId", "timestamp" and "sources", got ${describe(value)}`);
    return null;
  }
  const scope = new RecordScope(problems, 'gmp', index);
  const before = problems.count;
  unknownKeys(scope, value, SNAPSHOT_KEYS, 'a GMP snapshot');

  const ipoId = requiredText(scope, 'ipoId', own(value, 'ipoId'));
  const ipoIdOk = ipoId !== null && matches(scope, 'ipoId', ipoId, ID_RE, ID_FORM);
  const timestamp = checkTimestamp(scope, own(value, 'timestamp'));
  const sources = checkSources(scope, own(value, 'sources'));

  if (ipoIdOk && ipoId !== null && timestamp !== null) {
    let instants = seen.get(ipoId);
    if (instants === undefined) seen.set(ipoId, (instants = new Map()));
    const earlier = instants.get(timestamp);
    if (earlier === undefined) instants.set(timestamp, index);
    else {
      scope.add(
        'timestamp',
        `a snapshot of ipoId ${quote(ipoId)} at ${new Date(timestamp).toISOString()} is already given by gmp[${earlier}]`,
      );
    }
  }

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

// ---- shared checks ----------------------------------------------------------------

function unknownKeys(scope: RecordScope, value: PlainObject, allowed: ReadonlySet<string>, what: string, prefix = ''): void {
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) scope.add(`${prefix}${key}`, `unknown field ${quote(key)} in ${what}`);
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

/** The CONTRACT 9 rules every string obeys; reports and returns null when one fails. */
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
  if (text.length > MAX_DATASET_STRING_LENGTH) {
    const length = codePointLength(text);
    if (length > MAX_DATASET_STRING_LENGTH) {
      scope.add(label, `${label} ${quote(text)} is longer than 10,000 characters (${length})`);
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

/** Folds A-Z to a-z and nothing else (CONTRACT 1: symbols are unique ignoring ASCII case). */
function asciiLower(text: string): string {
  return UPPER_RE.test(text) ? text.replace(/[A-Z]/g, (c) => c.toLowerCase()) : text;
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

/** A bad string quoted as JSON, cut to 50 characters (lone surrogates and NUL escaped). */
function quote(text: string): string {
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
