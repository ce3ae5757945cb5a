/**
 * The IPOs of a memory store and the indexes that answer list queries without sorting.
 *
 * Writes go to Maps (id, ASCII-folded symbol, slug) and mark the indexes stale; the first
 * read after a write rebuilds them in O(n log n). Every status's order is kept as an
 * array of entry numbers sorted at build time, next to a column of its numeric sort key,
 * and the IPOs of one status on a given day form a contiguous range of such an array:
 *
 * - listed: listingDate <= today, a suffix of the listingDate-descending order;
 * - upcoming: startDate > today, a suffix of the startDate-ascending order;
 * - open: startDate within [today - S, today], S the longest subscription period stored;
 * - closed: closing date < today; split into IPOs without a listingDate (all of that
 *   suffix is closed) and IPOs with one (closed only while listingDate > today, so only
 *   closing dates within [today + 1 - G, today - 1] qualify, G the longest closing-to-
 *   listing gap stored); the two ranges are merged by their rank in the closed order;
 * - announced: every IPO without a startDate, in name order.
 *
 * A query binary-searches its range (narrowed further by the date filters where the order
 * allows: for listed, a year or endDate filter bounds listingDate from above too, by the
 * longest open span and listing gap stored). A range whose entries all have the status and
 * pass the date filters is answered without a pass over it: without filters by arithmetic,
 * O(log n + page); with type and source filters from each order's positions grouped by
 * type and exchange bits, O(log^2 n + page). Otherwise one pass over the range checks the
 * derived status and the filters on numeric columns, keeping only the page's entries.
 */
import { asciiLower, compareCodePoints, type DatasetConflict, dayNumber, type IpoRecord, type ListQuery } from '@ipokit/core/backend';
import type { IpoType } from '@ipokit/core';
import { lowerBound, upperBound } from './sorted.js';

/**
 * The answer of {@link IpoTable.list}: how many IPOs match, and those of the page.
 *
 * @example
 * ```ts
 * const { count, ipos }: ListPage = table.list(query);
 * ```
 */
export interface ListPage {
  count: number;
  ipos: IpoRecord[];
}

/**
 * The stored IPOs: lookups by id, symbol and slug, conflict checks, and list queries.
 * Records are kept as handed to {@link IpoTable.put} and returned as they are stored.
 *
 * @example
 * ```ts
 * const table = new IpoTable();
 * table.put([record]);
 * table.list({ status: 'listed', today: '2026-11-20', types: null, source: null, startDate: null,
 *   endDate: null, year: null, offset: 0, limit: 10, gmpAt: null }); // { count, ipos }
 * ```
 */
export class IpoTable {
  private byId = new Map<string, IpoRecord>();
  /** ASCII-folded symbol -> id. */
  private bySymbol = new Map<string, string>();
  /** Exact slug -> id: slugs are unique as given. */
  private bySlug = new Map<string, string>();
  /** ASCII-folded slug -> id, for lookups. */
  private byFoldedSlug = new Map<string, string>();
  private indexes: Indexes | null = null;
  /** Entries of a closed query's second range, reused so that a query allocates nothing per candidate. */
  private readonly scratch: number[] = [];

  /**
   * How many IPOs are stored.
   *
   * @example
   * ```ts
   * table.size; // 0 for a new table
   * ```
   */
  get size(): number {
    return this.byId.size;
  }

  /**
   * Whether an IPO with this id is stored.
   *
   * @example
   * ```ts
   * table.has('a1'); // false
   * ```
   */
  has(id: string): boolean {
    return this.byId.has(id);
  }

  /**
   * Every stored IPO, in no particular order.
   *
   * @example
   * ```ts
   * [...table.values()].length === table.size; // true
   * ```
   */
  values(): IterableIterator<IpoRecord> {
    return this.byId.values();
  }

  /**
   * The IPO with exactly this id, or null.
   *
   * @example
   * ```ts
   * table.get('a1'); // null for a new table
   * ```
   */
  get(id: string): IpoRecord | null {
    return this.byId.get(id) ?? null;
  }

