/**
 * Router settings (docs/spec.md#settings): defaults, merging of partial objects, and validation.
 */
import { dateToEpochMs } from './dates.js';
import { IpokitError } from './errors.js';
import type { Plan, RateLimiter, RateWindowName } from './types.js';

/**
 * Quotas of one plan's windows (docs/spec.md#limits). `Infinity` turns a window off.
 * `perMinute` and `perHour` slide; `perDay` and `gmpPerDay` count IST calendar days.
 */
export interface PlanLimits {
  /** Every route, per 60 s sliding. Default 6. */
  perMinute: number;
  /** Every route, per 3,600 s sliding. Default Infinity (off). */
  perHour: number;
  /** Every route, per IST day (from 00:00 IST). Default Infinity (off). */
  perDay: number;
  /** The GMP route's own window, per 60 s sliding. Default 3. */
  gmpPerMinute: number;
  /** The GMP route's own window, per IST day. Default Infinity (off). */
  gmpPerDay: number;
}

/** The quotas of callers without a valid key: the GMP windows do not apply to them. */
export type KeylessLimits = Pick<PlanLimits, 'perMinute' | 'perHour' | 'perDay'>;

/** Quotas per plan, and for callers without a valid key. */
export interface LimitSettings {
  free: PlanLimits;
  paid: PlanLimits;
  pro: PlanLimits;
  keyless: KeylessLimits;
}

/** Which `RateLimit` headers responses carry (docs/spec.md#limits). */
export type RateLimitHeaders = 'draft-6' | 'draft-11' | 'both' | 'none';
/** Every value of {@link RateLimitHeaders}. */
export const RATE_LIMIT_HEADERS: readonly RateLimitHeaders[] = Object.freeze(['draft-6', 'draft-11', 'both', 'none']);

/** Options of `ipoRouter` in every adapter, and of the core handler. */
export interface IpoRouterOptions {
  /** The clock; read once per request. Default `() => new Date()`. */
  now?: () => Date;
  /**
   * Quotas; a partial object is merged into the defaults, e.g.
   * `{ free: { perMinute: 10, perDay: 100 } }` (a free plan of 10 a minute and 100 an IST day).
   */
  limits?: {
    free?: Partial<PlanLimits>;
    paid?: Partial<PlanLimits>;
    pro?: Partial<PlanLimits>;
    keyless?: Partial<KeylessLimits>;
  };
  /**
   * The rate-limit headers: `'draft-6'` (`RateLimit-Limit`, `-Remaining`, `-Reset`),
   * `'draft-11'` (`RateLimit-Policy` and `RateLimit`), `'both'` or `'none'`. A 429 carries
   * `Retry-After` whatever this says. Default `'draft-6'`.
   */
  rateLimitHeaders?: RateLimitHeaders;
  /** Largest effective list `limit` per plan, merged into `{ free: 1, paid: 100, pro: 100 }`. */
  maxListLimit?: Partial<Record<Plan, number>>;
  /**
   * Active keys a paid or pro account may hold (the free plan holds one): the account
   * router's key routes refuse one more with 403 `ERR:PLAN`. Default 100; `Infinity`: no cap.
   * The keyed API does not create keys and ignores it.
   */
  maxKeysPerAccount?: number;
  /** Last IST day (`YYYY-MM-DD`) of the free GMP preview. Default `'2026-09-30'`. */
  gmpPreviewEnds?: string;
  /** Largest GMP series, in buckets. Default 20,000. */
  maxGmpBuckets?: number;
  /** Longest request-target, in bytes. Default 4,096. */
  maxUrlLength?: number;
  /** A store call that takes longer answers 503. Default 5,000. */
  storeTimeoutMs?: number;
  /** How stale another process's view of a revoked key or plan change may be. Default 5,000; 0 disables caching. */
  keyCacheTtlMs?: number;
  /** When the store cannot count hits: false answers 503, true admits the request. Default false. */
  limiterFailOpen?: boolean;
  /** Receives every unexpected error (the 500s and 503s). Default: `console.error`. */
  onError?: (error: unknown) => void;
  /**
   * Serve the OpenAPI 3.1 document of the API (`openApiDocument()`) at `GET` and `HEAD`
   * `{mount}/-/openapi.json`, with `servers: [{ url: <the mount path as the request
   * reached it> }]`. Like the path and method step it needs no key and no window counts
   * it (it is static); `maxUrlLength` (414) and the 405 of other methods still apply.
   * No identifier starts with `-`, so no IPO is shadowed. When false, that path is an
   * unknown path (404). Default false.
   *
   * @example
   * ```ts
   * app.use('/ipos', ipoRouter(store, { openapi: true })); // GET /ipos/-/openapi.json
   * ```
   */
  openapi?: boolean;
  /**
   * The rate limiter, when it is not the store's own: e.g. `redisLimiter(...)` of
   * `@ipokit/limiter-redis` beside a `postgresStore()`. Default: the store.
   *
   * @example
   * ```ts
   * app.use('/ipos', ipoRouter(postgresStore({ client: pool }), { limiter: redisLimiter({ client: redis }) }));
   * ```
   */
  limiter?: RateLimiter;
  /**
   * Called once per answered request, after the answer is made (docs/spec.md#metrics), with
   * its route name, method, status, plan, duration and the rate limiter's decision: plug
   * Prometheus, OpenTelemetry or a log here. A hook that throws changes no answer: the
   * error goes to `onError`. Default none.
   *
   * @example
   * ```ts
   * app.use('/ipos', ipoRouter(store, { onResponse: (info) => console.log(info.route, info.status, info.durationMs) }));
   * ```
   */
  onResponse?: (info: ResponseInfo) => void;
  /**
   * Called once per store call made for a request (the IPO reads, key lookups, the limiter's
   * hit, the key's last-use write), with its operation, duration and outcome: `'timeout'`
   * when `storeTimeoutMs` passed first (the request answers 503), `'shed'` when the store
   * refused it at once to shed load. A hook that throws goes to `onError`. Default none.
   *
   * @example
   * ```ts
   * ipoRouter(store, { onStoreCall: ({ op, durationMs, outcome }) => outcome !== 'ok' && console.warn(op, outcome, durationMs) });
   * ```
   */
  onStoreCall?: (info: StoreCallInfo) => void;
}

