/**
 * The demo's simulated live sources (docs/spec.md#sources): while `npm start` runs, several
 * GMP sites report numbers that move every minute of Indian market hours, and the exchange's
 * bids grow through the bidding hours of the open issues, so the dashboard, the series and
 * webhooks show data that changes.
 *
 * Nothing here keeps state or reads the clock: every answer is a pure function of the
 * options, the source and the run's `now` (a small integer hash, not a cryptographic one),
 * so a restarted demo carries on where it was and tests need no timers.
 */
import type { DatasetSnapshot, DatasetSubscription, IpoType, SubscriptionTimes } from '@ipokit/core';
import { todayInIst } from '@ipokit/core';
import { addDays, dayNumber, deriveStatus, istDayStart } from '@ipokit/core/backend';
import type { GmpReport, Source, SourceAnswer } from '@ipokit/sources';
import { DEFAULT_SEED, drawFinalTimes, GMP_SOURCES, subscriptionTimes, type FinalTimes, type Shares } from './generate.js';

/** What the simulation reads of an IPO: a dataset IPO (what `generateDataset` gives) or a store's record. */
export interface DemoLiveIpo {
  id: string;
  type: IpoType;
  startDate?: string | null;
  endDate?: string | null;
  listingDate?: string | null;
  priceRange?: string | null;
}

/**
 * Options of {@link demoLiveSources}. Pass the demo dataset's `gmp` and `subscription` too
 * (`{ ...dataset }` does): each IPO's GMP then moves around its latest generated level, and
 * its subscription carries on from its latest generated reading, never below it.
 *
 * @example
 * ```ts
 * const dataset = generateDataset({ today: todayInIst(now), now: now.getTime() });
 * const options: DemoLiveOptions = { ipos: dataset.ipos ?? [], gmp: dataset.gmp, subscription: dataset.subscription };
 * ```
 */
export interface DemoLiveOptions {
  ipos: readonly DemoLiveIpo[];
  /** The dataset's GMP snapshots: each IPO's latest sets the level its live numbers move around. */
  gmp?: readonly DatasetSnapshot[];
  /** The dataset's subscription snapshots: each IPO's latest is where its live figures go on from. */
  subscription?: readonly DatasetSubscription[];
  /** Seed of the simulation (any finite number; its integer part modulo 2^32). Default the generator's `DEFAULT_SEED`. */
  seed?: number;
  /** How many GMP sites report, 1 to 6 (names from the generator's list). Default 3. */
  gmpSources?: number;
}

/** The subscription source's name. */
export const DEMO_SUBSCRIPTION_SOURCE = 'exchange-bids';
/** How often each simulated source runs: every minute. */
export const DEMO_LIVE_EVERY_MS = 60_000;

/**
 * The demo's simulated live sources: `gmpSources` GMP sites (named from the generator's list)
 * and one subscription source, {@link DEMO_SUBSCRIPTION_SOURCE}, each run every minute.
 *
 * - During Indian market hours (09:15-15:30 IST, weekdays) each GMP site answers
 *   `gmpReports` for the mainboard and SME issues that are open, closed (and not yet listed)
 *   or opening within 7 days on that IST day: its own number around the issue's latest
 *   generated GMP (or a premium drawn from its price band), moving a little every minute.
 *   Each site follows only some issues (every issue has at least one) and misses some
 *   minutes, so snapshots combine one to all of them.
 * - During bidding hours (10:00-17:00 IST) of each bidding day, the subscription source
 *   answers a `subscription` snapshot at `now` for every open issue, its figures growing
 *   over the days and the hours as the generator's do, never going down within an issue.
 * - Any other time a source answers `{}`.
 *
 * @example
 * ```ts
 * const dataset = generateDataset({ today: todayInIst(new Date()), now: Date.now() });
 * const sources = demoLiveSources({ ipos: dataset.ipos ?? [], gmp: dataset.gmp, subscription: dataset.subscription });
 * const collector = await startCollector(store, { sources });
 * ```
 */
