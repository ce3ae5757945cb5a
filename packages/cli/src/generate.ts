/**
 * A deterministic, seeded generator of a realistic demo dataset of Indian IPOs (docs/spec.md#datasets):
 * about 320 mainboard, SME and debt issues from 2019 to the year after `today`, in every
 * status relative to `today` (docs/spec.md#status), with GMP snapshots from several named sources.
 *
 * Recent and future issues are placed relative to `today`, so the mix of statuses holds on
 * whatever day the demo runs. Nothing here reads the clock or `Math.random`: the same options
 * always give a deep-equal dataset.
 */
import type { Dataset, DatasetIpo, DatasetSnapshot, DatasetSource, DatasetSubscription, Exchange, IpoType, ListingPrice, ScheduleEvent, SubscriptionTimes } from '@ipokit/core';
import { DateTime } from 'luxon';

const DAY = 86_400_000;
/** The exchanges' zone: market hours are wall-clock times there. */
const MARKET_ZONE = 'Asia/Kolkata';

/**
 * The seed {@link generateDataset} uses when none is given.
 *
 * @example
 * ```ts
 * const a = generateDataset({ today: '2026-11-22', now: Date.parse('2026-11-22T06:30:00Z') });
 * const b = generateDataset({ seed: DEFAULT_SEED, today: '2026-11-22', now: Date.parse('2026-11-22T06:30:00Z') });
 * // a and b are deep-equal
 * ```
 */
export const DEFAULT_SEED = 20_190_101;

/**
 * Options of {@link generateDataset}.
 *
 * @example
 * ```ts
 * const now = Date.parse('2026-11-22T06:30:00.000Z'); // noon in India
 * const options: GenerateDatasetOptions = { seed: 7, today: todayInIst(now), now };
 * ```
 */
export interface GenerateDatasetOptions {
  /** PRNG seed (any finite number; its integer part modulo 2^32 is used). Default {@link DEFAULT_SEED}. */
  seed?: number;
  /** Today as an IST calendar day, `YYYY-MM-DD`: statuses are placed relative to it. */
  today: string;
  /** The current instant, epoch ms: GMP snapshots stop here (a rare few are left after it). */
  now: number;
}

/**
 * Generates the demo dataset: about 320 IPOs (EQ, SME and DEBT; listed, closed, open,
 * upcoming and announced on `today`) with their registrar, lead managers, sector, SME market
 * maker and, once listed, listing-day prices; tens of thousands of GMP snapshots taken during
 * Indian market hours (09:15-15:30 IST, weekdays); and about a thousand subscription snapshots
 * (10:00, 12:00, 14:00 and 17:00 IST of each bidding day of the issues that opened in the last
 * {@link SUBSCRIPTION_WINDOW_DAYS} days). The same options give a deep-equal result.
 *
 * @example
 * ```ts
 * import { generateDataset } from './generate.js';
 * import { importDataset, todayInIst } from '@ipokit/core';
 *
 * const now = new Date();
 * const dataset = generateDataset({ today: todayInIst(now), now: now.getTime() });
 * await importDataset(store, dataset);
 * console.log(dataset.ipos?.length, dataset.gmp?.length, dataset.subscription?.length); // e.g. 320 50844 1012
 * ```
 */
export function generateDataset(options: GenerateDatasetOptions): Dataset {
  const todayDay = parseDay(options.today);
  if (todayDay === null) throw new RangeError(`generateDataset: today must be a YYYY-MM-DD date, got ${JSON.stringify(options.today)}`);
  if (!Number.isFinite(options.now)) throw new RangeError('generateDataset: now must be a finite epoch-ms number');
  const seed = toUint32(options.seed ?? DEFAULT_SEED);
  const rng = new Rng(seed);

  const slots = planSlots(rng, todayDay);
  const drafts = slots.map((slot) => draftIpo(rng, slot));
  nameIssues(rng, drafts);
  identify(rng, drafts, todayDay);

  const ipos: DatasetIpo[] = [];
  const gmp: DatasetSnapshot[] = [];
  const subscription: DatasetSubscription[] = [];
  // Order the file chronologically (announced last), which is how a data vendor would export it.
  const ordered = [...drafts].sort(
    (a, b) => (a.start ?? Number.MAX_SAFE_INTEGER) - (b.start ?? Number.MAX_SAFE_INTEGER) || compareAscii(a.name, b.name),
  );
  // The fields added with subscription data (registrar, listing prices, ...) draw on streams of
  // their own, so that every value the generator gave before them is still the same.
  for (const d of ordered) ipos.push(toDatasetIpo(rng, new Rng(mix(seed ^ PARTIES_SALT, d.index)), d, todayDay));
  for (const d of ordered) {
    if (!d.gmp) continue;
    const gmpRng = new Rng(mix(seed, d.index));
    appendSnapshots(gmp, gmpRng, d, options.now);
  }
  for (const d of ordered) appendSubscription(subscription, new Rng(mix(seed ^ SUBSCRIPTION_SALT, d.index)), d, todayDay, options.now);
  return { ipos, gmp, subscription };
}

// ---------------------------------------------------------------------------------------
// Planning: which IPOs exist, their type and their dates relative to today.

type Category =
  | 'announced'
  | 'upcomingSoon'
  | 'upcomingLater'
  | 'upcomingNextYear'
  | 'open'
  | 'closedRecent'
  | 'closedUnscheduled'
  | 'closedWithdrawn'
  | 'listedRecent'
  | 'listedOld';

/** How many IPOs of each category; 320 in all. */
const CATEGORY_COUNTS: ReadonlyArray<readonly [Category, number]> = [
  ['announced', 8],
  ['upcomingSoon', 6],
  ['upcomingLater', 3],
  ['upcomingNextYear', 2],
  ['open', 7],
  ['closedRecent', 6],
  ['closedUnscheduled', 1],
  ['closedWithdrawn', 5],
  ['listedRecent', 62],
  ['listedOld', 220],
];

/** Share of older listed issues that keep their GMP history (keeps the dataset ~60k snapshots). */
const OLD_GMP_SHARE = 0.9;

/** SEBI moved issues to T+3 listing for issues opening from December 2023. */
const T3_FROM = dayOf(2023, 12, 1);
const FIRST_DAY = dayOf(2019, 1, 1);

interface Slot {
  index: number;
  category: Category;
  /** Position inside its category, which fixes a few deliberate choices. */
  rank: number;
  type: IpoType;
  start: number | null;
  end: number | null;
  listing: number | null;
}

function planSlots(rng: Rng, today: number): Slot[] {
  const slots: Slot[] = [];
  for (const [category, count] of CATEGORY_COUNTS) {
    for (let rank = 0; rank < count; rank++) {
      const type = typeFor(rng, category, rank);
      const dates = datesFor(rng, category, rank, count, today);
      slots.push({ index: slots.length, category, rank, type, ...dates });
    }
  }
  return slots;
}

function typeFor(rng: Rng, category: Category, rank: number): IpoType {
  // Small categories start with one of each type, so every status shows every type.
  const fixed: readonly IpoType[] =
    category === 'upcomingNextYear' ? ['EQ', 'SME'] : category === 'closedUnscheduled' ? ['SME'] : ['EQ', 'SME', 'DEBT'];
  const first = fixed[rank];
  if (first !== undefined && !category.startsWith('listed')) return first;
  const r = rng.next();
  return r < 0.46 ? 'EQ' : r < 0.9 ? 'SME' : 'DEBT';
}

