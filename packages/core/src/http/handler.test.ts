import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAccount, createApiKey, getAccountWindows } from '../accounts/admin.js';
import { isIpokitError } from '../model/errors.js';
import { compareCodePoints, deriveStatus } from '../model/status.js';
import { createIpoHandler, openApiCache, type HandlerRequest } from './handler.js';
import { resolveOptions } from '../model/options.js';
import { datasetArbitrary, ARBITRARY_FIRST_DAY, ARBITRARY_DAYS } from '@ipokit/testing';
import { referenceStore } from '@ipokit/testing';
import { makeIpo, makeSnapshot } from '@ipokit/testing';
import type { IpoRecord, IpoStatus, IpoType, ListResponse, RateLimiter, RateLimitOutcome, Store } from '../model/types.js';
import { addDays } from '../model/dates.js';

// Properties of the list route through the whole handler (parsing, plans, paging),
// over random datasets. The expected answer is computed here from the contract's words,
// independently of the stores and of the reference implementations.

const STATUSES: readonly IpoStatus[] = ['announced', 'upcoming', 'open', 'closed', 'listed'];
const TYPES: readonly IpoType[] = ['EQ', 'SME', 'DEBT'];
const DAY_MS = 86_400_000;

interface Filters {
  status: IpoStatus;
  types: IpoType[] | null;
  source: 'nse' | 'bse' | null;
  startDate: string | null;
  endDate: string | null;
  year: string | null;
}

/** The contract's order, spelled out (docs/spec.md#list). */
function naiveCompare(status: IpoStatus): (a: IpoRecord, b: IpoRecord) => number {
  const text = (x: string | null, y: string | null): number => (x === y ? 0 : (x ?? '') < (y ?? '') ? -1 : 1);
  return (a, b) => {
    let c = 0;
    if (status === 'upcoming' || status === 'open') c = text(a.startDate, b.startDate);
    else if (status === 'announced') c = compareCodePoints(a.name, b.name);
    else if (status === 'closed') c = text(b.endDate ?? b.startDate, a.endDate ?? a.startDate);
    else c = text(b.listingDate, a.listingDate);
    return c !== 0 ? c : compareCodePoints(a.id, b.id);
  };
}

function naiveMatches(ipos: readonly IpoRecord[], f: Filters, today: string): IpoRecord[] {
  return ipos
    .filter(
      (ipo) =>
        deriveStatus(ipo, today) === f.status &&
        (f.types === null || f.types.includes(ipo.type)) &&
        (f.source === null || ipo.exchanges.includes(f.source)) &&
        (f.startDate === null || (ipo.startDate !== null && ipo.startDate >= f.startDate)) &&
        (f.endDate === null || (ipo.endDate !== null && ipo.endDate <= f.endDate)) &&
        (f.year === null || (ipo.startDate !== null && ipo.startDate.slice(0, 4) === f.year)),
    )
    .sort(naiveCompare(f.status));
}

const dayArb = fc.integer({ min: -5, max: ARBITRARY_DAYS + 5 }).map((n) => addDays(ARBITRARY_FIRST_DAY, n));
const filtersArb: fc.Arbitrary<Filters> = fc.record({
  status: fc.constantFrom(...STATUSES),
  types: fc.option(fc.subarray([...TYPES], { minLength: 1 }), { nil: null }),
  source: fc.constantFrom(null, 'nse' as const, 'bse' as const),
  startDate: fc.option(dayArb, { nil: null }),
  endDate: fc.option(dayArb, { nil: null }),
  year: fc.constantFrom(null, '2026', '2027', '2025'),
});

/** The query string of filters, with the enumerations in random letter case. */
function queryOf(f: Filters, casing: boolean[], extra: string): string {
  const cased = (s: string, i: number): string => (casing[i % casing.length] ? s.toUpperCase() : s.toLowerCase());
  const parts = [`status=${cased(f.status, 0)}`];
  if (f.types !== null) parts.push(`type=${f.types.map((t, i) => cased(t, i + 1)).join('%2C')}`);
  if (f.source !== null) parts.push(`source=${cased(f.source, 2)}`);
  if (f.startDate !== null) parts.push(`startDate=${f.startDate}`);
  if (f.endDate !== null) parts.push(`endDate=${f.endDate}`);
  if (f.year !== null) parts.push(`year=${f.year}`);
  return parts.join('&') + extra;
}

function request(query: string, key: string | null): HandlerRequest {
  return { method: 'GET', url: `/ipos?${query}`, path: '/', query, headers: key === null ? {} : { 'x-api-key': key }, clientAddress: '192.0.2.1' };
}

