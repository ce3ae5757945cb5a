/**
 * The one request handler every adapter calls (docs/spec.md#requests): it takes a small request
 * object and resolves to status, headers and body bytes. It never rejects.
 */
import { LRUCache } from 'lru-cache';
import { todayInIst, toIsoUtc } from '../model/dates.js';
import { IpokitError, isIpokitError, KEYLESS_INFO, WIRE_ERRORS, type WireErrorCode } from '../model/errors.js';
import { BUCKET_GRIDS, checkBucketCap, resolveGmpRange, toSeriesPoints } from '../model/gmp.js';
import { resolveSubscriptionRange, subscriptionPointJson } from '../model/subscription.js';
import { cachedKey, keyUseWrite, readKey } from '../accounts/key-cache.js';
import { hashApiKey } from '../accounts/keys.js';
import { openApiDocument } from './openapi.js';
import { resolveOptions, type IpoRouterOptions, type ResolvedOptions, type ResponseInfo, type ResponseRoute, type StoreCallInfo } from '../model/options.js';
import { parseGmpParams, parseIpoParams, parseListParams, parseSubscriptionParams, quote } from './params.js';
import { drawnWindows, reportRateLimit, type DrawnWindow } from '../limits/rate-limit.js';
import { isOpenApiPath, mountPathOf, normalizeClientAddress, parseQuery, routePath, type Route } from './request.js';
import { errorBody, ipoAnswer, ipoJson, ipoJsonBytes, type AnswerText } from './serialize.js';
import { deriveStatus } from '../model/status.js';
import type { AccountStore, ErrorBody, GmpSeries, IpoRow, IpoStore, KeyGrant, ListResponse, Plan, RateLimiter, RateWindowName, Store, StoreCallOptions, SubscriptionRecord, SubscriptionSeries, UsageCharge } from '../model/types.js';

/** The request as an adapter hands it to the core. */
export interface HandlerRequest {
  /** HTTP method, e.g. `GET`. */
  method: string;
  /** The request-target as sent (mount path and query included), for `maxUrlLength`. */
  url: string;
  /** The path below the mount, still percent-encoded, e.g. `/ORBIT/gmp`. */
  path: string;
  /** The raw query string without `?`. */
  query: string;
  /** Request headers; only `x-api-key` is read. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The framework's client address (`req.ip`, `ctx.ip`). */
  clientAddress: string | undefined;
}

/** What the adapter sends back: status, headers and the body bytes as a string. */
export interface HandlerResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /**
   * When present, the body's UTF-8 bytes (what `body` holds, encoded), for the adapter to
   * send as they are; `body` is then made from them only when read. A list page is
   * assembled so, from each IPO's kept bytes: no string of the whole page is made, and
   * none is encoded again for the socket.
   */
  bytes?: Uint8Array;
}

/** The handler function built by {@link createIpoHandler}. */
export type IpoHandler = (request: HandlerRequest) => Promise<HandlerResponse>;

/** The 404 detail of the OpenAPI document's path when the `openapi` option is off. */
const OPENAPI_OFF = 'The OpenAPI document is not served here: set the router option openapi: true to serve it at this path.';

/** Loose bound for identifiers: anything else can be no id, symbol or slug. */
const IDENTIFIER_RE = /^[A-Za-z0-9][A-Za-z0-9&._-]{0,127}$/;

/**
 * Builds the request handler of the three routes over a store. Settings are checked
 * here, so a bad option throws at start-up rather than on a request.
 *
 * @example
 * ```ts
 * const handle = createIpoHandler(memoryStore());
 * const res = await handle({ method: 'GET', url: '/ipos?status=open', path: '/', query: 'status=open', headers: {}, clientAddress: '127.0.0.1' });
 * res.status; // 200
 * ```
 */