/**
 * The low-cardinality name of a route: never the raw path, which carries identifiers. The IPO
 * routes (`list`, `ipo`, `gmp`, `subscription`, `openapi`), the account router's own
 * (`account`, `keys`, `key-revoke`, `key-rotate`, `usage`, `webhooks`, `dashboard`), and
 * `unknown` for a path no route matches.
 */
export type ResponseRoute =
  | 'list' | 'ipo' | 'gmp' | 'subscription' | 'openapi'
  | 'account' | 'keys' | 'key-revoke' | 'key-rotate' | 'usage' | 'webhooks' | 'dashboard'
  | 'unknown';

/** What {@link IpoRouterOptions.onResponse} is told of one answered request. */
export interface ResponseInfo {
  /** Which router answered: the keyed API (`ipoRouter`) or the account router. */
  router: 'api' | 'account';
  route: ResponseRoute;
  /** The request's method when it is a standard one (`GET`, `POST`, ...), else `'OTHER'`. */
  method: string;
  status: number;
  /**
   * Whose windows were charged: the account's plan, `'keyless'` for the client address's, or
   * null when the answer came before any key was read (404, 405, 414, the OpenAPI document).
   * On the account router: the signed-in account's plan.
   */
  plan: Plan | 'keyless' | null;
  /** From the request's arrival at the core to its answer, by `performance.now()`. */
  durationMs: number;
  /**
   * The rate limiter's decision, when one was made: the windows charged and the one that
   * refused (null: admitted). Null when no window was charged.
   */
  rateLimit: { windows: RateWindowName[]; refusedBy: RateWindowName | null } | null;
  /** Whether the key was found in the key cache, when a key was looked up; else null. */
  keyCache: 'hit' | 'miss' | null;
}