  /**
   * The IPO named by an identifier: id exactly, else symbol, else slug, both ignoring
   * ASCII case only; null when none.
   *
   * @example
   * ```ts
   * table.find('orbit'); // the IPO with symbol 'ORBIT', unless an id is 'orbit'
   * ```
   */
  find(identifier: string): IpoRecord | null {
    const byId = this.byId.get(identifier);
    if (byId !== undefined) return byId;
    const folded = asciiLower(identifier);
    const id = this.bySymbol.get(folded) ?? this.byFoldedSlug.get(folded);
    return id === undefined ? null : (this.byId.get(id) ?? null);
  }

  /**
   * The symbol and slug conflicts of writing `ipos` (see `Store.writeDataset`): a symbol
   * (ASCII case folded) or slug held by a stored IPO whose id is not among `ipos`.
   *
   * @example
   * ```ts
   * table.conflicts([record]); // [] or [{ kind: 'slug-taken', ipo: 0, holder: 'x1' }]
   * ```
   */
  conflicts(ipos: readonly IpoRecord[]): DatasetConflict[] {
    const writing = new Set<string>();
    for (const ipo of ipos) writing.add(ipo.id);
    const out: DatasetConflict[] = [];
    ipos.forEach((ipo, index) => {
      if (ipo.symbol !== null) {
        const holder = this.bySymbol.get(asciiLower(ipo.symbol));
        if (holder !== undefined && !writing.has(holder)) out.push({ kind: 'symbol-taken', ipo: index, holder });
      }
      const holder = this.bySlug.get(ipo.slug);
      if (holder !== undefined && !writing.has(holder)) out.push({ kind: 'slug-taken', ipo: index, holder });
    });
    return out;
  }

  /**
   * Upserts IPOs (each replaces the stored one with its id, whole). The caller has
   * checked {@link conflicts}; symbols and slugs may move between the IPOs written.
   *
   * @example
   * ```ts
   * table.put([record]);
   * ```
   */
  put(ipos: readonly IpoRecord[]): void {
    if (ipos.length === 0) return;
    // Unindex every replaced IPO first, so that a symbol handed from one written IPO to
    // another is not removed after its new holder claimed it.
    for (const ipo of ipos) {
      const old = this.byId.get(ipo.id);
      if (old !== undefined) this.unindex(old);
    }
    for (const ipo of ipos) {
      this.byId.set(ipo.id, ipo);
      if (ipo.symbol !== null) this.bySymbol.set(asciiLower(ipo.symbol), ipo.id);
      this.bySlug.set(ipo.slug, ipo.id);
      this.byFoldedSlug.set(asciiLower(ipo.slug), ipo.id);
    }
    this.indexes = null;
  }

  /**
   * Removes an IPO; false when no IPO has this id.
   *
   * @example
   * ```ts
   * table.delete('a1'); // true
   * ```
   */
  delete(id: string): boolean {
    const old = this.byId.get(id);
    if (old === undefined) return false;
    this.unindex(old);
    this.byId.delete(id);
    this.indexes = null;
    return true;
  }