export function createIpoHandler(...[store, options = {}]: IpoRouterArgs): IpoHandler {
  const settings = resolveOptions(options);
  const limiter: Partial<RateLimiter> = options.limiter ?? store;
  if (typeof limiter?.hitRateLimit !== 'function') {
    throw new IpokitError(
      'ERR:BADPARAM',
      options.limiter === undefined
        ? 'ipoRouter needs a rate limiter: pass a store that has one (memoryStore(), postgresStore()) or the option limiter.'
        : 'ipoRouter option limiter must be a rate limiter (an object with hitRateLimit, peekRateLimit and readUsage).',
      { parameter: 'limiter' },
    );
  }
  const ipoStore = store;
  const windows = limiter as RateLimiter;
  const openApiText = openApiCache(settings);
  if (settings.onResponse === undefined) return (request) => handle(ipoStore, windows, settings, openApiText, request);
  return async (request) => {
    const start = performance.now();
    const trace = newTrace();
    const res = await handle(ipoStore, windows, settings, openApiText, request, undefined, trace);
    reportResponse(settings, 'api', trace, request.method, res.status, start);
    return res;
  };
}

/**
 * What {@link handle} learns of a request for `onResponse`; made, and filled, only when that
 * hook is set.
 */
export interface Trace {
  route: ResponseRoute;
  plan: Plan | 'keyless' | null;
  rateLimit: ResponseInfo['rateLimit'];
  keyCache: 'hit' | 'miss' | null;
}

export function newTrace(): Trace {
  return { route: 'unknown', plan: null, rateLimit: null, keyCache: null };
}

/** The methods `onResponse` names as they are; any other is `OTHER` (a label must stay low-cardinality). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Calls `onResponse` (set) with what the request was; a throw goes to `onError`, never to the client. */
export function reportResponse(s: ResolvedOptions, router: ResponseInfo['router'], trace: Trace, method: string, status: number, start: number): void {
  const info: ResponseInfo = {
    router,
    route: trace.route,
    method: METHODS.has(method) ? method : 'OTHER',
    status,
    plan: trace.plan,
    durationMs: performance.now() - start,
    rateLimit: trace.rateLimit,
    keyCache: trace.keyCache,
  };
  try {
    s.onResponse!(info);
  } catch (err) {
    reportHookError(s, err);
  }
}

function reportHookError(s: ResolvedOptions, err: unknown): void {
  try {
    s.onError(err);
  } catch {
    // An onError that throws too loses the report, not the answer.
  }
}

/**
 * What `ipoRouter` (every adapter) and {@link createIpoHandler} take: a whole
 * {@link Store}, or the IPO data and accounts with the rate limiter given apart as
 * `options.limiter` (which wins over a store's own).
 */
export type IpoRouterArgs<O extends IpoRouterOptions = IpoRouterOptions> =
  | [store: Store, options?: O]
  | [store: IpoStore & AccountStore, options: O & { limiter: RateLimiter }];

/** Mount paths whose serialised OpenAPI document is kept (the least recently used is dropped first). */
const OPENAPI_CACHE_SIZE = 16;

/**
 * The OpenAPI document's JSON text for a mount path, serialised once per mount path. The
 * cache is bounded: a mount matched ignoring case (`/IPOS`, `/Ipos`) or a mount with a
 * parameter could otherwise grow it without end.
 */
export function openApiCache(s: ResolvedOptions): (mount: string) => string {
  const cache = new LRUCache<string, string>({ max: OPENAPI_CACHE_SIZE });
  return (mount) => {
    let text = cache.get(mount);
    if (text === undefined) {
      text = JSON.stringify(openApiDocument({ serverUrl: mount === '' ? '/' : mount, rateLimitHeaders: s.rateLimitHeaders }));
      cache.set(mount, text);
    }
    return text;
  };
}

/** A failure of the store (or its timeout): answered 503. */
export class StoreFailure extends Error {}

