/**
 * The client against real servers: Express 5 and Koa 3 routers over a memory store seeded
 * with the HTTP suite's fixture. Results must equal the raw HTTP JSON, all() must visit every
 * match once in order, errors must carry the contract's bodies, and a 429 must be retried
 * after exactly the wait the server asked for.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Exchange, IpoStatus, IpoType } from '@ipokit/core';
import { EXPECTED_ORDER, expectedIpo, FIXTURE_NOW, IPO_IDS } from '@ipokit/testing';
import {
  createClient,
  IpokitApiError,
  isIpokitApiError,
  type ClientOptions,
  type ClientWarning,
  type FetchLike,
  type ListIposParams,
  type WaitInfo,
} from './index.js';
import { FRAMEWORKS, fixtureServer, NO_LIMITS, type FixtureServer } from './test-servers.js';

const SECOND = 1_000;

/** The raw answer of a hand-written request: status, text, parsed JSON. */
async function raw(url: string, key?: string): Promise<{ status: number; text: string; json: unknown; headers: Headers }> {
  const res = await fetch(url, { headers: key === undefined ? {} : { 'x-api-key': key } });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as unknown, headers: res.headers };
}

/** What the client's error must hold for this raw answer. */
function expectErrorOf(err: unknown, answer: { status: number; json: unknown }): IpokitApiError {
  expect(err).toBeInstanceOf(IpokitApiError);
  const e = err as IpokitApiError;
  const body = answer.json as { title: string; detail: string; code: string; meta?: unknown };
  expect(e.status).toBe(answer.status);
  expect(e.body).toEqual(answer.json);
  expect([e.code, e.title, e.detail, e.meta]).toEqual([body.code, body.title, body.detail, body.meta]);
  return e;
}

/** A fetch that counts its calls and records the Retry-After of each 429. */
function countingFetch(): { fetch: FetchLike; calls: string[]; retryAfter: number[] } {
  const calls: string[] = [];
  const retryAfter: number[] = [];
  return {
    calls,
    retryAfter,
    fetch: async (url, init) => {
      calls.push(url);
      const res = await fetch(url, init);
      if (res.status === 429) retryAfter.push(Number(res.headers.get('retry-after')));
      return res;
    },
  };
}