  /**
   * A list query (see `Store.listIpos`) without the snapshots: the count of all matches
   * and the IPOs of the page, in the order of the status.
   *
   * @example
   * ```ts
   * table.list({ status: 'upcoming', today: '2026-11-20', types: ['SME'], source: null, startDate: null,
   *   endDate: null, year: null, offset: 0, limit: 3, gmpAt: null });
   * ```
   */
  list(query: ListQuery): ListPage {
    const ix = (this.indexes ??= buildIndexes([...this.byId.values()]));
    const t = dayNumber(query.today);
    const f = toFilter(query, ix.valid);
    const page: Page = { from: query.offset, to: query.offset + query.limit, count: 0, entries: [] };
    switch (query.status) {
      case 'listed': {
        const order = ix.byListing;
        let lo = lowerBound(order.key, -t);
        let hi = order.key.length;
        // Keys are -listingDate; with valid data listingDate >= startDate >= minDate, and
        // listingDate is at most the longest open span and listing gap after startDate
        // (and the longest gap after endDate).
        if (f.minDate > -Infinity) hi = Math.max(lo, upperBound(order.key, -f.minDate, lo, hi));
        if (ix.valid) {
          let maxListing = Infinity;
          if (f.startFiltered) maxListing = f.maxStart + ix.maxOpenSpan + ix.maxListGap;
          if (f.maxEnd < Infinity) maxListing = Math.min(maxListing, f.maxEnd + ix.maxListGap);
          if (maxListing < Infinity) lo = Math.min(hi, Math.max(lo, lowerBound(order.key, -maxListing, lo, hi)));
        }
        if (f.none) cut(order, lo, hi, page);
        else if (!f.dated && f.text === null) pick(order, lo, hi, f, page);
        else scan(ix, order, lo, hi, NO_STATUS_CHECK, t, f, page);
        break;
      }
      case 'upcoming': {
        const order = ix.byStart;
        const [lo, hi] = startRange(order, f, upperBound(order.key, t), order.key.length);
        // With valid data every IPO of the range is upcoming, and the range already holds
        // the startDate and year filters exactly: only endDate needs a look at each entry.
        if (ix.valid && f.maxEnd === Infinity && f.text === null) pick(order, lo, hi, f, page);
        else scan(ix, order, lo, hi, ix.valid ? NO_STATUS_CHECK : UPCOMING, t, f, page);
        break;
      }
      case 'open': {
        const order = ix.byStart;
        const [lo, hi] = startRange(order, f, lowerBound(order.key, t - ix.maxOpenSpan), upperBound(order.key, t));
        scan(ix, order, lo, hi, OPEN, t, f, page);
        break;
      }
      case 'announced': {
        const order = ix.byName;
        // With valid data an announced IPO has no date at all, so no date filter matches.
        if (ix.valid && !f.dated) {
          if (f.text === null) pick(order, 0, order.index.length, f, page);
          else scan(ix, order, 0, order.index.length, NO_STATUS_CHECK, t, f, page);
        } else if (!ix.valid) scan(ix, order, 0, order.index.length, ANNOUNCED, t, f, page);
        break;
      }
      case 'closed':
        this.closed(ix, t, f, page);
        break;
    }
    const ipos = page.entries.map((e) => ix.records[e] as IpoRecord);
    return { count: page.count, ipos };
  }

  /**
   * Forgets everything.
   *
   * @example
   * ```ts
   * table.clear();
   * ```
   */
  clear(): void {
    this.byId = new Map();
    this.bySymbol = new Map();
    this.bySlug = new Map();
    this.byFoldedSlug = new Map();
    this.indexes = null;
  }

  private unindex(ipo: IpoRecord): void {
    if (ipo.symbol !== null) {
      const key = asciiLower(ipo.symbol);
      if (this.bySymbol.get(key) === ipo.id) this.bySymbol.delete(key);
    }
    if (this.bySlug.get(ipo.slug) === ipo.id) this.bySlug.delete(ipo.slug);
    const folded = asciiLower(ipo.slug);
    if (this.byFoldedSlug.get(folded) === ipo.id) this.byFoldedSlug.delete(folded);
  }

