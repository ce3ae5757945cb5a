/**
 * `@ipokit/client`: a typed, fetch-based client for the IPO API, for the hosted service and
 * for any app that mounts ipokit (docs/spec.md#list, #one-ipo, #gmp-series, #subscription-series, #errors). It needs only `fetch`, `AbortSignal` and
 * `setTimeout`, so it runs in browsers and in Node 20+.
 *
 * @example
 * ```ts
 * import { createClient } from '@ipokit/client';
 *
 * const ipos = createClient({ baseUrl: 'https://api.example.com/ipos', apiKey: process.env.IPOKIT_KEY });
 * const { meta, ipos: open } = await ipos.list({ status: 'open', type: ['EQ', 'SME'] });
 * for await (const ipo of ipos.all({ status: 'listed', year: 2026 })) console.log(ipo.symbol);
 * ```
 */
// Types only: the built .d.ts inlines them (see tsup.config.ts), so the published client needs
// @ipokit/core neither at run time nor for its types.
import type { ErrorBody, ErrorCode, Exchange, GmpField, GmpInterval, GmpSeries, GmpSnapshot, Ipo, IpoStatus, IpoType, ListingPrice, ListResponse, PriceBand, ScheduleEvent, SubscriptionCategory, SubscriptionPoint, SubscriptionSeries, SubscriptionSnapshot, SubscriptionTimes } from '@ipokit/core';

export type { ErrorBody, Exchange, GmpField, GmpInterval, GmpSeries, GmpSnapshot, Ipo, IpoStatus, IpoType, ListingPrice, ListResponse, PriceBand, ScheduleEvent, SubscriptionCategory, SubscriptionPoint, SubscriptionSeries, SubscriptionSnapshot, SubscriptionTimes };

/**
 * The `meta` of a 429 (`ERR:RATELIMIT`): the refusing window (`window`: `minute`, `hour`,
 * `day`, `gmp-minute` or `gmp-day`) and its `quota`, the seconds until it admits again
 * (`expiresIn`, as the `Retry-After` header), and `quotaPerMinute`, the per-minute quota of
 * that window's family (null when that minute window is off), which the hosted service
 * sends. Older servers send only `quotaPerMinute` and `expiresIn`.
 *
 * @example
 * ```ts
 * if (isIpokitApiError(err, 'ERR:RATELIMIT') && err.meta && 'expiresIn' in err.meta) {
 *   const meta: RateLimitMeta = err.meta;
 *   console.log(`the ${meta.window ?? 'minute'} window (${meta.quota ?? meta.quotaPerMinute}) is full: retry in ${meta.expiresIn} s`);
 * }
 * ```
 */
export interface RateLimitMeta {
  /** The per-minute quota of the refusing window's family; null when that minute window is off. */
  quotaPerMinute: number | null;
  /** Seconds until the window admits a request again. */
  expiresIn: number;
  /** Which window refused: `minute`, `hour`, `day`, `gmp-minute` or `gmp-day` (absent from older servers). */
  window?: string;
  /** The refusing window's quota (absent from older servers). */
  quota?: number;
}

/**
 * The `meta` of an error body: `{ parameter }` on a 400, {@link RateLimitMeta} on a 429.
 *
 * @example
 * ```ts
 * const meta: ApiErrorMeta | undefined = err.meta;
 * if (meta && 'parameter' in meta) console.log(`fix ${meta.parameter}`);
 * ```
 */
export type ApiErrorMeta = { parameter: string } | RateLimitMeta;

/** The codes of the contract's error bodies (docs/spec.md#errors). */
export type ApiErrorCode = Exclude<ErrorCode, 'ERR:DATASET' | 'ERR:TOOLARGE' | 'ERR:MEDIATYPE'>;

/**
 * The code of an {@link IpokitApiError}: one of the contract's codes, or `ERR:UNEXPECTED` when
 * the answer was not what the contract promises (a body that is not JSON, an error body
 * without a known code, e.g. from a proxy, or a 2xx body of the wrong shape).
 */
export type IpokitApiErrorCode = ApiErrorCode | 'ERR:UNEXPECTED';

