/**
 * Unit tests of the client with a fake fetch: the requests it sends (URL, encoding,
 * headers), how it reads answers and errors, retry after 429, aborts, and paging. The
 * same client runs against real Express and Koa servers in http.test.ts.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { type ErrorCode } from '@ipokit/core';
import { decodeComponent, decodeQueryComponent, parseQuery, routePath } from '@ipokit/core/backend';
import {
  createClient,
  DEFAULT_MAX_DELAY_MS,
  IpokitApiError,
  isIpokitApiError,
  type ApiErrorCode,
  type ApiErrorMeta,
  type ClientOptions,
  type ClientWarning,
  type ErrorBody,
  type FetchInitLike,
  type GmpSeries,
  type Ipo,
  type IpoStatus,
  type ListResponse,
  type RateLimitMeta,
  type WaitInfo,
} from './index.js';

const BASE = 'https://api.example.com/ipos';
const KEY = 'ipk_SECRETsecretSECRETsecret012345';

interface Call {
  url: string;
  init: FetchInitLike;
}

type Answer = Response | Error | ((call: Call) => Response | Promise<Response>);

/** A fetch that records its calls and plays `answers` in turn (the last one repeats). */
function fakeFetch(...answers: Answer[]): { fetch: ClientOptions['fetch'] & {}; calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    fetch: async (url, init) => {
      const call = { url, init };
      calls.push(call);
      const answer = answers[Math.min(calls.length - 1, answers.length - 1)];
      if (answer === undefined) throw new Error('no answer');
      if (answer instanceof Error) throw answer;
      if (typeof answer === 'function') return answer(call);
      return answer.clone();
    },
  };
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

function errorBody(status: number, code: string, detail: string, meta?: ErrorBody['meta']): ErrorBody {
  const body: ErrorBody = { status: String(status), title: 'Some Title', detail, code };
  if (meta !== undefined) body.meta = meta;
  return body;
}

const RATE_LIMITED = (retryAfter: string | null, expiresIn = 9): Response =>
  json(
    errorBody(429, 'ERR:RATELIMIT', 'The per-minute allowance of 6 requests is used up.', { quotaPerMinute: 6, expiresIn } as RateLimitMeta as ErrorBody['meta']), // an older server's meta
    429,
    retryAfter === null ? {} : { 'retry-after': retryAfter },
  );

const IPO = { id: '1', name: 'A' } as unknown as Ipo;

function listPage(page: number, totalPages: number, ids: string[], count = 0): ListResponse {
  return {
    meta: { count, countOnPage: ids.length, totalPages, page, limit: 2 },
    ipos: ids.map((id) => ({ ...IPO, id })),
  };
}

const noSleep = async (): Promise<void> => {};

/** The request as the server reads it (docs/spec.md#requests): after the URL parser, then its decoding. */
function asServerReads(url: string): { route: ReturnType<typeof routePath>; identifier: string | null; query: Map<string, string | null> } {
  const u = new URL(url);
  expect(u.pathname.startsWith('/ipos')).toBe(true);
  const route = routePath(u.pathname.slice('/ipos'.length));
  const identifier = route.kind === 'ipo' || route.kind === 'gmp' ? decodeComponent(route.rawIdentifier) : null;
  const query = new Map<string, string | null>();
  for (const [name, values] of parseQuery(u.search.slice(1))) {
    expect(values).toHaveLength(1);
    query.set(name, decodeQueryComponent(values[0]!));
  }
  return { route, identifier, query };
}