  /** Closed: the pure range of IPOs without a listing date merged with the candidates that have one. */
  private closed(ix: Indexes, t: number, f: Filter, page: Page): void {
    const pure = ix.closedNoList;
    const mixed = ix.closedWithList;
    const narrow = (order: Order, lo: number, hi: number): [number, number] => {
      // Keys are -closingDate, ascending. endDate <= X needs closingDate = endDate <= X;
      // with valid data startDate >= X implies closingDate >= X.
      if (f.maxEnd < Infinity) lo = Math.max(lo, lowerBound(order.key, -f.maxEnd, lo, hi));
      if (f.minDate > -Infinity) hi = Math.max(lo, upperBound(order.key, -f.minDate, lo, hi));
      return [lo, hi];
    };
    const [a, b] = narrow(pure, upperBound(pure.key, -t), pure.key.length);
    const gap = ix.maxListGap;
    let [c, d] = gap > 1 ? [lowerBound(mixed.key, 1 - t), upperBound(mixed.key, gap - 1 - t)] : [0, 0];
    if (d < c) d = c;
    [c, d] = narrow(mixed, c, d);
    const pureRank = ix.closedNoListRank;
    const mixedRank = ix.closedWithListRank;
    if (!f.none) {
      // One merged pass, in the closed order.
      const checkBits = f.types !== ALL_TYPES || f.source !== 0;
      let i = a;
      let j = c;
      while (i < b || j < d) {
        let e: number;
        let bits: number;
        if (j >= d || (i < b && (pureRank[i] as number) < (mixedRank[j] as number))) {
          bits = pure.bits[i] as number;
          e = pure.index[i++] as number;
        } else {
          bits = mixed.bits[j] as number;
          e = mixed.index[j++] as number;
          if (statusOf(ix, e, t) !== CLOSED) continue;
        }
        if (checkBits && ((bits & f.types) === 0 || (bits & f.source) !== f.source)) continue;
        if (f.dated && !datesPass(ix, e, f)) continue;
        if (f.text !== null && !textPasses(ix, e, f.text)) continue;
        if (page.count >= page.from && page.count < page.to) page.entries.push(e);
        page.count++;
      }
      return;
    }
    // Without filters every entry of [a, b) matches: collect the (usually few) matches of
    // the second range, then find where the page starts in the merge by binary search.
    const m = this.scratch;
    m.length = 0;
    for (let j = c; j < d; j++) {
      if (statusOf(ix, mixed.index[j] as number, t) === CLOSED) m.push(j);
    }
    page.count = b - a + m.length;
    const end = Math.min(page.to, page.count);
    if (page.from >= end) return;
    // Position in the merge of the k-th match: k plus the pure entries ranked before it.
    const position = (k: number): number => k + lowerBound(pureRank, mixedRank[m[k] as number] as number, a, b) - a;
    let lo = 0;
    let hi = m.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (position(mid) < page.from) lo = mid + 1;
      else hi = mid;
    }
    let k = lo;
    let i = a + (page.from - lo);
    for (let n = page.from; n < end; n++) {
      if (k >= m.length || (i < b && (pureRank[i] as number) < (mixedRank[m[k] as number] as number))) {
        page.entries.push(pure.index[i++] as number);
      } else {
        page.entries.push(mixed.index[m[k++] as number] as number);
      }
    }
    m.length = 0;
  }
}

// ---------------------------------------------------------------------------------------
// Indexes

const LISTED = 1;
const CLOSED = 2;
const OPEN = 3;
const UPCOMING = 4;
const ANNOUNCED = 5;
const NO_STATUS_CHECK = 0;

const TYPE_BITS: Readonly<Record<IpoType, number>> = { EQ: 1, SME: 2, DEBT: 4 };
const ALL_TYPES = 7;

/**
 * One sort order: at each position the entry number, the ascending sort key, and the
 * entry's type and exchange bits (kept in order so that a filtered pass reads memory
 * sequentially).
 */
interface Order {
  index: Int32Array;
  key: Float64Array;
  bits: Uint8Array;
  /**
   * The positions of the order grouped by their bits (type and exchanges), ascending
   * within a group: group `b` is `byBits[bitsStart[b] .. bitsStart[b + 1])`. A page that
   * filters on type and source alone is then a few binary searches and a merge of the
   * groups that match, whatever the number of entries the filters skip.
   */
  byBits: Float64Array;
  bitsStart: Int32Array;
}

/** Everything a list query reads, built from the records in one go. */
interface Indexes {
  records: IpoRecord[];
  /** Per entry: days since the epoch, NaN for null. `close` is endDate ?? startDate. */
  start: Float64Array;
  close: Float64Array;
  end: Float64Array;
  list: Float64Array;
  /** Without startDate: name, then id (no key: 0). */
  byName: Order;
  /** With startDate: startDate ascending, then id; the key is startDate. */
  byStart: Order;
  /** With listingDate: listingDate descending, then id; the key is -listingDate. */
  byListing: Order;
  /** With startDate, without listingDate: closing date descending, then id; key -close. */
  closedNoList: Order;
  /** With startDate and listingDate: the same order and key. */
  closedWithList: Order;
  /** Position of each entry of the two closed orders in the closed order of both (ascending). */
  closedNoListRank: Float64Array;
  closedWithListRank: Float64Array;
  /** Longest closingDate - startDate in days (>= 0): open IPOs started at most this long ago. */
  maxOpenSpan: number;
  /** Longest listingDate - closingDate in days (>= 0) among IPOs with both. */
  maxListGap: number;
  /** Every record follows the transitions (docs/spec.md#status), which makes some ranges pure. */
  valid: boolean;
  /** Per entry: the name and the symbol ('' for none) with A-Z lowered, made at the first `q`. */
  folded: { names: string[]; symbols: string[] } | null;
}