function datesFor(
  rng: Rng,
  category: Category,
  rank: number,
  count: number,
  today: number,
): { start: number | null; end: number | null; listing: number | null } {
  switch (category) {
    case 'announced':
      return { start: null, end: null, listing: null };
    case 'upcomingSoon': {
      const start = nextWeekday(today + rng.int(1, 9));
      return { start, end: addTradingDays(start, 2), listing: null };
    }
    case 'upcomingLater': {
      const start = nextWeekday(today + rng.int(12, 40));
      return { start, end: addTradingDays(start, 2), listing: null };
    }
    case 'upcomingNextYear': {
      const year = yearOf(today) + 1;
      const lo = Math.max(today + 30, dayOf(year, 1, 5));
      const start = nextWeekday(rng.int(lo, dayOf(year, 3, 25)));
      return { start, end: addTradingDays(start, 2), listing: null };
    }
    case 'open': {
      const starts: number[] = [];
      for (let d = today - 4; d <= today; d++) if (isWeekday(d) && addTradingDays(d, 2) >= today) starts.push(d);
      const start = rng.pick(starts);
      return { start, end: addTradingDays(start, 2), listing: null };
    }
    case 'closedRecent':
    case 'closedUnscheduled': {
      const starts: number[] = [];
      for (let d = today - 9; d < today; d++) {
        if (!isWeekday(d)) continue;
        const end = addTradingDays(d, 2);
        if (end < today && listingAfter(end) > today) starts.push(d);
      }
      const start = rng.pick(starts);
      const end = addTradingDays(start, 2);
      return { start, end, listing: category === 'closedRecent' ? listingAfter(end) : null };
    }
    case 'closedWithdrawn': {
      const start = nextWeekday(stratified(rng, rank, count, FIRST_DAY + 40, today - 200));
      return { start, end: addTradingDays(start, 2), listing: null };
    }
    case 'listedRecent': {
      let start = nextWeekday(rng.int(today - 125, today - 10));
      while (listingAfter(addTradingDays(start, 2)) > today) start = nextWeekday(start - 7);
      const end = addTradingDays(start, 2);
      return { start, end, listing: listingAfter(end) };
    }
    case 'listedOld': {
      let start = nextWeekday(stratified(rng, rank, count, FIRST_DAY, today - 129));
      while (listingAfter(addTradingDays(start, 2)) > today) start = nextWeekday(start - 7);
      const end = addTradingDays(start, 2);
      return { start, end, listing: listingAfter(end) };
    }
  }
}

/** Listing day after the issue closes: T+6 before December 2023, T+3 since. */
function listingAfter(end: number): number {
  return addTradingDays(end, end < T3_FROM ? 6 : 3);
}

/** The rank-th of `count` days spread evenly over [lo, hi], jittered inside its stratum. */
function stratified(rng: Rng, rank: number, count: number, lo: number, hi: number): number {
  // A `today` close to 2019 would leave no room for old issues: fall back to a 4-year window.
  const from = hi - lo < 60 ? hi - 1500 : lo;
  const width = (hi - from) / count;
  return Math.floor(from + (rank + rng.next()) * width);
}

// ---------------------------------------------------------------------------------------
// Drafts: the company, its price band and lot, its GMP regime.

interface Draft extends Slot {
  name: string;
  issuer: Issuer;
  place: string;
  /** DEBT issuers are named after the dates are known (tranches count up over time). */
  symbol: string | null;
  slug: string;
  id: string;
  exchanges: Exchange[];
  low: number;
  high: number;
  minQty: number;
  issueCr: number;
  /** Expected premium as a percentage of the upper band (drives GMP and the listing gain). */
  premiumPct: number;
  gmp: boolean;
  /** For one or two open issues: a few snapshots after `now`. */
  future: boolean;
}

interface Issuer {
  /** Name without the legal suffix, e.g. "Shree Ganesh Infra Projects". */
  base: string;
  /** The IPO's `sector`, e.g. "Infrastructure". */
  sector: string;
  about: string;
  strengths: readonly string[];
  risks: readonly string[];
}

function draftIpo(rng: Rng, slot: Slot): Draft {
  const place = rng.pick(PLACES);
  let low: number;
  let high: number;
  let minQty: number;
  let issueCr: number;
  let exchanges: Exchange[];
  if (slot.type === 'EQ') {
    high = Math.round(logUniform(rng, 50, 2000));
    if (high > 200) high = Math.round(high / 5) * 5;
    low = high - Math.max(1, Math.round(high * rng.float(0.03, 0.06)));
    if (rng.chance(0.04)) low = high;
    minQty = Math.floor(15000 / high);
    issueCr = roundTo(logUniform(rng, 150, 12000), 1);
    if (issueCr >= 1000) issueCr = Math.round(issueCr / 10) * 10;
    const r = rng.next();
    exchanges = r < 0.86 ? ['nse', 'bse'] : r < 0.95 ? ['nse'] : ['bse'];
  } else if (slot.type === 'SME') {
    high = Math.round(logUniform(rng, 20, 300));
    low = rng.chance(0.4) ? high : high - Math.max(1, Math.round(high * rng.float(0.03, 0.06)));
    // A lot must cost more than one lakh: the smallest lot that does, in round numbers.
    const raw = Math.ceil(100_001 / high);
    const step = raw < 4000 ? 400 : 1000;
    minQty = Math.max(1000, Math.ceil(raw / step) * step);
    issueCr = roundTo(logUniform(rng, 4, 120), 2);
    exchanges = rng.chance(0.6) ? ['nse'] : ['bse'];
  } else {
    high = 1000;
    low = 1000;
    minQty = 10;
    issueCr = rng.pick([100, 150, 200, 250, 300, 500, 750, 1000]);
    const r = rng.next();
    exchanges = r < 0.85 ? ['nse', 'bse'] : r < 0.95 ? ['bse'] : ['nse'];
  }
  const premiumPct = premiumRegime(rng, slot);
  const gmp = slot.type !== 'DEBT' && hasGmp(rng, slot);
  const future = slot.category === 'open' && slot.rank < 2;
  return {
    ...slot,
    name: '',
    issuer: { base: '', sector: '', about: '', strengths: [], risks: [] },
    place,
    symbol: null,
    slug: '',
    id: '',
    exchanges,
    low,
    high,
    minQty,
    issueCr,
    premiumPct,
    gmp,
    future,
  };
}

function premiumRegime(rng: Rng, slot: Slot): number {
  // The second open issue (an SME) trades at a discount, so negative GMPs always occur.
  if (slot.category === 'open' && slot.rank === 1) return -rng.float(6, 14);
  if (slot.category === 'open' && slot.rank === 0) return rng.float(25, 60);
  const r = rng.next();
  if (r < 0.3) return rng.float(20, slot.type === 'SME' ? 95 : 70);
  if (r < 0.72) return rng.float(3, 20);
  if (r < 0.88) return rng.float(-2, 3);
  return -rng.float(2, 16);
}