/**
 * Answers one request of the three routes. With `signedIn` (the account router's IPO
 * routes, docs/spec.md#account-router) the request is the signed-in account's: no key is
 * read, its grant is `signedIn`, and its usage is counted under that grant's `keyId`.
 */
export async function handle(
  store: IpoStore & AccountStore,
  limiter: RateLimiter,
  s: ResolvedOptions,
  openApiText: (mount: string) => string,
  req: HandlerRequest,
  signedIn?: KeyGrant,
  trace?: Trace,
): Promise<HandlerResponse> {
  let rateHeaders: Record<string, string> = {};
  try {
    const now = s.now().getTime();
    if (!Number.isFinite(now)) throw new Error('the clock option returned an invalid Date');

    // 1. Path and method: no window counts these.
    // A string of n code units is at most 3n bytes: most URLs need no counting at all.
    if (req.url.length * 3 > s.maxUrlLength && utf8Length(req.url) > s.maxUrlLength) {
      return error('ERR:URITOOLONG', `The request-target is longer than ${s.maxUrlLength} bytes: shorten the query.`);
    }
    const route = routePath(req.path);
    const openApiPath = route.kind === 'unknown' && isOpenApiPath(req.path);
    const openapi = openApiPath && s.openapi;
    if (trace !== undefined) trace.route = route.kind !== 'unknown' ? route.kind : openapi ? 'openapi' : 'unknown';
    if (route.kind === 'unknown' && !openapi) {
      // The document's path, with the option off: say how to turn it on.
      return error('ERR:NOTFOUND', openApiPath ? OPENAPI_OFF : 'No such route: use /, /{identifier}, /{identifier}/gmp or /{identifier}/subscription.');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const res = error('ERR:METHOD', `The method ${quote(req.method)} is not allowed: use GET or HEAD.`);
      res.headers['Allow'] = 'GET, HEAD';
      return res;
    }
    // The OpenAPI document (the one unknown path that gets here) is static: answered here,
    // with no key and no window, like the rest of this step.
    if (route.kind === 'unknown') return respond(200, openApiText(mountPathOf(req.url, req.path)), {});

    // 2. Key.
    const address = normalizeClientAddress(req.clientAddress);
    const key = signedIn === undefined ? apiKeyOf(req.headers) : null;
    let grant: KeyGrant | null = signedIn ?? null;
    if (key !== null) {
      // (null also for a revoked key, and for an expired one: refused alike). A cached key
      // is found without a store call, hence without guard's promises.
      const hash = hashApiKey(key);
      const cached = cachedKey(store, hash, now, s.keyCacheTtlMs);
      if (trace !== undefined) trace.keyCache = cached !== undefined ? 'hit' : 'miss';
      grant = cached !== undefined ? cached : await guard(s, (call) => readKey(store, hash, now, s.keyCacheTtlMs, call), 'findApiKey');
    }
    if (grant === null && (key !== null || route.kind !== 'list')) {
      if (trace !== undefined) trace.plan = 'keyless';
      const limited = await limit(limiter, s, drawnWindows({ limits: s.limits, account: null, address, gmpRoute: false, now }), now, undefined, trace);
      rateHeaders = limited.headers;
      if (limited.refused !== undefined) return limited.refused;
      return error('ERR:INVLDKEY', key === null ? 'An API key is required: send it in the x-api-key header.' : 'The API key is not valid or has been revoked: send a valid key in the x-api-key header.', undefined, rateHeaders);
    }

    // 3. Rate limit.
    const account = grant === null ? null : { id: grant.accountId, plan: grant.plan };
    const windows = drawnWindows({ limits: s.limits, account, address, gmpRoute: route.kind === 'gmp', now });
    // A keyed request's usage is counted in the limiter's own step (docs/spec.md#usage).
    const usage = grant === null ? undefined : { accountId: grant.accountId, keyId: grant.keyId, route: route.kind, day: todayInIst(now) };
    if (trace !== undefined) trace.plan = grant === null ? 'keyless' : grant.plan;
    const limited = await limit(limiter, s, windows, now, usage, trace);
    rateHeaders = limited.headers;
    if (limited.refused !== undefined) return limited.refused;

    // The key's last use, written once a minute at most, while the answer is looked up; a
    // failed write is the operator's to see, not the client's.
    const write = grant === null || signedIn !== undefined ? undefined : keyUseWrite(store, grant.keyId, now);
    const used = write === undefined ? undefined : Promise.resolve(guard(s, write, 'recordKeyUse')).catch((err: unknown) => s.onError(err instanceof StoreFailure ? err.cause : err));

    // 4-6. Parameters, plan, lookup.
    try {
      const query = parseQuery(req.query);
      const body = await answer(store, s, route, query, grant, now);
      if (typeof body === 'string') return respond(200, body, rateHeaders);
      if (body instanceof Uint8Array) return respondBytes(200, body, rateHeaders);
      return respond(200, body.text, rateHeaders, body.bytes);
    } finally {
      if (used !== undefined) await used;
    }
  } catch (err) {
    if (isIpokitError(err, 'ERR:BADPARAM')) {
      return error('ERR:BADPARAM', err.message, { parameter: err.parameter ?? 'unknown' }, rateHeaders);
    }
    if (isIpokitError(err, 'ERR:PLAN') || isIpokitError(err, 'ERR:NOTFOUND')) {
      return error(err.code === 'ERR:PLAN' ? 'ERR:PLAN' : 'ERR:NOTFOUND', err.message, undefined, rateHeaders);
    }
    if (err instanceof StoreFailure) {
      s.onError(err.cause);
      return error('ERR:UNAVAILABLE', 'The IPO data store is unavailable right now: retry in a few seconds.');
    }
    s.onError(err);
    return error('ERR:INTERNAL', 'The server failed to answer: retry later, and report it if it persists.');
  }
}