describe('requests', () => {
  it('GET with accept, x-api-key and the extra headers; no key header without apiKey', async () => {
    const withKey = fakeFetch(json({ ipo: IPO }));
    await createClient({ baseUrl: BASE, apiKey: KEY, fetch: withKey.fetch, headers: { 'x-trace': 'abc', 'X-Api-Key': 'ignored' } }).get('ORBIT');
    expect(withKey.calls[0]!.init.method).toBe('GET');
    expect(withKey.calls[0]!.init.headers).toEqual({ 'x-trace': 'abc', accept: 'application/json', 'x-api-key': KEY });

    const keyless = fakeFetch(json(listPage(1, 1, ['a'])));
    await createClient({ baseUrl: BASE, fetch: keyless.fetch }).list({ status: 'open' });
    expect(keyless.calls[0]!.init.headers).toEqual({ accept: 'application/json' });
    // An empty key means no key, as the server reads it.
    const empty = fakeFetch(json(listPage(1, 1, ['a'])));
    await createClient({ baseUrl: BASE, apiKey: '', fetch: empty.fetch, headers: { Accept: 'application/json, */*' } }).list({ status: 'open' });
    expect(empty.calls[0]!.init.headers).toEqual({ Accept: 'application/json, */*' });
  });

  it('builds the three routes under baseUrl, with or without a trailing slash, absolute or relative', async () => {
    for (const baseUrl of [BASE, `${BASE}/`, `${BASE}//`]) {
      const f = fakeFetch(json(listPage(1, 1, [])), json({ ipo: IPO }), json({ series: [], meta: {} }));
      const client = createClient({ baseUrl, fetch: f.fetch });
      await client.list({ status: 'listed' });
      await client.get('ORBIT');
      await client.gmp('ORBIT');
      expect(f.calls.map((c) => c.url)).toEqual([`${BASE}?status=listed`, `${BASE}/ORBIT`, `${BASE}/ORBIT/gmp`]);
    }
    const relative = fakeFetch(json({ ipo: IPO }));
    await createClient({ baseUrl: '/api/ipos/', fetch: relative.fetch }).get('x');
    expect(relative.calls[0]!.url).toBe('/api/ipos/x');
  });

  it('sends every list parameter in the interface order; arrays comma-separated; undefined left out', async () => {
    const f = fakeFetch(json(listPage(3, 5, [])));
    // The fake page says limit 2: no warning about the 25 asked here (see the warning tests).
    const client = createClient({ baseUrl: BASE, fetch: f.fetch, onWarning: false });
    await client.list({
      includeGmp: false,
      limit: 25,
      page: 3,
      year: 2026,
      endDate: '2026-12-31',
      startDate: '2026-01-01',
      source: 'bse',
      type: ['EQ', 'SME'],
      status: 'closed',
    });
    expect(f.calls[0]!.url).toBe(
      `${BASE}?status=closed&type=EQ%2CSME&source=bse&startDate=2026-01-01&endDate=2026-12-31&year=2026&page=3&limit=25&includeGmp=false`,
    );
    await client.list({ status: 'open', type: 'DEBT', year: '2025', includeGmp: true, page: undefined });
    expect(f.calls[1]!.url).toBe(`${BASE}?status=open&type=DEBT&year=2025&includeGmp=true`);
    await client.get('ORBIT', { includeGmp: true }).catch(() => undefined);
    expect(f.calls[2]!.url).toBe(`${BASE}/ORBIT?includeGmp=true`);
    await client.gmp('ORBIT', { to: '2026-11-30', from: '2026-11-01', field: 'median', interval: '5m' }).catch(() => undefined);
    expect(f.calls[3]!.url).toBe(`${BASE}/ORBIT/gmp?interval=5m&field=median&from=2026-11-01&to=2026-11-30`);
    await client.subscription('ORBIT', { to: '2026-11-30', from: '2026-11-01' }).catch(() => undefined);
    expect(f.calls[4]!.url).toBe(`${BASE}/ORBIT/subscription?from=2026-11-01&to=2026-11-30`);
    await client.subscription('R&D').catch(() => undefined);
    expect(f.calls[5]!.url).toBe(`${BASE}/R%26D/subscription`);
    await client.list({ status: 'open', q: 'orbit 100%_' }).catch(() => undefined);
    expect(f.calls[6]!.url).toBe(`${BASE}?status=open&q=orbit%20100%25_`);
  });

  it('property: any identifier and any query value reach the server exactly as given', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => s.isWellFormed());
    await fc.assert(
      fc.asyncProperty(text.filter((s) => s !== '' && s !== '.' && s !== '..'), text, text, async (identifier, from, to) => {
        const f = fakeFetch(json({ series: [], meta: {} }), json({ ipo: IPO }));
        const client = createClient({ baseUrl: BASE, fetch: f.fetch });
        await client.gmp(identifier, { from, to });
        await client.get(identifier);
        const series = asServerReads(f.calls[0]!.url);
        expect(series.route.kind).toBe('gmp');
        expect(series.identifier).toBe(identifier);
        expect(series.query).toEqual(new Map([['from', from], ['to', to]]));
        const one = asServerReads(f.calls[1]!.url);
        expect(one.route.kind).toBe('ipo');
        expect(one.identifier).toBe(identifier);
      }),
      { numRuns: 300 },
    );
    // The characters that mean something in a URL, one by one.
    for (const c of ['/', '?', '#', '&', '=', '+', '%', ' ', '%2F', '%zz', '\\', ';', ',', ':', '@', '"', "'", '<', '>', '\n', '\u00e9', '\u{1D538}']) {
      const f = fakeFetch(json(listPage(1, 1, [])));
      await createClient({ baseUrl: BASE, fetch: f.fetch }).list({ status: c as IpoStatus, startDate: `a${c}b` });
      expect(asServerReads(f.calls[0]!.url).query).toEqual(new Map([['status', c], ['startDate', `a${c}b`]]));
    }
  });

  it('refuses an identifier no URL can carry, and text that is not valid Unicode, before any request', async () => {
    const f = fakeFetch(json({ ipo: IPO }));
    const client = createClient({ baseUrl: BASE, fetch: f.fetch });
    await expect(client.get('')).rejects.toThrow(new TypeError('The identifier must be a non-empty string: an IPO id, symbol or slug.'));
    await expect(client.gmp('..')).rejects.toThrow(/cannot be sent in a URL/);
    await expect(client.get('.')).rejects.toThrow(TypeError);
    await expect(client.get('a\uD800')).rejects.toThrow(/lone surrogate/);
    await expect(client.list({ status: 'open', startDate: '\uDC00' })).rejects.toThrow(/startDate holds a lone surrogate/);
    expect(f.calls).toHaveLength(0);
  });

  it('uses globalThis.fetch when none is given, looked up at each call', async () => {
    const original = globalThis.fetch;
    const f = fakeFetch(json({ ipo: IPO }));
    try {
      const client = createClient({ baseUrl: BASE });
      globalThis.fetch = f.fetch as unknown as typeof fetch;
      await expect(client.get('ORBIT')).resolves.toEqual(IPO);
      expect(f.calls[0]!.url).toBe(`${BASE}/ORBIT`);
    } finally {
      globalThis.fetch = original;
    }
  });

  it('checks onWait and onWarning', () => {
    expect(() => createClient({ baseUrl: BASE, onWait: 'log' as unknown as () => void })).toThrow(new TypeError('createClient: onWait must be a function.'));
    expect(() => createClient({ baseUrl: BASE, onWarning: true as unknown as false })).toThrow(
      new TypeError('createClient: onWarning must be a function, or false for no warning.'),
    );
    expect(() => createClient({ baseUrl: BASE, onWait: () => {}, onWarning: false })).not.toThrow();
  });

  it('checks its options with clear errors', () => {
    const bad: Array<[unknown, RegExp]> = [
      [undefined, /needs an options object/],
      [{}, /baseUrl must be the URL the API is mounted at/],
      [{ baseUrl: '' }, /baseUrl must be/],
      [{ baseUrl: `${BASE}?x=1` }, /must not hold a query/],
      [{ baseUrl: BASE, fetch: 'no' }, /fetch must be a function/],
      [{ baseUrl: BASE, sleep: 1 }, /sleep must be a function/],
      [{ baseUrl: BASE, apiKey: 5 }, /apiKey must be a string/],
      [{ baseUrl: BASE, headers: { a: 1 } }, /header "a" must be a string/],
      [{ baseUrl: BASE, retry: { retries: -1 } }, /retry.retries must be a whole number >= 0; got -1/],
      [{ baseUrl: BASE, retry: { retries: 1.5 } }, /retry.retries/],
      [{ baseUrl: BASE, retry: { maxDelayMs: Number.NaN } }, /retry.maxDelayMs must be a finite number/],
      [{ baseUrl: BASE, retry: { maxDelayMs: Infinity } }, /retry.maxDelayMs/],
    ];
    for (const [options, message] of bad) expect(() => createClient(options as ClientOptions), String(message)).toThrow(message);
  });
});