describe.each(FRAMEWORKS)('client against $name', (framework) => {
  let server: FixtureServer;
  beforeAll(async () => {
    server = await fixtureServer(framework, { limits: NO_LIMITS });
  });
  afterAll(() => server.close());

  const client = (key?: keyof FixtureServer['keys'], options: Partial<ClientOptions> = {}) =>
    createClient({ baseUrl: server.baseUrl, ...(key === undefined ? {} : { apiKey: server.keys[key] }), ...options });

  it('list, get and gmp resolve to exactly the JSON the server sends', async () => {
    const lists: Array<[ListIposParams, string]> = [
      [{ status: 'open' }, 'status=open'],
      [{ status: 'listed', type: ['EQ', 'SME'], limit: 2, page: 2 }, 'status=listed&type=EQ,SME&limit=2&page=2'],
      [{ status: 'closed', source: 'nse', startDate: '2026-11-15', endDate: '2026-11-21', year: 2026 }, 'status=closed&source=nse&startDate=2026-11-15&endDate=2026-11-21&year=2026'],
      [{ status: 'upcoming', page: 99 }, 'status=upcoming&page=99'],
      [{ status: 'open', includeGmp: true, limit: 100 }, 'status=open&includeGmp=true&limit=100'],
    ];
    for (const [params, query] of lists) {
      const expected = await raw(`${server.baseUrl}?${query}`, server.keys.proGmp);
      expect(expected.status).toBe(200);
      expect(JSON.stringify(await client('proGmp').list(params))).toBe(expected.text);
    }
    const keyless = await raw(`${server.baseUrl}?status=listed&limit=5`);
    expect(JSON.stringify(await client().list({ status: 'listed', limit: 5 }))).toBe(keyless.text);
    expect((await client().list({ status: 'listed' })).meta.info).toBe('To get all IPOs, please provide a valid API key.');

    const orbit = await client('proGmp').get('orbit-aerospace-ipo', { includeGmp: true });
    expect(JSON.stringify({ ipo: orbit })).toBe((await raw(`${server.baseUrl}/ORBIT?includeGmp=true`, server.keys.proGmp)).text);
    expect(orbit).toEqual(expectedIpo(IPO_IDS.orbit, { gmpAt: FIXTURE_NOW }));
    expect(await client('paid').get(IPO_IDS.harbor)).toEqual(expectedIpo(IPO_IDS.harbor));

    const series = await client('proGmp').gmp('ORBIT', { interval: 'hourly', field: 'median', from: '2026-11-20', to: '2026-11-21' });
    expect(JSON.stringify(series)).toBe((await raw(`${server.baseUrl}/ORBIT/gmp?interval=hourly&field=median&from=2026-11-20&to=2026-11-21`, server.keys.proGmp)).text);
    expect(series.series.length).toBeGreaterThan(0);
    const daily = await client('proGmp').gmp(IPO_IDS.orbit);
    expect(JSON.stringify(daily)).toBe((await raw(`${server.baseUrl}/${IPO_IDS.orbit}/gmp`, server.keys.proGmp)).text);
    // The subscription series: a key of any plan.
    const subscription = await client('free').subscription('ORBIT', { to: '2026-11-30' });
    expect(JSON.stringify(subscription)).toBe((await raw(`${server.baseUrl}/ORBIT/subscription?to=2026-11-30`, server.keys.free)).text);
    expect(subscription.meta.from).toBe('2000-01-01T00:00:00.000Z');
    const found = await client('paid').list({ status: 'open', q: 'orbit', limit: 100 });
    expect(JSON.stringify(found)).toBe((await raw(`${server.baseUrl}?status=open&q=orbit&limit=100`, server.keys.paid)).text);
  });

  it('property: all() yields every matching IPO exactly once, in order, whatever the filters, limit and first page', async () => {
    const filters = fc.record(
      {
        status: fc.constantFrom<IpoStatus>('open', 'upcoming', 'listed', 'closed', 'announced'),
        type: fc.uniqueArray(fc.constantFrom<IpoType>('EQ', 'SME', 'DEBT'), { minLength: 1 }),
        source: fc.constantFrom<Exchange>('nse', 'bse'),
        startDate: fc.constantFrom('2025-01-01', '2026-11-15', '2026-11-20', '2026-11-25'),
        endDate: fc.constantFrom('2026-11-19', '2026-11-24', '2027-12-31'),
        year: fc.constantFrom(2025, 2026, 2027),
      },
      { requiredKeys: ['status'] },
    );
    await fc.assert(
      fc.asyncProperty(filters, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 4 }), async (params, limit, page) => {
        const everything = await client('paid').list({ ...params, limit: 100 });
        const expected = everything.ipos.map((ipo) => ipo.id).slice((page - 1) * limit);
        const ids: string[] = [];
        for await (const ipo of client('paid').all({ ...params, limit, page })) ids.push(ipo.id);
        expect(ids).toEqual(expected);

        const pages: number[] = [];
        for await (const p of client('paid').pages({ ...params, limit, page })) {
          expect(p.meta.limit).toBe(limit);
          pages.push(p.meta.page);
        }
        const last = Math.max(page, Math.ceil(everything.meta.count / limit));
        expect(pages).toEqual(Array.from({ length: last - page + 1 }, (_, i) => page + i));
      }),
      { numRuns: 40 },
    );
  });

  it('all() on the free plan (limit clamped to 1, said once to onWarning) and without a key (the partial answer) ends', async () => {
    const warnings: ClientWarning[] = [];
    const onWarning = (w: ClientWarning): void => void warnings.push(w);
    const listed: string[] = [];
    for await (const ipo of client('free', { onWarning }).all({ status: 'listed', limit: 50 })) listed.push(ipo.id);
    expect(listed).toEqual(EXPECTED_ORDER.listed);
    const n = EXPECTED_ORDER.listed.length;
    expect(warnings).toEqual([
      {
        code: 'limit-capped',
        asked: 50,
        limit: 1,
        count: n,
        totalPages: n,
        message: `The plan of this API key caps the page size at 1 (limit 50 was asked; meta.limit is the effective limit): the ${n} matching IPOs take ${n} pages, one request each, instead of 1.`,
      },
    ]);
    const keyless: string[] = [];
    for await (const ipo of client(undefined, { onWarning }).all({ status: 'listed', page: 3, limit: 50 })) keyless.push(ipo.id);
    expect(keyless).toEqual(EXPECTED_ORDER.listed.slice(0, 1));
    // The keyless answer says why in meta.info; paid gets the 50 it asked for.
    await client('paid', { onWarning }).list({ status: 'listed', limit: 50 });
    expect(warnings).toHaveLength(1);
  });

  it('typed errors carry the contract bodies: 400 with meta.parameter, 401, 403, 404', async () => {
    const cases: Array<[() => Promise<unknown>, string, string | undefined, number, string]> = [
      [() => client('paid').list({ status: 'open', year: '26' }), '?status=open&year=26', 'paid', 400, 'ERR:BADPARAM'],
      [() => client('paid').list({ status: 'soon' as IpoStatus }), '?status=soon', 'paid', 400, 'ERR:BADPARAM'],
      [() => client('paid').list({ status: 'open', type: [] }), '?status=open&type=', 'paid', 400, 'ERR:BADPARAM'],
      [() => client('proGmp').gmp('ORBIT', { from: '2026-02-30' }), '/ORBIT/gmp?from=2026-02-30', 'proGmp', 400, 'ERR:BADPARAM'],
      [() => client('wrong').list({ status: 'open' }), '?status=open', 'wrong', 401, 'ERR:INVLDKEY'],
      [() => client('revoked').get('ORBIT'), '/ORBIT', 'revoked', 401, 'ERR:INVLDKEY'],
      [() => client().get('ORBIT'), '/ORBIT', undefined, 401, 'ERR:INVLDKEY'],
      [() => client().gmp('ORBIT'), '/ORBIT/gmp', undefined, 401, 'ERR:INVLDKEY'],
      [() => client('paid').list({ status: 'open', includeGmp: true }), '?status=open&includeGmp=true', 'paid', 403, 'ERR:PLAN'],
      [() => client().list({ status: 'open', includeGmp: true }), '?status=open&includeGmp=true', undefined, 403, 'ERR:PLAN'],
      [() => client('pro').gmp('ORBIT'), '/ORBIT/gmp', 'pro', 403, 'ERR:PLAN'],
      [() => client('paid').get('NOPE'), '/NOPE', 'paid', 404, 'ERR:NOTFOUND'],
      [() => client('proGmp').gmp('no-such-ipo'), '/no-such-ipo/gmp', 'proGmp', 404, 'ERR:NOTFOUND'],
    ];
    for (const [call, path, key, status, code] of cases) {
      const err = await call().catch((e: unknown) => e);
      const answer = await raw(`${server.baseUrl}${path}`, key === undefined ? undefined : server.keys[key as keyof FixtureServer['keys']]);
      expect(answer.status, path).toBe(status);
      const e = expectErrorOf(err, answer);
      expect(isIpokitApiError(e, code as IpokitApiError['code'])).toBe(true);
      if (key !== undefined) expect(`${e.message} ${JSON.stringify(e.body)}`).not.toContain(server.keys[key as keyof FixtureServer['keys']]);
    }
    const e = (await client('paid').list({ status: 'open', year: '26' }).catch((x: unknown) => x)) as IpokitApiError;
    expect(e.meta).toEqual({ parameter: 'year' });
    const g = (await client('proGmp').gmp('ORBIT', { interval: 'yearly' as 'daily' }).catch((x: unknown) => x)) as IpokitApiError;
    expect(g.meta).toEqual({ parameter: 'interval' });
  });

  it('identifiers with reserved characters reach the server as given', async () => {
    // The fixture's symbol "R&D" (an & in the path) and an id in another case.
    expect((await client('paid').get('R&D')).id).toBe(IPO_IDS.crest);
    expect((await client('paid').get('r&d')).id).toBe(IPO_IDS.crest);
    expect((await client('proGmp').gmp('R&D')).ipoId).toBe(IPO_IDS.crest);
    expect((await client('paid').get('orbit')).id).toBe('orbit');
    const identifiers = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => s.isWellFormed() && s !== '.' && s !== '..');
    await fc.assert(
      fc.asyncProperty(identifiers, fc.boolean(), async (identifier, series) => {
        const err = await (series ? client('proGmp').gmp(identifier) : client('paid').get(identifier)).then(
          (found) => {
            // Found: then by its id, or by its symbol or slug ignoring ASCII case.
            const ipo = 'ipoId' in found ? expectedIpo(found.ipoId) : found;
            const lower = (s: string | null): string | null => s?.replace(/[A-Z]/g, (c) => c.toLowerCase()) ?? null;
            expect([ipo.id === identifier, lower(ipo.symbol) === lower(identifier), ipo.slug === lower(identifier)]).toContain(true);
            return null;
          },
          (e: unknown) => e,
        );
        if (err === null) return;
        expect(isIpokitApiError(err, 'ERR:NOTFOUND'), String(err)).toBe(true);
        // The server quotes the identifier it decoded: the one that was given.
        expect((err as IpokitApiError).detail).toBe(`No IPO has the identifier ${JSON.stringify(identifier)}: use an IPO id, symbol or slug.`);
      }),
      { numRuns: 150 },
    );
  });
});

