import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createAccount, createWebhook, importDataset, validateDataset, type Dataset, type DatasetIpo, type DatasetSubscription, type SubscriptionTimes } from '@ipokit/core';
import { addDays, deriveStatus } from '@ipokit/core/backend';
import type { Source, SourceAnswer } from '@ipokit/sources';
import { memoryStore } from '@ipokit/storage-memory';
import { startWebhookWorker } from '@ipokit/webhooks';
import { startCollector } from '@ipokit/sources';
import { DEMO_LIVE_EVERY_MS, DEMO_SUBSCRIPTION_SOURCE, demoLiveSources } from './demo-live.js';
import { generateDataset, GMP_SOURCES } from './generate.js';

const MINUTE = 60_000;
/** A Tuesday; the demo dataset is generated at 10:30 IST on it. */
const TODAY = '2026-11-24';
const GENERATED_AT = Date.parse(`${TODAY}T05:00:00.000Z`);
const CATEGORIES = ['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total'] as const;

const dataset: Dataset = generateDataset({ today: TODAY, now: GENERATED_AT });
const ipos: DatasetIpo[] = dataset.ipos ?? [];

/** The instant `hh:mm` IST on `day`. */
function ist(day: string, hh: number, mm: number): number {
  return Date.parse(`${day}T00:00:00.000Z`) + (hh * 60 + mm - 330) * MINUTE;
}

async function ask(source: Source, at: number): Promise<SourceAnswer> {
  return source.collect({ now: new Date(at), signal: new AbortController().signal });
}

/** The answer as a dataset: its subscription snapshots, and its GMP reports as one snapshot named after the source. */
function asDataset(source: Source, at: number, answer: SourceAnswer): Dataset {
  const gmp = (answer.gmpReports ?? []).map((r) => ({ ipoId: r.ipoId, timestamp: new Date(at).toISOString(), sources: [{ name: source.name, gmpPrice: r.gmpPrice }] }));
  return { gmp, subscription: answer.subscription ?? [] };
}

function statusOf(ipo: DatasetIpo, day: string) {
  return deriveStatus({ startDate: ipo.startDate ?? null, endDate: ipo.endDate ?? null, listingDate: ipo.listingDate ?? null }, day);
}

function upperBand(ipo: DatasetIpo): number {
  return Number((ipo.priceRange ?? '').split('-')[1]);
}

/** Every minute of `day` from `from` to `to` (IST), each source's answer. */
async function runDay(sources: Source[], day: string, from: [number, number], to: [number, number]): Promise<Array<{ source: Source; at: number; answer: SourceAnswer }>> {
  const out: Array<{ source: Source; at: number; answer: SourceAnswer }> = [];
  for (let at = ist(day, ...from); at <= ist(day, ...to); at += MINUTE) {
    for (const source of sources) out.push({ source, at, answer: await ask(source, at) });
  }
  return out;
}