function hasGmp(rng: Rng, slot: Slot): boolean {
  switch (slot.category) {
    case 'upcomingSoon':
    case 'open':
    case 'closedRecent':
    case 'closedUnscheduled':
    case 'listedRecent':
      return true;
    case 'listedOld':
      return rng.chance(OLD_GMP_SHARE);
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------
// Names, symbols, slugs and ids.

function nameIssues(rng: Rng, drafts: Draft[]): void {
  // Lenders' names are kept apart so that no company shares a name with a lender.
  const names = new Set<string>(LENDERS.map((l) => l.name));
  for (const d of drafts) {
    if (d.type === 'DEBT') continue;
    for (;;) {
      const suffix = rng.chance(0.8) ? 'Ltd' : 'Limited';
      const issuer = companyIssuer(rng, d.place, suffix);
      const name = `${issuer.base} ${suffix}`;
      if (names.has(issuer.base)) continue;
      names.add(issuer.base);
      d.issuer = issuer;
      d.name = name;
      break;
    }
  }
  // Debt: a handful of lenders that come back with numbered tranches, counted in date order.
  const lenders = rng.sample(LENDERS, 9);
  const debts = drafts.filter((d) => d.type === 'DEBT');
  for (const d of debts) {
    const lender = rng.pick(lenders);
    d.issuer = lenderIssuer(rng, lender);
  }
  const tranches = new Map<string, number>();
  const byDate = [...debts].sort((a, b) => (a.start ?? Number.MAX_SAFE_INTEGER) - (b.start ?? Number.MAX_SAFE_INTEGER) || a.index - b.index);
  for (const d of byDate) {
    const n = (tranches.get(d.issuer.base) ?? 0) + 1;
    tranches.set(d.issuer.base, n);
    d.name = `${d.issuer.base} Ltd NCD Tranche ${roman(n)}`;
  }
}

function companyIssuer(rng: Rng, place: string, suffix: string): Issuer {
  const sector = rng.pick(SECTORS);
  const r = rng.next();
  const lead = r < 0.55 ? rng.pick(PREFIXES) : r < 0.75 ? place : rng.pick(FAMILY_NAMES);
  const base = `${lead} ${sector.words}`;
  return {
    base,
    sector: sector.sector,
    about: `${base} ${suffix} is based in ${place} and ${sector.does}.`,
    strengths: [...sector.strengths, ...COMMON_STRENGTHS],
    risks: [...sector.risks, ...COMMON_RISKS],
  };
}

function lenderIssuer(rng: Rng, lender: Lender): Issuer {
  const low = roundTo(rng.float(8.5, 9.75), 2);
  const high = roundTo(low + rng.float(0.5, 1.5), 2);
  return {
    base: lender.name,
    sector: lender.sector,
    about: `${lender.name} Ltd ${lender.does}; this secured NCD issue offers coupons of ${low}% to ${high}% a year.`,
    strengths: DEBT_STRENGTHS,
    risks: DEBT_RISKS,
  };
}

function identify(rng: Rng, drafts: Draft[], today: number): void {
  const symbols = new Set<string>();
  const slugs = new Set<string>();
  const ids = new Set<string>();
  for (const d of drafts) {
    // Ids look like the hosted service's: the year of the issue and six digits.
    const year = yearOf(d.start ?? today);
    let id: string;
    do id = `${year}${String(rng.int(0, 999_999)).padStart(6, '0')}`;
    while (ids.has(id));
    ids.add(id);
    d.id = id;

    const slugBase = d.type === 'DEBT' ? kebab(d.name) : `${kebab(d.issuer.base)}-ipo`;
    let slug = slugBase;
    for (let n = 2; slugs.has(slug); n++) slug = `${slugBase}-${n}`;
    slugs.add(slug);
    d.slug = slug;

    if (d.type === 'DEBT' && rng.chance(0.5)) continue;
    d.symbol = pickSymbol(rng, d, symbols);
    symbols.add(d.symbol);
  }
}

function pickSymbol(rng: Rng, d: Draft, taken: ReadonlySet<string>): string {
  const words = d.issuer.base
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((w) => w !== '');
  const first = words[0] ?? 'IPO';
  const joined = words.join('');
  const initials = words.map((w) => w[0]).join('');
  const second = words[1] ?? '';
  const candidates =
    d.type === 'DEBT'
      ? [`${initials}NCD${trancheOf(d.name)}`, `${joined.slice(0, 8)}NCD${trancheOf(d.name)}`]
      : rng.chance(0.5)
        ? [joined.slice(0, 10), `${initials}L`, `${first.slice(0, 8)}${second.slice(0, 4)}`]
        : [`${initials}L`, joined.slice(0, 10), `${first.slice(0, 8)}${second.slice(0, 4)}`];
  for (const c of candidates) {
    const s = c.slice(0, 20);
    if (s.length >= 3 && !taken.has(s)) return s;
  }
  const base = (candidates[0] ?? joined).slice(0, 16);
  for (let n = 1; ; n++) {
    const s = `${base}${n}`;
    if (!taken.has(s)) return s;
  }
}

function trancheOf(name: string): number {
  const m = / Tranche ([IVXLC]+)$/.exec(name);
  return m === null ? 1 : fromRoman(m[1] ?? 'I');
}

// ---------------------------------------------------------------------------------------
// The dataset record.

function toDatasetIpo(rng: Rng, extra: Rng, d: Draft, today: number): DatasetIpo {
  const dated = d.start !== null;
  const priced = dated && (d.category !== 'upcomingLater' && d.category !== 'upcomingNextYear');
  const listed = d.listing !== null && d.listing <= today;
  const hasNse = d.exchanges.includes('nse');
  const slug = d.slug;
  const topics = ['review', 'gmp-today', 'subscription-status', 'allotment-status', 'listing-day-performance', 'anchor-investors'];
  const media = rng
    .sample(topics, d.category === 'announced' ? rng.int(0, 1) : rng.int(0, 3))
    .map((t) => `https://news.example.com/markets/ipo/${slug}-${t}`);
  const high = d.high;
  const listing = listed ? listingDay(rng, extra, d) : null;
  return {
    id: d.id,
    name: d.name,
    symbol: d.symbol,
    slug,
    type: d.type,
    exchanges: d.exchanges,
    infoUrl: rng.chance(0.9) ? `https://example.com/ipo/${slug}` : null,
    nseInfoUrl: hasNse && dated && rng.chance(0.85) ? `https://example.org/nse/issue-info/${d.symbol ?? d.id}` : null,
    prospectusUrl: rng.chance(0.85) ? `https://example.com/prospectus/${slug}${dated ? '-rhp' : '-drhp'}.pdf` : null,
    logo: rng.chance(0.8) ? `https://example.com/logos/${slug}.png` : null,
    startDate: d.start === null ? null : formatDay(d.start),
    endDate: d.end === null ? null : formatDay(d.end),
    listingDate: d.listing === null ? null : formatDay(d.listing),
    priceRange: priced ? `${d.low}-${high}` : null,
    minQty: priced ? d.minQty : null,
    minAmount: priced ? Math.round(d.minQty * high) : null,
    issueSize: dated || rng.chance(0.5) ? `${d.issueCr}cr` : null,
    listingGain: listing === null ? null : listing.gain,
    schedule: schedule(d),
    about: d.category === 'closedWithdrawn' ? `${d.issuer.about} The issue was withdrawn after bidding closed.` : d.issuer.about,
    strengths: rng.sample(d.issuer.strengths, rng.int(2, 4)),
    risks: rng.sample(d.issuer.risks, rng.int(2, 4)),
    mediaCoverageLinks: media,
    ...parties(extra, d),
    listingPrices: listing === null ? [] : listing.prices,
  };
}

/**
 * The listing day: the gain the generator aims at (drawn from `rng` as before listing prices
 * existed), the opening price nearest to it on the exchange's tick, and the listing gain as
 * that opening price gives it, so that `listingGain` and `listingPrices` agree. Every exchange
 * opens at the same price; the day's high, low and close differ by exchange (from `extra`).
 */
function listingDay(rng: Rng, extra: Rng, d: Draft): { gain: string; prices: ListingPrice[] } {
  const pct = d.type === 'DEBT' ? rng.normal() * 0.6 + 0.2 : d.premiumPct + rng.normal() * 6;
  const bounded = Math.max(-60, Math.min(300, pct));
  const decimals = d.type === 'DEBT' ? 2 : rng.chance(0.5) ? 0 : 2;
  const tick = d.type === 'DEBT' ? 0.01 : 0.05;
  const open = onTick(d.high * (1 + bounded / 100), tick);
  const gain = String(roundTo(((open - d.high) / d.high) * 100, decimals));
  // How far the price may move on the day: SME issues are held to a 5% band after the open.
  const band = d.type === 'SME' ? 0.05 : d.type === 'DEBT' ? 0.01 : 0.15;
  const prices = d.exchanges.map((exchange): ListingPrice => {
    const up = onTick(open * (1 + band * extra.next() ** 2), tick);
    const down = onTick(open * (1 - band * extra.next() ** 2), tick);
    const high = Math.max(open, up);
    const low = Math.min(open, down);
    const close = Math.min(high, Math.max(low, onTick(low + (high - low) * extra.next(), tick)));
    return { exchange, open, high, low, close };
  });
  return { gain, prices };
}

function schedule(d: Draft): ScheduleEvent[] {
  const events: Array<[string, number]> = [];
  if (d.start !== null) events.push(['Bidding opens', d.start]);
  if (d.end !== null) events.push(['Bidding closes', d.end]);
  if (d.end !== null && d.listing !== null) {
    const t6 = d.end < T3_FROM;
    events.push(['Allotment finalised', addTradingDays(d.end, t6 ? 3 : 1)]);
    events.push(['Refunds initiated', addTradingDays(d.end, t6 ? 4 : 2)]);
    events.push([d.type === 'DEBT' ? 'NCDs credited to demat' : 'Shares credited to demat', addTradingDays(d.end, t6 ? 5 : 2)]);
    events.push(['Listing', d.listing]);
  }
  // Already ascending; a stable sort keeps same-day events in this order regardless.
  return events.sort((a, b) => a[1] - b[1]).map(([event, day]) => ({ event, date: formatDay(day) }));
}

// ---------------------------------------------------------------------------------------
// GMP snapshots.

/**
 * The GMP sites the demo's snapshots name (3 to 5 of them per IPO); the demo's simulated live
 * sources (demo-live.ts) take their names from here too.
 *
 * @example
 * ```ts
 * GMP_SOURCES.includes('ipowatch'); // true
 * ```
 */
export const GMP_SOURCES = ['chittorgarh', 'investorgain', 'ipocentral', 'ipoji', 'ipoplatform', 'ipowatch'] as const;
const MINUTE = 60_000;
/** Indian market hours in UTC minutes of the day: 09:15-15:30 IST (03:45-10:00 UTC). */
const OPEN_MIN = marketMinute(9, 15);
const CLOSE_MIN = marketMinute(15, 30);
/** When a listed issue's grey market stops quoting: 10:00 IST on its listing day. */
const LISTING_END_MIN = marketMinute(10, 0);
/** How many snapshots an issue marked `future` gets after `now`. */
const FUTURE_SNAPSHOTS = 3;

function appendSnapshots(out: DatasetSnapshot[], rng: Rng, d: Draft, nowMs: number): void {
  if (d.start === null) return;
  const firstDay = d.start - rng.int(10, 15);
  const listingEnd = d.listing === null ? Infinity : d.listing * DAY + LISTING_END_MIN * MINUTE;
  const stop = Math.min(listingEnd, nowMs);
  const lastDay = Math.floor((d.future ? nowMs + 7 * DAY : stop) / DAY);
  if (lastDay < firstDay) return;

  const names = rng.sample(GMP_SOURCES, rng.int(3, 5));
  const high = d.high;
  const level = (high * d.premiumPct) / 100;
  const step = high >= 150 ? 1 : 0.5;
  const sigma = Math.max(0.3, high * 0.004);
  const offsets = names.map(() => roundStep(rng.normal() * Math.max(0.5, Math.abs(level) * 0.04 + high * 0.004), step));
  const flaky = rng.int(0, names.length - 1);
  const flakyRate = rng.float(0.1, 0.35);
  // Gaps: a whole trading day without data, and a few hours without data on another day.
  const days = lastDay - firstDay + 1;
  const gapDay = rng.chance(0.4) ? firstDay + rng.int(1, Math.max(1, days - 2)) : null;
  const gapHoursDay = rng.chance(0.45) ? firstDay + rng.int(0, days - 1) : null;
  const gapFrom = OPEN_MIN + rng.int(30, 150);
  const gapTo = gapFrom + rng.int(120, 240);

  let x = level * rng.float(0.15, 0.8);
  let after = 0;
  for (let day = firstDay; day <= lastDay; day++) {
    if (!isWeekday(day) || day === gapDay || rng.chance(0.02)) continue;
    x += rng.normal() * sigma * 3;
    // Steps of 15 to 60 minutes, mostly short: trackers update often while an issue is hot.
    for (let min = OPEN_MIN + rng.int(0, 15); min <= CLOSE_MIN; min += 15 + Math.floor(46 * rng.next() ** 3)) {
      const t = day * DAY + min * MINUTE;
      if (t > listingEnd) return;
      if (t > nowMs) {
        if (!d.future || after >= FUTURE_SNAPSHOTS) return;
        after++;
      }
      if (day === gapHoursDay && min >= gapFrom && min < gapTo) continue;
      x += (level - x) * 0.04 + rng.normal() * sigma;
      const blank = rng.chance(0.004);
      const sources: DatasetSource[] = names.map((name, i) => {
        const missing = blank || rng.chance(i === flaky ? flakyRate : 0.04);
        const jitter = rng.chance(0.3) ? rng.normal() * sigma : 0;
        return { name, gmpPrice: missing ? null : roundStep(x + (offsets[i] ?? 0) + jitter, step) };
      });
      out.push({ ipoId: d.id, timestamp: new Date(t).toISOString(), sources });
    }
  }
}

// ---------------------------------------------------------------------------------------
// The issue's parties and sector.

/** Salts of the per-IPO streams of the fields added after the first release of the generator. */
const PARTIES_SALT = 0x1a2b3c4d;
const SUBSCRIPTION_SALT = 0x5e6f7081;

function parties(rng: Rng, d: Draft): Pick<DatasetIpo, 'registrar' | 'leadManagers' | 'marketMaker' | 'sector'> {
  const registrar = rng.pick(REGISTRARS);
  let leadManagers: string[];
  if (d.type === 'SME') leadManagers = rng.sample(SME_LEAD_MANAGERS, rng.chance(0.85) ? 1 : 2);
  else if (d.type === 'DEBT') leadManagers = rng.sample(LEAD_MANAGERS, rng.int(1, 2));
  else leadManagers = rng.sample(LEAD_MANAGERS, d.issueCr >= 1000 ? rng.int(3, 4) : rng.int(1, 3));
  return {
    registrar,
    leadManagers,
    marketMaker: d.type === 'SME' ? rng.pick(MARKET_MAKERS) : null,
    sector: d.issuer.sector,
  };
}

// ---------------------------------------------------------------------------------------
// Subscription snapshots.

/** Issues that opened within this many days before today have subscription snapshots. */
export const SUBSCRIPTION_WINDOW_DAYS = 180;
/** When the exchanges' figures are read on each bidding day, IST: mid-morning to the close of bidding at 17:00. */
const SUBSCRIPTION_TIMES: ReadonlyArray<readonly [number, number]> = [
  [10, 0],
  [12, 0],
  [14, 0],
  [17, 0],
];
const SUBSCRIPTION_MINUTES = SUBSCRIPTION_TIMES.map(([h, m]) => marketMinute(h, m));

/** What each category has subscribed by the close of bidding, and which categories the issue has. */
export interface FinalTimes {
  qib: number | null;
  bnii: number | null;
  snii: number | null;
  /** SME issues report NII as one figure (no bNII/sNII split). */
  nii: number | null;
  retail: number;
  employee: number | null;
  shareholder: number | null;
  /** Debt: the categories other than retail, as a multiple of retail's figure. */
  others: number;
}

/** How far each category has got towards its final figure at one reading, 0 to 1. */
export interface Shares {
  qib: number;
  nii: number;
  retail: number;
  employee: number;
  shareholder: number;
}

/**
 * The issue's subscription, read four times on each bidding day up to `nowMs`. Each category
 * climbs as real books do: retail and NII a little every reading, most on the last day;
 * QIBs hardly bid before the last day and then jump. How far they climb follows the issue's
 * grey-market premium (a hot issue is subscribed many times over, a cold one not fully).
 * `total` is the categories weighted by their share of the offer.
 */
function appendSubscription(out: DatasetSubscription[], rng: Rng, d: Draft, today: number, nowMs: number): void {
  if (d.start === null || d.end === null || d.start > today || d.start < today - SUBSCRIPTION_WINDOW_DAYS) return;
  const days: number[] = [];
  for (let day = d.start; day <= d.end; day++) if (isWeekday(day)) days.push(day);
  const final = finalTimes(rng, d);
  const steps = days.length * SUBSCRIPTION_MINUTES.length;
  // Each category's share of its final figure, never going down from one reading to the next.
  const reached: Shares = { qib: 0, nii: 0, retail: 0, employee: 0, shareholder: 0 };
  const shape = { nii: rng.float(1.8, 2.6), retail: rng.float(1.2, 1.8), employee: rng.float(1.2, 2) };
  for (let k = 0; k < days.length; k++) {
    const day = days[k] as number;
    const last = k === days.length - 1;
    for (let slot = 0; slot < SUBSCRIPTION_MINUTES.length; slot++) {
      const t = day * DAY + (SUBSCRIPTION_MINUTES[slot] as number) * MINUTE;
      if (t > nowMs) return;
      const step = k * SUBSCRIPTION_MINUTES.length + slot + 1;
      const progress = step / steps;
      const wobble = () => rng.float(0.9, 1.1);
      const climb = (key: keyof Shares, share: number) => {
        reached[key] = Math.min(1, Math.max(reached[key], step === steps ? 1 : share * wobble()));
        return reached[key];
      };
      const qibShare = last ? [0.15, 0.3, 0.55, 1][slot] ?? 1 : 0.03 * progress;
      const shares: Shares = {
        qib: climb('qib', qibShare),
        nii: climb('nii', progress ** shape.nii),
        retail: climb('retail', progress ** shape.retail),
        employee: climb('employee', progress ** shape.employee),
        shareholder: climb('shareholder', progress ** shape.employee),
      };
      out.push({ ipoId: d.id, timestamp: new Date(t).toISOString(), times: subscriptionTimes(d, final, shares) });
    }
  }
}

/**
 * An issue's final subscription as the generator draws it, from a stream of its own seeded by
 * `seed`: the categories its type has (some drawn), each climbing with the issue's expected
 * premium (`premiumPct`, a percentage of the upper band). The demo's live subscription
 * (demo-live.ts) draws with it, so its books look like the generated ones.
 *
 * @example
 * ```ts
 * const final = drawFinalTimes(42, { type: 'SME', premiumPct: 30 });
 * final.bnii; // null: SME issues report NII as one figure
 * ```
 */
export function drawFinalTimes(seed: number, issue: { type: IpoType; premiumPct: number }): FinalTimes {
  return finalTimes(new Rng(seed >>> 0), issue);
}

function finalTimes(rng: Rng, d: { type: IpoType; premiumPct: number }): FinalTimes {
  // The premium the grey market expects, as a share: 0.5 for a 50% premium, bounded.
  const heat = Math.max(-0.2, Math.min(1, d.premiumPct / 100));
  const draw = (base: number, slope: number, spread: number) => base * Math.exp(slope * heat + spread * rng.normal());
  if (d.type === 'DEBT') {
    return { qib: null, bnii: null, snii: null, nii: null, retail: rng.float(0.4, 4.5), employee: null, shareholder: null, others: rng.float(0.5, 2) };
  }
  if (d.type === 'SME') {
    return {
      qib: rng.chance(0.4) ? draw(1, 6, 0.5) : null,
      bnii: null,
      snii: null,
      nii: draw(1.2, 7, 0.5),
      retail: draw(1.5, 6.5, 0.4),
      employee: null,
      shareholder: null,
      others: 1,
    };
  }
  const bnii = draw(1, 7, 0.5);
  const snii = draw(0.8, 6, 0.5);
  return {
    qib: draw(1.5, 6, 0.5),
    bnii,
    snii,
    // bNII is two thirds of the NII portion, sNII one third.
    nii: (2 * bnii + snii) / 3,
    retail: draw(1.2, 5.5, 0.35),
    employee: rng.chance(0.5) ? draw(0.8, 3, 0.4) : null,
    shareholder: rng.chance(0.2) ? draw(1, 4, 0.4) : null,
    others: 1,
  };
}

/**
 * One reading's times, every category in the contract's order: the ones the issue does not
 * have are null. bNII and sNII climb as NII does; `total` weighs the categories by their
 * share of the offer (EQ: QIB 50%, NII 15%, retail 35%; SME: QIB 20%, NII 30%, retail 50%, or
 * NII and retail half each without QIBs; debt: retail 40%, the other categories 60%). Each
 * figure is rounded to 2 decimals and held to 0-9,999; with `final` fixed, shares that do not
 * go down give times that do not go down.
 *
 * @example
 * ```ts
 * const final = drawFinalTimes(42, { type: 'EQ', premiumPct: 30 });
 * subscriptionTimes({ type: 'EQ' }, final, { qib: 1, nii: 1, retail: 1, employee: 1, shareholder: 1 }).total; // the close of bidding
 * ```
 */
export function subscriptionTimes(d: { type: IpoType }, final: FinalTimes, at: Shares): SubscriptionTimes {
  const times = (value: number | null, share: number) => (value === null ? null : value * share);
  const qib = times(final.qib, at.qib);
  const nii = times(final.nii, at.nii);
  const retail = final.retail * at.retail;
  let total: number;
  if (d.type === 'EQ') total = 0.5 * (qib ?? 0) + 0.15 * (nii ?? 0) + 0.35 * retail;
  else if (d.type === 'SME') total = qib === null ? 0.5 * (nii ?? 0) + 0.5 * retail : 0.2 * qib + 0.3 * (nii ?? 0) + 0.5 * retail;
  else total = 0.4 * retail + 0.6 * retail * final.others;
  const two = (x: number | null) => (x === null ? null : roundTo(Math.max(0, Math.min(MAX_TIMES, x)), 2));
  return {
    qib: two(qib),
    nii: two(nii),
    bnii: two(times(final.bnii, at.nii)),
    snii: two(times(final.snii, at.nii)),
    retail: two(retail),
    employee: two(times(final.employee, at.employee)),
    shareholder: two(times(final.shareholder, at.shareholder)),
    total: two(total),
  };
}

/** Far above any real book (the largest are a few thousand times), well below the contract's 10,000,000. */
const MAX_TIMES = 9_999;

// ---------------------------------------------------------------------------------------
// Word lists.

interface Sector {
  words: string;
  /** The sector as IPO pages name it (the IPO's `sector`). */
  sector: string;
  does: string;
  strengths: readonly string[];
  risks: readonly string[];
}

const SECTORS: readonly Sector[] = [
  { words: 'Infra Projects', sector: 'Infrastructure', does: 'builds roads, bridges and water-supply schemes for state agencies', strengths: ['Order book of about three times annual revenue'], risks: ['Most orders come from government bodies that pay late'] },
  { words: 'Precision Polymers', sector: 'Plastic Products', does: 'moulds engineered plastic parts for car and appliance makers', strengths: ['Supplies several leading two-wheeler makers'], risks: ['Polymer prices track crude oil'] },
  { words: 'Agro Foods', sector: 'Food Processing', does: 'processes and packs pulses, spices and ready-to-cook mixes', strengths: ['Own brand sold in over 20,000 retail outlets'], risks: ['Crop failures can squeeze raw material supply'] },
  { words: 'Pharma', sector: 'Pharmaceuticals', does: 'makes generic tablets and injectables for domestic and export markets', strengths: ['WHO-GMP certified plant'], risks: ['Export approvals depend on foreign regulators'] },
  { words: 'Speciality Chemicals', sector: 'Chemicals', does: 'produces dye intermediates and speciality chemicals', strengths: ['Long-term contracts with global buyers'], risks: ['Pollution-control rules may require new capital spending'] },
  { words: 'Textiles', sector: 'Textiles', does: 'spins cotton yarn and weaves fabric for apparel brands', strengths: ['Integrated spinning-to-fabric operations'], risks: ['Cotton price swings affect margins'] },
  { words: 'Steel Tubes', sector: 'Steel', does: 'manufactures ERW pipes and hollow sections', strengths: ['Plant located close to its main steel suppliers'], risks: ['Steel prices are cyclical'] },
  { words: 'Logistics', sector: 'Logistics', does: 'runs warehousing and road-freight services for e-commerce sellers', strengths: ['Asset-light model using leased vehicles'], risks: ['Fuel costs are hard to pass on quickly'] },
  { words: 'Auto Components', sector: 'Auto Components', does: 'machines transmission and brake parts for vehicle makers', strengths: ['Approved supplier to global OEMs'], risks: ['A slowdown in vehicle sales would hit volumes'] },
  { words: 'Healthcare', sector: 'Hospitals', does: 'runs multi-speciality hospitals in tier-2 cities', strengths: ['High bed occupancy across its hospitals'], risks: ['Depends on retaining senior doctors'] },
  { words: 'Packaging', sector: 'Packaging', does: 'makes corrugated boxes and flexible packaging for FMCG companies', strengths: ['Serves several large FMCG brands'], risks: ['Paper and film prices are volatile'] },
  { words: 'Cables', sector: 'Cables and Wires', does: 'manufactures power and control cables', strengths: ['Products approved by state electricity boards'], risks: ['Copper and aluminium price volatility'] },
  { words: 'Electricals', sector: 'Electrical Equipment', does: 'makes switchgear, fans and lighting products', strengths: ['Pan-India dealer network'], risks: ['Intense competition from established brands'] },
  { words: 'Renewable Energy', sector: 'Renewable Energy', does: 'develops and operates rooftop and ground-mounted solar plants', strengths: ['Long-term power purchase agreements'], risks: ['Tariff changes could affect project returns'] },
  { words: 'Solar Technologies', sector: 'Renewable Energy', does: 'assembles solar modules and installs EPC projects', strengths: ['Benefits from government incentives for domestic modules'], risks: ['Imported cell prices drive costs'] },
  { words: 'Engineering', sector: 'Capital Goods', does: 'fabricates heavy equipment for refineries and power plants', strengths: ['In-house design and testing facilities'], risks: ['Large contracts make revenue lumpy'] },
  { words: 'Fintech', sector: 'Financial Technology', does: 'offers digital payment and lending software to small businesses', strengths: ['Fast-growing merchant base'], risks: ['Regulation of digital lending is tightening'] },
  { words: 'Technologies', sector: 'IT Services', does: 'provides IT services and cloud migration to mid-sized companies', strengths: ['Clients across the US, Europe and India'], risks: ['Attrition of skilled engineers'] },
  { words: 'Infotech', sector: 'IT Software', does: 'builds enterprise software for banks and insurers', strengths: ['Recurring licence and support revenue'], risks: ['Long sales cycles with large clients'] },
  { words: 'Digital Media', sector: 'Media and Entertainment', does: 'produces digital content and runs regional news platforms', strengths: ['Strong audience in regional languages'], risks: ['Advertising revenue is cyclical'] },
  { words: 'Retail', sector: 'Retail', does: 'operates value-fashion stores in small towns', strengths: ['Profitable stores within a year of opening'], risks: ['Rising rentals in its markets'] },
  { words: 'Jewellers', sector: 'Gems and Jewellery', does: 'designs and sells gold and diamond jewellery through its showrooms', strengths: ['Trusted regional brand built over decades'], risks: ['Gold price movements affect demand'] },
  { words: 'Cements', sector: 'Cement', does: 'produces cement from a limestone-rich plant', strengths: ['Captive limestone mines'], risks: ['Power and fuel form a large share of costs'] },
  { words: 'Ceramics', sector: 'Building Materials', does: 'manufactures vitrified tiles and sanitaryware', strengths: ['Located in a major ceramic cluster'], risks: ['Gas prices drive kiln costs'] },
  { words: 'Paper Mills', sector: 'Paper', does: 'makes kraft and writing paper from recycled fibre', strengths: ['Uses low-cost recycled raw material'], risks: ['Waste-paper import prices fluctuate'] },
  { words: 'Dairy', sector: 'Dairy Products', does: 'collects milk from farmers and sells packaged dairy products', strengths: ['Procurement network of over 50,000 farmers'], risks: ['Milk procurement prices rise in lean seasons'] },
  { words: 'Beverages', sector: 'Beverages', does: 'bottles packaged drinking water and fruit drinks', strengths: ['Franchise bottler for a national brand'], risks: ['Sales depend heavily on the summer season'] },
  { words: 'Hotels', sector: 'Hospitality', does: 'owns and runs business hotels and resorts', strengths: ['Properties in high-occupancy locations'], risks: ['Travel demand is sensitive to the economy'] },
  { words: 'Realty', sector: 'Real Estate', does: 'develops affordable residential projects', strengths: ['Land bank acquired at low cost'], risks: ['Project approvals can be delayed'] },
  { words: 'Constructions', sector: 'Construction', does: 'executes civil construction for industrial and commercial clients', strengths: ['Track record of timely project completion'], risks: ['Working capital tied up in receivables'] },
  { words: 'Defence Systems', sector: 'Defence', does: 'makes electronic sub-systems for defence and aerospace programmes', strengths: ['Benefits from the push for indigenous defence equipment'], risks: ['Orders depend on government procurement cycles'] },
  { words: 'Biotech', sector: 'Biotechnology', does: 'develops enzymes and probiotics for food and animal health', strengths: ['Patented strains and in-house research'], risks: ['Research may not lead to commercial products'] },
  { words: 'Diagnostics', sector: 'Diagnostics', does: 'runs pathology labs and collection centres', strengths: ['Wide network of collection centres'], risks: ['Price competition from online diagnostics players'] },
  { words: 'Castings', sector: 'Castings and Forgings', does: 'supplies iron and aluminium castings to pump and tractor makers', strengths: ['Long relationships with export customers'], risks: ['Energy-intensive operations'] },
  { words: 'Forgings', sector: 'Castings and Forgings', does: 'produces forged components for commercial vehicles and railways', strengths: ['Approved vendor to Indian Railways'], risks: ['Dependence on the commercial vehicle cycle'] },
  { words: 'Electric Mobility', sector: 'Automobiles', does: 'assembles electric two- and three-wheelers', strengths: ['Early mover in electric three-wheelers'], risks: ['Subsidy changes could reduce demand'] },
  { words: 'Batteries', sector: 'Batteries', does: 'makes lithium-ion battery packs for vehicles and storage', strengths: ['In-house battery management systems'], risks: ['Imported cells make up most of the cost'] },
  { words: 'Fertilizers', sector: 'Fertilizers', does: 'manufactures micronutrient and water-soluble fertilizers', strengths: ['Strong dealer network in rural markets'], risks: ['Monsoon dependence of farm demand'] },
  { words: 'Seeds', sector: 'Agriculture', does: 'breeds and sells hybrid vegetable and field-crop seeds', strengths: ['Proprietary hybrids with good yields'], risks: ['Weather risk to seed production'] },
  { words: 'Marine Exports', sector: 'Seafood', does: 'processes and exports frozen shrimp', strengths: ['Approved by importers in the US and EU'], risks: ['Anti-dumping duties in export markets'] },
  { words: 'Edutech', sector: 'Education', does: 'runs test-preparation courses online and in classrooms', strengths: ['Recognised brand among engineering aspirants'], risks: ['Student enrolments are seasonal'] },
  { words: 'Wires', sector: 'Cables and Wires', does: 'draws copper and aluminium winding wires', strengths: ['Supplies transformer and motor makers'], risks: ['Metal price pass-through lags'] },
  { words: 'Pipes', sector: 'Plastic Pipes', does: 'makes PVC and HDPE pipes for irrigation and plumbing', strengths: ['Strong presence in rural irrigation markets'], risks: ['PVC resin prices are volatile'] },
  { words: 'Industries', sector: 'Industrial Products', does: 'manufactures industrial fasteners and hardware', strengths: ['Wide product range for industrial buyers'], risks: ['Competition from imports'] },
  { words: 'Housing Finance', sector: 'Housing Finance', does: 'lends home loans to self-employed borrowers', strengths: ['Low gross non-performing assets'], risks: ['Exposure to informal-income borrowers'] },
  { words: 'Spinning Mills', sector: 'Textiles', does: 'spins compact and combed cotton yarn', strengths: ['Modern machinery with high productivity'], risks: ['Export demand for yarn is cyclical'] },
  { words: 'Aerospace', sector: 'Aerospace and Defence', does: 'machines precision parts for aircraft and satellites', strengths: ['Certified to aerospace quality standards'], risks: ['Long qualification periods for new programmes'] },
  { words: 'Hospitality Services', sector: 'Facility Services', does: 'provides catering and facility management to companies and hospitals', strengths: ['Multi-year contracts with institutional clients'], risks: ['Labour costs are rising'] },
];

const PREFIXES: readonly string[] = [
  'Shree Ganesh', 'Shri Balaji', 'Sai Krishna', 'Om', 'Jai Balaji', 'Maa Durga', 'Laxmi', 'Sri Venkateswara', 'Siddhi Vinayak',
  'Navkar', 'Mahalaxmi', 'Bharat', 'Hindustan', 'Indo', 'Desh', 'Param', 'Pragati', 'Unnati', 'Vikas', 'Samarth', 'Deccan',
  'Konkan', 'Malabar', 'Kaveri', 'Narmada', 'Godavari', 'Himalaya', 'Vindhya', 'Aravali', 'Ganga', 'Yamuna', 'Surya', 'Chandra',
  'Akash', 'Prithvi', 'Tara', 'Nova', 'Apex', 'Zenith', 'Pinnacle', 'Sigma', 'Orbit', 'Vertex', 'Quantum', 'Nexus', 'Trident',
  'Crystal', 'Emerald', 'Silverline', 'Greenfield', 'Shubham', 'Anand', 'Kalpataru', 'Sahyadri', 'Vardhman', 'Jyoti', 'Shakti',
  'Swastik', 'Trishul', 'Kamdhenu', 'Annapurna', 'Rudra', 'Ashoka', 'Mangalam', 'Suvidha', 'Aadhya', 'Krishna', 'Vedant',
];

const FAMILY_NAMES: readonly string[] = [
  'Patel', 'Mehta', 'Agarwal', 'Goyal', 'Jain', 'Reddy', 'Iyer', 'Kapoor', 'Bansal', 'Shah', 'Desai', 'Joshi', 'Kulkarni',
  'Nair', 'Menon', 'Chawla', 'Malhotra', 'Singhania', 'Mittal', 'Bhatia', 'Rao', 'Pillai', 'Gupta', 'Khanna', 'Sethi',
];

const PLACES: readonly string[] = [
  'Pune', 'Surat', 'Rajkot', 'Ahmedabad', 'Indore', 'Jaipur', 'Coimbatore', 'Hosur', 'Nashik', 'Ludhiana', 'Kanpur', 'Nagpur',
  'Vadodara', 'Kolkata', 'Hyderabad', 'Chennai', 'Bengaluru', 'Mumbai', 'Noida', 'Gurugram', 'Vapi', 'Aurangabad', 'Kochi',
  'Bhubaneswar', 'Raipur', 'Guwahati', 'Visakhapatnam', 'Madurai', 'Jamnagar', 'Morbi', 'Tiruppur', 'Panipat', 'Haridwar',
  'Silvassa', 'Bhiwandi', 'Thane', 'Lucknow', 'Mysuru', 'Vijayawada', 'Kolhapur',
];

interface Lender {
  name: string;
  /** The issue's `sector`. */
  sector: string;
  does: string;
}

const LENDERS: readonly Lender[] = [
  { name: 'Kerala Gold Finance', sector: 'Gold Loans', does: 'is a non-banking finance company lending against gold through branches across South India' },
  { name: 'Deccan Fincorp', sector: 'NBFC', does: 'is a non-banking finance company lending to small businesses and traders' },
  { name: 'Malabar Capital', sector: 'Gold Loans', does: 'is a non-banking finance company offering gold loans and microfinance' },
  { name: 'Indo Housing Finance', sector: 'Housing Finance', does: 'is a housing finance company focused on affordable homes' },
  { name: 'Pragati Microfinance', sector: 'Microfinance', does: 'lends small group loans to women entrepreneurs in rural India' },
  { name: 'Sahyadri Credit', sector: 'Vehicle Finance', does: 'finances used commercial vehicles and tractors' },
  { name: 'Navkar Fincap', sector: 'NBFC', does: 'provides loans against property to small enterprises' },
  { name: 'Vindhya Leasing and Finance', sector: 'Vehicle Finance', does: 'finances construction equipment and vehicles' },
  { name: 'Shakti Fincorp', sector: 'Consumer Finance', does: 'offers two-wheeler and consumer durable loans' },
  { name: 'Kaveri Gold Loans', sector: 'Gold Loans', does: 'lends against household gold jewellery' },
  { name: 'Bharat Rural Capital', sector: 'Microfinance', does: 'lends to farmers and rural micro-enterprises' },
];

// Registrars, lead managers and market makers: fictional firms, named as Indian ones are.
const REGISTRARS: readonly string[] = [
  'Orbit Registry Services Pvt Ltd',
  'Meridian Share Registrars Pvt Ltd',
  'Sahyog Registry and Transfer Agents Pvt Ltd',
  'Lotus Corporate Registry Ltd',
  'Indus Share Transfer Services Pvt Ltd',
  'Banyan Investor Services Pvt Ltd',
];

const LEAD_MANAGERS: readonly string[] = [
  'Sapphire Capital Advisors Pvt Ltd',
  'Tidewater Securities Ltd',
  'Arjun Corporate Finance Pvt Ltd',
  'Northstar Investment Bankers Ltd',
  'Gulmohar Capital Markets Pvt Ltd',
  'Riverbend Capital Ltd',
  'Coromandel Corporate Advisors Pvt Ltd',
  'Saffron Equity Advisors Pvt Ltd',
  'Lighthouse Capital Markets Ltd',
];

const SME_LEAD_MANAGERS: readonly string[] = [
  'Vasant Corporate Advisors Pvt Ltd',
  'Shikhar Financial Services Pvt Ltd',
  'Peacock Merchant Bankers Pvt Ltd',
  'Tulsi Fincorp Advisors Pvt Ltd',
  'Monsoon Capital Partners Pvt Ltd',
];

const MARKET_MAKERS: readonly string[] = [
  'Anchor Share Broking Pvt Ltd',
  'Kiran Stock Brokers Pvt Ltd',
  'Silver Oak Securities Pvt Ltd',
  'Mangrove Broking Services Pvt Ltd',
  'Vistar Stock Broking Ltd',
];

const COMMON_STRENGTHS: readonly string[] = [
  'Consistent revenue growth over the last three financial years',
  'Experienced promoters with over 20 years in the industry',
  'Diversified customer base across several states',
  'Healthy return on equity',
  'Low debt after the issue',
  'Certified manufacturing and quality processes',
  'Established distribution network',
];

const COMMON_RISKS: readonly string[] = [
  'High dependence on its top five customers',
  'Working capital intensive operations',
  'Pending litigation involving the promoters',
  'Negative operating cash flow in one of the last three years',
  'Competition from unorganised players',
  'Valuation at a premium to listed peers',
  'A large part of revenue comes from one state',
];

const DEBT_STRENGTHS: readonly string[] = [
  'Rated AA- (Stable) by a credit rating agency',
  'Monthly and annual interest payout options',
  'Secured by a charge on loan receivables',
  'Diversified loan book across several states',
  'Long track record of timely repayment',
];

const DEBT_RISKS: readonly string[] = [
  'Asset quality may weaken in an economic downturn',
  'NCDs may trade thinly after listing',
  'Interest rate changes affect the market price of NCDs',
  'Concentration of lending in a few states',
  'Exposure to unsecured loans',
];

// ---------------------------------------------------------------------------------------
// Small helpers: PRNG, calendar days, text.

/** sfc32, seeded through splitmix32: small, fast and good enough for demo data. */
class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const split = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = split();
    this.b = split();
    this.c = split();
    this.d = split();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4_294_967_296;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  float(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A standard normal deviate (Box-Muller). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }

  /** `k` distinct items in random order (all of them when k >= length). */
  sample<T>(items: readonly T[], k: number): T[] {
    const copy = [...items];
    const n = Math.min(k, copy.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.next() * (copy.length - i));
      const tmp = copy[i] as T;
      copy[i] = copy[j] as T;
      copy[j] = tmp;
    }
    return copy.slice(0, n);
  }
}