export function demoLiveSources(options: DemoLiveOptions): Source[] {
  const count = options.gmpSources ?? 3;
  if (!Number.isInteger(count) || count < 1 || count > GMP_SOURCES.length) {
    throw new RangeError(`demoLiveSources: gmpSources must be an integer from 1 to ${GMP_SOURCES.length}, got ${String(count)}`);
  }
  const rawSeed = options.seed ?? DEFAULT_SEED;
  if (!Number.isFinite(rawSeed)) throw new RangeError('demoLiveSources: seed must be a finite number');
  const seed = rawSeed >>> 0;
  const issues = options.ipos.map((ipo) => issueOf(ipo, seed));
  indexGmp(issues, options.gmp ?? []);
  indexSubscription(issues, options.subscription ?? []);

  const names = pickNames(seed, count);
  const gmp = names.map((name, index): Source => {
    const site: Site = { name, index, count, key: hashText(name), skipRate: 0.1 + 0.25 * unit(hash(seed, hashText(name), SKIP_SALT)) };
    return {
      name,
      everyMs: DEMO_LIVE_EVERY_MS,
      collect: async ({ now }) => gmpAnswer(site, issues, seed, now.getTime()),
    };
  });
  const bids: Source = {
    name: DEMO_SUBSCRIPTION_SOURCE,
    everyMs: DEMO_LIVE_EVERY_MS,
    collect: async ({ now }) => subscriptionAnswer(issues, now.getTime()),
  };
  return [...gmp, bids];
}


// ---------------------------------------------------------------------------------------
// The issues, read once.

interface Issue {
  id: string;
  type: IpoType;
  startDate: string | null;
  endDate: string | null;
  listingDate: string | null;
  /** The upper price band in rupees, or null without a band. */
  high: number | null;
  key: number;
  /** The latest generated snapshot: its instant, each site's number, and their mean. */
  lastGmp: { at: number; prices: Map<string, number>; mean: number | null } | null;
  /** The latest generated subscription reading. */
  lastBids: { at: number; times: Partial<SubscriptionTimes> } | null;
  /** Lazily: the issue's GMP level and its subscription model. */
  level?: number | null;
  model?: BidsModel | null;
}

function issueOf(ipo: DemoLiveIpo, seed: number): Issue {
  return {
    id: ipo.id,
    type: ipo.type,
    startDate: ipo.startDate ?? null,
    endDate: ipo.endDate ?? null,
    listingDate: ipo.listingDate ?? null,
    high: upperBand(ipo.priceRange ?? null),
    key: hash(seed, hashText(ipo.id)),
    lastGmp: null,
    lastBids: null,
  };
}

function upperBand(priceRange: string | null): number | null {
  if (priceRange === null) return null;
  const high = Number(priceRange.slice(priceRange.indexOf('-') + 1));
  return Number.isFinite(high) && high > 0 ? high : null;
}

function indexGmp(issues: readonly Issue[], gmp: readonly DatasetSnapshot[]): void {
  const byId = new Map(issues.map((issue) => [issue.id, issue]));
  for (const snapshot of gmp) {
    const issue = byId.get(snapshot.ipoId);
    const at = Date.parse(snapshot.timestamp);
    if (issue === undefined || !Number.isFinite(at) || (issue.lastGmp !== null && issue.lastGmp.at >= at)) continue;
    const prices = new Map<string, number>();
    for (const source of snapshot.sources) if (typeof source.gmpPrice === 'number') prices.set(source.name, source.gmpPrice);
    const values = [...prices.values()];
    const mean = values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
    issue.lastGmp = { at, prices, mean };
  }
}

function indexSubscription(issues: readonly Issue[], subscription: readonly DatasetSubscription[]): void {
  const byId = new Map(issues.map((issue) => [issue.id, issue]));
  for (const reading of subscription) {
    const issue = byId.get(reading.ipoId);
    const at = Date.parse(reading.timestamp);
    if (issue === undefined || !Number.isFinite(at) || (issue.lastBids !== null && issue.lastBids.at >= at)) continue;
    issue.lastBids = { at, times: reading.times };
  }
}

// ---------------------------------------------------------------------------------------
// GMP sites.

interface Site {
  name: string;
  index: number;
  count: number;
  key: number;
  /** Share of minutes the site misses. */
  skipRate: number;
}