describe('demoLiveSources', () => {
  it('gives the GMP sites asked for, named from the generator, and one subscription source, each run every minute', () => {
    const sources = demoLiveSources({ ipos });
    expect(sources).toHaveLength(4);
    expect(sources.map((s) => s.everyMs)).toEqual([DEMO_LIVE_EVERY_MS, DEMO_LIVE_EVERY_MS, DEMO_LIVE_EVERY_MS, DEMO_LIVE_EVERY_MS]);
    expect(DEMO_LIVE_EVERY_MS).toBe(60_000);
    expect(sources.at(-1)?.name).toBe(DEMO_SUBSCRIPTION_SOURCE);
    const names = sources.slice(0, -1).map((s) => s.name);
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(GMP_SOURCES).toContain(name);
    for (let n = 1; n <= GMP_SOURCES.length; n++) expect(demoLiveSources({ ipos, gmpSources: n })).toHaveLength(n + 1);
    for (const bad of [0, 7, 2.5, Number.NaN]) expect(() => demoLiveSources({ ipos, gmpSources: bad })).toThrow(RangeError);
    expect(() => demoLiveSources({ ipos, seed: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });

  it('answers {} outside market and bidding hours and on weekends', async () => {
    const sources = demoLiveSources({ ...dataset, ipos });
    const [gmpSite, bids] = [sources[0] as Source, sources.at(-1) as Source];
    for (const at of [ist(TODAY, 9, 14), ist(TODAY, 15, 31), ist(TODAY, 16, 0), ist(TODAY, 20, 0), ist('2026-11-28', 12, 0), ist('2026-11-29', 11, 0)]) {
      expect(await ask(gmpSite, at)).toEqual({});
    }
    for (const at of [ist(TODAY, 9, 59), ist(TODAY, 17, 1), ist(TODAY, 22, 0), ist('2026-11-28', 12, 0)]) {
      expect(await ask(bids, at)).toEqual({});
    }
    // Bidding goes on after the market closes, till 17:00.
    expect((await ask(bids, ist(TODAY, 16, 0))).subscription?.length).toBeGreaterThan(0);
    expect((await ask(bids, ist(TODAY, 17, 0))).subscription?.length).toBeGreaterThan(0);
  });

  it('reports GMP for the open, recently closed and soon upcoming issues every market minute, each answer a valid dataset', async () => {
    const sources = demoLiveSources({ ...dataset, ipos }).slice(0, -1);
    const day = addDays(TODAY, 1);
    const runs = await runDay(sources, day, [9, 15], [15, 30]);
    const eligible = new Set(
      ipos
        .filter((ipo) => {
          if (ipo.type === 'DEBT' || ipo.startDate == null) return false;
          const status = statusOf(ipo, day);
          return status === 'open' || (status === 'closed' && (ipo.endDate ?? ipo.startDate) >= addDays(day, -10)) || (status === 'upcoming' && ipo.startDate <= addDays(day, 7));
        })
        .map((ipo) => ipo.id),
    );
    expect(eligible.size).toBeGreaterThan(10);
    const sitesOf = new Map<string, Set<string>>();
    const pricesOf = new Map<string, number[]>();
    let skipped = 0;
    for (const { source, at, answer } of runs) {
      expect(Object.keys(answer).every((k) => k === 'gmpReports')).toBe(true);
      if (answer.gmpReports === undefined) {
        skipped++;
        continue;
      }
      expect(() => validateDataset(asDataset(source, at, answer))).not.toThrow();
      const seen = new Set<string>();
      for (const r of answer.gmpReports) {
        expect(eligible.has(r.ipoId)).toBe(true);
        expect(seen.has(r.ipoId)).toBe(false);
        seen.add(r.ipoId);
        expect(typeof r.gmpPrice).toBe('number');
        expect(Math.round((r.gmpPrice as number) * 100)).toBe((r.gmpPrice as number) * 100);
        sitesOf.set(r.ipoId, (sitesOf.get(r.ipoId) ?? new Set()).add(source.name));
        const key = `${source.name} ${r.ipoId}`;
        pricesOf.set(key, [...(pricesOf.get(key) ?? []), r.gmpPrice as number]);
      }
    }
    // Every eligible issue is followed by 1 to 3 sites, some by several; each site misses some minutes.
    expect(new Set(sitesOf.keys())).toEqual(eligible);
    const counts = [...sitesOf.values()].map((s) => s.size);
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...counts)).toBeLessThanOrEqual(3);
    expect(counts.some((n) => n >= 2)).toBe(true);
    expect(counts.some((n) => n === 1)).toBe(true);
    expect(skipped).toBeGreaterThan(0);
    expect(skipped).toBeLessThan(runs.length / 2);
    for (const source of sources) {
      const answered = runs.filter((r) => r.source === source && r.answer.gmpReports !== undefined).length;
      expect(answered).toBeGreaterThan(0);
      expect(answered).toBeLessThan(376);
    }
    // Numbers move, a little at a time, around the generated level.
    for (const [key, prices] of pricesOf) {
      const ipo = ipos.find((i) => i.id === key.split(' ')[1]) as DatasetIpo;
      const high = upperBand(ipo);
      expect(new Set(prices).size).toBeGreaterThan(1);
      for (let i = 1; i < prices.length; i++) expect(Math.abs((prices[i] as number) - (prices[i - 1] as number))).toBeLessThanOrEqual(Math.max(2, high * 0.01));
      const last = (dataset.gmp ?? []).filter((s) => s.ipoId === ipo.id).at(-1);
      const numbers = (last?.sources ?? []).map((s) => s.gmpPrice).filter((p): p is number => p !== null);
      if (numbers.length > 0) {
        const level = numbers.reduce((a, b) => a + b, 0) / numbers.length;
        for (const price of prices) expect(Math.abs(price - level)).toBeLessThanOrEqual(Math.abs(level) * 0.3 + high * 0.05 + 2);
      } else {
        for (const price of prices) expect(Math.abs(price)).toBeLessThanOrEqual(high * 0.6);
      }
    }
  });

  it('gives a GMP level from the price band to an issue without generated GMP', async () => {
    const [site] = demoLiveSources({ ipos, gmpSources: 1 });
    const answer = await ask(site as Source, ist(TODAY, 12, 0));
    expect(answer.gmpReports?.length).toBeGreaterThan(5);
    expect(() => validateDataset(asDataset(site as Source, ist(TODAY, 12, 0), answer))).not.toThrow();
  });

  it('is deterministic from its options and the minute, and the seed changes it', async () => {
    const at = ist(TODAY, 13, 7);
    const a = demoLiveSources({ ...dataset, ipos, seed: 5 });
    const b = demoLiveSources({ ...dataset, ipos, seed: 5 });
    const c = demoLiveSources({ ...dataset, ipos, seed: 6 });
    for (let i = 0; i < a.length; i++) expect(await ask(a[i] as Source, at)).toEqual(await ask(b[i] as Source, at));
    const answers = async (sources: Source[]) => Promise.all(sources.map((s) => ask(s, at)));
    expect(JSON.stringify(await answers(a))).not.toBe(JSON.stringify(await answers(c)));
    // Asked twice at one instant (a restarted demo), a source answers the same.
    expect(await ask(a[0] as Source, at)).toEqual(await ask(a[0] as Source, at));
  });

  it("carries each open issue's subscription on from its latest generated reading, growing and never going down, till bidding closes", async () => {
    const bids = demoLiveSources({ ...dataset, ipos }).at(-1) as Source;
    const open = ipos.filter((ipo) => statusOf(ipo, TODAY) === 'open');
    expect(open.length).toBeGreaterThanOrEqual(5);
    const lastDay = open.map((ipo) => ipo.endDate as string).reduce((a, b) => (a > b ? a : b));
    const series = new Map<string, DatasetSubscription[]>();
    for (const reading of dataset.subscription ?? []) if (open.some((o) => o.id === reading.ipoId)) series.set(reading.ipoId, [...(series.get(reading.ipoId) ?? []), reading]);
    for (let day = TODAY; day <= lastDay; day = addDays(day, 1)) {
      for (let at = ist(day, 10, 0); at <= ist(day, 17, 0); at += 5 * MINUTE) {
        const answer = await ask(bids, at);
        const readings = answer.subscription ?? [];
        expect(() => validateDataset({ subscription: readings })).not.toThrow();
        // Every open issue, once past its latest generated reading.
        const due = ipos.filter((ipo) => statusOf(ipo, day) === 'open' && at > Date.parse(lastGenerated(ipo.id)?.timestamp ?? '1970-01-01T00:00:00Z'));
        expect(readings.map((r) => r.ipoId).sort()).toEqual(due.map((ipo) => ipo.id).sort());
        for (const r of readings) {
          expect(r.timestamp).toBe(new Date(at).toISOString());
          series.set(r.ipoId, [...(series.get(r.ipoId) ?? []), r]);
        }
      }
    }
    for (const ipo of open) {
      const readings = series.get(ipo.id) ?? [];
      const generated = (dataset.subscription ?? []).filter((r) => r.ipoId === ipo.id);
      expect(generated.length).toBeGreaterThan(0);
      expect(readings.length).toBeGreaterThan(generated.length + 50);
      expectGrowing(readings);
      // The live book has the generated one's categories.
      const has = (t: Partial<SubscriptionTimes>) => CATEGORIES.map((k) => typeof t[k] === 'number');
      for (const r of readings) expect(has(r.times)).toEqual(has((generated[0] as DatasetSubscription).times));
      // It moves during the day.
      const first = readings[generated.length] as DatasetSubscription;
      const last = readings.at(-1) as DatasetSubscription;
      expect(last.times.total as number).toBeGreaterThan(first.times.total as number);
    }
  });

  it('without generated readings, builds each book from nothing over the bidding days, as the generator shapes it', async () => {
    const bids = demoLiveSources({ ipos, seed: 11 }).at(-1) as Source;
    const open = ipos.filter((ipo) => ipo.startDate != null && ipo.startDate <= TODAY && (ipo.endDate ?? '') >= TODAY);
    const series = new Map<string, DatasetSubscription[]>();
    const from = open.map((ipo) => ipo.startDate as string).reduce((a, b) => (a < b ? a : b));
    const to = open.map((ipo) => ipo.endDate as string).reduce((a, b) => (a > b ? a : b));
    for (let day = from; day <= to; day = addDays(day, 1)) {
      for (let at = ist(day, 10, 0); at <= ist(day, 17, 0); at += 15 * MINUTE) {
        for (const r of (await ask(bids, at)).subscription ?? []) series.set(r.ipoId, [...(series.get(r.ipoId) ?? []), r]);
      }
    }
    for (const ipo of open) {
      const readings = series.get(ipo.id) ?? [];
      expect(readings.length).toBeGreaterThanOrEqual(29 * 3);
      expect(() => validateDataset({ subscription: readings })).not.toThrow();
      expectGrowing(readings);
      const first = (readings[0] as DatasetSubscription).times;
      const final = (readings.at(-1) as DatasetSubscription).times;
      expect(final.retail as number).toBeGreaterThan(first.retail as number);
      if (ipo.type === 'EQ') {
        // QIBs bid late: most of their figure comes on the last day.
        const dayBefore = readings.filter((r) => r.timestamp < new Date(ist(ipo.endDate as string, 0, 0)).toISOString()).at(-1) as DatasetSubscription;
        expect(dayBefore.times.qib as number).toBeLessThan((final.qib as number) * 0.05 + 0.01);
        expect(final.bnii).not.toBeNull();
      }
      if (ipo.type === 'SME') expect(final.bnii).toBeNull();
      if (ipo.type === 'DEBT') expect(final.qib).toBeNull();
    }
  });

  it('answers a valid dataset at any instant', async () => {
    const sources = demoLiveSources({ ...dataset, ipos });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: ist(addDays(TODAY, -6), 0, 0), max: ist(addDays(TODAY, 8), 0, 0) }), fc.integer({ min: 0, max: sources.length - 1 }), async (at, i) => {
        const source = sources[i] as Source;
        const answer = await ask(source, at);
        expect(() => validateDataset(asDataset(source, at, answer))).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});

describe('the demo live sources in a collector', () => {
  it('runs the sources in a collector on the demo store: within one simulated minute of market hours a webhook receiver gets a gmp.snapshot', async () => {
    const bodies: Array<{ type: string; data: { ipoId?: string } }> = [];
    const server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      req.on('end', () => {
        bodies.push(JSON.parse(text) as { type: string; data: { ipoId?: string } });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;

    // A manual clock at 11:00 IST, after the dataset's instant, and timers fired by hand.
    let clock = ist(TODAY, 11, 0);
    const now = () => new Date(clock);
    const pending: Array<{ at: number; fn: () => void; handle: number }> = [];
    let handles = 0;
    const timers = {
      setTimeout: (fn: () => void, ms: number) => {
        const handle = ++handles;
        pending.push({ at: clock + ms, fn, handle });
        return handle;
      },
      clearTimeout: (handle: unknown) => {
        const i = pending.findIndex((p) => p.handle === handle);
        if (i >= 0) pending.splice(i, 1);
      },
    };
    const store = memoryStore();
    await importDataset(store, dataset, { now: () => new Date(GENERATED_AT) });
    const account = await createAccount(store, { name: 'Live', plan: 'pro' });
    await createWebhook(store, { accountId: account.id, url: `http://127.0.0.1:${port}/hook`, events: ['gmp.snapshot'] }, { webhookAllowedNetworks: ['127.0.0.0/8'] });
    const worker = startWebhookWorker(store, { now, allowInsecureWebhooks: true, webhookAllowedNetworks: ['127.0.0.0/8'], pollIntervalMs: 20 });
    const errors: unknown[] = [];
    const live = await startCollector(store, { sources: demoLiveSources({ ...dataset, ipos }), now, timers, onError: (err) => errors.push(err) });
    try {
      const until = clock + MINUTE;
      for (let i = 0; i < 500 && !bodies.some((b) => b.type === 'gmp.snapshot'); i++) {
        // Let the runs under way and the worker go on, then move the clock on a little, firing what falls due.
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (clock < until && i % 5 === 4) {
          clock = Math.min(until, clock + 5_000);
          for (const due of pending.filter((p) => p.at <= clock)) {
            pending.splice(pending.indexOf(due), 1);
            due.fn();
          }
        }
      }
      const event = bodies.find((b) => b.type === 'gmp.snapshot');
      expect(event, 'a gmp.snapshot delivered').toBeDefined();
      expect(ipos.some((ipo) => ipo.id === event?.data.ipoId)).toBe(true);
      expect(clock).toBeLessThanOrEqual(until);
      expect(errors).toEqual([]);
      const status = live.status();
      expect(status.map((s) => s.name).sort()).toEqual(demoLiveSources({ ipos }).map((s) => s.name).sort());
      expect(status.reduce((n, s) => n + s.records, 0)).toBeGreaterThan(0);
    } finally {
      await live.stop();
      await worker.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

function lastGenerated(ipoId: string): DatasetSubscription | undefined {
  return (dataset.subscription ?? []).filter((r) => r.ipoId === ipoId).at(-1);
}

/** Each category of consecutive readings (in time order) never goes down. */
function expectGrowing(readings: readonly DatasetSubscription[]): void {
  for (let i = 1; i < readings.length; i++) {
    const before = readings[i - 1] as DatasetSubscription;
    const after = readings[i] as DatasetSubscription;
    expect(Date.parse(after.timestamp)).toBeGreaterThan(Date.parse(before.timestamp));
    for (const key of CATEGORIES) {
      const a = before.times[key];
      const b = after.times[key];
      if (typeof a === 'number') expect(b, `${after.ipoId} ${key} at ${after.timestamp}`).toBeGreaterThanOrEqual(a);
    }
  }
}