describe('answers and errors', () => {
  it('resolves to the body as sent: the list response, the IPO of { ipo }, the series', async () => {
    const page = listPage(1, 1, ['x', 'y'], 2);
    const series: GmpSeries = { ipoId: '1', symbol: null, interval: 'daily', field: 'mean', series: [{ timestamp: '2026-11-02T00:00:00.000Z', price: 1.01 }], meta: { from: 'a', to: 'b', count: 1 } };
    const f = fakeFetch(json(page), json({ ipo: IPO }), json(series));
    const client = createClient({ baseUrl: BASE, fetch: f.fetch });
    expect(await client.list({ status: 'open' })).toEqual(page);
    expect(await client.get('1')).toEqual(IPO);
    expect(await client.gmp('1')).toEqual(series);
  });

  it('throws IpokitApiError with the body of the contract, never the key in its message', async () => {
    const body = errorBody(400, 'ERR:BADPARAM', 'year must be four digits, e.g. 2024; got "20x".', { parameter: 'year' });
    const f = fakeFetch(json(body, 400, { 'x-other': '1' }));
    const err = await createClient({ baseUrl: BASE, apiKey: KEY, fetch: f.fetch })
      .list({ status: 'open', year: '20x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IpokitApiError);
    expect(err).toBeInstanceOf(Error);
    expect(isIpokitApiError(err)).toBe(true);
    expect(isIpokitApiError(err, 'ERR:BADPARAM')).toBe(true);
    expect(isIpokitApiError(err, 'ERR:NOTFOUND')).toBe(false);
    const e = err as IpokitApiError;
    expect(e.name).toBe('IpokitApiError');
    expect([e.status, e.code, e.title, e.detail]).toEqual([400, 'ERR:BADPARAM', 'Some Title', body.detail]);
    expect(e.meta).toEqual({ parameter: 'year' });
    expect(e.body).toEqual(body);
    expect(e.headers?.get('x-other')).toBe('1');
    expect(e.message).toBe(`${body.detail} (HTTP 400 ERR:BADPARAM)`);
    expect(`${e.message} ${e.stack ?? ''} ${JSON.stringify(e)}`).not.toContain(KEY);
    expect(f.calls).toHaveLength(1);
  });

  it('every code of the contract comes through; anything else is ERR:UNEXPECTED with the body kept', async () => {
    const codes: ApiErrorCode[] = ['ERR:BADPARAM', 'ERR:INVLDKEY', 'ERR:PLAN', 'ERR:NOTFOUND', 'ERR:METHOD', 'ERR:URITOOLONG', 'ERR:RATELIMIT', 'ERR:INTERNAL', 'ERR:UNAVAILABLE'];
    for (const code of codes) {
      const f = fakeFetch(json(errorBody(503, code, 'd'), 503));
      const e = (await createClient({ baseUrl: BASE, fetch: f.fetch, retry: false }).get('x').catch((x: unknown) => x)) as IpokitApiError;
      expect(e.code).toBe(code);
      expect(e.meta).toBeUndefined();
    }
    const unexpected: Array<[Response, unknown]> = [
      [new Response('<html>Bad Gateway</html>', { status: 502, statusText: 'Bad Gateway' }), '<html>Bad Gateway</html>'],
      [json({ error: 'nope' }, 500), { error: 'nope' }],
      [json(errorBody(418, 'ERR:TEAPOT', 'd'), 418), errorBody(418, 'ERR:TEAPOT', 'd')],
      [json(['ERR:NOTFOUND'], 404), ['ERR:NOTFOUND']],
      [new Response('', { status: 401 }), ''],
    ];
    for (const [response, body] of unexpected) {
      const f = fakeFetch(response);
      const e = (await createClient({ baseUrl: BASE, apiKey: KEY, fetch: f.fetch }).get('x').catch((x: unknown) => x)) as IpokitApiError;
      expect(isIpokitApiError(e, 'ERR:UNEXPECTED')).toBe(true);
      expect(e.status).toBe(response.status);
      expect(e.body).toEqual(body);
      expect(e.title).toBe(response.statusText === '' ? `HTTP ${response.status}` : response.statusText);
      expect(e.detail).toMatch(new RegExp(`^The server answered ${response.status} without the API's error body`));
      expect(e.message).not.toContain(KEY);
      expect(f.calls).toHaveLength(1);
    }
  });

  it('a 2xx that is not JSON, or JSON of the wrong shape, is ERR:UNEXPECTED', async () => {
    const cases: Array<[(c: ReturnType<typeof createClient>) => Promise<unknown>, Response]> = [
      [(c) => c.list({ status: 'open' }), new Response('<!doctype html><p>the app</p>', { status: 200 })],
      [(c) => c.list({ status: 'open' }), json({ ipos: [] })],
      [(c) => c.get('x'), json(IPO)],
      [(c) => c.get('x'), json(null)],
      [(c) => c.gmp('x'), json({ ipo: IPO })],
    ];
    for (const [call, response] of cases) {
      const f = fakeFetch(response);
      const e = (await call(createClient({ baseUrl: BASE, fetch: f.fetch })).catch((x: unknown) => x)) as IpokitApiError;
      expect(isIpokitApiError(e, 'ERR:UNEXPECTED')).toBe(true);
      expect(e.status).toBe(200);
      expect(e.detail).toMatch(/^The server answered 200 with (a body that is not JSON|JSON that is not)/);
    }
  });

  it('network failures and aborts reject with fetch’s own error', async () => {
    const failure = new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') });
    const f = fakeFetch(failure);
    await expect(createClient({ baseUrl: BASE, fetch: f.fetch }).get('x')).rejects.toBe(failure);
    const aborted = new DOMException('This operation was aborted', 'AbortError');
    await expect(createClient({ baseUrl: BASE, fetch: fakeFetch(aborted).fetch }).get('x')).rejects.toBe(aborted);
  });

  it('isIpokitApiError works across copies of the package and refuses look-alikes', () => {
    const copy = Object.assign(new Error('x'), { name: 'IpokitApiError', code: 'ERR:PLAN' });
    expect(isIpokitApiError(copy, 'ERR:PLAN')).toBe(true);
    expect(isIpokitApiError({ name: 'IpokitApiError', code: 'ERR:PLAN' })).toBe(false);
    expect(isIpokitApiError(new Error('x'))).toBe(false);
    expect(isIpokitApiError(null)).toBe(false);
  });
});

describe('retry after 429', () => {
  function sleeper(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
    const waits: number[] = [];
    return { waits, sleep: async (ms) => void waits.push(ms) };
  }

  it('waits Retry-After seconds, else meta.expiresIn, else 1 s, then tries again', async () => {
    const cases: Array<[Response, number]> = [
      [RATE_LIMITED('7', 9), 7_000],
      [RATE_LIMITED(' 0 ', 9), 0],
      [RATE_LIMITED(null, 9), 9_000],
      [RATE_LIMITED('soon', 4), 4_000],
      [json({ oops: true }, 429), 1_000],
      [new Response('slow down', { status: 429 }), 1_000],
      [RATE_LIMITED(new Date(Date.now() + 3_000).toUTCString(), 99), 3_000],
    ];
    for (const [first, expected] of cases) {
      const { sleep, waits } = sleeper();
      const f = fakeFetch(first, json({ ipo: IPO }));
      await expect(createClient({ baseUrl: BASE, fetch: f.fetch, sleep }).get('x')).resolves.toEqual(IPO);
      expect(waits).toHaveLength(1);
      // An HTTP date is read against the wall clock, in whole seconds: the date 3 s ahead,
      // cut to its second and read a moment later, is between 2 and 3 s ahead, less that moment.
      if (expected === 3_000) expect(waits[0]!).toBeGreaterThan(1_500);
      expect(waits[0]!).toBeLessThanOrEqual(expected);
      if (expected !== 3_000) expect(waits[0]).toBe(expected);
      expect(f.calls).toHaveLength(2);
      expect(f.calls[1]).toEqual(f.calls[0]);
    }
  });

  it('caps each wait at maxDelayMs (default 60 s)', async () => {
    const a = sleeper();
    await createClient({ baseUrl: BASE, fetch: fakeFetch(RATE_LIMITED('3600'), json({ ipo: IPO })).fetch, sleep: a.sleep }).get('x');
    expect(a.waits).toEqual([DEFAULT_MAX_DELAY_MS]);
    const b = sleeper();
    await createClient({ baseUrl: BASE, fetch: fakeFetch(RATE_LIMITED('30'), json({ ipo: IPO })).fetch, sleep: b.sleep, retry: { maxDelayMs: 2_500 } }).get('x');
    expect(b.waits).toEqual([2_500]);
  });

  it('retries at most `retries` times (default 2), then throws the 429', async () => {
    for (const [retry, attempts] of [[undefined, 3], [{ retries: 0 }, 1], [{ retries: 4 }, 5], [false, 1]] as const) {
      const { sleep, waits } = sleeper();
      const f = fakeFetch(RATE_LIMITED('2'));
      const options: ClientOptions = { baseUrl: BASE, fetch: f.fetch, sleep };
      if (retry !== undefined) options.retry = retry;
      const e = (await createClient(options).get('x').catch((x: unknown) => x)) as IpokitApiError;
      expect(isIpokitApiError(e, 'ERR:RATELIMIT')).toBe(true);
      expect(e.status).toBe(429);
      expect(e.meta).toEqual({ quotaPerMinute: 6, expiresIn: 9 });
      expect(e.headers?.get('retry-after')).toBe('2');
      expect(f.calls).toHaveLength(attempts);
      expect(waits).toEqual(Array.from({ length: attempts - 1 }, () => 2_000));
    }
  });

  it('never retries anything but a 429', async () => {
    for (const status of [400, 401, 403, 404, 500, 503]) {
      const { sleep, waits } = sleeper();
      const f = fakeFetch(json(errorBody(status, 'ERR:UNAVAILABLE', 'd'), status, { 'retry-after': '1' }), json({ ipo: IPO }));
      await expect(createClient({ baseUrl: BASE, fetch: f.fetch, sleep }).get('x')).rejects.toThrow(IpokitApiError);
      expect(f.calls).toHaveLength(1);
      expect(waits).toEqual([]);
    }
  });

  it('an abort during the wait rejects at once with the signal’s reason, even when sleep ignores it', async () => {
    const controller = new AbortController();
    const slept: Array<AbortSignal | undefined> = [];
    const f = fakeFetch(RATE_LIMITED('30'), json({ ipo: IPO }));
    const sleep = (_ms: number, signal?: AbortSignal): Promise<void> => {
      slept.push(signal);
      queueMicrotask(() => controller.abort(new Error('user gave up')));
      return new Promise(() => {}); // never ends by itself
    };
    await expect(createClient({ baseUrl: BASE, fetch: f.fetch, sleep }).get('x', { signal: controller.signal })).rejects.toThrow('user gave up');
    expect(slept).toEqual([controller.signal]);
    expect(f.calls).toHaveLength(1);
    expect(f.calls[0]!.init.signal).toBe(controller.signal);
  });

  it('the default sleep really waits, and stops at an abort', async () => {
    const f = fakeFetch(RATE_LIMITED(null), json({ ipo: IPO }));
    const started = Date.now();
    await createClient({ baseUrl: BASE, fetch: f.fetch, retry: { maxDelayMs: 50 } }).get('x');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const g = fakeFetch(RATE_LIMITED('60'), json({ ipo: IPO }));
    const t0 = Date.now();
    const err = await createClient({ baseUrl: BASE, fetch: g.fetch }).gmp('x', { signal: controller.signal }).catch((e: unknown) => e);
    expect((err as DOMException).name).toBe('AbortError');
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(g.calls).toHaveLength(1);

    // Already aborted: no wait at all.
    const h = fakeFetch(RATE_LIMITED('60'));
    const done = AbortSignal.abort(new Error('before'));
    await expect(createClient({ baseUrl: BASE, fetch: h.fetch }).get('x', { signal: done })).rejects.toThrow('before');
  });

  it('onWait is told each wait before it: ms, the retry that follows, the URL and the 429’s meta', async () => {
    const events: string[] = [];
    const infos: WaitInfo[] = [];
    const newer = json(
      errorBody(429, 'ERR:RATELIMIT', 'The GMP window is full.', { quotaPerMinute: 3, expiresIn: 5, window: 'gmp', quota: 3 } as RateLimitMeta as ErrorBody['meta']),
      429,
    );
    const f = fakeFetch(RATE_LIMITED('7', 9), newer, json({ oops: true }, 429), json({ series: [], meta: {} }));
    const client = createClient({
      baseUrl: BASE,
      apiKey: KEY,
      fetch: f.fetch,
      retry: { retries: 3, maxDelayMs: 6_000 },
      sleep: async (ms) => void events.push(`sleep ${ms}`),
      onWait: (info) => {
        infos.push(info);
        events.push(`onWait ${info.ms}`);
      },
    });
    await client.gmp('ORBIT', { interval: 'hourly' });
    expect(events).toEqual(['onWait 6000', 'sleep 6000', 'onWait 5000', 'sleep 5000', 'onWait 1000', 'sleep 1000']);
    const url = `${BASE}/ORBIT/gmp?interval=hourly`;
    expect(infos.map(({ error, ...rest }) => rest)).toEqual([
      { ms: 6_000, attempt: 1, retries: 3, url, status: 429, quotaPerMinute: 6, expiresIn: 9 },
      { ms: 5_000, attempt: 2, retries: 3, url, status: 429, quotaPerMinute: 3, expiresIn: 5, window: 'gmp', quota: 3 },
      // A 429 without the API's body: no meta to tell.
      { ms: 1_000, attempt: 3, retries: 3, url, status: 429 },
    ]);
    expect(infos.map((i) => [i.error.code, i.error.status])).toEqual([
      ['ERR:RATELIMIT', 429],
      ['ERR:RATELIMIT', 429],
      ['ERR:UNEXPECTED', 429],
    ]);
    expect(JSON.stringify(infos.map(({ error, ...rest }) => rest))).not.toContain(KEY);
  });

  it('onWait is not called for the 429 that is thrown, nor with retry off; an exception in it rejects the call', async () => {
    for (const retry of [{ retries: 1 }, false] as const) {
      const infos: WaitInfo[] = [];
      const f = fakeFetch(RATE_LIMITED('2'));
      const err = await createClient({ baseUrl: BASE, fetch: f.fetch, sleep: noSleep, retry, onWait: (i) => void infos.push(i) })
        .list({ status: 'open' })
        .catch((e: unknown) => e);
      expect(isIpokitApiError(err, 'ERR:RATELIMIT')).toBe(true);
      expect(infos.map((i) => i.attempt)).toEqual(retry === false ? [] : [1]);
    }
    const slept: number[] = [];
    const f = fakeFetch(RATE_LIMITED('2'), json({ ipo: IPO }));
    const failing = createClient({
      baseUrl: BASE,
      fetch: f.fetch,
      sleep: async (ms) => void slept.push(ms),
      onWait: () => {
        throw new Error('logger broke');
      },
    });
    await expect(failing.get('x')).rejects.toThrow('logger broke');
    expect([f.calls.length, slept]).toEqual([1, []]);
  });
});

describe('warning when the plan caps the page size', () => {
  afterEach(() => vi.restoreAllMocks());

  /** A server whose plan caps every page at `cap`: `count` IPOs. */
  function cappedFetch(cap: number, count: number, extra: Record<string, unknown> = {}) {
    return fakeFetch((call) => {
      const page = Number(new URL(call.url).searchParams.get('page') ?? 1);
      const totalPages = Math.ceil(count / cap);
      const ids = Array.from({ length: Math.max(0, Math.min(cap, count - (page - 1) * cap)) }, (_, i) => `${(page - 1) * cap + i}`);
      return json({ meta: { count, countOnPage: ids.length, totalPages, page, limit: cap, ...extra }, ipos: ids.map((id) => ({ ...IPO, id })) });
    });
  }

  it('tells onWarning once per client: the cap, the limit asked and how many pages it makes', async () => {
    const warnings: ClientWarning[] = [];
    const f = cappedFetch(1, 5);
    const client = createClient({ baseUrl: BASE, fetch: f.fetch, onWarning: (w) => void warnings.push(w) });
    const ids: string[] = [];
    for await (const ipo of client.all({ status: 'listed', limit: 10 })) ids.push(ipo.id);
    expect(ids).toEqual(['0', '1', '2', '3', '4']);
    await client.list({ status: 'open', limit: 100 });
    expect(warnings).toEqual([
      {
        code: 'limit-capped',
        asked: 10,
        limit: 1,
        count: 5,
        totalPages: 5,
        message:
          'The plan of this API key caps the page size at 1 (limit 10 was asked; meta.limit is the effective limit): the 5 matching IPOs take 5 pages, one request each, instead of 1.',
      },
    ]);
    // Another client warns again.
    await createClient({ baseUrl: BASE, fetch: cappedFetch(100, 138).fetch, onWarning: (w) => void warnings.push(w) }).list({ status: 'listed', limit: 250 });
    expect(warnings[1]!.message).toBe(
      'The plan of this API key caps the page size at 100 (limit 250 was asked; meta.limit is the effective limit): the 138 matching IPOs take 2 pages, one request each, instead of 1.',
    );
  });

  it('says nothing when the limit is met, when none was asked, and for the keyless answer', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const warnings: ClientWarning[] = [];
    const onWarning = (w: ClientWarning): void => void warnings.push(w);
    await createClient({ baseUrl: BASE, fetch: cappedFetch(3, 9).fetch, onWarning }).list({ status: 'open', limit: 3 });
    await createClient({ baseUrl: BASE, fetch: cappedFetch(3, 9).fetch, onWarning }).list({ status: 'open', limit: 2 });
    await createClient({ baseUrl: BASE, fetch: cappedFetch(1, 9).fetch, onWarning }).list({ status: 'open' });
    const keyless = cappedFetch(1, 9, { info: 'To get all IPOs, please provide a valid API key.' });
    await createClient({ baseUrl: BASE, fetch: keyless.fetch, onWarning }).list({ status: 'open', limit: 10 });
    await createClient({ baseUrl: BASE, fetch: cappedFetch(1, 9).fetch, onWarning: false }).list({ status: 'open', limit: 10 });
    expect(warnings).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
  });

  it('by default writes the message once with console.warn', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const client = createClient({ baseUrl: BASE, fetch: cappedFetch(1, 0).fetch });
    await client.list({ status: 'open', limit: 10 });
    await client.list({ status: 'open', limit: 10 });
    expect(warn.mock.calls).toEqual([
      ['@ipokit/client: The plan of this API key caps the page size at 1 (limit 10 was asked; meta.limit is the effective limit): a page holds at most 1 IPO, one request each (the 0 IPOs of this list fit either way).'],
    ]);
  });
});