describe('list route through the handler (properties)', () => {
  it('iterating every page returns every match exactly once, in the contract order; totalPages = ceil(count/limit); filters = the naive filter', async () => {
    const arb = fc.record({
      dataset: datasetArbitrary({ maxIpos: 30, maxSnapshots: 0 }),
      filters: filtersArb,
      casing: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
      limit: fc.integer({ min: 1, max: 150 }),
      todayOffset: fc.integer({ min: -3, max: ARBITRARY_DAYS + 3 }),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ dataset, filters, casing, limit, todayOffset }) => {
        const store = referenceStore();
        expect(await store.writeDataset(dataset)).toEqual([]);
        const today = addDays(ARBITRARY_FIRST_DAY, todayOffset);
        // 06:30 UTC is 12:00 in Asia/Kolkata on the same calendar day.
        const now = new Date(Date.parse(`${today}T06:30:00Z`));
        const account = await createAccount(store, { name: 'p', plan: 'paid' });
        const { key } = await createApiKey(store, { accountId: account.id, label: 'k' });
        const handle = createIpoHandler(store, { now: () => now, limits: { paid: { perMinute: Infinity }, keyless: { perMinute: Infinity } } });
        const expected = naiveMatches(dataset.ipos, filters, today);
        const effective = Math.min(limit, 100);
        const seen: string[] = [];
        let totalPages = Infinity;
        for (let page = 1; page <= totalPages + 1; page++) {
          const res = await handle(request(queryOf(filters, casing, `&limit=${limit}&page=${page}`), key));
          expect(res.status).toBe(200);
          const body = JSON.parse(res.body) as ListResponse;
          expect(body.meta.count).toBe(expected.length);
          expect(body.meta.limit).toBe(effective);
          expect(body.meta.page).toBe(page);
          expect(body.meta.totalPages).toBe(Math.ceil(expected.length / effective));
          expect(body.meta.countOnPage).toBe(body.ipos.length);
          totalPages = body.meta.totalPages;
          if (page <= totalPages) expect(body.ipos.length).toBe(page < totalPages ? effective : expected.length - (totalPages - 1) * effective);
          else expect(body.ipos).toEqual([]);
          for (const ipo of body.ipos) {
            expect(ipo.status).toBe(filters.status);
            seen.push(ipo.id);
          }
        }
        expect(seen).toEqual(expected.map((ipo) => ipo.id));

        // Without a key: the first match only, limit 1, page 1, whatever was asked.
        const keyless = await handle(request(queryOf(filters, casing, `&limit=${limit}&page=3`), null));
        const partial = JSON.parse(keyless.body) as ListResponse;
        expect(keyless.status).toBe(200);
        expect(partial.meta).toEqual({
          count: expected.length,
          countOnPage: Math.min(1, expected.length),
          totalPages: expected.length,
          page: 1,
          limit: 1,
          info: 'To get all IPOs, please provide a valid API key.',
        });
        expect(partial.ipos.map((ipo) => ipo.id)).toEqual(expected.slice(0, 1).map((ipo) => ipo.id));
      }),
      { numRuns: 150 },
    );
  });

  it('a free key gets pages of one, and its pages still cover every match once', async () => {
    await fc.assert(
      fc.asyncProperty(datasetArbitrary({ maxIpos: 12, maxSnapshots: 0 }), fc.constantFrom(...STATUSES), async (dataset, status) => {
        const store = referenceStore();
        expect(await store.writeDataset(dataset)).toEqual([]);
        const today = addDays(ARBITRARY_FIRST_DAY, 10);
        const now = new Date(Date.parse(`${today}T06:30:00Z`) + DAY_MS / 4);
        const account = await createAccount(store, { name: 'f', plan: 'free' });
        const { key } = await createApiKey(store, { accountId: account.id, label: 'k' });
        const handle = createIpoHandler(store, { now: () => now, limits: { free: { perMinute: Infinity } } });
        const expected = naiveMatches(dataset.ipos, { status, types: null, source: null, startDate: null, endDate: null, year: null }, today);
        const seen: string[] = [];
        for (let page = 1; page <= expected.length; page++) {
          const body = JSON.parse((await handle(request(`status=${status}&limit=50&page=${page}`, key))).body) as ListResponse;
          expect(body.meta.limit).toBe(1);
          expect(body.meta.totalPages).toBe(expected.length);
          seen.push(...body.ipos.map((ipo) => ipo.id));
        }
        expect(seen).toEqual(expected.map((ipo) => ipo.id));
      }),
      { numRuns: 60 },
    );
  });
});