const MINUTE = 60_000;
/** Market hours and bidding hours, minutes after 00:00 IST. */
const MARKET_OPEN = 9 * 60 + 15;
const MARKET_CLOSE = 15 * 60 + 30;
const BIDS_OPEN = 10 * 60;
const BIDS_CLOSE = 17 * 60;
/** How far ahead an upcoming issue already trades in the grey market, and how long after closing it still does. */
const UPCOMING_DAYS = 7;
const CLOSED_DAYS = 10;

const SKIP_SALT = 0x51c3;
const FOLLOW_SALT = 0x7f0a;
const LEVEL_SALT = 0x2e91;
const NOISE_SALT = 0x4d17;
const BIDS_SALT = 0x6b3d;

function gmpAnswer(site: Site, issues: readonly Issue[], seed: number, nowMs: number): SourceAnswer {
  const today = todayInIst(nowMs);
  const minuteOfDay = Math.floor((nowMs - istDayStart(nowMs)) / MINUTE);
  if (!isWeekday(today) || minuteOfDay < MARKET_OPEN || minuteOfDay > MARKET_CLOSE) return {};
  const minute = Math.floor(nowMs / MINUTE);
  if (unit(hash(seed, site.key, minute)) < site.skipRate) return {};
  const reports: GmpReport[] = [];
  for (const issue of issues) {
    if (!tradesInGreyMarket(issue, today) || !follows(site, issue, seed)) continue;
    const price = sitePrice(site, issue, seed, minute);
    if (price !== null) reports.push({ ipoId: issue.id, gmpPrice: price });
  }
  return reports.length === 0 ? {} : { gmpReports: reports };
}

function tradesInGreyMarket(issue: Issue, today: string): boolean {
  if (issue.type === 'DEBT' || issue.startDate === null) return false;
  const status = deriveStatus(issue, today);
  if (status === 'open') return true;
  if (status === 'closed') return (issue.endDate ?? issue.startDate) >= addDays(today, -CLOSED_DAYS);
  return status === 'upcoming' && issue.startDate <= addDays(today, UPCOMING_DAYS);
}

/** A site follows an issue when it is the issue's first site, or by chance (likelier when the generated snapshots name it). */
function follows(site: Site, issue: Issue, seed: number): boolean {
  if (issue.key % site.count === site.index) return true;
  const named = issue.lastGmp?.prices.has(site.name) ?? false;
  return unit(hash(seed, site.key, issue.key, FOLLOW_SALT)) < (named ? 0.75 : 0.35);
}

/** The site's number at `minute`: the issue's level, the site's own offset, and three layers of smooth noise. */
function sitePrice(site: Site, issue: Issue, seed: number, minute: number): number | null {
  const level = levelOf(issue, seed);
  if (level === null) return null;
  const high = issue.high ?? Math.max(20, Math.abs(level) * 4);
  const step = high >= 150 ? 1 : 0.5;
  const sigma = Math.max(0.3, high * 0.004);
  const own = issue.lastGmp?.prices.get(site.name);
  const offset = own !== undefined ? own - level : (2 * unit(hash(seed, site.key, issue.key, LEVEL_SALT)) - 1) * Math.max(0.5, Math.abs(level) * 0.04 + high * 0.004);
  const noiseKey = hash(seed, site.key, issue.key, NOISE_SALT);
  const wander =
    smoothNoise(noiseKey, minute, 1440) * sigma * 4 + smoothNoise(noiseKey ^ 0x1111, minute, 45) * sigma * 2 + smoothNoise(noiseKey ^ 0x2222, minute, 6) * sigma;
  return roundStep(level + offset + wander, step);
}

/** The issue's GMP level: the mean of its latest generated snapshot, or a premium drawn from its band. */
function levelOf(issue: Issue, seed: number): number | null {
  if (issue.level !== undefined) return issue.level;
  let level: number | null = issue.lastGmp?.mean ?? null;
  if (level === null && issue.high !== null) {
    const pct = -8 + 53 * unit(hash(seed, issue.key, LEVEL_SALT));
    level = (issue.high * pct) / 100;
  }
  issue.level = level;
  return level;
}