const NSE_BIT = 8;
const BSE_BIT = 16;

function buildIndexes(records: IpoRecord[]): Indexes {
  const n = records.length;
  const start = new Float64Array(n);
  const close = new Float64Array(n);
  const end = new Float64Array(n);
  const list = new Float64Array(n);
  const bits = new Uint8Array(n);
  let valid = true;
  let maxOpenSpan = 0;
  let maxListGap = 0;
  const named: number[] = [];
  const dated: number[] = [];
  const listing: number[] = [];
  for (let e = 0; e < n; e++) {
    const r = records[e] as IpoRecord;
    const s = dayNumber(r.startDate);
    const en = dayNumber(r.endDate);
    const l = dayNumber(r.listingDate);
    const c = r.endDate !== null ? en : s;
    start[e] = s;
    end[e] = en;
    close[e] = c;
    list[e] = l;
    let b = TYPE_BITS[r.type];
    for (const exchange of r.exchanges) b |= exchange === 'nse' ? NSE_BIT : BSE_BIT;
    bits[e] = b;
    if (r.startDate === null) {
      named.push(e);
      if (r.endDate !== null || r.listingDate !== null) valid = false;
    } else {
      dated.push(e);
      if (c < s) valid = false;
      else maxOpenSpan = Math.max(maxOpenSpan, c - s);
      if (r.listingDate !== null) {
        if (l < c) valid = false;
        else maxListGap = Math.max(maxListGap, l - c);
      }
    }
    if (r.listingDate !== null) listing.push(e);
  }

  // Ids are unique: their rank breaks every tie with one integer comparison.
  const idRank = new Int32Array(n);
  const byIdOrder = Array.from({ length: n }, (_, e) => e).sort((x, y) => compareCodePoints((records[x] as IpoRecord).id, (records[y] as IpoRecord).id));
  byIdOrder.forEach((e, rank) => (idRank[e] = rank));
  const tie = (x: number, y: number): number => (idRank[x] as number) - (idRank[y] as number);
  const ascending = (key: Float64Array) => (x: number, y: number) => (key[x] as number) - (key[y] as number) || tie(x, y);
  const descending = (key: Float64Array) => (x: number, y: number) => (key[y] as number) - (key[x] as number) || tie(x, y);
  const order = (entries: number[], column: Float64Array | null, sign: 1 | -1): Order => {
    const index = Int32Array.from(entries);
    const key = new Float64Array(index.length);
    const orderBits = new Uint8Array(index.length);
    for (let i = 0; i < index.length; i++) {
      const e = index[i] as number;
      key[i] = column === null ? 0 : sign * (column[e] as number);
      orderBits[i] = bits[e] as number;
    }
    return { index, key, bits: orderBits, ...groupByBits(orderBits) };
  };

  named.sort((x, y) => compareCodePoints((records[x] as IpoRecord).name, (records[y] as IpoRecord).name) || tie(x, y));
  listing.sort(descending(list));
  const byStart = dated.slice().sort(ascending(start));
  const closedAll = dated.sort(descending(close));
  const closeRank = new Float64Array(n);
  closedAll.forEach((e, rank) => (closeRank[e] = rank));
  const noList = closedAll.filter((e) => Number.isNaN(list[e]));
  const withList = closedAll.filter((e) => !Number.isNaN(list[e]));

  return {
    records,
    start,
    close,
    end,
    list,
    byName: order(named, null, 1),
    byStart: order(byStart, start, 1),
    byListing: order(listing, list, -1),
    closedNoList: order(noList, close, -1),
    closedWithList: order(withList, close, -1),
    closedNoListRank: Float64Array.from(noList, (e) => closeRank[e] as number),
    closedWithListRank: Float64Array.from(withList, (e) => closeRank[e] as number),
    maxOpenSpan,
    maxListGap,
    valid,
    folded: null,
  };
}

// ---------------------------------------------------------------------------------------
// Queries