describe.each(FRAMEWORKS)('retry after 429 against $name', (framework) => {
  // 2 requests a minute on the paid plan (both paid keys share the account's window); each
  // test first moves the clock 2 minutes on, so that it starts with an empty window.
  let server: FixtureServer;
  beforeAll(async () => {
    server = await fixtureServer(framework, { limits: { paid: { perMinute: 2, gmpPerMinute: 2 } } });
  });
  afterAll(() => server.close());

  /** Two hits, at t and t + 10 s; the clock then stands at t + 20 s. */
  async function fillWindow(key: string): Promise<void> {
    const c = createClient({ baseUrl: server.baseUrl, apiKey: key, retry: false });
    await c.list({ status: 'open' });
    server.clock.now += 10 * SECOND;
    await c.get('ORBIT');
    server.clock.now += 10 * SECOND;
  }

  it('waits exactly Retry-After (the injected sleep moves the clock) and succeeds once the window frees', async () => {
    await fillWindow(server.keys.paid);
    const counting = countingFetch();
    const waits: number[] = [];
    const told: WaitInfo[] = [];
    const client = createClient({
      baseUrl: server.baseUrl,
      apiKey: server.keys.paid,
      fetch: counting.fetch,
      sleep: async (ms) => {
        waits.push(ms);
        server.clock.now += ms;
      },
      onWait: (info) => void told.push(info),
    });
    const orbit = await client.get('ORBIT');
    expect(orbit.id).toBe(IPO_IDS.orbit);
    // The oldest hit leaves 60 s after it: 40 s after now.
    expect(counting.retryAfter).toEqual([40]);
    expect(waits).toEqual([40 * SECOND]);
    expect(counting.calls).toHaveLength(2);
    // onWait was told the wait and the server's 429 meta before it.
    expect(told.map(({ error, ...info }) => info)).toEqual([
      { ms: 40 * SECOND, attempt: 1, retries: 2, url: `${server.baseUrl}/ORBIT`, status: 429, quotaPerMinute: 2, expiresIn: 40, window: 'minute', quota: 2 },
    ]);
    expect(told[0]!.error.meta).toEqual({ quotaPerMinute: 2, expiresIn: 40, window: 'minute', quota: 2 });

    // The window now holds hits at t + 10 s and t + 60 s: the next wait is 10 s.
    const listed = await client.list({ status: 'listed', limit: 100 });
    expect(listed.ipos.map((ipo) => ipo.id)).toEqual(EXPECTED_ORDER.listed);
    expect(counting.retryAfter).toEqual([40, 10]);
    expect(waits).toEqual([40 * SECOND, 10 * SECOND]);
  });

  it('with retry disabled the first 429 is thrown at once', async () => {
    server.clock.now += 120 * SECOND;
    await fillWindow(server.keys.paid2);
    const counting = countingFetch();
    const waits: number[] = [];
    const client = createClient({ baseUrl: server.baseUrl, apiKey: server.keys.paid2, fetch: counting.fetch, retry: false, sleep: async (ms) => void waits.push(ms) });
    const err = await client.list({ status: 'listed' }).catch((e: unknown) => e);
    expect(isIpokitApiError(err, 'ERR:RATELIMIT')).toBe(true);
    const e = err as IpokitApiError;
    expect([e.status, e.title]).toEqual([429, 'Too Many Requests']);
    expect(e.meta).toEqual({ quotaPerMinute: 2, expiresIn: 40, window: 'minute', quota: 2 });
    expect(e.headers?.get('retry-after')).toBe('40');
    expect(counting.calls).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('retries are bounded: the last 429 is thrown after `retries` waits', async () => {
    server.clock.now += 120 * SECOND;
    await fillWindow(server.keys.paid);
    const counting = countingFetch();
    const waits: number[] = [];
    // Each wait moves the clock by 5 s only: the window stays full.
    const client = createClient({
      baseUrl: server.baseUrl,
      apiKey: server.keys.paid,
      fetch: counting.fetch,
      retry: { retries: 3 },
      sleep: async (ms) => {
        waits.push(ms);
        server.clock.now += 5 * SECOND;
      },
    });
    const err = await client.get('ORBIT').catch((e: unknown) => e);
    expect(isIpokitApiError(err, 'ERR:RATELIMIT')).toBe(true);
    expect((err as IpokitApiError).meta).toEqual({ quotaPerMinute: 2, expiresIn: 25, window: 'minute', quota: 2 });
    expect(counting.retryAfter).toEqual([40, 35, 30, 25]);
    expect(waits).toEqual([40, 35, 30].map((s) => s * SECOND));
    expect(counting.calls).toHaveLength(4);
  });

  it('an abort during the wait rejects with the signal’s reason and sends nothing more', async () => {
    server.clock.now += 120 * SECOND;
    await fillWindow(server.keys.paid);
    const counting = countingFetch();
    const controller = new AbortController();
    // The real sleep: 40 s, cut short by the abort.
    const client = createClient({ baseUrl: server.baseUrl, apiKey: server.keys.paid, fetch: counting.fetch });
    setTimeout(() => controller.abort(new Error('navigated away')), 50);
    const started = Date.now();
    await expect(client.list({ status: 'open', signal: controller.signal })).rejects.toThrow('navigated away');
    expect(Date.now() - started).toBeLessThan(5 * SECOND);
    expect(counting.retryAfter).toEqual([40]);
    expect(counting.calls).toHaveLength(1);
  });
});