function pickNames(seed: number, count: number): string[] {
  const ranked = GMP_SOURCES.map((name) => ({ name, rank: hash(seed, hashText(name)) }));
  ranked.sort((a, b) => a.rank - b.rank || (a.name < b.name ? -1 : 1));
  return ranked.slice(0, count).map((r) => r.name);
}

// ---------------------------------------------------------------------------------------
// The exchange's bids.

interface BidsModel {
  /** The bidding days (weekdays from the start to the end date). */
  days: string[];
  final: FinalTimes;
  shape: { nii: number; retail: number; employee: number };
  /** Per category, what the model's figures are multiplied by so that they pass through the latest generated reading. */
  scale: Partial<Record<keyof SubscriptionTimes, number>>;
}

const CATEGORIES = ['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total'] as const;
/** The generator's reading times (10:00, 12:00, 14:00, 17:00) as fractions of the bidding hours. */
const READINGS = [0, 2 / 7, 4 / 7, 1] as const;
/** On the last day QIBs bid late: their share of the final figure at each reading. */
const LAST_DAY_QIB = [0.15, 0.3, 0.55, 1] as const;

function subscriptionAnswer(issues: readonly Issue[], nowMs: number): SourceAnswer {
  const today = todayInIst(nowMs);
  const minuteOfDay = (nowMs - istDayStart(nowMs)) / MINUTE;
  if (!isWeekday(today) || minuteOfDay < BIDS_OPEN || minuteOfDay > BIDS_CLOSE) return {};
  const timestamp = new Date(nowMs).toISOString();
  const out: DatasetSubscription[] = [];
  for (const issue of issues) {
    if (issue.startDate === null || deriveStatus(issue, today) !== 'open') continue;
    // The generated readings cover the time before the demo started; the live ones carry on after them.
    if (issue.lastBids !== null && nowMs <= issue.lastBids.at) continue;
    const model = modelOf(issue);
    const progress = model === null ? null : progressAt(model, nowMs);
    if (model === null || progress === null) continue;
    out.push({ ipoId: issue.id, timestamp, times: liveTimes(issue, model, progress) });
  }
  return out.length === 0 ? {} : { subscription: out };
}

function modelOf(issue: Issue): BidsModel | null {
  if (issue.model !== undefined) return issue.model;
  issue.model = null;
  if (issue.startDate === null) return null;
  const days: string[] = [];
  for (let day = issue.startDate; day <= (issue.endDate ?? issue.startDate) && days.length < 31; day = addDays(day, 1)) if (isWeekday(day)) days.push(day);
  if (days.length === 0) return null;
  const level = issue.type === 'DEBT' ? null : (issue.lastGmp?.mean ?? null);
  const premiumPct = level !== null && issue.high !== null ? (level / issue.high) * 100 : 10 + 20 * unit(hash(issue.key, BIDS_SALT, 1));
  const final = drawFinalTimes(hash(issue.key, BIDS_SALT), { type: issue.type, premiumPct });
  const anchor = issue.lastBids;
  if (anchor !== null) {
    // The live book has the categories the generated one has.
    const has = (key: keyof SubscriptionTimes) => typeof anchor.times[key] === 'number';
    if (has('qib') && final.qib === null) final.qib = final.retail;
    if (has('employee') && final.employee === null) final.employee = final.retail * 0.8;
    if (has('shareholder') && final.shareholder === null) final.shareholder = final.retail;
  }
  const r = (n: number) => unit(hash(issue.key, BIDS_SALT, n));
  const model: BidsModel = { days, final, shape: { nii: 1.8 + 0.8 * r(2), retail: 1.2 + 0.6 * r(3), employee: 1.2 + 0.8 * r(4) }, scale: {} };
  const at = anchor === null ? null : progressAt(model, anchor.at);
  if (anchor !== null && at !== null) {
    const then = subscriptionTimes(issue, final, sharesAt(model, at));
    for (const key of CATEGORIES) {
      const seen = anchor.times[key];
      const modelled = then[key];
      if (typeof seen === 'number' && modelled !== null && modelled > 0) model.scale[key] = Math.min(4, Math.max(0.25, seen / modelled));
    }
  }
  issue.model = model;
  return model;
}