type Query = Map<string, string[]>;

/**
 * The answer of steps 4-6, as JSON text (with its length in bytes when that is known). Not
 * async itself: it hands on the route's promise, which an async function would wrap in one
 * more (two more microtask turns on every request).
 */
function answer(store: IpoStore, s: ResolvedOptions, route: ApiRoute, query: Query, grant: KeyGrant | null, now: number): Promise<string | AnswerText | Uint8Array> {
  const today = todayInIst(now);
  const gmpAllowed = grant !== null && grant.plan === 'pro' && grant.gmpAddon;
  switch (route.kind) {
    case 'list':
      return answerList(store, s, query, grant, gmpAllowed, today, now);
    case 'ipo':
      return answerIpo(store, s, route.rawIdentifier, query, gmpAllowed, today, now);
    case 'gmp':
      return answerGmp(store, s, route.rawIdentifier, query, gmpAllowed, today, now);
    case 'subscription':
      return answerSubscription(store, s, route.rawIdentifier, query, now);
    default:
      // Every route is answered above: a new kind of route fails to compile here.
      return route satisfies never;
  }
}

/** The four routes of the API (the unknown paths are answered in step 1). */
type ApiRoute = Exclude<Route, { kind: 'unknown' }>;

async function answerList(store: IpoStore, s: ResolvedOptions, query: Query, grant: KeyGrant | null, gmpAllowed: boolean, today: string, now: number): Promise<string | Uint8Array> {
  const p = parseListParams(query);
  if (p.includeGmp && !gmpAllowed) throw planError('includeGmp=true needs the pro plan with the GMP add-on: drop includeGmp or upgrade.');
  const limit = grant === null ? 1 : Math.min(p.limit, s.maxListLimit[grant.plan]);
  const page = grant === null ? 1 : p.page;
  const read = guard(s, (call) =>
    store.listIpos(
      {
        status: p.status, today, types: p.types, source: p.source, startDate: p.startDate, endDate: p.endDate,
        year: p.year, q: p.q, offset: (page - 1) * limit, limit, gmpAt: p.includeGmp ? now : null, subscriptionAt: now,
      },
      call,
    ),
    'listIpos',
  );
  const { count, rows } = read instanceof Promise ? await read : read;
  const meta: ListResponse['meta'] = { count, countOnPage: rows.length, totalPages: Math.ceil(count / limit), page, limit };
  if (grant === null) meta.info = KEYLESS_INFO;
  const head = `{"meta":${JSON.stringify(meta)},"ipos":[`;
  // Without GMP, when every IPO's bytes are kept (frozen records, as a store in memory hands
  // out), the body is those bytes copied once into one array: a page of 100 (about 190 KB)
  // as a string costs a large string's allocation and its copy, and the socket's encoding
  // of it again (measured in bench/ipo-data.ts).
  if (!p.includeGmp && rows.length > 0) {
    const bytes = pageBytes(head, rows, today);
    if (bytes !== null) return bytes;
  }
  // Else one join makes the whole body as one flat string. A page of 100 is about 140 KB, above
  // V8's large-object size: a template around a joined list would be flattened again by
  // the first reader (the Content-Length, the socket), a second 140 KB copy (measured: 0.6 ms).
  const parts = rows.map((r) => ipoJson(r.ipo, deriveStatus(r.ipo, today), p.includeGmp ? (r.gmp ?? null) : undefined, r.subscription));
  if (parts.length === 0) return `${head}]}`;
  parts[0] = head + parts[0]!;
  parts[parts.length - 1] += ']}';
  return parts.join(',');
}

