import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { IpokitError, todayInIst, validateDataset, type Dataset, type DatasetIpo, type DatasetSnapshot, type DatasetSubscription, type IpoStatus, type IpoType } from '@ipokit/core';
import { deriveStatus, IPO_STATUSES, isCalendarDate } from '@ipokit/core/backend';
import { DEFAULT_SEED, generateDataset } from './generate.js';

const TYPES: readonly IpoType[] = ['EQ', 'SME', 'DEBT'];
const SOURCE_NAMES = new Set(['chittorgarh', 'investorgain', 'ipocentral', 'ipoji', 'ipoplatform', 'ipowatch']);
const DAY = 86_400_000;

/** Noon in India on `today`, so that todayInIst(now) === today. */
function noonIst(today: string): number {
  return Date.parse(`${today}T06:30:00.000Z`);
}

const cache = new Map<string, Dataset>();
function dataset(today: string, seed = DEFAULT_SEED, now = noonIst(today)): Dataset {
  const key = `${today}|${seed}|${now}`;
  let d = cache.get(key);
  if (d === undefined) {
    d = generateDataset({ seed, today, now });
    cache.set(key, d);
  }
  return d;
}

function ipos(d: Dataset): DatasetIpo[] {
  return d.ipos ?? [];
}

function snapshots(d: Dataset): DatasetSnapshot[] {
  return d.gmp ?? [];
}

function subscription(d: Dataset): DatasetSubscription[] {
  return d.subscription ?? [];
}

/** The number of decimals a listing gain is written with ("12" 0, "12.5" 1, "-3.25" 2). */
function decimalsOf(text: string): number {
  return text.includes('.') ? text.length - text.indexOf('.') - 1 : 0;
}

/** Whether `x` is a whole number of hundredths. */
function twoDecimals(x: number): boolean {
  return Math.abs(x * 100 - Math.round(x * 100)) < 1e-6;
}

function statusOf(ipo: DatasetIpo, today: string): IpoStatus {
  return deriveStatus({ startDate: ipo.startDate ?? null, endDate: ipo.endDate ?? null, listingDate: ipo.listingDate ?? null }, today);
}

function upperBand(ipo: DatasetIpo): number {
  const high = ipo.priceRange?.split('-')[1];
  if (high === undefined) throw new Error(`no price band on ${ipo.id}`);
  return Number(high);
}

function isWeekdayUtc(ms: number): boolean {
  const dow = new Date(ms).getUTCDay();
  return dow !== 0 && dow !== 6;
}