/** The minimal response the client reads; the `Response` of any `fetch` has it. */
export interface FetchResponseLike {
  status: number;
  statusText?: string;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** What the client hands to `fetch`; any `RequestInit` accepts it. */
export interface FetchInitLike {
  method: 'GET';
  headers: Record<string, string>;
  signal?: AbortSignal;
}

/** A `fetch` function: `globalThis.fetch`, or anything with the same call shape. */
export type FetchLike = (url: string, init: FetchInitLike) => Promise<FetchResponseLike>;

/** Retry after 429 (see {@link ClientOptions.retry}). */
export interface RetryOptions {
  /** Retries after a 429 before the 429 is thrown. Default 2. */
  retries?: number;
  /** Longest single wait in milliseconds; a longer `Retry-After` is cut to it. Default 60,000. */
  maxDelayMs?: number;
}

/**
 * What {@link ClientOptions.onWait} is told before each wait: how long, which retry, and what
 * the refusing 429 said about its window.
 *
 * @example
 * ```ts
 * const onWait = (w: WaitInfo): void =>
 *   console.error(`429 (${w.quotaPerMinute ?? '?'}/min): retry ${w.attempt} of ${w.retries} in ${Math.ceil(w.ms / 1000)} s`);
 * const ipos = createClient({ baseUrl: 'http://localhost:3000/ipos', apiKey: process.env.IPOKIT_KEY, onWait });
 * ```
 */
export interface WaitInfo {
  /** How long the client waits now, in milliseconds (`Retry-After`, cut to `maxDelayMs`). */
  ms: number;
  /** The retry that follows the wait: 1 for the first, at most `retries`. */
  attempt: number;
  /** The most retries the call makes (`retry.retries`). */
  retries: number;
  /** The URL that is asked again (the key travels in a header, never here). */
  url: string;
  /** The status of the answer that is retried: 429. */
  status: number;
  /** `meta.quotaPerMinute` of the 429: the refusing window's quota per 60 s. */
  quotaPerMinute?: number;
  /** `meta.expiresIn` of the 429: seconds until the window admits again. */
  expiresIn?: number;
  /** `meta.window` of the 429 (newer servers): which window refused. */
  window?: string;
  /** `meta.quota` of the 429 (newer servers): the refusing window's quota. */
  quota?: number;
  /** The refused answer, as the call would have thrown it. */
  error: IpokitApiError;
}

/**
 * What {@link ClientOptions.onWarning} is told. `limit-capped`: a list answer's `meta.limit`
 * (the effective page size) is lower than the `limit` asked for, because the plan of the key
 * caps it (by default free 1, paid and pro 100), so a walk over every page takes more
 * requests than asked for. The server says so only through `meta.limit`.
 *
 * @example
 * ```ts
 * const ipos = createClient({
 *   baseUrl: 'http://localhost:3000/ipos',
 *   apiKey: process.env.IPOKIT_KEY,
 *   onWarning: (w: ClientWarning) => console.error(`${w.code}: ${w.message}`),
 * });
 * ```
 */
export interface ClientWarning {
  code: 'limit-capped';
  /** One sentence: the cap, and how many pages (requests) it makes. */
  message: string;
  /** The `limit` asked for. */
  asked: number;
  /** The effective limit, `meta.limit`. */
  limit: number;
  /** The matching IPOs, `meta.count`. */
  count: number;
  /** The pages at the effective limit, `meta.totalPages`. */
  totalPages: number;
}

/**
 * Options of {@link createClient}.
 *
 * @example
 * ```ts
 * const options: ClientOptions = {
 *   baseUrl: 'http://localhost:3000/ipos',
 *   apiKey: process.env.IPOKIT_KEY,
 *   retry: { retries: 2, maxDelayMs: 60_000 },
 *   onWait: ({ ms, attempt }) => console.error(`rate limited: retry ${attempt} in ${ms} ms`),
 *   onWarning: ({ message }) => console.error(message),
 * };
 * const ipos = createClient(options);
 * ```
 */
export interface ClientOptions {
  /**
   * The mount URL of the API, e.g. `https://api.example.com/ipos` or `http://localhost:3000/ipos`
   * (a trailing slash is tolerated). In a browser it may be a path such as `/ipos`.
   */
  baseUrl: string;
  /** Sent as the `x-api-key` header. Never appears in error messages. */
  apiKey?: string;
  /** Default `globalThis.fetch` (looked up at each call). */
  fetch?: FetchLike;
  /** Extra headers sent with every request (`x-api-key` comes from `apiKey`). */
  headers?: Record<string, string>;
  /**
   * Retry after a 429: wait `Retry-After` seconds (else the body's `meta.expiresIn`, else 1 s),
   * at most `maxDelayMs`, and try again, at most `retries` times; then the 429 is thrown.
   * `false` throws the first 429. Nothing but a 429 is ever retried. {@link onWait} sees
   * each wait.
   */
  retry?: RetryOptions | false;
  /** How the client waits before a retry (default `setTimeout`); tests inject their own. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Called before each wait for a retry (today only after a 429) with the wait in
   * milliseconds, the retry that follows, and the 429's `meta` (`quotaPerMinute`,
   * `expiresIn`, and on newer servers `window` and `quota`): see {@link WaitInfo}. Default
   * none: the client waits silently. Under the default limits (6 requests a minute) an
   * `all()` over many pages spends most of its time waiting: this shows it. An exception it
   * throws rejects the call.
   *
   * @example
   * ```ts
   * const ipos = createClient({
   *   baseUrl: 'http://localhost:3000/ipos',
   *   apiKey: process.env.IPOKIT_KEY,
   *   onWait: ({ ms, attempt, quotaPerMinute }) => console.error(`429 (${quotaPerMinute}/min): retry ${attempt} in ${Math.ceil(ms / 1000)} s`),
   * });
   * for await (const ipo of ipos.all({ status: 'listed', limit: 100 })) console.log(ipo.symbol);
   * ```
   */
  onWait?: (info: WaitInfo) => void;
  /**
   * Called at most once per client, the first time a list answer's `meta.limit` is lower
   * than the `limit` asked for: the plan of the key caps the page size (by default free 1,
   * paid and pro 100) and the server says so only through `meta.limit`. See
   * {@link ClientWarning}. Default: `console.warn` of the message; `false`: no warning. Not
   * called for the keyless answer, which says why in `meta.info`. An exception it throws
   * rejects the call.
   *
   * @example
   * ```ts
   * // A free key asking for 100 a page gets 1: the message says how many pages that makes.
   * const ipos = createClient({ baseUrl: 'http://localhost:3000/ipos', apiKey: process.env.IPOKIT_FREE_KEY, onWarning: (w) => console.error(w.message) });
   * await ipos.list({ status: 'listed', limit: 100 });
   * ```
   */
  onWarning?: ((warning: ClientWarning) => void) | false;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the request, and any wait before a retry, with the signal's reason. */
  signal?: AbortSignal;
}

/** Parameters of `GET /ipos` (docs/spec.md#list). Values are sent as given; the server checks them. */
export interface ListIposParams extends CallOptions {
  /** Required. */
  status: IpoStatus;
  /** One type or several (sent comma-separated). */
  type?: IpoType | readonly IpoType[];
  /** IPOs listing on this exchange. */
  source?: Exchange;
  /** `YYYY-MM-DD`: IPOs with startDate on or after it. */
  startDate?: string;
  /** `YYYY-MM-DD`: IPOs with endDate on or before it. */
  endDate?: string;
  /** Four digits: IPOs whose startDate falls in that year. */
  year?: number | string;
  /** IPOs whose name or symbol contains this text, ASCII letter case ignored (1 to 64 characters). */
  q?: string;
  /** From 1 (default 1). */
  page?: number;
  /** Per page (default 3); the server clamps it to the plan's maximum and reports it in `meta.limit`. */
  limit?: number;
  /** Adds each IPO's latest GMP snapshot (pro plan with the GMP add-on). */
  includeGmp?: boolean;
}

/** Parameters of `GET /ipos/{identifier}` (docs/spec.md#one-ipo). */
export interface GetIpoParams extends CallOptions {
  /** Adds the latest GMP snapshot (pro plan with the GMP add-on). */
  includeGmp?: boolean;
}

/** Parameters of `GET /ipos/{identifier}/gmp` (docs/spec.md#gmp-series). */
export interface GmpSeriesParams extends CallOptions {
  /** Bucket size, default `daily`. */
  interval?: GmpInterval;
  /** Aggregation, default `mean`. */
  field?: GmpField;
  /** `YYYY-MM-DD`, from 00:00:00.000Z. */
  from?: string;
  /** `YYYY-MM-DD`, through 23:59:59.999Z. */
  to?: string;
}

/** Parameters of `GET /ipos/{identifier}/subscription` (docs/spec.md#subscription-series). */
export interface SubscriptionSeriesParams extends CallOptions {
  /** `YYYY-MM-DD`, from 00:00:00.000Z (default: every snapshot). */
  from?: string;
  /** `YYYY-MM-DD`, through 23:59:59.999Z (default: up to now). */
  to?: string;
}

/** The client {@link createClient} returns. */
export interface IpokitClient {
  /** One page of `GET /ipos`, as the server serialised it. */
  list(params: ListIposParams): Promise<ListResponse>;
  /**
   * Every page from `params.page` (default 1) to the last, one request each (a wait on a 429
   * is told to `onWait`; a `limit` the plan caps, to `onWarning`). It always yields the first
   * page asked for (even an empty one), and stops after the page whose number is
   * `meta.totalPages` or beyond, or when the server answered another page than asked (the
   * keyless partial answer is always page 1).
   */
  pages(params: ListIposParams): AsyncGenerator<ListResponse, void, undefined>;
  /**
   * Every matching IPO once, in the server's order, across the pages of {@link pages}. An IPO
   * that a change of the data moves onto a later page is not yielded twice.
   */
  all(params: ListIposParams): AsyncGenerator<Ipo, void, undefined>;
  /** One IPO by id, symbol or slug. */
  get(identifier: string, params?: GetIpoParams): Promise<Ipo>;
  /** The GMP series of one IPO. */
  gmp(identifier: string, params?: GmpSeriesParams): Promise<GmpSeries>;
  /** Every subscription snapshot of one IPO, by investor category, ascending (a key of any plan). */
  subscription(identifier: string, params?: SubscriptionSeriesParams): Promise<SubscriptionSeries>;
}

/** Details of an {@link IpokitApiError}. */
export interface IpokitApiErrorInit {
  status: number;
  code: IpokitApiErrorCode;
  title: string;
  detail: string;
  meta?: ApiErrorMeta;
  body: unknown;
  headers?: FetchResponseLike['headers'];
}

/**
 * An answer of the API that is not a success: the HTTP `status`, the contract's `code`,
 * `title`, `detail` and `meta` (`{ parameter }` on a 400, {@link RateLimitMeta} on a 429), and
 * the parsed `body` (an {@link ErrorBody} unless `code` is `ERR:UNEXPECTED`; then the parsed
 * JSON, or the raw text when it was not JSON). The message never holds the API key.
 * Network failures and aborts are not wrapped: they reject with `fetch`'s own error or the
 * signal's reason.
 *
 * @example
 * ```ts
 * try {
 *   await ipos.get('NOPE');
 * } catch (err) {
 *   if (isIpokitApiError(err, 'ERR:NOTFOUND')) console.log(err.status, err.detail); // 404 ...
 * }
 * ```
 */
export class IpokitApiError extends Error {
  override readonly name = 'IpokitApiError';
  /** HTTP status, e.g. 404. */
  readonly status: number;
  /** The contract's code, or `ERR:UNEXPECTED`. */
  readonly code: IpokitApiErrorCode;
  /** The body's title (the HTTP reason phrase). */
  readonly title: string;
  /** The body's detail: one sentence saying what to change. */
  readonly detail: string;
  /** The body's `meta`, when it has one. */
  readonly meta: ApiErrorMeta | undefined;
  /** The parsed body (see the class description). */
  readonly body: unknown;
  /** The response's headers (`Retry-After`, `RateLimit-*`), when there was a response. */
  readonly headers: FetchResponseLike['headers'] | undefined;