/** A list body from each IPO's kept bytes, or null when one of them has none kept. */
function pageBytes(head: string, rows: readonly IpoRow[], today: string): Uint8Array | null {
  const chunks = new Array<Uint8Array>(rows.length);
  let total = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const chunk = ipoJsonBytes(row.ipo, deriveStatus(row.ipo, today), row.subscription ?? null);
    if (chunk === null) return null;
    chunks[i] = chunk;
    total += chunk.length;
  }
  const start = UTF8.encode(head);
  const out = new Uint8Array(start.length + total + (rows.length - 1) + 2);
  out.set(start, 0);
  let at = start.length;
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    out.set(chunks[i]!, at);
    at += chunks[i]!.length;
  }
  out[at++] = 0x5d; // ]
  out[at] = 0x7d; // }
  return out;
}

async function answerIpo(store: IpoStore, s: ResolvedOptions, rawIdentifier: string, query: Query, gmpAllowed: boolean, today: string, now: number): Promise<string | AnswerText> {
  const p = parseIpoParams(rawIdentifier, query);
  if (p.includeGmp && !gmpAllowed) throw planError('includeGmp=true needs the pro plan with the GMP add-on: drop includeGmp or upgrade.');
  const row = await findIpo(store, s, p.identifier, p.includeGmp ? now : null, now);
  const status = deriveStatus(row.ipo, today);
  // Without GMP the answer depends on the record, its status and its latest subscription
  // snapshot alone: kept with the record.
  if (!p.includeGmp) return ipoAnswer(row.ipo, status, utf8Length, row.subscription ?? null);
  return `{"ipo":${ipoJson(row.ipo, status, row.gmp ?? null, row.subscription)}}`;
}