/** Where bidding stands at `ms`: the day's index and the fraction of its bidding hours, or null outside them. */
function progressAt(model: BidsModel, ms: number): { day: number; hour: number } | null {
  const day = model.days.indexOf(todayInIst(ms));
  const minute = (ms - istDayStart(ms)) / MINUTE;
  if (day < 0 || minute < BIDS_OPEN || minute > BIDS_CLOSE) return null;
  return { day, hour: (minute - BIDS_OPEN) / (BIDS_CLOSE - BIDS_OPEN) };
}

/**
 * Each category's share of its final figure, as the generator's readings have it (without
 * their wobble), in between them along straight lines: it never goes down as time goes on.
 */
function sharesAt(model: BidsModel, at: { day: number; hour: number }): Shares {
  const readings = model.days.length * READINGS.length;
  const progress = Math.min(1, (at.day * READINGS.length + 1 + between(READINGS, [0, 1, 2, 3], at.hour)) / readings);
  const last = at.day === model.days.length - 1;
  const qib = last ? between(READINGS, LAST_DAY_QIB, at.hour) : 0.03 * progress;
  return {
    qib: Math.min(1, qib),
    nii: progress ** model.shape.nii,
    retail: progress ** model.shape.retail,
    employee: progress ** model.shape.employee,
    shareholder: progress ** model.shape.employee,
  };
}

/** The issue's figures at `at`: the model's, scaled through the latest generated reading and never below it. */
function liveTimes(issue: Issue, model: BidsModel, at: { day: number; hour: number }): SubscriptionTimes {
  const modelled = subscriptionTimes(issue, model.final, sharesAt(model, at));
  const anchor = issue.lastBids?.times;
  const out = { ...modelled };
  for (const key of CATEGORIES) {
    const value = modelled[key];
    if (anchor === undefined) continue;
    const seen = anchor[key];
    if (typeof seen !== 'number') {
      out[key] = null;
      continue;
    }
    const scaled = value === null ? seen : round2(Math.min(MAX_TIMES, value * (model.scale[key] ?? 1)));
    out[key] = Math.max(seen, scaled);
  }
  return out;
}

/** Piecewise-linear interpolation of `ys` over ascending `xs` at `x` (held at the ends). */
function between(xs: readonly number[], ys: readonly number[], x: number): number {
  if (x <= (xs[0] as number)) return ys[0] as number;
  for (let i = 1; i < xs.length; i++) {
    const x1 = xs[i] as number;
    if (x <= x1) {
      const x0 = xs[i - 1] as number;
      const y0 = ys[i - 1] as number;
      return y0 + ((ys[i] as number) - y0) * ((x - x0) / (x1 - x0));
    }
  }
  return ys[ys.length - 1] as number;
}

const MAX_TIMES = 9_999;

// ---------------------------------------------------------------------------------------
// Small helpers: an integer hash, smooth noise, days, rounding.

/** murmur3's finaliser over the parts: a well-mixed 32-bit integer (not for secrets). */
function hash(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) h = fmix((h ^ Math.imul(part >>> 0, 0x9e3779b1)) + 0x27d4eb2d);
  return h;
}

function fmix(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** FNV-1a of a string's UTF-16 units. */
function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A float in [0, 1) from a hash. */
function unit(h: number): number {
  return h / 4_294_967_296;
}

/** Value noise in [-1, 1]: a random value every `period` minutes, eased in between, so it moves a little each minute. */
function smoothNoise(key: number, minute: number, period: number): number {
  const knot = Math.floor(minute / period);
  const t = (minute - knot * period) / period;
  const ease = t * t * (3 - 2 * t);
  const a = 2 * unit(hash(key, knot)) - 1;
  const b = 2 * unit(hash(key, knot + 1)) - 1;
  return a + (b - a) * ease;
}

function isWeekday(day: string): boolean {
  const dow = (((dayNumber(day) + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday; 0 = Sunday
  return dow !== 0 && dow !== 6;
}

/** Rounds to a multiple of `step` (1 or 0.5), never giving -0. */
function roundStep(x: number, step: number): number {
  const r = Math.round(x / step) * step;
  return r === 0 ? 0 : r;
}

function round2(x: number): number {
  const r = Math.round(x * 100) / 100;
  return r === 0 ? 0 : r;
}