/** What {@link IpoRouterOptions.onStoreCall} is told of one store call. */
export interface StoreCallInfo {
  /** The store method: `listIpos`, `findIpo`, `gmpBuckets`, `subscriptionSeries`, `findApiKey`, `hitRateLimit`, `recordKeyUse`, `getAccount`. */
  op: string;
  /** From the call to its outcome (or the timeout), by `performance.now()`. */
  durationMs: number;
  outcome: 'ok' | 'error' | 'timeout' | 'shed';
}

/** Settings with every default applied. */
export interface ResolvedOptions {
  now: () => Date;
  limits: LimitSettings;
  rateLimitHeaders: RateLimitHeaders;
  maxListLimit: Record<Plan, number>;
  maxKeysPerAccount: number;
  gmpPreviewEnds: string;
  maxGmpBuckets: number;
  maxUrlLength: number;
  storeTimeoutMs: number;
  keyCacheTtlMs: number;
  limiterFailOpen: boolean;
  onError: (error: unknown) => void;
  openapi: boolean;
  onResponse: ((info: ResponseInfo) => void) | undefined;
  onStoreCall: ((info: StoreCallInfo) => void) | undefined;
}

/** The defaults of docs/spec.md#settings. */
export const DEFAULT_OPTIONS: Readonly<Omit<ResolvedOptions, 'now' | 'onError' | 'onResponse' | 'onStoreCall'>> = Object.freeze({
  limits: {
    free: { perMinute: 6, perHour: Infinity, perDay: Infinity, gmpPerMinute: 3, gmpPerDay: Infinity },
    paid: { perMinute: 6, perHour: Infinity, perDay: Infinity, gmpPerMinute: 3, gmpPerDay: Infinity },
    pro: { perMinute: 6, perHour: Infinity, perDay: Infinity, gmpPerMinute: 3, gmpPerDay: Infinity },
    keyless: { perMinute: 6, perHour: Infinity, perDay: Infinity },
  },
  rateLimitHeaders: 'draft-6',
  maxListLimit: { free: 1, paid: 100, pro: 100 },
  maxKeysPerAccount: 100,
  gmpPreviewEnds: '2026-09-30',
  maxGmpBuckets: 20_000,
  maxUrlLength: 4_096,
  storeTimeoutMs: 5_000,
  keyCacheTtlMs: 5_000,
  limiterFailOpen: false,
  openapi: false,
});

/**
 * Applies defaults and checks every setting; a bad one throws `IpokitError`
 * `ERR:BADPARAM` naming it, when the router is built rather than on a request.
 *
 * @example
 * ```ts
 * resolveOptions({ limits: { paid: { perMinute: 600 } } }).limits.paid;
 * // { perMinute: 600, perHour: Infinity, perDay: Infinity, gmpPerMinute: 3, gmpPerDay: Infinity }
 * ```
 */