describe('pages and all', () => {
  it('walks from the first page asked for to the last, then stops', async () => {
    const f = fakeFetch((call) => {
      const page = Number(new URL(call.url).searchParams.get('page'));
      return json(listPage(page, 4, [`p${page}a`, `p${page}b`], 8));
    });
    const client = createClient({ baseUrl: BASE, fetch: f.fetch });
    const seen: number[] = [];
    for await (const page of client.pages({ status: 'listed', limit: 2, page: 2 })) seen.push(page.meta.page);
    expect(seen).toEqual([2, 3, 4]);
    const ids: string[] = [];
    for await (const ipo of client.all({ status: 'listed', limit: 2 })) ids.push(ipo.id);
    expect(ids).toEqual(['p1a', 'p1b', 'p2a', 'p2b', 'p3a', 'p3b', 'p4a', 'p4b']);
    expect(f.calls.map((c) => new URL(c.url).searchParams.get('limit'))).toEqual(Array.from({ length: 7 }, () => '2'));
  });

  it('yields one empty page when nothing matches or the page is past the end', async () => {
    for (const [asked, totalPages] of [[1, 0], [9, 3]] as const) {
      const f = fakeFetch(json(listPage(asked, totalPages, [])));
      const pages: ListResponse[] = [];
      for await (const page of createClient({ baseUrl: BASE, fetch: f.fetch }).pages({ status: 'open', page: asked })) pages.push(page);
      expect(pages.map((p) => p.meta.page)).toEqual([asked]);
      expect(f.calls).toHaveLength(1);
    }
  });

  it('stops after the keyless partial answer (always page 1) instead of looping', async () => {
    const f = fakeFetch(json({ meta: { count: 25, countOnPage: 1, totalPages: 25, page: 1, limit: 1, info: 'To get all IPOs, please provide a valid API key.' }, ipos: [IPO] }));
    const ids: string[] = [];
    for await (const ipo of createClient({ baseUrl: BASE, fetch: f.fetch }).all({ status: 'open', page: 2 })) ids.push(ipo.id);
    expect(ids).toEqual(['1']);
    expect(f.calls).toHaveLength(1);
  });

  it('all() yields an IPO once even when a change of the data moves it onto the next page', async () => {
    const f = fakeFetch(json(listPage(1, 2, ['a', 'b'], 4)), json(listPage(2, 2, ['b', 'c'], 4)));
    const ids: string[] = [];
    for await (const ipo of createClient({ baseUrl: BASE, fetch: f.fetch }).all({ status: 'open' })) ids.push(ipo.id);
    expect(ids).toEqual(['a', 'b', 'c']);
  });

  it('passes the signal and retries on every page', async () => {
    const controller = new AbortController();
    const f = fakeFetch(json(listPage(1, 2, ['a'])), RATE_LIMITED('1'), json(listPage(2, 2, ['b'])));
    const ids: string[] = [];
    for await (const ipo of createClient({ baseUrl: BASE, fetch: f.fetch, sleep: noSleep }).all({ status: 'open', signal: controller.signal })) ids.push(ipo.id);
    expect(ids).toEqual(['a', 'b']);
    expect(f.calls.map((c) => c.init.signal)).toEqual([controller.signal, controller.signal, controller.signal]);
  });
});