/** Every string anywhere inside a value. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

const TODAY = '2026-11-22';
const TODAYS = ['2026-11-22', '2025-01-04', '2027-06-30', '2024-02-29', '2026-12-31', '2027-01-01', '2025-03-03', '2026-09-18'];

describe('generateDataset', () => {
  it('is deterministic: the same options give a deep-equal dataset', () => {
    const options = { seed: 7, today: TODAY, now: noonIst(TODAY) };
    const a = generateDataset(options);
    const b = generateDataset(options);
    expect(a.ipos).toStrictEqual(b.ipos);
    expect(JSON.stringify(a.gmp)).toBe(JSON.stringify(b.gmp));
    expect(JSON.stringify(a.subscription)).toBe(JSON.stringify(b.subscription));
    expect(generateDataset({ today: TODAY, now: noonIst(TODAY) })).toStrictEqual(dataset(TODAY));
  });

  it('gives a different dataset for a different seed', () => {
    const a = dataset(TODAY, 1);
    const b = dataset(TODAY, 2);
    expect(ipos(a).map((i) => i.name)).not.toStrictEqual(ipos(b).map((i) => i.name));
    expect(JSON.stringify(a.gmp)).not.toBe(JSON.stringify(b.gmp));
  });

  it('refuses a today that is not a calendar date', () => {
    expect(() => generateDataset({ today: '2026-02-30', now: 0 })).toThrow(RangeError);
    expect(() => generateDataset({ today: '22/11/2026', now: 0 })).toThrow(RangeError);
  });

  it('generates at least 300 IPOs, tens of thousands of GMP snapshots and hundreds of subscription snapshots', () => {
    // No timing assertion (house rule): the size is what keeps it quick.
    const d = generateDataset({ seed: 99, today: TODAY, now: noonIst(TODAY) });
    expect(ipos(d).length).toBeGreaterThanOrEqual(300);
    expect(snapshots(d).length).toBeGreaterThan(30_000);
    expect(snapshots(d).length).toBeLessThan(150_000);
    expect(subscription(d).length).toBeGreaterThan(300);
    expect(subscription(d).length).toBeLessThan(5_000);
  });

  it.each(TODAYS)('holds every type and every status on %s', (today) => {
    const all = ipos(dataset(today));
    for (const type of TYPES) expect(all.some((i) => i.type === type), type).toBe(true);
    const counts = new Map<IpoStatus, number>();
    for (const ipo of all) counts.set(statusOf(ipo, today), (counts.get(statusOf(ipo, today)) ?? 0) + 1);
    for (const status of IPO_STATUSES) expect(counts.get(status) ?? 0, status).toBeGreaterThanOrEqual(status === 'listed' ? 200 : 3);
    // Most are listed.
    expect(counts.get('listed') ?? 0).toBeGreaterThan(all.length / 2);
  });

  it('holds every status for any seed and any today (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.date({ min: new Date('2023-01-01T00:00:00Z'), max: new Date('2032-12-31T00:00:00Z'), noInvalidDate: true }),
        (seed, date) => {
          const now = date.getTime();
          const today = todayInIst(now);
          const d = generateDataset({ seed, today, now });
          const seen = new Set(ipos(d).map((i) => `${statusOf(i, today)}`));
          expect([...seen].sort()).toStrictEqual([...IPO_STATUSES].sort());
          expect(new Set(ipos(d).map((i) => i.type)).size).toBe(3);
          // Snapshots after `now` exist but stay rare.
          const after = snapshots(d).filter((s) => Date.parse(s.timestamp) > now).length;
          expect(after).toBeGreaterThan(0);
          expect(after).toBeLessThanOrEqual(10);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('follows today in India, not the UTC day', () => {
    // 19:00Z is already the next day in India.
    const now = Date.parse('2026-11-22T19:00:00.000Z');
    const today = todayInIst(now);
    expect(today).toBe('2026-11-23');
    const d = generateDataset({ today, now });
    const statuses = new Set(ipos(d).map((i) => statusOf(i, today)));
    expect(statuses.size).toBe(5);
  });

  it('spans every year from 2019 through the year after today', () => {
    for (const today of [TODAY, '2025-01-04', '2027-06-30']) {
      const years = new Set(ipos(dataset(today)).flatMap((i) => (i.startDate ? [Number(i.startDate.slice(0, 4))] : [])));
      const next = Number(today.slice(0, 4)) + 1;
      expect(Math.min(...years)).toBe(2019);
      expect(Math.max(...years)).toBe(next);
      for (let y = 2019; y <= next; y++) expect(years.has(y), String(y)).toBe(true);
    }
  });

  it('gives unique ids, symbols (ignoring ASCII case) and slugs in the expected forms', () => {
    for (const seed of [DEFAULT_SEED, 1, 2]) {
      const all = ipos(dataset(TODAY, seed));
      const ids = all.map((i) => i.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of ids) expect(id).toMatch(/^\d{10}$/);
      const symbols = all.flatMap((i) => (i.symbol == null ? [] : [i.symbol]));
      expect(new Set(symbols.map((s) => s.toLowerCase())).size).toBe(symbols.length);
      for (const s of symbols) expect(s).toMatch(/^[A-Z0-9]{1,20}$/);
      const slugs = all.map((i) => i.slug);
      expect(new Set(slugs).size).toBe(slugs.length);
      for (const s of slugs) {
        expect(s).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
        expect(s.length).toBeLessThanOrEqual(128);
      }
      // Only debt issues go without a symbol, and some of them do.
      expect(all.filter((i) => i.symbol == null).every((i) => i.type === 'DEBT')).toBe(true);
      expect(all.some((i) => i.type === 'DEBT' && i.symbol == null)).toBe(true);
      expect(new Set(all.map((i) => i.name)).size).toBe(all.length);
    }
  });

  it('lists SME issues on exactly one exchange, and orders exchanges nse before bse', () => {
    const all = ipos(dataset(TODAY));
    for (const ipo of all) {
      const ex = ipo.exchanges ?? [];
      expect(ex.length).toBeGreaterThanOrEqual(1);
      expect(new Set(ex).size).toBe(ex.length);
      if (ex.length === 2) expect(ex).toStrictEqual(['nse', 'bse']);
      if (ipo.type === 'SME') expect(ex.length).toBe(1);
    }
    expect(all.some((i) => i.type === 'SME' && i.exchanges?.[0] === 'nse')).toBe(true);
    expect(all.some((i) => i.type === 'SME' && i.exchanges?.[0] === 'bse')).toBe(true);
  });

  it('keeps dates real and in order, and the schedule ascending', () => {
    for (const today of TODAYS.slice(0, 4)) {
      for (const ipo of ipos(dataset(today))) {
        const { startDate, endDate, listingDate } = ipo;
        for (const date of [startDate, endDate, listingDate]) if (date != null) expect(isCalendarDate(date)).toBe(true);
        if (startDate == null) {
          expect(endDate ?? null).toBeNull();
          expect(listingDate ?? null).toBeNull();
          expect(ipo.schedule ?? []).toStrictEqual([]);
          continue;
        }
        expect(endDate).not.toBeNull();
        expect(endDate! >= startDate).toBe(true);
        const days = (Date.parse(endDate!) - Date.parse(startDate)) / DAY;
        expect(days).toBeGreaterThanOrEqual(2);
        expect(days).toBeLessThanOrEqual(4);
        if (listingDate != null) expect(listingDate > endDate!).toBe(true);
        const schedule = ipo.schedule ?? [];
        for (let k = 1; k < schedule.length; k++) expect(schedule[k]!.date >= schedule[k - 1]!.date).toBe(true);
        for (const e of schedule) expect(isCalendarDate(e.date)).toBe(true);
        expect(schedule[0]).toStrictEqual({ event: 'Bidding opens', date: startDate });
        if (listingDate != null) expect(schedule.at(-1)).toStrictEqual({ event: 'Listing', date: listingDate });
      }
    }
  });

  it('gives listing gains only to listed IPOs, and dates only where the status allows', () => {
    const all = ipos(dataset(TODAY));
    for (const ipo of all) {
      const status = statusOf(ipo, TODAY);
      if (status === 'listed') expect(ipo.listingGain).toMatch(/^-?\d+(\.\d{1,2})?$/);
      else expect(ipo.listingGain ?? null).toBeNull();
      if (status === 'upcoming' || status === 'open' || status === 'announced') expect(ipo.listingDate ?? null).toBeNull();
    }
    // Some closed issues await listing, some (withdrawn) never list.
    const closed = all.filter((i) => statusOf(i, TODAY) === 'closed');
    expect(closed.some((i) => i.listingDate != null && i.listingDate > TODAY)).toBe(true);
    expect(closed.some((i) => i.listingDate == null)).toBe(true);
  });

  it('prices lots like Indian issues', () => {
    for (const ipo of ipos(dataset(TODAY))) {
      if (ipo.priceRange == null) {
        expect(ipo.minQty ?? null).toBeNull();
        expect(ipo.minAmount ?? null).toBeNull();
        continue;
      }
      const m = /^(\d+(?:\.\d{1,2})?)-(\d+(?:\.\d{1,2})?)$/.exec(ipo.priceRange);
      expect(m).not.toBeNull();
      const low = Number(m![1]);
      const high = upperBand(ipo);
      expect(low).toBeLessThanOrEqual(high);
      const qty = ipo.minQty!;
      expect(Number.isInteger(qty) && qty >= 1).toBe(true);
      expect(ipo.minAmount).toBe(Math.round(qty * high));
      if (ipo.type === 'EQ') {
        expect(high).toBeGreaterThanOrEqual(50);
        expect(high).toBeLessThanOrEqual(2000);
        expect(ipo.minAmount!).toBeGreaterThanOrEqual(13_000);
        expect(ipo.minAmount!).toBeLessThanOrEqual(15_000);
      } else if (ipo.type === 'SME') {
        expect(high).toBeGreaterThanOrEqual(20);
        expect(high).toBeLessThanOrEqual(300);
        expect(qty).toBeGreaterThanOrEqual(1000);
        expect(qty).toBeLessThanOrEqual(10_000);
        expect(ipo.minAmount!).toBeGreaterThan(100_000);
      } else {
        expect(ipo.priceRange).toBe('1000-1000');
      }
      if (ipo.issueSize != null) expect(ipo.issueSize).toMatch(/^\d+(\.\d{1,2})?cr$/);
    }
  });

  it('writes no empty strings, no unknown fields, and 2 to 4 strengths and risks', () => {
    const known = new Set([
      'id', 'name', 'symbol', 'slug', 'type', 'exchanges', 'infoUrl', 'nseInfoUrl', 'prospectusUrl', 'logo', 'startDate', 'endDate',
      'listingDate', 'priceRange', 'minQty', 'minAmount', 'issueSize', 'listingGain', 'schedule', 'about', 'strengths', 'risks',
      'mediaCoverageLinks', 'registrar', 'leadManagers', 'marketMaker', 'sector', 'listingPrices',
    ]);
    const d = dataset(TODAY);
    for (const ipo of ipos(d)) {
      for (const key of Object.keys(ipo)) expect(known.has(key), key).toBe(true);
      expect((ipo.strengths ?? []).length).toBeGreaterThanOrEqual(2);
      expect((ipo.strengths ?? []).length).toBeLessThanOrEqual(4);
      expect((ipo.risks ?? []).length).toBeGreaterThanOrEqual(2);
      expect((ipo.risks ?? []).length).toBeLessThanOrEqual(4);
      expect((ipo.mediaCoverageLinks ?? []).length).toBeLessThanOrEqual(3);
      for (const url of [ipo.infoUrl, ipo.nseInfoUrl, ipo.prospectusUrl, ipo.logo, ...(ipo.mediaCoverageLinks ?? [])]) {
        if (url != null) expect(url).toMatch(/^https:\/\/[a-z.]*example\.(com|org)\//);
      }
      if (ipo.nseInfoUrl != null) expect(ipo.exchanges).toContain('nse');
    }
    for (const s of strings(ipos(d))) {
      expect(s.length).toBeGreaterThan(0);
      expect(s.length).toBeLessThanOrEqual(10_000);
    }
  });

  it.each([TODAY, '2025-01-04', '2027-06-30'])('passes the dataset validator (today %s)', (today) => {
    const d = dataset(today);
    let problems: unknown = null;
    try {
      const checked = validateDataset(d);
      expect(checked.ipos.length).toBe(ipos(d).length);
      expect(checked.snapshots.length).toBe(snapshots(d).length);
      expect((checked as { subscription?: unknown[] }).subscription?.length).toBe(subscription(d).length);
    } catch (err) {
      problems = err instanceof IpokitError ? err.problems : err;
    }
    expect(problems).toBeNull();
  });

  it('names debt issues as NCD tranches', () => {
    const debt = ipos(dataset(TODAY)).filter((i) => i.type === 'DEBT');
    expect(debt.length).toBeGreaterThan(5);
    for (const ipo of debt) expect(ipo.name).toMatch(/ Ltd NCD Tranche [IVXLC]+$/);
  });
});

describe('generateDataset GMP snapshots', () => {
  const now = noonIst(TODAY);
  const d = dataset(TODAY);
  const byId = new Map(ipos(d).map((i) => [i.id, i]));
  const series = new Map<string, DatasetSnapshot[]>();
  for (const s of snapshots(d)) {
    const list = series.get(s.ipoId) ?? [];
    list.push(s);
    series.set(s.ipoId, list);
  }

  it('belong to known IPOs of the right kind and status', () => {
    for (const id of series.keys()) {
      const ipo = byId.get(id);
      expect(ipo).toBeDefined();
      expect(ipo!.type).not.toBe('DEBT');
      expect(['upcoming', 'open', 'closed', 'listed']).toContain(statusOf(ipo!, TODAY));
    }
    const withGmp = [...series.keys()].map((id) => statusOf(byId.get(id)!, TODAY));
    for (const status of ['upcoming', 'open', 'closed', 'listed'] as const) expect(withGmp).toContain(status);
  });

  it('are taken during Indian market hours on weekdays, as ISO-8601 UTC with ms', () => {
    // Collect offenders rather than asserting per snapshot: tens of thousands of expects are slow.
    const bad = snapshots(d).filter((s) => {
      const ms = Date.parse(s.timestamp);
      const minute = (ms % DAY) / 60_000;
      return (
        !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(s.timestamp) ||
        new Date(ms).toISOString() !== s.timestamp ||
        !isWeekdayUtc(ms) ||
        minute < 3 * 60 + 45 ||
        minute > 10 * 60
      );
    });
    expect(bad).toStrictEqual([]);
  });

  it('run from before the issue opens until listing, 15 to 60 minutes apart', () => {
    for (const [id, list] of series) {
      const ipo = byId.get(id)!;
      const times = list.map((s) => Date.parse(s.timestamp));
      const steps = times.slice(1).map((t, k) => [t, times[k]!] as const);
      expect(steps.filter(([t, p]) => t - p < 15 * 60_000)).toStrictEqual([]);
      const first = times[0]!;
      expect(first).toBeGreaterThanOrEqual(Date.parse(ipo.startDate!) - 16 * DAY);
      expect(first).toBeLessThan(Date.parse(ipo.startDate!) + DAY);
      if (ipo.listingDate != null) expect(times.at(-1)!).toBeLessThan(Date.parse(ipo.listingDate) + DAY);
      // Within one session the steps are 15 to 60 minutes (longer only across a gap).
      const sameDay = steps.filter(([t, p]) => Math.floor(t / DAY) === Math.floor(p / DAY));
      expect(sameDay.filter(([t, p]) => t - p <= 60 * 60_000).length).toBeGreaterThan(sameDay.length * 0.9);
    }
  });

  it('are invisible-until-their-time only rarely: a few after now, on open issues', () => {
    const after = snapshots(d).filter((s) => Date.parse(s.timestamp) > now);
    expect(after.length).toBeGreaterThan(0);
    expect(after.length).toBeLessThanOrEqual(10);
    for (const s of after) expect(statusOf(byId.get(s.ipoId)!, TODAY)).toBe('open');
    expect(new Set(after.map((s) => s.ipoId)).size).toBeLessThanOrEqual(2);
  });

  it('carry 3 to 5 named sources per IPO, the same ones every time', () => {
    for (const list of series.values()) {
      const names = list[0]!.sources.map((x) => x.name);
      expect(names.length).toBeGreaterThanOrEqual(3);
      expect(names.length).toBeLessThanOrEqual(5);
      expect(new Set(names).size).toBe(names.length);
      for (const n of names) expect(SOURCE_NAMES.has(n)).toBe(true);
      const joined = names.join(',');
      expect(list.filter((s) => s.sources.map((x) => x.name).join(',') !== joined)).toStrictEqual([]);
    }
  });

  it('hold prices with at most 2 decimals, some null, some negative, some all-null snapshots', () => {
    let nulls = 0;
    let negatives = 0;
    let blanks = 0;
    const bad: number[] = [];
    for (const s of snapshots(d)) {
      if (s.sources.every((x) => x.gmpPrice === null)) blanks++;
      for (const { gmpPrice } of s.sources) {
        if (gmpPrice === null) {
          nulls++;
          continue;
        }
        const ok =
          Number.isFinite(gmpPrice) &&
          !Object.is(gmpPrice, -0) &&
          Math.abs(gmpPrice * 100 - Math.round(gmpPrice * 100)) < 1e-6 &&
          Math.abs(gmpPrice) < 10_000_000;
        if (!ok) bad.push(gmpPrice);
        if (gmpPrice < 0) negatives++;
      }
    }
    expect(bad).toStrictEqual([]);
    expect(nulls).toBeGreaterThan(100);
    expect(negatives).toBeGreaterThan(100);
    expect(blanks).toBeGreaterThan(0);
  });

  it('vary by IPO: some trade at a strong premium, some near zero, some at a discount', () => {
    const means = [...series.entries()].map(([id, list]) => {
      const values = list.flatMap((s) => s.sources.flatMap((x) => (x.gmpPrice === null ? [] : [x.gmpPrice])));
      return (values.reduce((a, b) => a + b, 0) / values.length / upperBand(byId.get(id)!)) * 100;
    });
    expect(means.some((m) => m > 25)).toBe(true);
    expect(means.some((m) => Math.abs(m) < 2)).toBe(true);
    expect(means.some((m) => m < -3)).toBe(true);
  });

  it('have gaps: whole trading days and several hours without data', () => {
    let dayGaps = 0;
    let hourGaps = 0;
    for (const list of series.values()) {
      const times = list.map((s) => Date.parse(s.timestamp));
      for (let k = 1; k < times.length; k++) {
        const a = times[k - 1]!;
        const b = times[k]!;
        const da = Math.floor(a / DAY);
        const db = Math.floor(b / DAY);
        if (da === db) {
          if (b - a >= 2 * 3_600_000) hourGaps++;
        } else {
          for (let day = da + 1; day < db; day++) if (isWeekdayUtc(day * DAY)) dayGaps++;
        }
      }
    }
    expect(dayGaps).toBeGreaterThan(5);
    expect(hourGaps).toBeGreaterThan(5);
  });

  it('cover recent listings, and only some older ones', () => {
    const listed = ipos(d).filter((i) => statusOf(i, TODAY) === 'listed' && i.type !== 'DEBT');
    const recent = listed.filter((i) => Date.parse(i.listingDate!) >= now - 120 * DAY);
    expect(recent.length).toBeGreaterThan(20);
    for (const i of recent) expect(series.has(i.id), i.name).toBe(true);
    const older = listed.filter((i) => Date.parse(i.listingDate!) < now - 120 * DAY);
    const covered = older.filter((i) => series.has(i.id)).length;
    expect(covered).toBeGreaterThan(0);
    expect(covered).toBeLessThan(older.length);
  });
});

describe('generateDataset registrars, lead managers, market makers, sectors and listing prices', () => {
  it('names a registrar, 1 to 4 lead managers and a sector for every IPO, and a market maker for SME IPOs only', () => {
    for (const today of [TODAY, '2025-01-04']) {
      for (const ipo of ipos(dataset(today))) {
        expect(ipo.registrar).toMatch(/ (Pvt Ltd|Ltd)$/);
        const managers = ipo.leadManagers ?? [];
        expect(managers.length).toBeGreaterThanOrEqual(1);
        expect(managers.length).toBeLessThanOrEqual(4);
        expect(new Set(managers).size).toBe(managers.length);
        for (const m of managers) expect(m).toMatch(/ (Pvt Ltd|Ltd)$/);
        expect(typeof ipo.sector === 'string' && ipo.sector.length > 0, ipo.name).toBe(true);
        if (ipo.type === 'SME') expect(ipo.marketMaker).toMatch(/ (Pvt Ltd|Ltd)$/);
        else expect(ipo.marketMaker).toBeNull();
      }
    }
    const all = ipos(dataset(TODAY));
    expect(new Set(all.map((i) => i.sector)).size).toBeGreaterThan(20);
    expect(all.some((i) => (i.leadManagers ?? []).length === 4)).toBe(true);
  });

  it.each(TODAYS.slice(0, 4))('gives every listed IPO listing prices per exchange that agree with its listing gain (today %s)', (today) => {
    const all = ipos(dataset(today));
    let listed = 0;
    for (const ipo of all) {
      const prices = ipo.listingPrices ?? [];
      if (statusOf(ipo, today) !== 'listed') {
        expect(prices, ipo.name).toStrictEqual([]);
        continue;
      }
      listed++;
      // One per exchange the IPO lists on, in the same order (nse before bse).
      expect(prices.map((p) => p.exchange)).toStrictEqual(ipo.exchanges);
      const high = upperBand(ipo);
      const gain = ipo.listingGain!;
      const decimals = decimalsOf(gain);
      for (const p of prices) {
        for (const x of [p.open, p.high, p.low, p.close]) {
          expect(x).toBeGreaterThan(0);
          expect(twoDecimals(x), `${ipo.name} ${x}`).toBe(true);
        }
        expect(p.low).toBeLessThanOrEqual(p.open);
        expect(p.open).toBeLessThanOrEqual(p.high);
        expect(p.low).toBeLessThanOrEqual(p.close);
        expect(p.close).toBeLessThanOrEqual(p.high);
        // (open - high) / high x 100 rounds to the listing gain, at the gain's own precision.
        const actual = ((p.open - high) / high) * 100;
        expect(Math.abs(actual - Number(gain)), `${ipo.name}: open ${p.open}, band high ${high}, gain ${gain}`).toBeLessThanOrEqual(0.5 * 10 ** -decimals + 1e-9);
      }
    }
    expect(listed).toBeGreaterThan(200);
  });
});

describe('generateDataset subscription snapshots', () => {
  const now = noonIst(TODAY);
  const d = dataset(TODAY);
  const byId = new Map(ipos(d).map((i) => [i.id, i]));
  const series = new Map<string, DatasetSubscription[]>();
  for (const s of subscription(d)) {
    const list = series.get(s.ipoId) ?? [];
    list.push(s);
    series.set(s.ipoId, list);
  }
  const CATEGORIES = ['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total'] as const;
  /** The IST wall-clock times of the readings, as UTC minutes of the day (IST is UTC+05:30). */
  const READINGS = new Set([4 * 60 + 30, 6 * 60 + 30, 8 * 60 + 30, 11 * 60 + 30]);

  it('cover every open and recently closed issue, and the listed ones that opened in the last 180 days', () => {
    for (const ipo of ipos(d)) {
      const status = statusOf(ipo, TODAY);
      const opened = ipo.startDate == null ? null : Date.parse(ipo.startDate);
      const recent = opened !== null && opened >= now - 180 * DAY && opened <= now;
      const readingsBefore = recent && [...READINGS].some((m) => opened + m * 60_000 <= now);
      if (status === 'upcoming' || status === 'announced' || !recent) expect(series.has(ipo.id), ipo.name).toBe(false);
      else if (readingsBefore) expect(series.has(ipo.id), `${ipo.name} (${status})`).toBe(true);
    }
    const statuses = new Set([...series.keys()].map((id) => statusOf(byId.get(id)!, TODAY)));
    expect([...statuses].sort()).toStrictEqual(['closed', 'listed', 'open']);
    for (const type of ['EQ', 'SME', 'DEBT']) expect([...series.keys()].some((id) => byId.get(id)!.type === type), type).toBe(true);
  });

  it('are read at 10:00, 12:00, 14:00 and 17:00 IST on the bidding days, never after now, ascending, as ISO-8601 UTC with ms', () => {
    for (const [id, list] of series) {
      const ipo = byId.get(id)!;
      const times = list.map((s) => Date.parse(s.timestamp));
      for (const [k, s] of list.entries()) {
        const t = times[k]!;
        expect(new Date(t).toISOString()).toBe(s.timestamp);
        expect(READINGS.has((t % DAY) / 60_000), s.timestamp).toBe(true);
        expect(isWeekdayUtc(t)).toBe(true);
        expect(t).toBeGreaterThanOrEqual(Date.parse(ipo.startDate!));
        expect(t).toBeLessThan(Date.parse(ipo.endDate!) + DAY);
        expect(t).toBeLessThanOrEqual(now);
        if (k > 0) expect(t).toBeGreaterThan(times[k - 1]!);
      }
      // A closed book: four readings on each of its bidding days.
      if (Date.parse(ipo.endDate!) + DAY <= now) {
        const days = new Set(times.map((t) => Math.floor(t / DAY)));
        expect(list.length).toBe(days.size * 4);
        expect(Math.floor(times.at(-1)! / DAY)).toBe(Date.parse(ipo.endDate!) / DAY);
      }
    }
  });

  it('give every category in order, as the issue type has them: numbers >= 0 with at most 2 decimals, else null', () => {
    const bad: string[] = [];
    const optional = { EQ: new Set(['employee', 'shareholder']), SME: new Set(['qib']), DEBT: new Set<string>() };
    const always = { EQ: ['qib', 'nii', 'bnii', 'snii', 'retail', 'total'], SME: ['nii', 'retail', 'total'], DEBT: ['retail', 'total'] };
    const seen = { EQ: new Set<string>(), SME: new Set<string>(), DEBT: new Set<string>() };
    for (const s of subscription(d)) {
      const type = byId.get(s.ipoId)!.type;
      expect(Object.keys(s.times)).toStrictEqual([...CATEGORIES]);
      for (const c of CATEGORIES) {
        const v = s.times[c];
        if (v === null || v === undefined) {
          if (always[type].includes(c)) bad.push(`${s.ipoId} ${s.timestamp}: ${c} missing`);
          continue;
        }
        seen[type].add(c);
        if (!always[type].includes(c) && !optional[type].has(c)) bad.push(`${s.ipoId}: a ${type} issue has ${c}`);
        if (!(Number.isFinite(v) && v >= 0 && v < 10_000_000 && twoDecimals(v)) || Object.is(v, -0)) bad.push(`${s.ipoId} ${c} = ${v}`);
      }
    }
    expect(bad).toStrictEqual([]);
    // Some mainboard issues have an employee or a shareholder quota, some SME issues a QIB one.
    expect([...seen.EQ].sort()).toStrictEqual([...CATEGORIES].sort());
    expect(seen.SME.has('qib')).toBe(true);
  });

  it('grow as books do: no category goes down, retail and NII climb day by day, QIBs jump on the last day', () => {
    let qibLastDay = 0;
    let closedEq = 0;
    for (const [id, list] of series) {
      for (let k = 1; k < list.length; k++) {
        for (const c of CATEGORIES) {
          const [a, b] = [list[k - 1]!.times[c], list[k]!.times[c]];
          if (a != null && b != null) expect(b, `${id} ${c} at ${list[k]!.timestamp}`).toBeGreaterThanOrEqual(a);
        }
      }
      const ipo = byId.get(id)!;
      if (ipo.type !== 'EQ' || Date.parse(ipo.endDate!) + DAY > now) continue;
      closedEq++;
      const endOfDay = (n: number) => list[n * 4 + 3]!.times;
      const last = list.at(-1)!.times;
      const beforeLast = list.at(-5)!.times;
      // Retail and NII climb every day.
      for (let n = 1; n < list.length / 4; n++) {
        expect(endOfDay(n).retail!).toBeGreaterThan(endOfDay(n - 1).retail!);
        expect(endOfDay(n).nii!).toBeGreaterThan(endOfDay(n - 1).nii!);
      }
      // Most of the QIB book comes on the last day.
      if (last.qib! - beforeLast.qib! > 0.5 * last.qib!) qibLastDay++;
    }
    expect(closedEq).toBeGreaterThan(10);
    expect(qibLastDay).toBeGreaterThan(closedEq * 0.9);
  });

  it('make total a weighted mix of the categories it counts, and vary with the grey market', () => {
    const finals: Array<{ total: number; premium: number }> = [];
    for (const [id, list] of series) {
      const ipo = byId.get(id)!;
      for (const s of list) {
        const t = s.times;
        const parts = ipo.type === 'DEBT' ? [] : [t.qib, t.nii, t.retail].filter((x): x is number => x != null);
        if (parts.length === 0) continue;
        expect(t.total!).toBeGreaterThanOrEqual(Math.min(...parts) - 0.01);
        expect(t.total!).toBeLessThanOrEqual(Math.max(...parts) + 0.01);
      }
      const gmp = snapshots(d).filter((g) => g.ipoId === id).flatMap((g) => g.sources.flatMap((x) => (x.gmpPrice === null ? [] : [x.gmpPrice])));
      if (ipo.type !== 'DEBT' && gmp.length > 0 && Date.parse(ipo.endDate!) + DAY <= now) {
        finals.push({ total: list.at(-1)!.times.total!, premium: gmp.reduce((a, b) => a + b, 0) / gmp.length / upperBand(ipo) });
      }
    }
    // Hot issues are subscribed many times over; some cold ones are not fully subscribed.
    expect(finals.some((f) => f.total > 50)).toBe(true);
    expect(finals.some((f) => f.total < 1)).toBe(true);
    const hot = finals.filter((f) => f.premium > 0.2).map((f) => f.total);
    const cold = finals.filter((f) => f.premium < 0.02).map((f) => f.total);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    expect(hot.length).toBeGreaterThan(3);
    expect(cold.length).toBeGreaterThan(3);
    expect(median(hot)).toBeGreaterThan(5 * median(cold));
  });
});