async function answerGmp(store: IpoStore, s: ResolvedOptions, rawIdentifier: string, query: Query, gmpAllowed: boolean, today: string, now: number): Promise<string> {
  const p = parseGmpParams(rawIdentifier, query);
  const range = resolveGmpRange({ from: p.from, to: p.to, now });
  checkBucketCap(range, p.interval, s.maxGmpBuckets);
  if (today > s.gmpPreviewEnds && !gmpAllowed) {
    throw planError(`The GMP series needs the pro plan with the GMP add-on since the free preview ended on ${s.gmpPreviewEnds}.`);
  }
  const { ipo } = await findIpo(store, s, p.identifier, null, null);
  const to = Math.min(range.end, now); // snapshots after now are invisible
  const grid = BUCKET_GRIDS[p.interval];
  const read = range.start > to ? [] : guard(s, (call) => store.gmpBuckets({ ipoId: ipo.id, field: p.field, from: range.start, to, size: grid.size, origin: grid.origin }, call), 'gmpBuckets');
  const buckets = read instanceof Promise ? await read : read;
  const series = toSeriesPoints(buckets);
  const body: GmpSeries = {
    ipoId: ipo.id,
    symbol: ipo.symbol,
    interval: p.interval,
    field: p.field,
    series,
    meta: { from: toIsoUtc(range.start), to: toIsoUtc(range.end), count: series.length },
  };
  return JSON.stringify(body);
}

async function answerSubscription(store: IpoStore, s: ResolvedOptions, rawIdentifier: string, query: Query, now: number): Promise<string> {
  const p = parseSubscriptionParams(rawIdentifier, query);
  const range = resolveSubscriptionRange({ from: p.from, to: p.to, now });
  const { ipo } = await findIpo(store, s, p.identifier, null, null);
  const to = Math.min(range.end, now); // snapshots after now are invisible
  const read = range.start > to ? [] : guard(s, (call) => store.subscriptionSeries({ ipoId: ipo.id, from: range.start, to }, call), 'subscriptionSeries');
  const records = read instanceof Promise ? await read : read;
  // The bytes of JSON.stringify of the SubscriptionSeries (the HTTP suite pins them), written
  // from each snapshot's kept text; a frozen array of them (a store in memory answers every
  // snapshot of an IPO so) keeps its series' text.
  let series = Object.isFrozen(records) ? SERIES_TEXTS.get(records) : undefined;
  if (series === undefined) {
    const points = new Array<string>(records.length);
    for (let i = 0; i < records.length; i++) points[i] = subscriptionPointJson(records[i]!);
    series = points.join(',');
    if (Object.isFrozen(records)) SERIES_TEXTS.set(records, series);
  }
  const meta: SubscriptionSeries['meta'] = { from: toIsoUtc(range.start), to: toIsoUtc(range.end), count: records.length };
  return `{"ipoId":${JSON.stringify(ipo.id)},"symbol":${JSON.stringify(ipo.symbol)},"series":[${series}],"meta":${JSON.stringify(meta)}}`;
}

/** The series text (the points, comma-separated) of frozen arrays of subscription snapshots. */
const SERIES_TEXTS = new WeakMap<readonly SubscriptionRecord[], string>();

async function findIpo(store: IpoStore, s: ResolvedOptions, identifier: string, gmpAt: number | null, subscriptionAt: number | null): Promise<IpoRow> {
  const read = IDENTIFIER_RE.test(identifier) ? guard(s, (call) => store.findIpo(subscriptionAt === null ? { identifier, gmpAt } : { identifier, gmpAt, subscriptionAt }, call), 'findIpo') : null;
  const row = read instanceof Promise ? await read : read;
  if (row === null) throw new IpokitError('ERR:NOTFOUND', `No IPO has the identifier ${quote(identifier)}: use an IPO id, symbol or slug.`);
  return row;
}