function toUint32(seed: number): number {
  if (!Number.isFinite(seed)) throw new RangeError('generateDataset: seed must be a finite number');
  return seed >>> 0;
}

function mix(seed: number, n: number): number {
  return (Math.imul(seed ^ 0x27d4eb2d, 0x165667b1) + Math.imul(n + 1, 0x9e3779b1)) >>> 0;
}

function logUniform(rng: Rng, lo: number, hi: number): number {
  return Math.exp(rng.float(Math.log(lo), Math.log(hi)));
}

function roundTo(x: number, decimals: number): number {
  const f = 10 ** decimals;
  const r = Math.round(x * f) / f;
  return r === 0 ? 0 : r;
}

/** A price on the exchange's tick (0.05 or 0.01 rupees), as a number with at most 2 decimals. */
function onTick(price: number, tick: number): number {
  return roundTo(Math.round(price / tick) * tick, 2);
}

/** Rounds to a multiple of `step` (1 or 0.5), never giving -0. */
function roundStep(x: number, step: number): number {
  const r = Math.round(x / step) * step;
  return r === 0 ? 0 : r;
}

// The generator counts days as whole UTC days since 1970-01-01 (trading days are the same
// dates in India); luxon converts them to and from calendar dates.

/** Days since 1970-01-01 of a `YYYY-MM-DD` date, or null when it is not a real date. */
function parseDay(text: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return null;
  const date = DateTime.fromISO(text, { zone: 'utc' });
  return date.isValid ? date.toMillis() / DAY : null;
}

