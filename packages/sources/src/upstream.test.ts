import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchLike, FetchResponseLike } from '@ipokit/client';
import { importDataset, STATUS_VALUES, validateDataset, type IpoRouterOptions, type Store } from '@ipokit/core';
import { memoryStore } from '@ipokit/storage-memory';
import { ipoOf, istDay, proKey, seedIpos, serveApi, snapshotBatch, STATUS_COUNTS, type SeenRequest, type TestApi, type TestClock } from './test-upstream.js';
import type { SourceAnswer } from './types.js';
import { upstreamSource, type UpstreamWaitInfo } from './upstream.js';

// 09:30 IST on 2026-11-18, after the free GMP preview: the GMP route needs pro with the add-on.
const T0 = Date.UTC(2026, 10, 18, 4, 0);
const MINUTE = 60_000;
/** The upstream the source reads: 6 requests a minute for the pro plan (the default, stated). */
const LIMITED: IpoRouterOptions = { limits: { pro: { perMinute: 6 } } };
/** The two servers the bytes are compared on, the upstream store's and the mirror's: the same options, no window in the way. */
const UNLIMITED: IpoRouterOptions = {
  limits: {
    free: { perMinute: Infinity, gmpPerMinute: Infinity },
    paid: { perMinute: Infinity, gmpPerMinute: Infinity },
    pro: { perMinute: Infinity, gmpPerMinute: Infinity },
    keyless: { perMinute: Infinity },
  },
};
/** GMP series asked of every IPO, and more of one IPO in ten. */
const SERIES_EVERY = ['', '?interval=5m&field=median', '?interval=hourly&field=max'];
const SERIES_SOME = ['?interval=10m&field=mode', '?interval=15m&field=min', '?interval=30m&field=mean', '?interval=weekly&field=median', `?interval=5m&from=${istDay(T0, -1)}`];