/** Charges the windows; a refusal comes back as the finished 429 response. */
async function limit(limiter: RateLimiter, s: ResolvedOptions, windows: DrawnWindow[], now: number, usage: UsageCharge | undefined, trace: Trace | undefined): Promise<{ headers: Record<string, string>; refused?: HandlerResponse }> {
  // With every window off, a keyed request is still counted.
  if (windows.length === 0 && usage === undefined) return { headers: {} };
  let outcome;
  try {
    // A drawn window is a RateLimitWindow: the limiter reads key, quota, ms and start.
    const hit = guard(s, (call) => limiter.hitRateLimit(usage === undefined ? { now, windows } : { now, windows, usage }, call), 'hitRateLimit');
    outcome = hit instanceof Promise ? await hit : hit;
  } catch (err) {
    if (!(err instanceof StoreFailure) || !s.limiterFailOpen) throw err;
    s.onError(err.cause);
    return { headers: {} };
  }
  const report = reportRateLimit(windows, outcome, now, s.rateLimitHeaders);
  if (trace !== undefined) trace.rateLimit = { windows: windows.map((w) => w.name), refusedBy: report.refusal?.window ?? null };
  if (report.refusal === undefined) return { headers: report.headers };
  const { window, quota, expiresIn } = report.refusal;
  const refused = error('ERR:RATELIMIT', `The ${WINDOW_WORDS[window]} allowance of ${quota} requests is used up: retry in ${expiresIn} s.`, report.refusal, report.headers);
  return { headers: report.headers, refused };
}

/** How a 429's detail names each window. */
const WINDOW_WORDS: Readonly<Record<RateWindowName, string>> = {
  minute: 'per-minute',
  hour: 'hourly',
  day: 'daily (IST day)',
  'gmp-minute': 'GMP per-minute',
  'gmp-day': 'GMP daily (IST day)',
};

/**
 * Runs a store call with the timeout; any failure becomes a {@link StoreFailure}. The store
 * is told the deadline, so that a call still waiting then never starts (its request has
 * been answered 503) and a limiter records no hit after it.
 *
 * A call answered synchronously (the reads and the hit of a store in memory,
 * docs/spec.md#storage) comes back as it is: no promise, no timer. Callers on the request
 * path await only a promise (`read instanceof Promise ? await read : read`), so that such
 * a store costs the request none of the promises and microtask turns of an await.
 */
export function guard<T>(s: ResolvedOptions, call: (options: StoreCallOptions) => T | Promise<T>, op = 'store'): T | Promise<T> {
  if (s.onStoreCall !== undefined) return timedGuard(s, call, op);
  let result: T | PromiseLike<T>;
  try {
    result = call({ deadline: performance.now() + s.storeTimeoutMs });
  } catch (err) {
    return Promise.reject(new StoreFailure('store call failed', { cause: err }));
  }
  return isThenable(result) ? settle(s, result) : result;
}

/** {@link guard} that tells `onStoreCall` (set) of the call: its time and its outcome. */
function timedGuard<T>(s: ResolvedOptions, call: (options: StoreCallOptions) => T | Promise<T>, op: string): T | Promise<T> {
  const start = performance.now();
  let result: T | PromiseLike<T>;
  try {
    result = call({ deadline: start + s.storeTimeoutMs });
  } catch (err) {
    reportStoreCall(s, op, start, outcomeOf(err));
    return Promise.reject(new StoreFailure('store call failed', { cause: err }));
  }
  if (!isThenable(result)) {
    reportStoreCall(s, op, start, 'ok');
    return result;
  }
  return settle(s, result).then(
    (value) => {
      reportStoreCall(s, op, start, 'ok');
      return value;
    },
    (err: unknown) => {
      reportStoreCall(s, op, start, err instanceof StoreTimeout ? 'timeout' : outcomeOf(err instanceof StoreFailure ? err.cause : err));
      throw err;
    },
  );
}

/** A store's refusal made to shed load (`IpokitError` with `shed`), or another failure. */
function outcomeOf(err: unknown): StoreCallInfo['outcome'] {
  return isIpokitError(err, 'ERR:UNAVAILABLE') && err.shed === true ? 'shed' : 'error';
}

function reportStoreCall(s: ResolvedOptions, op: string, start: number, outcome: StoreCallInfo['outcome']): void {
  try {
    s.onStoreCall!({ op, durationMs: performance.now() - start, outcome });
  } catch (err) {
    reportHookError(s, err);
  }
}