export function resolveOptions(options: IpoRouterOptions = {}): ResolvedOptions {
  const d = DEFAULT_OPTIONS;
  const plan = (p: Plan): PlanLimits => ({
    perMinute: quota(`limits.${p}.perMinute`, options.limits?.[p]?.perMinute ?? d.limits[p].perMinute),
    perHour: quota(`limits.${p}.perHour`, options.limits?.[p]?.perHour ?? d.limits[p].perHour),
    perDay: quota(`limits.${p}.perDay`, options.limits?.[p]?.perDay ?? d.limits[p].perDay),
    gmpPerMinute: quota(`limits.${p}.gmpPerMinute`, options.limits?.[p]?.gmpPerMinute ?? d.limits[p].gmpPerMinute),
    gmpPerDay: quota(`limits.${p}.gmpPerDay`, options.limits?.[p]?.gmpPerDay ?? d.limits[p].gmpPerDay),
  });
  const keyless = (name: keyof KeylessLimits): number =>
    quota(`limits.keyless.${name}`, options.limits?.keyless?.[name] ?? d.limits.keyless[name]);
  const rateLimitHeaders = options.rateLimitHeaders ?? d.rateLimitHeaders;
  if (!RATE_LIMIT_HEADERS.includes(rateLimitHeaders)) throw badOption('rateLimitHeaders', `must be one of ${RATE_LIMIT_HEADERS.map((h) => `'${h}'`).join(', ')}`);
  const maxList = (p: Plan): number =>
    positiveInteger(`maxListLimit.${p}`, options.maxListLimit?.[p] ?? d.maxListLimit[p]);
  const maxKeysPerAccount = options.maxKeysPerAccount ?? d.maxKeysPerAccount;
  if (!isKeyCap(maxKeysPerAccount)) throw badOption('maxKeysPerAccount', KEY_CAP_RULE);
  const gmpPreviewEnds = options.gmpPreviewEnds ?? d.gmpPreviewEnds;
  if (typeof gmpPreviewEnds !== 'string' || dateToEpochMs(gmpPreviewEnds) === null) {
    throw badOption('gmpPreviewEnds', 'must be a calendar date written YYYY-MM-DD');
  }
  const now = options.now ?? (() => new Date());
  if (typeof now !== 'function') throw badOption('now', 'must be a function returning a Date');
  const onError = options.onError ?? ((error: unknown) => console.error('[ipokit]', error));
  if (typeof onError !== 'function') throw badOption('onError', 'must be a function');
  const failOpen = options.limiterFailOpen ?? d.limiterFailOpen;
  if (typeof failOpen !== 'boolean') throw badOption('limiterFailOpen', 'must be a boolean');
  const openapi = options.openapi ?? d.openapi;
  if (typeof openapi !== 'boolean') throw badOption('openapi', 'must be a boolean');
  const { onResponse, onStoreCall } = options;
  if (onResponse !== undefined && typeof onResponse !== 'function') throw badOption('onResponse', 'must be a function');
  if (onStoreCall !== undefined && typeof onStoreCall !== 'function') throw badOption('onStoreCall', 'must be a function');
  return {
    now,
    limits: {
      free: plan('free'),
      paid: plan('paid'),
      pro: plan('pro'),
      keyless: { perMinute: keyless('perMinute'), perHour: keyless('perHour'), perDay: keyless('perDay') },
    },
    rateLimitHeaders,
    maxListLimit: { free: maxList('free'), paid: maxList('paid'), pro: maxList('pro') },
    maxKeysPerAccount,
    gmpPreviewEnds,
    maxGmpBuckets: positiveInteger('maxGmpBuckets', options.maxGmpBuckets ?? d.maxGmpBuckets),
    maxUrlLength: positiveInteger('maxUrlLength', options.maxUrlLength ?? d.maxUrlLength),
    storeTimeoutMs: positiveInteger('storeTimeoutMs', options.storeTimeoutMs ?? d.storeTimeoutMs),
    keyCacheTtlMs: nonNegativeInteger('keyCacheTtlMs', options.keyCacheTtlMs ?? d.keyCacheTtlMs),
    limiterFailOpen: failOpen,
    onError,
    openapi,
    onResponse,
    onStoreCall,
  };
}

/** What `maxKeysPerAccount` must be, wherever it is given. */
export const KEY_CAP_RULE = 'must be a whole number of keys >= 1, or Infinity for no cap';

/**
 * Whether `value` is a valid `maxKeysPerAccount`: a whole number >= 1 (safe integer) or
 * `Infinity`. The router's options and the admin functions check it alike.
 *
 * @example
 * ```ts
 * isKeyCap(100); // true
 * isKeyCap(0);   // false
 * ```
 */
export function isKeyCap(value: unknown): value is number {
  return value === Infinity || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1);
}

function quota(name: string, value: unknown): number {
  if (value === Infinity) return value;
  return positiveInteger(name, value, 'must be a whole number of requests >= 1, or Infinity to turn the window off');
}

function positiveInteger(name: string, value: unknown, why = 'must be a whole number >= 1'): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw badOption(name, why);
  return value;
}

function nonNegativeInteger(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw badOption(name, 'must be a whole number >= 0');
  }
  return value;
}

function badOption(name: string, why: string): IpokitError {
  return new IpokitError('ERR:BADPARAM', `ipoRouter option ${name} ${why}.`, { parameter: name });
}