describe('client addresses through the handler', () => {
  it('any address an adapter hands over (junk, ports, any length) gives a window key of at most 29 characters, and junk shares one window (property)', async () => {
    const keys = new Set<string>();
    const store = referenceStore();
    const recording = Object.assign(Object.create(store) as typeof store, {
      hitRateLimit: (input: Parameters<typeof store.hitRateLimit>[0]) => {
        for (const w of input.windows) keys.add(w.key);
        return store.hitRateLimit(input);
      },
    });
    const handle = createIpoHandler(recording, { now: () => new Date(Date.UTC(2026, 10, 20)), limits: { keyless: { perMinute: 1 } }, onError: () => {} });
    const address = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 20_000 }),
      fc.tuple(fc.ipV4(), fc.nat(99_999)).map(([ip, port]) => `${ip}:${port}`),
      fc.tuple(fc.ipV6(), fc.nat(99_999)).map(([ip, port]) => `[${ip}]:${port}`),
      fc.ipV4Extended(),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(address, { minLength: 1, maxLength: 20 }), async (addresses) => {
        for (const clientAddress of addresses) {
          const res = await handle({ method: 'GET', url: '/ipos?status=open', path: '/', query: 'status=open', headers: {}, clientAddress });
          expect([200, 429]).toContain(res.status);
        }
      }),
      { numRuns: 200 },
    );
    for (const key of keys) expect(key.length, key.slice(0, 60)).toBeLessThanOrEqual(29);
    expect(keys.has('addr:unknown')).toBe(true);
  });
});


describe('the OpenAPI path with the openapi option off', () => {
  const request = (url: string, path: string, method = 'GET'): HandlerRequest => ({ method, url, path, query: '', headers: {}, clientAddress: '192.0.2.7' });

  it('answers 404 saying how to turn the document on, in the usual error body', async () => {
    for (const options of [{}, { openapi: false }]) {
      const handle = createIpoHandler(referenceStore(), options);
      for (const [url, path] of [
        ['/ipos/-/openapi.json', '/-/openapi.json'],
        ['/ipos/-/openapi%2Ejson/', '/-/openapi%2Ejson/'],
      ] as const) {
        for (const method of ['GET', 'HEAD', 'POST']) {
          const res = await handle(request(url, path, method));
          expect(res.status).toBe(404);
          const body = JSON.parse(res.body) as Record<string, unknown>;
          expect(Object.keys(body).sort()).toEqual(['code', 'detail', 'status', 'title']);
          expect(body).toMatchObject({ status: '404', title: 'Not Found', code: 'ERR:NOTFOUND' });
          expect(body.detail).toMatch(/set the router option openapi: true/);
        }
      }
    }
  });

  it('keeps the plain 404 for other unknown paths', async () => {
    const handle = createIpoHandler(referenceStore());
    for (const path of ['/-/other.json', '/x/y/z', '/-/openapi.json/x']) {
      const res = await handle(request(`/ipos${path}`, path));
      expect(res.status).toBe(404);
      expect((JSON.parse(res.body) as { detail: string }).detail).toBe('No such route: use /, /{identifier}, /{identifier}/gmp or /{identifier}/subscription.');
    }
  });
});

describe('the limiter option', () => {
  const get = (key: string | null): HandlerRequest => request('status=open', key);

  it('charges the given limiter, not the store; getAccountWindows reads the same one', async () => {
    const store = referenceStore();
    const limiter = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'paid' });
    const { key } = await createApiKey(store, { accountId: acct.id, label: 'k' });
    const now = Date.UTC(2026, 10, 24, 6);
    const handle = createIpoHandler(store, { limiter, now: () => new Date(now), limits: { paid: { perMinute: 2 } } });
    expect((await handle(get(key))).status).toBe(200);
    expect((await handle(get(key))).status).toBe(200);
    expect((await handle(get(key))).status).toBe(429);
    const windows = [{ key: `acct:${acct.id}`, quota: 2, ms: 60_000 }];
    expect((await limiter.peekRateLimit({ now, windows }))[0]!.count).toBe(2);
    expect((await store.peekRateLimit({ now, windows }))[0]!.count).toBe(0);
    const seen = await getAccountWindows(store, { accountId: acct.id }, { limiter, now: () => new Date(now), limits: { paid: { perMinute: 2 } } });
    expect(seen[0]).toEqual({ name: 'minute', quota: 2, seconds: 60, remaining: 0, reset: 60 });
  });

  it('takes a store without a limiter when the option gives one, and refuses to build without any (ERR:BADPARAM limiter)', async () => {
    const { hitRateLimit: _hit, peekRateLimit: _peek, ...data } = referenceStore();
    expect((await createIpoHandler(data, { limiter: referenceStore() })(get(null))).status).toBe(200);
    for (const build of [
      () => createIpoHandler(data as unknown as Store),
      () => createIpoHandler(data, { limiter: {} as unknown as RateLimiter }),
    ]) {
      let thrown: unknown;
      try {
        build();
      } catch (err) {
        thrown = err;
      }
      expect(isIpokitError(thrown, 'ERR:BADPARAM') && thrown.parameter).toBe('limiter');
    }
  });
});