/** The filters of a list query on the numeric columns. */
interface Filter {
  /** No filter at all: every entry of the status matches. */
  none: boolean;
  /** Type bits to accept (any of them). */
  types: number;
  /** Exchange bit required (0: any exchange). */
  source: number;
  /** A date filter is set: {@link datesPass} must hold. */
  dated: boolean;
  /** startDate must lie within [minStart, maxStart] (startDate and year filters). */
  startFiltered: boolean;
  minStart: number;
  maxStart: number;
  /** endDate must be <= maxEnd (Infinity: no endDate filter). */
  maxEnd: number;
  /** With valid data, every date of a matching IPO is >= this (-Infinity: no bound). */
  minDate: number;
  /** `q` with A-Z lowered: the name or the symbol (likewise lowered) must contain it; null: no such filter. */
  text: string | null;
}

function toFilter(q: ListQuery, valid: boolean): Filter {
  let types = ALL_TYPES;
  if (q.types !== null) {
    types = 0;
    for (const type of q.types) types |= TYPE_BITS[type];
  }
  const source = q.source === null ? 0 : q.source === 'nse' ? NSE_BIT : BSE_BIT;
  let minStart = q.startDate === null ? -Infinity : dayNumber(q.startDate);
  let maxStart = Infinity;
  if (q.year !== null) {
    minStart = Math.max(minStart, dayNumber(`${q.year}-01-01`));
    maxStart = dayNumber(`${q.year}-12-31`);
  }
  const startFiltered = q.startDate !== null || q.year !== null;
  const maxEnd = q.endDate === null ? Infinity : dayNumber(q.endDate);
  const dated = startFiltered || q.endDate !== null;
  const text = q.q === undefined || q.q === null ? null : asciiLower(q.q);
  return {
    none: types === ALL_TYPES && source === 0 && !dated && text === null,
    text,
    types,
    source,
    dated,
    startFiltered,
    minStart,
    maxStart,
    maxEnd,
    minDate: valid && startFiltered ? minStart : -Infinity,
  };
}

/** Narrows a range of the startDate order to the startDate and year filters. */
function startRange(order: Order, f: Filter, lo: number, hi: number): [number, number] {
  if (f.startFiltered) {
    lo = Math.max(lo, lowerBound(order.key, f.minStart));
    hi = Math.min(hi, upperBound(order.key, f.maxStart));
  }
  return [lo, Math.max(lo, hi)];
}

/** The page being collected: matches numbered from 0, those in [from, to) kept. */
interface Page {
  from: number;
  to: number;
  count: number;
  entries: number[];
}

/** The status of an entry on day `t`: deriveStatus on the numeric columns. */
function statusOf(ix: Indexes, e: number, t: number): number {
  if ((ix.list[e] as number) <= t) return LISTED; // NaN (no listingDate) compares false
  const s = ix.start[e] as number;
  if (s !== s) return ANNOUNCED;
  if (t > (ix.close[e] as number)) return CLOSED;
  if (s <= t) return OPEN;
  return UPCOMING;
}

/** The date filters of an entry; NaN (a missing date) never matches. */
function datesPass(ix: Indexes, e: number, f: Filter): boolean {
  if (f.startFiltered) {
    const s = ix.start[e] as number;
    if (!(s >= f.minStart && s <= f.maxStart)) return false;
  }
  return !(f.maxEnd < Infinity) || (ix.end[e] as number) <= f.maxEnd;
}

/** Whether an entry's name or symbol contains the folded `q` (docs/spec.md#list: ASCII case ignored only). */
function textPasses(ix: Indexes, e: number, text: string): boolean {
  const folded = (ix.folded ??= {
    names: ix.records.map((r) => asciiLower(r.name)),
    symbols: ix.records.map((r) => (r.symbol === null ? '' : asciiLower(r.symbol))),
  });
  return (folded.names[e] as string).includes(text) || (folded.symbols[e] as string).includes(text);
}