  constructor(init: IpokitApiErrorInit) {
    super(`${init.detail} (HTTP ${init.status} ${init.code})`);
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.meta = init.meta;
    this.body = init.body;
    this.headers = init.headers;
  }
}

/**
 * Tells whether a value is an {@link IpokitApiError} (with that code, when one is given), also
 * across copies of the package (an ESM and a CJS build loaded side by side).
 *
 * @example
 * ```ts
 * if (isIpokitApiError(err, 'ERR:RATELIMIT')) console.log(err.meta);
 * ```
 */
export function isIpokitApiError(value: unknown, code?: IpokitApiErrorCode): value is IpokitApiError {
  if (!(value instanceof Error) || value.name !== 'IpokitApiError') return false;
  return code === undefined || (value as IpokitApiError).code === code;
}

/** Default retries after a 429. */
export const DEFAULT_RETRIES = 2;
/** Default longest wait before a retry, in milliseconds. */
export const DEFAULT_MAX_DELAY_MS = 60_000;

/**
 * Creates a client for an API mounted at `baseUrl`. Bad options throw a `TypeError` or
 * `RangeError` at once.
 *
 * @example
 * ```ts
 * const ipos = createClient({
 *   baseUrl: 'http://localhost:3000/ipos',
 *   apiKey: process.env.IPOKIT_KEY, // the demo's pro key (npm start prints it)
 *   onWait: ({ ms, attempt }) => console.error(`rate limited: retry ${attempt} in ${ms} ms`),
 * });
 * const { ipos: open } = await ipos.list({ status: 'open', limit: 100 });
 * const first = await ipos.get(open[0]?.id ?? 'NO-OPEN-IPO', { includeGmp: true });
 * const series = await ipos.gmp(first.id, { interval: 'hourly', field: 'median' });
 * ```
 */
export function createClient(options: ClientOptions): IpokitClient {
  const config = checkOptions(options);
  let warned = false;

  /** GETs `path` (retrying after 429 as configured); resolves to the 2xx body when it has `shape`. */
  async function request(path: string, query: Query, signal: AbortSignal | undefined, shape: Shape): Promise<Record<string, unknown>> {
    const url = `${config.baseUrl}${path}${queryString(query)}`;
    const init: FetchInitLike = { method: 'GET', headers: config.headers };
    if (signal !== undefined) init.signal = signal;
    for (let attempt = 0; ; attempt++) {
      const fetchFn = config.fetch ?? defaultFetch();
      const response = await fetchFn(url, init);
      const text = await response.text();
      if (response.status >= 200 && response.status < 300) return parseSuccess(response, text, shape);
      const error = apiError(response, text);
      if (error.status !== 429 || config.retry === false || attempt >= config.retry.retries) throw error;
      const ms = retryDelay(error, config.retry.maxDelayMs);
      config.onWait?.(waitInfo(error, url, ms, attempt + 1, config.retry.retries));
      await wait(ms, signal, config.sleep);
    }
  }

  async function list(params: ListIposParams): Promise<ListResponse> {
    const body = await request('', listQuery(params), params.signal, LIST_SHAPE);
    const response = body as unknown as ListResponse;
    if (!warned && config.onWarning !== false) {
      const warning = limitCapped(params.limit, response.meta);
      if (warning !== null) {
        warned = true;
        config.onWarning(warning);
      }
    }
    return response;
  }

  async function* pages(params: ListIposParams): AsyncGenerator<ListResponse, void, undefined> {
    let page = params.page ?? 1;
    for (;;) {
      const response = await list({ ...params, page });
      yield response;
      const { meta } = response;
      // The keyless partial answer is page 1 whatever was asked: going on would loop.
      if (meta.page !== page || meta.countOnPage === 0 || page >= meta.totalPages) return;
      page++;
    }
  }

  async function* all(params: ListIposParams): AsyncGenerator<Ipo, void, undefined> {
    const seen = new Set<string>();
    for await (const response of pages(params)) {
      for (const ipo of response.ipos) {
        if (seen.has(ipo.id)) continue;
        seen.add(ipo.id);
        yield ipo;
      }
    }
  }

  async function get(identifier: string, params: GetIpoParams = {}): Promise<Ipo> {
    const query: Query = [['includeGmp', params.includeGmp]];
    const body = await request(`/${segment(identifier)}`, query, params.signal, IPO_SHAPE);
    return body.ipo as Ipo;
  }

  async function gmp(identifier: string, params: GmpSeriesParams = {}): Promise<GmpSeries> {
    const query: Query = [
      ['interval', params.interval],
      ['field', params.field],
      ['from', params.from],
      ['to', params.to],
    ];
    const body = await request(`/${segment(identifier)}/gmp`, query, params.signal, SERIES_SHAPE);
    return body as unknown as GmpSeries;
  }

  async function subscription(identifier: string, params: SubscriptionSeriesParams = {}): Promise<SubscriptionSeries> {
    const query: Query = [
      ['from', params.from],
      ['to', params.to],
    ];
    const body = await request(`/${segment(identifier)}/subscription`, query, params.signal, SUBSCRIPTION_SHAPE);
    return body as unknown as SubscriptionSeries;
  }

  return { list, pages, all, get, gmp, subscription };
}

// ---------------------------------------------------------------------------------------

type Query = ReadonlyArray<readonly [string, string | number | boolean | readonly string[] | null | undefined]>;

interface Config {
  baseUrl: string;
  headers: Record<string, string>;
  fetch: FetchLike | undefined;
  retry: Required<RetryOptions> | false;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  onWait: ((info: WaitInfo) => void) | undefined;
  onWarning: ((warning: ClientWarning) => void) | false;
}

const KNOWN_CODES = {
  'ERR:BADPARAM': true,
  'ERR:INVLDKEY': true,
  'ERR:PLAN': true,
  'ERR:NOTFOUND': true,
  'ERR:METHOD': true,
  'ERR:URITOOLONG': true,
  'ERR:RATELIMIT': true,
  'ERR:INTERNAL': true,
  'ERR:UNAVAILABLE': true,
} satisfies Record<ApiErrorCode, true>;

function checkOptions(options: ClientOptions): Config {
  if (!isObject(options)) throw new TypeError('createClient needs an options object with baseUrl.');
  const { baseUrl } = options;
  if (typeof baseUrl !== 'string' || baseUrl === '') {
    throw new TypeError('createClient: baseUrl must be the URL the API is mounted at, e.g. "https://api.example.com/ipos".');
  }
  if (/[?#]/.test(baseUrl)) throw new TypeError('createClient: baseUrl must not hold a query or a fragment (? or #).');
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw new TypeError('createClient: fetch must be a function.');
  if (options.sleep !== undefined && typeof options.sleep !== 'function') throw new TypeError('createClient: sleep must be a function.');
  if (options.apiKey !== undefined && typeof options.apiKey !== 'string') throw new TypeError('createClient: apiKey must be a string.');
  if (options.onWait !== undefined && typeof options.onWait !== 'function') throw new TypeError('createClient: onWait must be a function.');
  if (options.onWarning !== undefined && options.onWarning !== false && typeof options.onWarning !== 'function') {
    throw new TypeError('createClient: onWarning must be a function, or false for no warning.');
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (typeof value !== 'string') throw new TypeError(`createClient: header ${JSON.stringify(name)} must be a string.`);
    // x-api-key comes from apiKey alone, so that one key is sent, never two joined.
    if (name.toLowerCase() === 'x-api-key') continue;
    headers[name] = value;
  }
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'accept')) headers.accept = 'application/json';
  if (options.apiKey !== undefined && options.apiKey !== '') headers['x-api-key'] = options.apiKey;
  let retry: Config['retry'] = false;
  if (options.retry !== false) {
    const retries = options.retry?.retries ?? DEFAULT_RETRIES;
    const maxDelayMs = options.retry?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
    if (!Number.isSafeInteger(retries) || retries < 0) throw new RangeError(`createClient: retry.retries must be a whole number >= 0; got ${String(retries)}.`);
    if (typeof maxDelayMs !== 'number' || !(maxDelayMs >= 0) || !Number.isFinite(maxDelayMs)) {
      throw new RangeError(`createClient: retry.maxDelayMs must be a finite number of milliseconds >= 0; got ${String(maxDelayMs)}.`);
    }
    retry = { retries, maxDelayMs };
  }
  return {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers,
    fetch: options.fetch,
    retry,
    sleep: options.sleep ?? defaultSleep,
    onWait: options.onWait,
    onWarning: options.onWarning ?? defaultWarn,
  };
}

function defaultWarn(warning: ClientWarning): void {
  globalThis.console?.warn?.(`@ipokit/client: ${warning.message}`);
}

/** What onWait is told before waiting `ms` ahead of retry `attempt` of `url`. */
function waitInfo(error: IpokitApiError, url: string, ms: number, attempt: number, retries: number): WaitInfo {
  const info: WaitInfo = { ms, attempt, retries, url, status: error.status, error };
  const meta: Record<string, unknown> = isObject(error.meta) ? error.meta : {};
  if (typeof meta.quotaPerMinute === 'number') info.quotaPerMinute = meta.quotaPerMinute;
  if (typeof meta.expiresIn === 'number') info.expiresIn = meta.expiresIn;
  if (typeof meta.window === 'string') info.window = meta.window;
  if (typeof meta.quota === 'number') info.quota = meta.quota;
  return info;
}

/**
 * The warning when the server answered fewer per page than `asked` (its plan's cap); null
 * when it did not, when nothing was asked, or for the keyless answer (its `meta.info` says why).
 */
function limitCapped(asked: unknown, meta: ListResponse['meta']): ClientWarning | null {
  const wanted = typeof asked === 'number' || typeof asked === 'string' ? Number(asked) : NaN;
  const { limit, count, totalPages } = meta;
  if (meta.info !== undefined || typeof limit !== 'number' || !(limit >= 1) || !(wanted > limit)) return null;
  const pages = (n: number) => `${n} ${n === 1 ? 'page' : 'pages'}`;
  const ipos = (n: number) => `${n} ${n === 1 ? 'IPO' : 'IPOs'}`;
  const wantedPages = count === 0 ? 0 : Math.max(1, Math.ceil(count / wanted));
  const cap = `The plan of this API key caps the page size at ${limit} (limit ${String(asked)} was asked; meta.limit is the effective limit)`;
  const message =
    totalPages > wantedPages
      ? `${cap}: the ${count} matching ${count === 1 ? 'IPO takes' : 'IPOs take'} ${pages(totalPages)}, one request each, instead of ${wantedPages}.`
      : `${cap}: a page holds at most ${ipos(limit)}, one request each (the ${ipos(count)} of this list fit either way).`;
  return { code: 'limit-capped', message, asked: wanted, limit, count, totalPages };
}

function defaultFetch(): FetchLike {
  if (typeof globalThis.fetch !== 'function') throw new TypeError('@ipokit/client: no global fetch here; pass createClient({ fetch }).');
  // Called through globalThis: browsers refuse a fetch detached from window.
  return (url, init) => globalThis.fetch(url, init);
}

function listQuery(p: ListIposParams): Query {
  if (!isObject(p)) throw new TypeError('list: params must be an object with at least status, e.g. { status: "open" }.');
  return [
    ['status', p.status],
    ['type', p.type],
    ['source', p.source],
    ['startDate', p.startDate],
    ['endDate', p.endDate],
    ['year', p.year],
    ['q', p.q],
    ['page', p.page],
    ['limit', p.limit],
    ['includeGmp', p.includeGmp],
  ];
}

/**
 * `?a=1&b=2` with names and values encoded by encodeURIComponent, which the server's decoding
 * (`+` is a space, then percent-decoding once) reads back exactly; an array is sent
 * comma-separated. Undefined and null values are left out.
 */
function queryString(query: Query): string {
  const parts: string[] = [];
  for (const [name, value] of query) {
    if (value === undefined || value === null) continue;
    const text = Array.isArray(value) ? value.join(',') : String(value);
    parts.push(`${encode(name, name)}=${encode(text, name)}`);
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

function segment(identifier: string): string {
  if (typeof identifier !== 'string' || identifier === '') throw new TypeError('The identifier must be a non-empty string: an IPO id, symbol or slug.');
  // URL parsers collapse these (even percent-encoded) as dot segments: no URL can carry them.
  if (identifier === '.' || identifier === '..') throw new TypeError(`The identifier ${JSON.stringify(identifier)} cannot be sent in a URL.`);
  return encode(identifier, 'identifier');
}

function encode(value: string, what: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    throw new TypeError(`${what} holds a lone surrogate (not valid Unicode), so it cannot be sent.`);
  }
}

/** A light check that a 2xx body is the answer asked for, not some other app's JSON. */
interface Shape {
  test(body: Record<string, unknown>): boolean;
  expected: string;
}

const LIST_SHAPE: Shape = { test: (b) => isObject(b.meta) && Array.isArray(b.ipos), expected: 'a list (meta and ipos)' };
const IPO_SHAPE: Shape = { test: (b) => isObject(b.ipo), expected: 'an IPO ({ ipo })' };
const SERIES_SHAPE: Shape = { test: (b) => Array.isArray(b.series) && isObject(b.meta), expected: 'a GMP series' };
const SUBSCRIPTION_SHAPE: Shape = { test: (b) => Array.isArray(b.series) && isObject(b.meta), expected: 'a subscription series' };

function parseSuccess(response: FetchResponseLike, text: string, shape: Shape): Record<string, unknown> {
  const parsed = parseJson(text);
  if (isObject(parsed) && shape.test(parsed)) return parsed;
  const what = parsed === NOT_JSON ? 'a body that is not JSON' : `JSON that is not ${shape.expected}`;
  throw new IpokitApiError({
    status: response.status,
    code: 'ERR:UNEXPECTED',
    title: reason(response),
    detail: `The server answered ${response.status} with ${what}: check baseUrl, it must be the URL the API is mounted at.`,
    body: parsed === NOT_JSON ? text : parsed,
    headers: response.headers,
  });
}

function apiError(response: FetchResponseLike, text: string): IpokitApiError {
  const parsed = parseJson(text);
  if (isErrorBody(parsed)) {
    const init: IpokitApiErrorInit = {
      status: response.status,
      code: parsed.code,
      title: parsed.title,
      detail: parsed.detail,
      body: parsed,
      headers: response.headers,
    };
    if (parsed.meta !== undefined) init.meta = parsed.meta;
    return new IpokitApiError(init);
  }
  return new IpokitApiError({
    status: response.status,
    code: 'ERR:UNEXPECTED',
    title: reason(response),
    detail: `The server answered ${response.status} without the API's error body: check baseUrl, or retry later if a proxy is failing.`,
    body: parsed === NOT_JSON ? text : parsed,
    headers: response.headers,
  });
}

function reason(response: FetchResponseLike): string {
  return response.statusText !== undefined && response.statusText !== '' ? response.statusText : `HTTP ${response.status}`;
}

const NOT_JSON: unique symbol = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isErrorBody(value: unknown): value is ErrorBody & { code: ApiErrorCode } {
  return (
    isObject(value) &&
    typeof value.code === 'string' &&
    Object.hasOwn(KNOWN_CODES, value.code) &&
    typeof value.title === 'string' &&
    typeof value.detail === 'string' &&
    (value.meta === undefined || isObject(value.meta))
  );
}

/** Milliseconds to wait after a 429: Retry-After, else meta.expiresIn, else 1 s; at most maxDelayMs. */
function retryDelay(error: IpokitApiError, maxDelayMs: number): number {
  let seconds = 1;
  const header = error.headers?.get('retry-after')?.trim() ?? '';
  const meta = error.meta;
  if (/^[0-9]+$/.test(header)) {
    seconds = Number(header);
  } else if (header !== '' && !Number.isNaN(Date.parse(header))) {
    seconds = Math.max(0, (Date.parse(header) - Date.now()) / 1000);
  } else if (meta !== undefined && 'expiresIn' in meta && typeof meta.expiresIn === 'number' && meta.expiresIn >= 0) {
    seconds = meta.expiresIn;
  }
  return Math.min(seconds * 1000, maxDelayMs);
}

/** Waits `ms` with `sleep`, rejecting with the signal's reason as soon as it aborts. */
async function wait(ms: number, signal: AbortSignal | undefined, sleep: Config['sleep']): Promise<void> {
  if (signal === undefined) return sleep(ms);
  if (signal.aborted) throw abortReason(signal);
  // Raced with the signal, so that even a sleep that ignores it stops waiting.
  await new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    sleep(ms, signal).then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort(): void {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