describe('upstreamSource mirroring a real ipokit server (Express, memory store, 6 requests a minute)', () => {
  const clock: TestClock = { now: T0 };
  const now = (): Date => new Date(clock.now);
  let upstream: Store;
  let mirror: Store;
  let limited: TestApi;
  let upstreamView: TestApi;
  let mirrorView: TestApi;
  let upstreamViewKey: string;
  let mirrorViewKey: string;
  let ids: string[];
  const waits: UpstreamWaitInfo[] = [];
  let source: ReturnType<typeof upstreamSource>;

  beforeAll(async () => {
    upstream = memoryStore();
    mirror = memoryStore();
    const sourceKey = await proKey(upstream, clock);
    upstreamViewKey = await proKey(upstream, clock);
    mirrorViewKey = await proKey(mirror, clock);
    const ipos = seedIpos(T0);
    ids = ipos.map((ipo) => ipo.id);
    await importDataset(upstream, { ipos }, { now });
    limited = await serveApi(upstream, clock, LIMITED);
    upstreamView = await serveApi(upstream, clock, UNLIMITED);
    mirrorView = await serveApi(mirror, clock, UNLIMITED);
    source = upstreamSource({
      baseUrl: limited.baseUrl,
      apiKey: sourceKey,
      name: 'upstream-test',
      // Waiting moves the shared clock instead of the wall clock: the upstream's windows see the time pass.
      sleep: async (ms) => {
        clock.now += ms;
      },
      onWait: (info) => waits.push(info),
    });
  });

  afterAll(async () => {
    await Promise.all([limited?.close(), upstreamView?.close(), mirrorView?.close()]);
  });

  /** One run of the source imported into the mirror; checks what the run asked and waited. */
  async function run(): Promise<{ answer: SourceAnswer; requests: SeenRequest[]; waits: UpstreamWaitInfo[] }> {
    const startedAt = clock.now;
    const seenBefore = limited.requests.length;
    const waitsBefore = waits.length;
    const answer = await source.collect({ now: now(), signal: new AbortController().signal });
    expect(() => validateDataset(answer)).not.toThrow();
    await importDataset(mirror, answer, { now });
    const requests = limited.requests.slice(seenBefore);
    const runWaits = waits.slice(waitsBefore);
    // Every 429 was waited out once, told to onWait with the source's name, and the waits are all the time the run took.
    expect(runWaits.length).toBe(requests.filter((r) => r.status === 429).length);
    expect(requests.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(runWaits.every((w) => w.source === 'upstream-test' && w.status === 429 && w.ms > 0 && w.ms <= MINUTE)).toBe(true);
    expect(runWaits.reduce((sum, w) => sum + w.ms, 0)).toBe(clock.now - startedAt);
    // One admitted request per list page: each status's pages of 100.
    const pages = STATUS_VALUES.reduce((sum, status) => sum + Math.max(1, Math.ceil(countOf(answer, status) / 100)), 0);
    expect(requests.filter((r) => r.status === 200).length).toBe(pages);
    expect(requests.every((r) => r.url.includes('limit=100') && r.url.includes('includeGmp=true'))).toBe(true);
    return { answer, requests, waits: runWaits };
  }

  /** The statuses of the answer's IPOs as the upstream derives them now. */
  function countOf(answer: SourceAnswer, status: string): number {
    return (answer.ipos ?? []).filter((ipo) => ipo.status === status).length;
  }

  /**
   * Within any rolling minute of the clock, the upstream admitted at most 6 of the source's
   * requests; each request it refused was followed by a wait of exactly its Retry-After before
   * the next one (so the source never asks again early).
   */
  function expectWithinLimits(): void {
    const requests = limited.requests;
    for (let i = 0; i < requests.length; i++) {
      const inMinute = requests.slice(0, i + 1).filter((r) => requests[i]!.at - r.at < MINUTE);
      expect(inMinute.filter((r) => r.status === 200).length).toBeLessThanOrEqual(6);
    }
    const refused = requests.flatMap((r, i) => (r.status === 429 ? [i] : []));
    expect(refused).toHaveLength(waits.length);
    refused.forEach((i, k) => {
      expect(waits[k]!.ms).toBe(waits[k]!.expiresIn! * 1000);
      expect(requests[i + 1]!.at - requests[i]!.at).toBe(waits[k]!.ms);
    });
  }

  /** Every page, IPO, GMP series and subscription series, as bytes, on the upstream and the mirror. */
  async function compareAll(): Promise<{ compared: number; gmpPoints: number; subscriptionPoints: number; gmpOnList: number }> {
    const paths: string[] = [];
    for (const status of STATUS_VALUES) {
      for (const gmp of ['', '&includeGmp=true']) {
        const first = JSON.parse(await read(upstreamView, upstreamViewKey, `?status=${status}&limit=100${gmp}`)) as { meta: { totalPages: number } };
        for (let page = 1; page <= Math.max(1, first.meta.totalPages); page++) paths.push(`?status=${status}&limit=100&page=${page}${gmp}`);
        paths.push(`?status=${status}${gmp}`);
      }
    }
    ids.forEach((id, i) => {
      paths.push(`/${id}`, `/${id}?includeGmp=true`, `/${id}/subscription`);
      for (const query of SERIES_EVERY) paths.push(`/${id}/gmp${query}`);
      if (i % 10 === 0) for (const query of SERIES_SOME) paths.push(`/${id}/gmp${query}`);
    });
    const mismatches: string[] = [];
    let gmpPoints = 0;
    let subscriptionPoints = 0;
    let gmpOnList = 0;
    for (let i = 0; i < paths.length; i += 16) {
      await Promise.all(
        paths.slice(i, i + 16).map(async (path) => {
          const [up, down] = await Promise.all([read(upstreamView, upstreamViewKey, path), read(mirrorView, mirrorViewKey, path)]);
          if (up !== down) mismatches.push(`${path}\n  upstream ${up.slice(0, 400)}\n  mirror   ${down.slice(0, 400)}`);
          const body = JSON.parse(up) as { series?: unknown[]; ipos?: Array<{ gmp?: unknown }> };
          if (path.endsWith('/subscription')) subscriptionPoints += body.series?.length ?? 0;
          else if (path.includes('/gmp')) gmpPoints += body.series?.length ?? 0;
          else if (path.includes('includeGmp=true') && path.includes('limit=100')) gmpOnList += (body.ipos ?? []).filter((ipo) => ipo.gmp !== null).length;
        }),
      );
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
    return { compared: paths.length, gmpPoints, subscriptionPoints, gmpOnList };
  }

  it('captures each batch of snapshots as the latest, waiting out the 429s and reporting each wait', async () => {
    await importDataset(upstream, snapshotBatch(ids, 1, clock.now - MINUTE), { now });
    const first = await run();
    expect(first.answer.ipos).toHaveLength(300);
    expect(new Set(first.answer.ipos!.map((ipo) => ipo.id)).size).toBe(300);
    expect(first.answer.gmp).toHaveLength(200);
    expect(first.answer.subscription).toHaveLength(150);
    // 7 pages against 6 a minute: one wait of a whole minute (every hit was at the same instant).
    expect(first.requests).toHaveLength(8);
    expect(first.waits.map((w) => [w.ms, w.attempt, w.quotaPerMinute])).toEqual([[MINUTE, 1, 6]]);

    clock.now += 20 * MINUTE;
    await importDataset(upstream, snapshotBatch(ids, 2, clock.now - MINUTE), { now });
    const second = await run();
    expect(second.waits).toHaveLength(1);

    // Half a minute later: the previous run's last hits are still in the window, so this run waits sooner, and less.
    clock.now += 30_000;
    await importDataset(upstream, snapshotBatch(ids, 3, clock.now - 1_000), { now });
    const third = await run();
    expect(third.waits.length).toBeGreaterThanOrEqual(1);
    expect(third.waits[0]!.ms).toBeLessThan(MINUTE);
    expect(third.requests[0]!.status).toBe(200);
    expectWithinLimits();
  }, 60_000);

  it('serves the same bytes from the mirror: every list page, IPO, GMP series and subscription series', async () => {
    const result = await compareAll();
    expect(result.compared).toBeGreaterThan(1_900);
    // Not vacuous: the series hold every batch (3 snapshots of most IPOs), the lists show GMP.
    expect(result.subscriptionPoints).toBe(3 * 150);
    expect(result.gmpOnList).toBeGreaterThan(250);
    expect(result.gmpPoints).toBeGreaterThan(600);
    const series = JSON.parse(await read(mirrorView, mirrorViewKey, '/U0002/subscription')) as { series: unknown[] };
    expect(series.series.length).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('follows changes upstream: new snapshots, an IPO updated, a new IPO, statuses moved on by the days', async () => {
    clock.now += 2 * 86_400_000;
    const [changed] = seedIpos(T0).filter((ipo) => ipo.id === 'U0003');
    const added = ipoOf(301, 'upcoming', 0, clock.now);
    ids.push(added.id);
    await importDataset(upstream, { ipos: [{ ...changed!, name: 'Upstream Test 3 Renamed Limited', priceRange: '95-99', about: 'Changed upstream.' }, added] }, { now });
    await importDataset(upstream, snapshotBatch(ids, 4, clock.now - MINUTE), { now });
    const fourth = await run();
    expect(fourth.answer.ipos).toHaveLength(301);
    // Two IST days on, the first open IPO (closing on the seed's day) is closed, the first upcoming one (opening the next day) open.
    const statusOf = (id: string): unknown => fourth.answer.ipos!.find((ipo) => ipo.id === id)?.status;
    expect([statusOf('U0252'), statusOf('U0268')]).toEqual(['closed', 'open']);
    expect(countOf(fourth.answer, 'closed')).toBeGreaterThan(STATUS_COUNTS.closed);
    expect(fourth.answer.ipos!.find((ipo) => ipo.id === 'U0003')?.name).toBe('Upstream Test 3 Renamed Limited');
    expectWithinLimits();
    const result = await compareAll();
    expect(result.subscriptionPoints).toBe(3 * 150 + 151);
    const one = JSON.parse(await read(mirrorView, mirrorViewKey, '/U0301?includeGmp=true')) as { ipo: { name: string; gmp: unknown } };
    expect(one.ipo.name).toBe('Upstream Test 301 Limited');
  }, 120_000);
});

describe('upstreamSource: options and failures', () => {
  it('has the documented defaults and refuses bad options at once', () => {
    const source = upstreamSource({ baseUrl: 'https://api.example.com/ipos', apiKey: 'k' });
    expect([source.name, source.everyMs, source.timeoutMs]).toEqual(['upstream', 300_000, 600_000]);
    const base = { baseUrl: 'https://api.example.com/ipos', apiKey: 'k' };
    expect(() => upstreamSource({ ...base, name: 'a b' })).toThrow(/name must be/);
    expect(() => upstreamSource({ ...base, everyMs: 999 })).toThrow(/everyMs/);
    expect(() => upstreamSource({ ...base, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => upstreamSource({ ...base, apiKey: '' })).toThrow(/apiKey/);
    expect(() => upstreamSource({ ...base, statuses: [] })).toThrow(/statuses/);
    expect(() => upstreamSource({ ...base, statuses: ['opened' as 'open'] })).toThrow(/"opened"/);
    expect(() => upstreamSource({ ...base, baseUrl: 'https://api.example.com/ipos?x=1' })).toThrow(/baseUrl/);
  });

  describe('against a real server', () => {
    const clock: TestClock = { now: T0 };
    let store: Store;
    let api: TestApi;

    beforeAll(async () => {
      store = memoryStore();
      await importDataset(store, { ipos: seedIpos(T0).slice(0, 3) }, { now: () => new Date(clock.now) });
      api = await serveApi(store, clock, UNLIMITED);
    });
    afterAll(async () => {
      await api?.close();
    });

    it('rejects a run with 401 naming the upstream and the status, never the key', async () => {
      const source = upstreamSource({ baseUrl: api.baseUrl, apiKey: 'ik_not_a_real_key_0123456789', name: 'hosted' });
      const error = await failure(source.collect({ now: new Date(clock.now), signal: new AbortController().signal }));
      expect(error).toBeInstanceOf(Error);
      expect(error.message).toContain(`upstream source "hosted" (${api.baseUrl}) answered HTTP 401 ERR:INVLDKEY: check the source's apiKey.`);
      expect(error.message).not.toContain('ik_not_a_real_key');
    });

    it('rejects includeGmp without the GMP add-on with 403 ERR:PLAN, and reads the lists with includeGmp: false', async () => {
      const key = await proKey(store, clock, false);
      const refused = upstreamSource({ baseUrl: api.baseUrl, apiKey: key });
      await expect(refused.collect({ now: new Date(clock.now), signal: new AbortController().signal })).rejects.toThrow(/upstream source "upstream" .* answered HTTP 403 ERR:PLAN: includeGmp needs a pro key with the GMP add-on/);
      const seen = api.requests.length;
      const plain = upstreamSource({ baseUrl: api.baseUrl, apiKey: key, includeGmp: false, subscription: false, statuses: ['listed', 'announced'] });
      const answer = await plain.collect({ now: new Date(clock.now), signal: new AbortController().signal });
      expect(answer.ipos?.map((ipo) => ipo.id)).toEqual(['U0001', 'U0002', 'U0003']);
      expect(Object.keys(answer)).toEqual(['ipos']);
      expect(api.requests.slice(seen).map((r) => r.url)).toEqual(['/ipos?status=listed&page=1&limit=100', '/ipos?status=announced&page=1&limit=100']);
      expect(() => validateDataset(answer)).not.toThrow();
    });

    it('rejects a network failure naming the upstream, never a password of its URL', async () => {
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const signal = new AbortController().signal;
      const gone = upstreamSource({ baseUrl: `http://127.0.0.1:${port}/ipos`, apiKey: 'k', name: 'gone' });
      const error = await failure(gone.collect({ now: new Date(clock.now), signal }));
      expect(error.message).toMatch(new RegExp(`^upstream source "gone" \\(http://127\\.0\\.0\\.1:${port}/ipos\\) could not be read \\(no HTTP status: the request failed\\): .+`));
      expect(error.cause).toBeInstanceOf(Error);
      // Node's fetch refuses a URL with credentials, quoting it: the message drops them.
      const withUser = upstreamSource({ baseUrl: `http://user:secret@127.0.0.1:${port}/ipos`, apiKey: 'k', name: 'gone' });
      const refused = await failure(withUser.collect({ now: new Date(clock.now), signal }));
      expect(refused.message).toMatch(/^upstream source "gone" \(http:\/\/127\.0\.0\.1:\d+\/ipos\) could not be read/);
      expect(refused.message).not.toContain('secret');
    });
  });

  it('a cut run rejects at once with the signal\'s reason, during a request that ignores the signal', async () => {
    let calls = 0;
    let called!: () => void;
    const fetched = new Promise<void>((resolve) => (called = resolve));
    const hanging: FetchLike = () => {
      calls++;
      called();
      return new Promise<FetchResponseLike>(() => {});
    };
    const source = upstreamSource({ baseUrl: 'http://upstream.test/ipos', apiKey: 'k', fetch: hanging });
    const controller = new AbortController();
    const running = source.collect({ now: new Date(T0), signal: controller.signal });
    await fetched;
    const reason = new Error('cut at timeoutMs');
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(calls).toBe(1);
  });

  it('a cut run rejects at once during a wait after a 429, and an aborted signal sends nothing', async () => {
    const seen: string[] = [];
    const refusing: FetchLike = async (url) => {
      seen.push(url);
      return response(429, { status: '429', title: 'Too Many Requests', detail: 'The minute allowance of 6 requests is used up: retry in 60 s.', code: 'ERR:RATELIMIT', meta: { quotaPerMinute: 6, expiresIn: 60 } }, { 'retry-after': '60' });
    };
    const controller = new AbortController();
    const waits: UpstreamWaitInfo[] = [];
    const source = upstreamSource({
      baseUrl: 'http://upstream.test/ipos',
      apiKey: 'k',
      fetch: refusing,
      sleep: () => new Promise<void>(() => {}),
      onWait: (info) => {
        waits.push(info);
        controller.abort(new Error('cut'));
      },
    });
    await expect(source.collect({ now: new Date(T0), signal: controller.signal })).rejects.toThrow('cut');
    expect(waits.map((w) => [w.source, w.ms, w.attempt, w.retries])).toEqual([['upstream', 60_000, 1, 10]]);
    expect(seen).toHaveLength(1);
    await expect(source.collect({ now: new Date(T0), signal: controller.signal })).rejects.toThrow('cut');
    expect(seen).toHaveLength(1);
  });

  it('answers an IPO met under two statuses once, as last seen, with its last snapshots', async () => {
    const before = { ...wireIpo('A1', 'Alpha'), gmp: gmpOf('2026-11-18T03:00:00.000Z', 10) };
    const after = { ...wireIpo('A1', 'Alpha Renamed'), gmp: gmpOf('2026-11-18T03:59:00.000Z', 12.5), subscription: { asOf: '2026-11-18T03:30:00.000Z', times: timesOf(2.5) } };
    const lists: Record<string, unknown[]> = { open: [before, wireIpo('B2', 'Beta')], closed: [after] };
    const fetch: FetchLike = async (url) => {
      const status = new URL(url).searchParams.get('status') ?? '';
      const ipos = lists[status] ?? [];
      return response(200, { meta: { count: ipos.length, countOnPage: ipos.length, totalPages: 1, page: 1, limit: 100 }, ipos });
    };
    const source = upstreamSource({ baseUrl: 'http://upstream.test/ipos', apiKey: 'k', fetch, statuses: ['open', 'closed'] });
    const answer = await source.collect({ now: new Date(T0), signal: new AbortController().signal });
    expect(answer.ipos?.map((ipo) => [ipo.id, ipo.name])).toEqual([
      ['A1', 'Alpha Renamed'],
      ['B2', 'Beta'],
    ]);
    expect(answer.gmp).toEqual([{ ipoId: 'A1', timestamp: '2026-11-18T03:59:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 12.5 }] }]);
    expect(answer.subscription).toEqual([{ ipoId: 'A1', timestamp: '2026-11-18T03:30:00.000Z', times: timesOf(2.5) }]);
    expect(() => validateDataset(answer)).not.toThrow();
  });
});

/** The error a run rejects with; a run that resolves fails the test. */
async function failure(run: Promise<SourceAnswer>): Promise<Error> {
  const outcome = await run.then(
    () => null,
    (error: unknown) => error,
  );
  if (!(outcome instanceof Error)) throw new Error(`the run should have rejected with an Error; got ${String(outcome)}`);
  return outcome;
}

/** A GET of `path` under the API's mount with `key`; the body as text (it must be a 200). */
async function read(api: TestApi, key: string, path: string): Promise<string> {
  const res = await fetch(`${api.baseUrl}${path}`, { headers: { 'x-api-key': key } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text}`);
  return text;
}

function response(status: number, body: unknown, headers: Record<string, string> = {}): FetchResponseLike {
  return { status, headers: { get: (name) => headers[name.toLowerCase()] ?? null }, text: async () => JSON.stringify(body) };
}

/** A minimal wire IPO (the fields a dataset needs, and the derived ones it ignores). */
function wireIpo(id: string, name: string): Record<string, unknown> {
  return { id, name, symbol: null, slug: id.toLowerCase(), type: 'EQ', isSme: false, status: 'open', subscription: null };
}

function gmpOf(lastUpdatedAt: string, price: number): Record<string, unknown> {
  const aggregations = { mean: price, median: price, min: price, max: price, mode: price };
  return { lastUpdatedAt, aggregations, estimatedListingPrice: null, gmpPercent: null, sources: [{ name: 'ipowatch', gmpPrice: price }] };
}

function timesOf(total: number): Record<string, number | null> {
  return { qib: null, nii: null, bnii: null, snii: null, retail: null, employee: null, shareholder: null, total };
}