function dayOf(year: number, month: number, day: number): number {
  return DateTime.utc(year, month, day).toMillis() / DAY;
}

function formatDay(day: number): string {
  return DateTime.fromMillis(day * DAY, { zone: 'utc' }).toISODate() as string;
}

function yearOf(day: number): number {
  return DateTime.fromMillis(day * DAY, { zone: 'utc' }).year;
}

/** Minutes after 00:00 UTC at which the wall clock in India reads `hour:minute` (same date). */
function marketMinute(hour: number, minute: number): number {
  const utc = DateTime.fromObject({ year: 2026, month: 1, day: 5, hour, minute }, { zone: MARKET_ZONE }).toUTC();
  return utc.hour * 60 + utc.minute;
}

function isWeekday(day: number): boolean {
  const dow = (((day + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday; 0 = Sunday
  return dow !== 0 && dow !== 6;
}

function nextWeekday(day: number): number {
  let d = day;
  while (!isWeekday(d)) d++;
  return d;
}

/** The `n`-th weekday after `day` (exchange holidays are ignored). */
function addTradingDays(day: number, n: number): number {
  let d = day;
  for (let left = n; left > 0; ) {
    d++;
    if (isWeekday(d)) left--;
  }
  return d;
}

function kebab(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 120)
    .replace(/-+$/, '');
}

function compareAscii(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const ROMAN: ReadonlyArray<readonly [number, string]> = [
  [10, 'X'],
  [9, 'IX'],
  [5, 'V'],
  [4, 'IV'],
  [1, 'I'],
];

function roman(n: number): string {
  let out = '';
  let left = n;
  for (const [value, text] of ROMAN) {
    while (left >= value) {
      out += text;
      left -= value;
    }
  }
  return out;
}

function fromRoman(text: string): number {
  for (let n = 1; n <= 50; n++) if (roman(n) === text) return n;
  return 1;
}