// docs/spec.md#storage: the three reads and the hit may answer with the value itself. The
// handler takes either, and a failure thrown at once is a failure like a rejection.
describe('a store whose reads and hit answer synchronously', () => {
  const T = Date.UTC(2026, 10, 24, 6);
  const READS = ['listIpos', 'findIpo', 'gmpBuckets'] as const;
  async function twins() {
    const base = referenceStore();
    await base.writeDataset(
      { ipos: [makeIpo({ id: 'a1', symbol: 'ALPHA', startDate: '2026-11-20', endDate: '2026-11-26' }), makeIpo({ id: 'b2' })], snapshots: [makeSnapshot('a1', T - 3_600_000, { x: 120 })] },
      { at: T },
    );
    const acct = await createAccount(base, { name: 'Acme', plan: 'pro', gmpAddon: true });
    const { key } = await createApiKey(base, { accountId: acct.id, label: 'k' });
    const admitted = (input: { now: number; windows: readonly unknown[] }): RateLimitOutcome => ({ admitted: true, windows: input.windows.map(() => ({ count: 1, oldest: input.now, blocking: null })) });
    // The base store's answers, learnt by a first run: the twins answer the same, each its way.
    const answers = new Map<string, unknown>();
    const store = (mode: 'learn' | 'sync' | 'async' | 'throw' | 'reject'): Store => {
      const twin = Object.create(base) as Store;
      for (const name of READS) {
        const read = base[name] as (query: object) => Promise<unknown>;
        Object.assign(twin, {
          [name]: (query: object) => {
            const id = name + JSON.stringify(query);
            if (mode === 'learn') return read(query).then((value) => (answers.set(id, value), value));
            if (mode === 'throw') throw new Error(`${name} failed`);
            if (mode === 'reject') return Promise.reject(new Error(`${name} failed`));
            if (!answers.has(id)) throw new Error(`not learnt: ${id}`);
            return mode === 'sync' ? answers.get(id) : Promise.resolve(answers.get(id));
          },
        });
      }
      twin.hitRateLimit = (input) => (mode === 'sync' ? admitted(input) : Promise.resolve(admitted(input)));
      return twin;
    };
    return { key, store };
  }
  const at = (path: string, query: string, key: string): HandlerRequest => ({ ...request(query, key), url: `/ipos${path}${query === '' ? '' : `?${query}`}`, path: path === '' ? '/' : path });

  it('answers as a store that answers with promises: the same status, headers and bytes', async () => {
    const { key, store } = await twins();
    const options = { now: () => new Date(T) };
    const [learn, sync, async] = (['learn', 'sync', 'async'] as const).map((mode) => createIpoHandler(store(mode), options));
    for (const [req, status] of [
      [at('', 'status=open', key), 200],
      [at('/alpha', '', key), 200],
      [at('/a1', 'includeGmp=true', key), 200],
      [at('/a1/gmp', 'interval=hourly', key), 200],
      [at('/nope', '', key), 404],
    ] as const) {
      const expected = await learn!(req);
      expect(expected.status, req.url).toBe(status);
      expect(await sync!(req)).toEqual(expected);
      expect(await async!(req)).toEqual(expected);
    }
  });

  it.each(['throw', 'reject'] as const)('answers 503 ERR:UNAVAILABLE, reported to onError, when a read fails (%s)', async (mode) => {
    const { key, store } = await twins();
    const errors: unknown[] = [];
    const handle = createIpoHandler(store(mode), { now: () => new Date(T), onError: (err) => errors.push(err) });
    const res = await handle(at('/alpha', '', key));
    expect([res.status, JSON.parse(res.body).code]).toEqual([503, 'ERR:UNAVAILABLE']);
    expect(errors).toEqual([new Error('findIpo failed')]);
  });
});

describe('openApiCache', () => {
  it('answers every mount its own document, past its bound of 16 mounts and after one is dropped', () => {
    const text = openApiCache(resolveOptions());
    const mounts = Array.from({ length: 40 }, (_, i) => `/m${i}`);
    for (const round of [0, 1]) {
      for (const mount of mounts) {
        const doc = JSON.parse(text(mount)) as { servers: Array<{ url: string }> };
        expect(doc.servers[0]?.url, `round ${round}`).toBe(mount);
      }
    }
    expect(text('/m39')).toBe(text('/m39'));
    expect((JSON.parse(text('')) as { servers: Array<{ url: string }> }).servers[0]?.url).toBe('/');
  });
});