describe('types', () => {
  it('resolve to the types of @ipokit/core', () => {
    const client = createClient({ baseUrl: BASE });
    expectTypeOf(client.list).returns.resolves.toEqualTypeOf<ListResponse>();
    expectTypeOf(client.get).returns.resolves.toEqualTypeOf<Ipo>();
    expectTypeOf(client.gmp).returns.resolves.toEqualTypeOf<GmpSeries>();
    expectTypeOf(client.all).returns.toEqualTypeOf<AsyncGenerator<Ipo, void, undefined>>();
    expectTypeOf<ApiErrorCode>().toEqualTypeOf<Exclude<ErrorCode, 'ERR:DATASET' | 'ERR:TOOLARGE' | 'ERR:MEDIATYPE'>>();
    expectTypeOf<IpokitApiError['meta']>().toEqualTypeOf<ApiErrorMeta | undefined>();
    // Every meta of @ipokit/core fits; a 429's window and quota (newer servers) are optional.
    expectTypeOf<ErrorBody['meta']>().toExtend<IpokitApiError['meta']>();
    expectTypeOf<{ quotaPerMinute: number | null; expiresIn: number; window: string; quota: number }>().toExtend<RateLimitMeta>();
    expectTypeOf<{ quotaPerMinute: number; expiresIn: number }>().toExtend<RateLimitMeta>();
    expectTypeOf<WaitInfo['window']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<WaitInfo['quota']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<NonNullable<ClientOptions['onWarning']>>().toEqualTypeOf<((warning: ClientWarning) => void) | false>();
    // Any standard fetch can be passed in.
    expectTypeOf(fetch).toExtend<NonNullable<ClientOptions['fetch']>>();
  });
});