/** One pass over positions [lo, hi) of an order: bits, then status (unless `want` is 0) and dates. */
function scan(ix: Indexes, order: Order, lo: number, hi: number, want: number, t: number, f: Filter, page: Page): void {
  const { index, bits } = order;
  const types = f.types;
  const source = f.source;
  const checkBits = types !== ALL_TYPES || source !== 0;
  for (let i = lo; i < hi; i++) {
    if (checkBits) {
      const b = bits[i] as number;
      if ((b & types) === 0 || (b & source) !== source) continue;
    }
    if (want !== NO_STATUS_CHECK || f.dated || f.text !== null) {
      const e = index[i] as number;
      if (want !== NO_STATUS_CHECK && statusOf(ix, e, t) !== want) continue;
      if (f.dated && !datesPass(ix, e, f)) continue;
      if (f.text !== null && !textPasses(ix, e, f.text)) continue;
    }
    if (page.count >= page.from && page.count < page.to) page.entries.push(index[i] as number);
    page.count++;
  }
}

/** A range whose every entry matches: the count and the page by arithmetic. */
function cut(order: Order, lo: number, hi: number, page: Page): void {
  page.count = Math.max(0, hi - lo);
  const end = Math.min(page.to, page.count);
  for (let k = page.from; k < end; k++) page.entries.push(order.index[lo + k] as number);
}

/** Distinct values of the bits: a type bit (1, 2, 4) with exchange bits (8, 16). */
const BIT_GROUPS = 32;

/** The positions of an order grouped by bits, ascending within a group (a counting sort). */
function groupByBits(bits: Uint8Array): Pick<Order, 'byBits' | 'bitsStart'> {
  const bitsStart = new Int32Array(BIT_GROUPS + 1);
  for (let i = 0; i < bits.length; i++) {
    const b = (bits[i] as number) + 1;
    bitsStart[b] = (bitsStart[b] as number) + 1;
  }
  for (let b = 0; b < BIT_GROUPS; b++) bitsStart[b + 1] = (bitsStart[b + 1] as number) + (bitsStart[b] as number);
  const next = bitsStart.slice(0, BIT_GROUPS);
  const byBits = new Float64Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i] as number;
    const at = next[b] as number;
    byBits[at] = i;
    next[b] = at + 1;
  }
  return { byBits, bitsStart };
}

/**
 * A range of an order whose every entry has the status and passes every date filter,
 * filtered on type and source: the count from the groups of matching bits (two binary
 * searches each), the page's first match by a binary search over positions, and the page
 * by merging those groups. O(g log^2 n + page * g) for g <= 12 groups, where a pass over
 * the range would be O(n).
 */
function pick(order: Order, lo: number, hi: number, f: Filter, page: Page): void {
  if (f.types === ALL_TYPES && f.source === 0) {
    cut(order, lo, hi, page);
    return;
  }
  const { byBits, bitsStart } = order;
  // For each matching group: its entries in [lo, hi) are byBits[from[k] .. to[k]).
  const from: number[] = [];
  const to: number[] = [];
  let count = 0;
  for (let b = 0; b < BIT_GROUPS; b++) {
    if ((b & f.types) === 0 || (b & f.source) !== f.source) continue;
    const first = lowerBound(byBits, lo, bitsStart[b] as number, bitsStart[b + 1] as number);
    const last = lowerBound(byBits, hi, first, bitsStart[b + 1] as number);
    if (last === first) continue;
    from.push(first);
    to.push(last);
    count += last - first;
  }
  page.count = count;
  const end = Math.min(page.to, count);
  if (page.from >= end) return;
  const groups = from.length;
  // Matches before position p: each position holds one entry, so this climbs by at most 1
  // per position, and the smallest p with `page.from` matches before it is the first match
  // of the page.
  const before = (p: number): number => {
    let n = 0;
    for (let k = 0; k < groups; k++) n += lowerBound(byBits, p, from[k] as number, to[k] as number) - (from[k] as number);
    return n;
  };
  let a = lo;
  let z = hi;
  while (a < z) {
    const mid = (a + z) >>> 1;
    if (before(mid) < page.from) a = mid + 1;
    else z = mid;
  }
  const at = from.map((first, k) => lowerBound(byBits, a, first, to[k] as number));
  for (let n = page.from; n < end; n++) {
    let best = -1;
    let bestPosition = Infinity;
    for (let k = 0; k < groups; k++) {
      const i = at[k] as number;
      if (i < (to[k] as number) && (byBits[i] as number) < bestPosition) {
        best = k;
        bestPosition = byBits[i] as number;
      }
    }
    at[best] = (at[best] as number) + 1;
    page.entries.push(order.index[bestPosition] as number);
  }
}