/** The store call's timeout (`storeTimeoutMs`): answered 503 like any store failure. */
class StoreTimeout extends StoreFailure {}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** {@link guard} for a call that answered with a promise: its outcome, or the timeout's. */
async function settle<T>(s: ResolvedOptions, result: PromiseLike<T>): Promise<T> {
  const pending = Promise.resolve(result);
  // A store that has already answered needs no timer: the reaction to a settled promise is
  // queued at once, before this function's own continuation after one turn.
  const early: { settled: boolean; failed: boolean; value: unknown } = { settled: false, failed: false, value: undefined };
  pending.then(
    (value) => {
      early.settled = true;
      early.value = value;
    },
    (err: unknown) => {
      early.settled = true;
      early.failed = true;
      early.value = err;
    },
  );
  await undefined;
  if (early.settled) {
    if (early.failed) throw new StoreFailure('store call failed', { cause: early.value });
    return early.value as T;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new StoreTimeout('store call timed out', { cause: new IpokitError('ERR:UNAVAILABLE', `A store call took longer than ${s.storeTimeoutMs} ms.`) }));
    }, s.storeTimeoutMs);
  });
  try {
    return await Promise.race([
      pending.catch((err: unknown) => {
        throw new StoreFailure('store call failed', { cause: err });
      }),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function apiKeyOf(headers: HandlerRequest['headers']): string | null {
  const value = headers['x-api-key'];
  const key = Array.isArray(value) ? value.join(', ') : value;
  return key === undefined || key === '' ? null : key;
}

function planError(detail: string): IpokitError {
  return new IpokitError('ERR:PLAN', detail);
}

/** The answer of an error: its status and title come from the code (`WIRE_ERRORS`). */
export function error(code: WireErrorCode, detail: string, meta?: ErrorBody['meta'], headers: Record<string, string> = {}): HandlerResponse {
  return json(WIRE_ERRORS[code].status, errorBody(code, detail, meta), headers);
}

export function json(status: number, body: unknown, extra: Record<string, string>): HandlerResponse {
  return respond(status, JSON.stringify(body), extra);
}

/**
 * A 200 of JSON bytes (see {@link HandlerResponse.bytes}): `body` is decoded from them when
 * read, once.
 */
function respondBytes(status: number, bytes: Uint8Array, extra: Record<string, string>): HandlerResponse {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'private, no-store',
    'Content-Length': String(bytes.length),
  };
  for (const name in extra) headers[name] = extra[name]!;
  let text: string | undefined;
  return {
    status,
    headers,
    bytes,
    get body(): string {
      return (text ??= UTF8_DECODER.decode(bytes));
    },
  };
}

const UTF8_DECODER = new TextDecoder();

export function respond(status: number, text: string, extra: Record<string, string>, bytes: number = utf8Length(text)): HandlerResponse {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'private, no-store',
    'Content-Length': String(bytes),
  };
  for (const name in extra) headers[name] = extra[name]!;
  return { status, headers, body: text };
}

const UTF8 = new TextEncoder();
/** Scratch space of {@link utf8Length}: a fixed size, so a large body holds no memory after it. */
const SCRATCH = new Uint8Array(16 * 1024);

/**
 * The UTF-8 byte length of a string, as Buffer.byteLength gives it (a lone surrogate counts
 * 3, as the U+FFFD it is sent as), with Web APIs only. encodeInto into a fixed buffer, in
 * slices when the text is longer, measured faster than a JavaScript loop over the code
 * units (a 32-character URL: 80 ns against 140 ns; a 150 KB list body: 8 us against
 * 430 us) and than TextEncoder.encode, which allocates the whole copy (400 ns, 180 us).
 */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let read = 0; read < text.length; ) {
    // A surrogate pair is never split: encodeInto reads one only when all 4 bytes fit.
    const done = UTF8.encodeInto(read === 0 ? text : text.slice(read), SCRATCH);
    read += done.read;
    bytes += done.written;
  }
  return bytes;
}
