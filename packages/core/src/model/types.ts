/**
 * Public types of ipokit: the wire shapes (docs/spec.md#ipo-object, #list, #gmp-series, #errors), the records stores keep,
 * and the Store interface every storage backend implements.
 */

import type { IpoRecordShape } from './ipo-fields.js';

// Each vocabulary is listed once, here; its type, the parameter parsers, the OpenAPI
// document and the stores' columns are derived from the list.

/** The IPO types, in the order the API lists them. */
export const IPO_TYPES = ['EQ', 'SME', 'DEBT'] as const;
/** IPO type: mainboard equity, SME, or debt. */
export type IpoType = (typeof IPO_TYPES)[number];
/** The exchanges, in the order the API lists them. */
export const EXCHANGES = ['nse', 'bse'] as const;
/** An exchange an IPO lists on. */
export type Exchange = (typeof EXCHANGES)[number];
/** The statuses in the order the API's documentation and messages list them. */
export const STATUS_VALUES = ['open', 'upcoming', 'listed', 'closed', 'announced'] as const;
/** Derived status of an IPO (docs/spec.md#status). */
export type IpoStatus = (typeof STATUS_VALUES)[number];
/** Account plan. */
export type Plan = 'free' | 'paid' | 'pro';
/** The GMP aggregation fields, in the order of the `aggregations` object. */
export const GMP_FIELDS = ['mean', 'median', 'min', 'max', 'mode'] as const;
/** GMP aggregation field. */
export type GmpField = (typeof GMP_FIELDS)[number];
/** The GMP series intervals, shortest first. */
export const GMP_INTERVALS = ['5m', '10m', '15m', '30m', 'hourly', 'daily', 'weekly'] as const;
/** GMP series bucket size. */
export type GmpInterval = (typeof GMP_INTERVALS)[number];

/** Every event type (docs/spec.md#webhooks), in the order the contract lists them. */
export const EVENT_TYPES = ['ipo.created', 'ipo.updated', 'ipo.deleted', 'ipo.status_changed', 'gmp.snapshot', 'subscription.snapshot'] as const;
/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];
/**
 * The type of the test event an account holder sends to one endpoint (docs/spec.md#webhooks):
 * delivery-only, never an endpoint's subscription.
 */
export const TEST_EVENT_TYPE = 'webhook.test';
/** The type of an event a delivery sends: one of {@link EVENT_TYPES}, or the test event's. */
export type DeliveryEventType = EventType | typeof TEST_EVENT_TYPE;

/**
 * The investor categories of a subscription snapshot (docs/spec.md#subscription), in the
 * order of its `times` object: qualified institutions, non-institutions (with the big and
 * small NII parts), retail, employees, shareholders, and the issue as a whole.
 */
export const SUBSCRIPTION_CATEGORIES = ['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total'] as const;
/** One of {@link SUBSCRIPTION_CATEGORIES}. */
export type SubscriptionCategory = (typeof SUBSCRIPTION_CATEGORIES)[number];
/**
 * Times subscribed per category: a number >= 0 with at most 2 decimals, or null for a
 * category the issue does not have or the source did not give. Keys in
 * {@link SUBSCRIPTION_CATEGORIES} order.
 */
export type SubscriptionTimes = Record<SubscriptionCategory, number | null>;

/** A subscription snapshot as stores keep it: what the exchanges published at one instant. */
export interface SubscriptionRecord {
  ipoId: string;
  /** The instant, epoch milliseconds. */
  timestamp: number;
  /** Every category present, in {@link SUBSCRIPTION_CATEGORIES} order (null: not given). */
  times: SubscriptionTimes;
}

/** The subscription snapshot of the wire (the IPO object's `subscription`). */
export interface SubscriptionSnapshot {
  /** ISO-8601 UTC with milliseconds. */
  asOf: string;
  times: SubscriptionTimes;
}

/** One point of the subscription route's series: its instant and the times per category. */
export type SubscriptionPoint = { timestamp: string } & SubscriptionTimes;

/** The answer of `GET /ipos/{identifier}/subscription` (docs/spec.md#subscription-series). */
export interface SubscriptionSeries {
  ipoId: string;
  symbol: string | null;
  /** Every snapshot in range, ascending. */
  series: SubscriptionPoint[];
  /** The effective range (`to` absent: now) and the number of points. */
  meta: { from: string; to: string; count: number };
}

/** The three dates that decide an IPO's status. */
export interface IpoDates {
  startDate: string | null;
  endDate: string | null;
  listingDate: string | null;
}

/** One event of an IPO's schedule. */
export interface ScheduleEvent {
  event: string;
  date: string;
}

/**
 * An IPO as stores keep it: every imported field present (unknown = `null`, lists = `[]`),
 * exchanges and listing prices as `nse` before `bse`, the schedule stably sorted by date.
 * The derived fields (`status`, `isSme`, `lotSize`, `priceBand`, `issueSizeCrore`, `gmp`) are
 * not stored. Its fields are those of
 * `IPO_FIELDS` (model/ipo-fields.ts) that are not derived, in that order.
 */
export interface IpoRecord extends IpoRecordShape {}

/** The five aggregations of one snapshot, in integer paise (already rounded), or null. */
export type GmpAggregationsPaise = Record<GmpField, number | null>;

/** A GMP snapshot as stores keep it. */
export interface SnapshotRecord {
  ipoId: string;
  /** The snapshot's instant, epoch milliseconds. */
  timestamp: number;
  /** Sources that reported a number, ascending by name in code-point order; prices in paise. */
  sources: Array<{ name: string; paise: number }>;
  /** Aggregations across `sources`, each rounded once to whole paise; all null without sources. */
  aggregations: GmpAggregationsPaise;
}

/**
 * The GMP snapshot of the wire (docs/spec.md#gmp-snapshot). `estimatedListingPrice` and
 * `gmpPercent` come from the IPO's price band: null when it has none (or its high is 0) or
 * the mean is null.
 */
export interface GmpSnapshot {
  lastUpdatedAt: string;
  aggregations: Record<GmpField, number | null>;
  /** `priceBand.high + aggregations.mean`, in rupees. */
  estimatedListingPrice: number | null;
  /** `aggregations.mean / priceBand.high x 100`, rounded to 2 decimals half away from zero. */
  gmpPercent: number | null;
  sources: Array<{ name: string; gmpPrice: number }>;
}

/** The price band of the wire, in rupees: `priceRange` read as numbers (docs/spec.md#ipo-object). */
export interface PriceBand {
  low: number;
  high: number;
}

/** One exchange's prices on the listing day, in rupees (docs/spec.md#ipo-object). */
export interface ListingPrice {
  exchange: Exchange;
  open: number;
  high: number;
  low: number;
  close: number;
}

/**
 * The IPO object of the wire (docs/spec.md#ipo-object), keys in wire order. Written out, so
 * that it reads as itself wherever it is shown (editors, the API reports, @ipokit/client's
 * declarations, which carry no dependency); it is the static type of `IPO_FIELDS`
 * (model/ipo-fields.ts), which a type test pins it to (ipo-fields.test.ts): a field added
 * to the table and not here, or here and not there, fails the type check.
 */
export interface Ipo {
  id: string;
  name: string;
  symbol: string | null;
  slug: string;
  type: IpoType;
  isSme: boolean;
  exchanges: Exchange[];
  infoUrl: string | null;
  nseInfoUrl: string | null;
  prospectusUrl: string | null;
  logo: string | null;
  startDate: string | null;
  endDate: string | null;
  listingDate: string | null;
  priceRange: string | null;
  minQty: number | null;
  lotSize: number | null;
  minAmount: number | null;
  issueSize: string | null;
  listingGain: string | null;
  status: IpoStatus;
  schedule: ScheduleEvent[];
  about: string | null;
  strengths: string[];
  risks: string[];
  mediaCoverageLinks: string[];
  /** `priceRange` as numbers; null when it is null. */
  priceBand: PriceBand | null;
  /** `issueSize` in crore when it reads e.g. `"192cr"` or `"24.50 crore"`, else null. */
  issueSizeCrore: number | null;
  registrar: string | null;
  leadManagers: string[];
  /** The market maker (SME issues). */
  marketMaker: string | null;
  sector: string | null;
  /** The listing day's prices per exchange, `nse` before `bse`; `[]` until known. */
  listingPrices: ListingPrice[];
  /** The latest subscription snapshot at or before now; null when there is none. */
  subscription: SubscriptionSnapshot | null;
  /** Present only when includeGmp=true was asked for and allowed. */
  gmp?: GmpSnapshot | null;
}

/** Body of `GET /ipos`. */
export interface ListResponse {
  meta: {
    count: number;
    countOnPage: number;
    totalPages: number;
    page: number;
    limit: number;
    /** Only on the keyless partial response. */
    info?: string;
  };
  ipos: Ipo[];
}

/** Body of `GET /ipos/{identifier}`. */
export interface IpoResponse {
  ipo: Ipo;
}

/** Body of `GET /ipos/{identifier}/gmp`. */
export interface GmpSeries {
  ipoId: string;
  symbol: string | null;
  interval: GmpInterval;
  field: GmpField;
  series: Array<{ timestamp: string; price: number | null }>;
  meta: { from: string; to: string; count: number };
}

/** Every error body (docs/spec.md#errors), keys in this order. */
export interface ErrorBody {
  status: string;
  title: string;
  detail: string;
  code: string;
  meta?: { parameter: string } | { quotaPerMinute: number | null; expiresIn: number; window: RateWindowName; quota: number };
}

/** An account as stores keep it. */
export interface AccountRecord {
  id: string;
  name: string;
  plan: Plan;
  gmpAddon: boolean;
  /** ISO-8601 UTC with milliseconds. */
  createdAt: string;
}

/** An API key as stores keep it: never the key itself, only its SHA-256. */
export interface ApiKeyRecord {
  id: string;
  accountId: string;
  /** Lowercase hex SHA-256 of the whole key. */
  hash: string;
  /** The key's first 12 characters, for lists. */
  prefix: string;
  label: string;
  createdAt: string;
  revokedAt: string | null;
  /** The instant from which the key is refused, or null: it never expires (docs/spec.md#keys). */
  expiresAt: string | null;
  /** When an admitted request last used the key, at most 60 s stale, or null: never used. */
  lastUsedAt: string | null;
  /** The id of the key this one replaced by a rotation, or null: it was created, not rotated. */
  rotatedFrom: string | null;
}

/** What a key lookup yields: the key and its account's plan, read together. */
export interface KeyGrant {
  keyId: string;
  accountId: string;
  plan: Plan;
  gmpAddon: boolean;
  revoked: boolean;
  /** The key's `expiresAt`: the core refuses the key from that instant on. */
  expiresAt: string | null;
}

/** Largest number of active keys per plan, handed to the store for its atomic check. */
export type ActiveKeyLimits = Readonly<Record<Plan, number>>;

/** The filters, order and page of a list query, already validated by the core. */
export interface ListQuery {
  status: IpoStatus;
  /** Today in Asia/Kolkata, `YYYY-MM-DD`: status is derived against it (docs/spec.md#status). */
  today: string;
  /** Types to keep, or null for all. */
  types: IpoType[] | null;
  source: Exchange | null;
  /** startDate >= this. */
  startDate: string | null;
  /** endDate <= this. */
  endDate: string | null;
  /** startDate falls in this year (four digits). */
  year: string | null;
  /** Matches to skip: (page - 1) * limit. May exceed the count, and 2^31. */
  offset: number;
  limit: number;
  /** When a number: also return each IPO's latest snapshot at or before this instant (ms). */
  gmpAt: number | null;
  /**
   * Keep only IPOs whose name or symbol contains this text, ASCII case ignored (no other
   * folding, `%` and `_` literal). Absent or null: no such filter.
   */
  q?: string | null;
  /**
   * When a number: also return each IPO's latest subscription snapshot at or before this
   * instant (ms) as `subscription`. The core always asks (it is on every IPO object).
   */
  subscriptionAt?: number | null;
}

/** One IPO with, when asked, its latest visible snapshot (null: none yet). */
export interface IpoRow {
  ipo: IpoRecord;
  gmp?: SnapshotRecord | null;
  /** With `subscriptionAt` asked for: the latest subscription snapshot then, or null. */
  subscription?: SubscriptionRecord | null;
}

/** A subscription series query: snapshots of one IPO with `from <= timestamp <= to`. */
export interface SubscriptionQuery {
  ipoId: string;
  /** Inclusive bounds, epoch ms. The core has already cut `to` at now. */
  from: number;
  to: number;
}

/** A GMP bucket query: snapshots of one IPO with `from <= timestamp <= to`. */
export interface GmpBucketQuery {
  ipoId: string;
  field: GmpField;
  /** Inclusive bounds, epoch ms. The core has already cut `to` at now. */
  from: number;
  to: number;
  /** Bucket width in ms; a bucket starts at `origin + k * size`. */
  size: number;
  origin: number;
}

/**
 * One bucket that holds at least one snapshot: the exact sum (paise) and count of the
 * non-null values of the field. `sum` is a bigint when it leaves the safe-integer range.
 */
export interface GmpBucket {
  start: number;
  sum: number | bigint;
  count: number;
}

/** The rate-limit windows a plan can sell (docs/spec.md#limits), in the order headers list them. */
export const RATE_WINDOWS = ['minute', 'hour', 'day', 'gmp-minute', 'gmp-day'] as const;
/** A window's name: `minute`, `hour`, `day`, `gmp-minute` or `gmp-day`. */
export type RateWindowName = (typeof RATE_WINDOWS)[number];

/**
 * One window a request draws on. A window is identified by its `key`, its length `ms` and,
 * for a calendar window, its `start`: two windows that differ in any of them share nothing.
 *
 * - Sliding (no `start`): a hit at t counts at `now` while `now - t < ms`.
 * - Calendar (`start` given, e.g. 00:00 IST of the day): the window is the period that
 *   begins at `start`, a count of the hits charged to it; it starts again empty as the
 *   next period, which is another window (another `start`).
 */
export interface RateLimitWindow {
  /** Owner of the window, e.g. `acct:<id>`, `gmp:<id>`, `addr:<address>`. */
  key: string;
  /** Finite, >= 0. */
  quota: number;
  /** The window's length in ms, a positive integer (60,000, 3,600,000 or 86,400,000 from the router). */
  ms: number;
  /** For a calendar window: when its period began (epoch ms). Absent for a sliding window. */
  start?: number;
}

/** What a window looks like after a rate-limit hit, for the headers and the 429 body. */
export interface RateLimitWindowState {
  /** Hits inside the window at `now`, after charging this request if it was admitted. */
  count: number;
  /**
   * The oldest hit inside a sliding window (ms), or null when it is empty. For a calendar
   * window: its `start` when it holds a hit, else null. Either way the window next frees a
   * place at `oldest + ms`.
   */
  oldest: number | null;
  /**
   * When `count >= quota`, the time from which the window has room again is `blocking + ms`:
   * for a sliding window the hit whose leaving brings it below quota (the `(count - quota)`-th
   * oldest, 0-based), for a calendar window its `start`. Otherwise null.
   */
  blocking: number | null;
}

/** Result of {@link RateLimiter.hitRateLimit}. */
export interface RateLimitOutcome {
  admitted: boolean;
  windows: RateLimitWindowState[];
}

/** The routes usage is counted by, in the order the API lists them. */
export const USAGE_ROUTES = ['list', 'ipo', 'gmp', 'subscription'] as const;
/** The routes usage is counted by (one of {@link USAGE_ROUTES}). */
export type UsageRoute = (typeof USAGE_ROUTES)[number];

/** A keyed request's usage, counted in the same step that charges (or refuses) it. */
export interface UsageCharge {
  accountId: string;
  keyId: string;
  route: UsageRoute;
  /** The IST calendar day of the request, `YYYY-MM-DD`. */
  day: string;
}

/** Counted usage of one key on one route and IST day (`getUsage`). */
export interface UsageRow {
  day: string;
  keyId: string;
  route: UsageRoute;
  /** Requests admitted by the limiter. */
  admitted: number;
  /** Requests refused with a 429. */
  refused: number;
}

/** Options of a data write ({@link IpoStore.writeDataset}, {@link IpoStore.deleteIpos}). */
export interface WriteOptions {
  /** When the write happens (epoch ms), for its events. Default: the store's own clock. */
  at?: number;
}

/** Result of {@link IpoStore.writeDataset}: conflicts with stored data; empty means written. */
export type DatasetConflict =
  | { kind: 'unknown-ipo'; snapshot: number }
  /** `subscription[snapshot]` names an IPO neither in the write nor stored. */
  | { kind: 'unknown-ipo-subscription'; snapshot: number }
  | { kind: 'symbol-taken'; ipo: number; holder: string }
  | { kind: 'slug-taken'; ipo: number; holder: string };

/**
 * What the core passes with each store call it makes while answering a request.
 */
export interface StoreCallOptions {
  /**
   * When the core stops waiting for this call and answers the request 503 (after
   * `storeTimeoutMs`), on the clock of `performance.now()` (monotonic; not the request
   * clock, which tests may move). A call that has not started by then (waiting for a
   * connection, say) MUST NOT start, and `hitRateLimit` MUST NOT record a hit once it has
   * passed: the request it belongs to has been answered.
   */
  deadline: number;
}

/**
 * The storage contract, in three capabilities that a backend may implement apart:
 * {@link IpoStore} (the IPO data), {@link AccountStore} (accounts and keys) and
 * {@link RateLimiter} (the windows). `memoryStore()` and `postgresStore()` implement all
 * three in one object, a {@link Store}; `ipoRouter(store, { limiter })` takes the limiter
 * from elsewhere (a Redis one, say).
 *
 * Common rules: every method returns a Promise; a method with more than one input takes one
 * object. Failures of the backend (connection, query, timeout) MUST reject, ideally with
 * `IpokitError` code `ERR:UNAVAILABLE` and the original error as `cause`; the core answers
 * them with 503. Times are epoch milliseconds unless named `...At` (ISO strings). Strings
 * compare by code point; `symbol` and `slug` lookups fold ASCII case only. The methods the
 * core calls while answering a request (`findApiKey`, `recordKeyUse`, `hitRateLimit`,
 * `listIpos`, `findIpo`, `gmpBuckets`) take a {@link StoreCallOptions} as a second argument: a backend
 * that can wait (for a connection, a lock) MUST honour its `deadline`.
 *
 * Run `testStore` from `@ipokit/testing` to check a whole store, or `testIpoStore`,
 * `testAccountStore` and `testLimiter` for one capability.
 */
export type Store = IpoStore & AccountStore & RateLimiter;

/** The IPO data: datasets written and deleted atomically, listed, found and bucketed. See {@link Store} for the common rules. */
export interface IpoStore {
  /**
   * Upserts IPOs (replacing the stored IPO with the same id, whole) and snapshots
   * (replacing the stored one with the same `ipoId` and `timestamp`) in one atomic step:
   * a concurrent reader MUST see all of it or none of it.
   *
   * Before writing, in the same atomic step, it MUST check the result against what is
   * stored and return every conflict: a snapshot whose `ipoId` is neither in `ipos` nor
   * stored; an IPO whose symbol (ASCII case folded) or slug is held by a stored IPO whose
   * id is not in `ipos`. When any conflict is returned nothing is written. The input is
   * already valid and free of duplicates within itself.
   *
   * A store that is also a {@link WebhookStore} records the write's events in the same
   * atomic step (docs/spec.md#webhooks), so a write that fails records none: an IPO that was
   * not stored is `ipo.created`; one stored with different content, `ipo.updated`, and
   * `ipo.status_changed` when its status on the IST day of `options.at` differs; a snapshot
   * that was not stored or was stored with different content, `gmp.snapshot`. The events
   * are those `eventsOfWrite` builds, recorded only when some enabled endpoint takes their
   * type, with one pending delivery (due at once) per such endpoint.
   */
  writeDataset(input: { ipos: IpoRecord[]; snapshots: SnapshotRecord[]; subscription?: SubscriptionRecord[] }, options?: WriteOptions): Promise<DatasetConflict[]>;

  /**
   * Deletes the IPOs with these ids and all their snapshots, atomically; unknown ids are
   * skipped. Resolves to how many IPOs and snapshots were removed. A store that is also a
   * {@link WebhookStore} records `ipo.deleted` for each IPO removed, as `writeDataset` does.
   */
  deleteIpos(ids: string[], options?: WriteOptions): Promise<{ ipos: number; snapshots: number }>;

  /**
   * The IPOs whose derived status on `query.today` is `query.status` and that match every
   * filter, in the contract's order for that status, `offset` skipped, at most `limit`
   * returned, with `count` the number of all matches. It MUST NOT fail when `offset` is
   * past the end (an empty page). With `gmpAt` set each row carries `gmp`: the latest
   * snapshot with `timestamp <= gmpAt`, or null.
   *
   * This and the other two reads MAY answer synchronously, with the value instead of a
   * promise, as a store that holds its data in memory can: the request then makes none of
   * the promises a store call costs. Such an answer MUST NOT block (nothing can time it
   * out); a failure is still a rejected promise, or a throw.
   */
  listIpos(query: ListQuery, call?: StoreCallOptions): { count: number; rows: IpoRow[] } | Promise<{ count: number; rows: IpoRow[] }>;

  /**
   * The IPO named by `identifier`: the one whose id equals it exactly, else the one whose
   * symbol equals it ignoring ASCII case, else the one whose slug does; null when none.
   * With `gmpAt` set the row carries `gmp` as in {@link IpoStore.listIpos}.
   */
  findIpo(query: { identifier: string; gmpAt: number | null; subscriptionAt?: number | null }, call?: StoreCallOptions): IpoRow | null | Promise<IpoRow | null>;

  /**
   * The buckets that hold at least one snapshot of `ipoId` in `[from, to]`, ascending by
   * start; for each, the exact integer sum and count of the field's non-null values.
   */
  gmpBuckets(query: GmpBucketQuery, call?: StoreCallOptions): GmpBucket[] | Promise<GmpBucket[]>;

  /**
   * The subscription snapshots of `ipoId` with `from <= timestamp <= to`, ascending by
   * timestamp (docs/spec.md#subscription-series). May answer synchronously, as the other reads.
   */
  subscriptionSeries(query: SubscriptionQuery, call?: StoreCallOptions): SubscriptionRecord[] | Promise<SubscriptionRecord[]>;

  /** Frees what the store itself holds (timers, caches); never a client it was given. */
  close?(): Promise<void>;
}

/** Accounts and their API keys. See {@link Store} for the common rules. */
export interface AccountStore {
  /** Stores a new account. Ids are unique (the core generates them). */
  insertAccount(account: AccountRecord): Promise<void>;

  /** The account with this id, or null. */
  getAccount(id: string): Promise<AccountRecord | null>;

  /**
   * At most `limit` accounts whose id is greater than `after` (all when null), ascending by
   * id in code-point order.
   */
  listAccounts(input: { after: string | null; limit: number }): Promise<AccountRecord[]>;

  /**
   * Changes plan and/or add-on. Atomically with the change, it MUST refuse (`'too-many-keys'`,
   * nothing changed) when the account would hold more active keys than `maxActiveKeys`
   * allows for its new plan, even when keys are being created concurrently. A key is active
   * at `now` when it is not revoked and its `expiresAt` is null or later than `now`
   * (ISO strings as the core writes them, which compare as text).
   */
  updateAccount(input: {
    id: string;
    plan?: Plan;
    gmpAddon?: boolean;
    maxActiveKeys: ActiveKeyLimits;
    now: string;
  }): Promise<AccountRecord | 'not-found' | 'too-many-keys'>;

  /**
   * Stores a new key for `key.accountId`. Atomically (two concurrent calls must not both
   * pass), it MUST refuse with `'too-many-keys'` when the account already holds
   * `maxActiveKeys[plan]` keys active at `now` (see {@link AccountStore.updateAccount}), and
   * with `'not-found'` when the account is unknown. The key replaced none: its `rotatedFrom`
   * reads null.
   */
  insertApiKey(input: { key: Omit<ApiKeyRecord, 'rotatedFrom'>; maxActiveKeys: ActiveKeyLimits; now: string }): Promise<'ok' | 'not-found' | 'too-many-keys'>;

  /**
   * Rotates the key `id`, in one atomic step: stores a new key with `key`'s id, hash, prefix
   * and `createdAt`, the old key's account, label and `expiresAt` (as it was before this
   * rotation: a rotation never extends a key's life), `rotatedFrom` the old key's id, and no
   * revocation or use; and sets the old key's `expiresAt` to the earlier of its own and
   * `overlapEndsAt`.
   * Resolves to the new key's record, or refuses, changing nothing: `'not-found'` when no
   * key has this id, `'inactive'` when it is revoked or expired at `now`, `'too-many-keys'`
   * when the account's other keys active at `now` already number `maxActiveKeys[plan]` (the
   * new key takes the old one's place in the count, so a free account may rotate its one
   * key, and holds two during the overlap). Concurrent calls and key creations are
   * serialised as for {@link AccountStore.insertApiKey}.
   */
  rotateApiKey(input: {
    id: string;
    key: Pick<ApiKeyRecord, 'id' | 'hash' | 'prefix' | 'createdAt'>;
    now: string;
    overlapEndsAt: string;
    maxActiveKeys: ActiveKeyLimits;
  }): Promise<ApiKeyRecord | 'not-found' | 'inactive' | 'too-many-keys'>;

  /** The account's keys ordered by `createdAt`, then `id`; null when the account is unknown. */
  listApiKeys(accountId: string): Promise<ApiKeyRecord[] | null>;

  /**
   * Marks the key revoked at `at` (keeping an earlier revocation as it is). Resolves to
   * false when no key has this id.
   */
  revokeApiKey(input: { id: string; at: string }): Promise<boolean>;

  /**
   * Records a use of the key: sets its `lastUsedAt` to `at` unless it already holds a later
   * instant (several processes write their own uses). An unknown id is no error. The core
   * calls it at most once a minute per key and process, never once per request.
   */
  recordKeyUse(input: { id: string; at: string }, call?: StoreCallOptions): Promise<void>;

  /** The key with this SHA-256 hex, with its account's current plan, or null. */
  findApiKey(hash: string, call?: StoreCallOptions): Promise<KeyGrant | null>;

  /** Frees what the store itself holds (timers, caches); never a client it was given. */
  close?(): Promise<void>;
}

/**
 * The rate limiter: exact windows shared by every process that uses the same backend, and
 * the usage counted with them (docs/spec.md#limits, #usage). See {@link Store} for the
 * common rules.
 */
export interface RateLimiter {
  /**
   * Charges one request to `windows`, atomically across all of them and across every
   * process sharing the backend. A hit counts in a sliding window while `now - t < ms`, in
   * a calendar window for as long as that window (that `start`) is asked about. The request
   * is admitted only when every window holds fewer than `quota` hits; then it is recorded
   * in each (once in a window named twice); a refused request records nothing. A sliding
   * window MUST keep no more than `quota` hits (older ones may be dropped), a calendar
   * window only a count, and the backend MUST eventually forget sliding windows whose hits
   * have all left and calendar windows whose period has ended (`start + ms` well past).
   *
   * With `usage`, the same atomic step adds 1 to that key's `admitted` or `refused` count
   * for the route and day, so a counted request is exactly a charged (or refused) one.
   * Resolves to the decision and each window's state after it, in the order of `windows`.
   * A limiter in memory MAY answer synchronously, as {@link IpoStore.listIpos} may.
   */
  hitRateLimit(input: { now: number; windows: RateLimitWindow[]; usage?: UsageCharge }, call?: StoreCallOptions): RateLimitOutcome | Promise<RateLimitOutcome>;

  /**
   * Each window's state at `now` as {@link RateLimiter.hitRateLimit} would describe it,
   * charging nothing and recording nothing. In the order of `windows`. For an account's
   * "windows now" (`getAccountWindows`); never called on the request path.
   */
  peekRateLimit(input: { now: number; windows: RateLimitWindow[] }): Promise<RateLimitWindowState[]>;

  /**
   * The usage counted for an account on the IST days `from` to `to` (inclusive,
   * `YYYY-MM-DD`), of one key or all: rows with a non-zero count only, ordered by day,
   * then key id, then route, in code-point order.
   */
  readUsage(query: { accountId: string; from: string; to: string; keyId?: string }): Promise<UsageRow[]>;

  /** Frees what the store itself holds (timers, caches); never a client it was given. */
  close?(): Promise<void>;
}

/**
 * A webhook endpoint as stored (docs/spec.md#webhooks): where an account wants events sent,
 * which, and the secret that signs them (kept, since every delivery is signed with it).
 */
export interface WebhookRecord {
  /** `wh_` + 20 base62 characters. */
  id: string;
  accountId: string;
  /** An absolute `http:` or `https:` URL. */
  url: string;
  /** The event types sent there: at least one, each once, in the order of `EVENT_TYPES`. */
  events: string[];
  description: string | null;
  /** `whsec_` + the base64 of 24 random bytes. */
  secret: string;
  createdAt: string;
  /** Set when deliveries failed for 5 days without a success; null while it is enabled. */
  disabledAt: string | null;
  /** Set while the account holder has paused it (no attempts; deliveries stay pending); null else. */
  pausedAt: string | null;
  /** The secret before the last rotation, still signing beside `secret` until `previousSecretExpiresAt`; null when none. */
  previousSecret: string | null;
  /** When `previousSecret` stops signing (ISO); null when there is none. */
  previousSecretExpiresAt: string | null;
}

/**
 * A change of an endpoint ({@link WebhookStore.updateWebhook}); what is absent stays as it is.
 */
export interface WebhookChange {
  /** The new event types: at least one, each once, in the order of `EVENT_TYPES`. */
  events?: string[];
  description?: string | null;
  /**
   * An instant (ISO): paused from then (an endpoint paused already keeps its `pausedAt`).
   * Null: resumed; this also enables an endpoint the worker disabled (`disabledAt` null,
   * taking the events recorded from now on) and ends its failing streak.
   */
  pausedAt?: string | null;
  /**
   * A new secret: the current one becomes `previousSecret` and keeps signing until
   * `previousSecretExpiresAt` (ISO; an instant not after now: not at all).
   */
  rotate?: { secret: string; previousSecretExpiresAt: string };
}

/**
 * Webhook endpoints, per account: a capability of its own, beside {@link AccountStore}.
 * See {@link Store} for the common rules.
 */
export interface WebhookStore {
  /**
   * Stores a new endpoint; `'not-found'` (nothing stored) when its account is unknown, and
   * `'too-many-webhooks'` (nothing stored) when the account already has `maxPerAccount`
   * endpoints (disabled ones count). One atomic step: concurrent inserts never pass the cap.
   */
  insertWebhook(webhook: WebhookRecord, limits: { maxPerAccount: number }): Promise<'ok' | 'not-found' | 'too-many-webhooks'>;

  /** The account's endpoints ordered by `createdAt`, then `id`; null when the account is unknown. */
  listWebhooks(accountId: string): Promise<WebhookRecord[] | null>;

  /** The endpoint with this id, or null. */
  getWebhook(id: string): Promise<WebhookRecord | null>;

  /** Deletes the endpoint and its deliveries; false when no endpoint has this id. */
  deleteWebhook(id: string): Promise<boolean>;

  /**
   * Changes an endpoint in one atomic step (see {@link WebhookChange}) and resolves to it as
   * it is after; null when no endpoint has this id. New event types apply to the events
   * recorded after the change.
   */
  updateWebhook(id: string, change: WebhookChange): Promise<WebhookRecord | null>;

  /**
   * Adds a pending delivery `id` of `event` (recorded for it alone: no endpoint is owed it) to
   * the endpoint `webhookId`, due at `now`, whatever its event types; null when no endpoint
   * has this id. A disabled endpoint's ends as failed at once, as a replay's does.
   */
  addDelivery(input: { webhookId: string; id: string; event: { id: string; type: DeliveryEventType; at: number; body: string }; now: number }): Promise<DeliveryRecord | null>;

  /** The endpoint's delivery `id` with the body its event sends; null when it has none of that id. */
  getDelivery(input: { webhookId: string; id: string }): Promise<(DeliveryRecord & { body: string }) | null>;

  /**
   * Records the status changes due at the IST midnights in `(covered, now]`, where `covered`
   * is the instant the previous call (of any process sharing the backend) covered up to, or
   * when none has, the start of `now`'s IST day less 1 ms. Each change is the event
   * `eventsOfStatusChanges` builds from `dueStatusChanges`, fanned out as
   * {@link IpoStore.writeDataset}'s events are. One atomic step: concurrent calls record each
   * change once (its id is the same in every process; an id already recorded is skipped).
   * Resolves to how many events were recorded and `nextStatusChangeAt(ipos, now)`.
   */
  recordStatusChanges(input: { now: number }): Promise<{ recorded: number; nextAt: number | null }>;

  /**
   * Claims up to `limit` pending deliveries whose `nextAttemptAt <= now`, of enabled
   * endpoints, shared fairly (docs/spec.md#webhooks). Each delivery has a place in the
   * store's owed order: the deliveries of a write's events follow the writes' order (and
   * the events' order within a write); a replay comes after everything owed before it.
   * 1. Per endpoint, its due deliveries by (`nextAttemptAt`, owed order), numbered from 1
   *    (`rankInWebhook`); those past `perWebhook` less `busy` (the caller's attempts in
   *    flight to that endpoint) are left.
   * 2. Per account, what is left by (`busy` of the endpoint + `rankInWebhook`,
   *    `nextAttemptAt`, owed order, webhook id), numbered from 1 (`rankInAccount`); those
   *    past `perAccount` less `busyAccounts` (the caller's attempts in flight for that
   *    account) are left.
   * 3. The first `limit` of what is left by (`busyAccounts` of the account +
   *    `rankInAccount`, `nextAttemptAt`, owed order, webhook id).
   * A paused endpoint's deliveries are not claimed (they stay pending, and are made as owed).
   * A claim is a lease: until `now + leaseMs` no other claim returns the delivery, and only a
   * {@link WebhookStore.finishDeliveries} with its `lease` token settles it. A lease that runs
   * out unsettled (its worker died) makes the delivery claimable again: at least once.
   * Concurrent claims never return one delivery twice. A write's fan-out (its events'
   * deliveries) may be made here, in bounded pieces, rather than in the write.
   */
  claimDeliveries(input: {
    now: number;
    limit: number;
    perWebhook: number;
    perAccount: number;
    leaseMs: number;
    busy: ReadonlyMap<string, number>;
    busyAccounts: ReadonlyMap<string, number>;
  }): Promise<ClaimedDelivery[]>;

  /**
   * Settles claimed deliveries, each under its lease (a result whose lease is no longer the
   * delivery's is ignored: another claim has it). Delivered: the state becomes `delivered`
   * and the endpoint's failing streak ends. Failed: `attempts` + 1, the last attempt's
   * status and error kept, and `nextAttemptAt` as given (null: the state becomes `failed`);
   * the endpoint's failing streak starts at `at` unless running, and when it began at or
   * before `disableBefore` the endpoint is disabled (`disabledAt` = `at`).
   */
  finishDeliveries(results: readonly DeliveryResult[]): Promise<void>;

  /**
   * The endpoint's deliveries, newest first (`createdAt` descending, then `id` descending),
   * after the delivery `before` in that order when given, at most `limit`. Null when no
   * endpoint has this id. The deliveries owed to the endpoint by writes whose fan-out is not
   * made yet are made first (its own only: a listing never waits for other endpoints').
   */
  listDeliveries(input: { webhookId: string; before: string | null; limit: number }): Promise<DeliveryRecord[] | null>;

  /**
   * Sends a delivery's event again: a new pending delivery `id` of the same event to the same
   * endpoint, due at `now`. While a delivery of that event to that endpoint is still pending
   * (`of` itself, or an earlier replay of it), that one is returned as it is and nothing is
   * added. Null when the endpoint `webhookId` has no delivery `of`.
   */
  replayDelivery(input: { webhookId: string; of: string; id: string; now: number }): Promise<DeliveryRecord | null>;

  /**
   * Forgets settled (delivered or failed) deliveries whose last attempt, or creation when
   * none was made, is before `before`, and those of an endpoint past its newest
   * `keepPerWebhook` settled ones (newest by `createdAt`, then `id`), and the events left
   * without deliveries. Pending deliveries are never forgotten. May stop after a bounded
   * amount of work (a worker calls it again later). Resolves to how many deliveries went.
   */
  pruneDeliveries(input: { before: number; keepPerWebhook: number }): Promise<number>;

  /**
   * Calls `wake` soon after deliveries become due without a clock passing (an import, a
   * replay, a status change recorded), in this process or, when the backend is shared,
   * another. Optional: without it a worker polls. Resolves to a function that stops it.
   */
  watchDeliveries?(wake: () => void): Promise<() => Promise<void>>;

  /**
   * The outbox's backlog, for an operator's gauges (docs/spec.md#metrics). `pending` MUST
   * count every delivery still owed to an endpoint that is not disabled (paused ones
   * included: their backlog waits for the resume): the pending ones made (leased or not,
   * due or retrying later; replays and test events included) plus those owed by writes whose
   * fan-out is not made yet, one per event and endpoint that will get it (a write of one
   * event taken by three endpoints counts 3: each is a request a worker has to send). A
   * disabled endpoint's are not counted: they are never sent. `oldestAt` is the creation
   * instant (epoch ms) of the oldest of them: a made delivery's `createdAt`, an owed one's the
   * write's instant (its `createdAt` to be); null when `pending` is 0. One read, whose cost
   * grows with the backlog only, never with the settled deliveries kept. Optional: without
   * it the server has no outbox gauges.
   */
  outboxStats?(): Promise<{ pending: number; oldestAt: number | null }>;
}

/** An event as recorded: the body is what every delivery of it sends, byte for byte. */
export interface EventRecord {
  /** The same in every process that records it: `evt_sc_...` for a status change, else `evt_` + 20 base62. */
  id: string;
  type: EventType;
  /** When it happened, epoch ms. */
  at: number;
  /** `{"type":...,"timestamp":...,"data":...}` */
  body: string;
}

/** Where a delivery is: waiting for an attempt, done, or out of retries. */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One event's delivery to one endpoint, with its attempts so far. Times are epoch ms. */
export interface DeliveryRecord {
  /** `dlv_` + 20 base62. */
  id: string;
  webhookId: string;
  eventId: string;
  eventType: DeliveryEventType;
  createdAt: number;
  state: DeliveryState;
  /** Attempts made (and settled) so far. */
  attempts: number;
  /** When the next attempt is due; null unless pending. */
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  /** The HTTP status of the last attempt, null when it got none (or none was made). */
  lastStatus: number | null;
  /** Why the last attempt failed, null when it did not or none was made. */
  lastError: string | null;
  /** The first 1 KB of the last attempt's answer body; null when it got no answer (or none was made). */
  lastResponseBody: string | null;
}

/** A delivery handed to a worker: with what it needs to send it. */
export interface ClaimedDelivery {
  delivery: DeliveryRecord;
  /** The account of the delivery's endpoint (the worker shares its attempts across accounts). */
  accountId: string;
  /** The token that settles this claim. */
  lease: string;
  url: string;
  secret: string;
  /** The secret before the endpoint's last rotation while it may still sign (see `previousSecretExpiresAt`); null else. */
  previousSecret: string | null;
  /** Epoch ms: `previousSecret` signs attempts made before it; null when there is none. */
  previousSecretExpiresAt: number | null;
  body: string;
}

/** The outcome of one attempt, for {@link WebhookStore.finishDeliveries}. */
export interface DeliveryResult {
  id: string;
  lease: string;
  /** When the attempt ended, epoch ms. */
  at: number;
  delivered: boolean;
  status: number | null;
  error: string | null;
  /** The first 1 KB of the answer body (no NUL characters); null or absent when no answer came. */
  responseBody?: string | null;
  /** When failed: the next attempt's instant, or null (no retries left). */
  nextAttemptAt: number | null;
  /** When failed: an endpoint failing since this instant or earlier is disabled. */
  disableBefore: number;
}

/** A source's price in a dataset snapshot: rupees with at most 2 decimals, or null. */
export interface DatasetSource {
  name: string;
  gmpPrice: number | null;
}

/** A GMP snapshot as a dataset gives it. */
export interface DatasetSnapshot {
  ipoId: string;
  /** ISO-8601 instant with `Z` or an offset, at most 3 fractional digits. */
  timestamp: string;
  sources: DatasetSource[];
}

/**
 * An IPO as a dataset gives it: `id`, `name`, `slug` and `type` are required, everything
 * else may be omitted (read as null, lists as []). `status`, `isSme`, `lotSize`, `gmp`,
 * `priceBand`, `issueSizeCrore` and `subscription` are ignored when present, so the API's
 * own output imports back.
 */
export type DatasetIpo = Pick<IpoRecord, 'id' | 'name' | 'slug' | 'type'> &
  Partial<Omit<IpoRecord, 'id' | 'name' | 'slug' | 'type'>> & {
    status?: unknown;
    isSme?: unknown;
    lotSize?: unknown;
    gmp?: unknown;
    priceBand?: unknown;
    issueSizeCrore?: unknown;
    subscription?: unknown;
  };

/** A dataset (docs/spec.md#datasets): every part optional. */
export interface Dataset {
  ipos?: DatasetIpo[];
  gmp?: DatasetSnapshot[];
  subscription?: DatasetSubscription[];
}

/** A subscription snapshot as a dataset gives it: at least one category (null reads null). */
export interface DatasetSubscription {
  ipoId: string;
  /** ISO-8601 instant with `Z` or an offset, at most 3 fractional digits. */
  timestamp: string;
  times: Partial<SubscriptionTimes>;
}

/**
 * One source's latest GMP number for one IPO, as a collector keeps it (docs/spec.md#sources):
 * replaced by each run of the source that reports the IPO again.
 */
export interface SourceReport {
  /** The source's name: the `name` it has in the snapshots combined from its reports. */
  source: string;
  ipoId: string;
  /** The price in paise, or null when the source reported no number. */
  paise: number | null;
  /** The instant of the last run that reported it (epoch ms): it is stale `staleAfterMs` later. */
  at: number;
}

/** What a collector keeps of one source between runs (docs/spec.md#sources), shared through a {@link SourceStore}. */
export interface SourceState {
  source: string;
  /** When its last run started (epoch ms), or null before the first. */
  lastRunAt: number | null;
  /** When its last successful run started, or null. */
  lastSuccessAt: number | null;
  /** Why its last run failed, or null when it succeeded (or has not run). */
  lastError: string | null;
  /** Records its runs wrote, in all: IPOs, GMP snapshots (its own and those combined after its runs) and subscription snapshots. */
  records: number;
  /** Failed runs since the last success (the backoff grows with them). */
  failures: number;
  /** When it is next due (epoch ms). */
  nextRunAt: number;
}

/**
 * One successful run of a source, written by {@link SourceStore.writeSourceRun} as one atomic
 * step: the data of its answer, its reports, the snapshots combined from them, its state.
 */
export interface SourceRunWrite {
  /** The run's source and instant: the reports' `at` and the combined snapshots' `timestamp`. */
  source: string;
  at: number;
  /** The answer's IPOs, GMP snapshots and subscription snapshots, checked and normalised. */
  data: { ipos: IpoRecord[]; snapshots: SnapshotRecord[]; subscription: SubscriptionRecord[] };
  /** The run's reports, one per IPO: each replaces the source's stored report of that IPO. */
  reports: Array<{ ipoId: string; paise: number | null }>;
  /**
   * The snapshots to write at `at`, built from every source's reports of the IPOs whose
   * report this run changed (`changed`, in `reports` order): the collector's rule, which
   * the store calls inside the atomic step, with the reports as they are once this run's
   * are in.
   */
  combine(reports: readonly SourceReport[], changed: readonly string[]): SnapshotRecord[];
  /**
   * The source's state after the run. The store reads it after `combine` returns (which
   * counts the combined snapshots in its `records`).
   */
  state: SourceState;
}

/**
 * What a collector keeps, shared by every process that runs it on one store
 * (docs/spec.md#sources): each source's reports and state, and a lock per source so that a
 * source runs in one process at a time. A store that is not one (the memory store, any
 * other) gets `localSourceStore` of `@ipokit/sources`, which keeps them in the process.
 */
export interface SourceStore {
  /**
   * Runs `fn` holding the source's run lock, and resolves to `{ value }` with what it
   * resolved to; resolves to null at once, without calling it, when another holder has the
   * lock. A holder that dies (its process, its connection) releases the lock.
   */
  withSourceLock<T>(source: string, fn: () => Promise<T>): Promise<{ value: T } | null>;

  /** The states of the sources named (each one stored), in the order named. */
  sourceStates(sources: readonly string[]): Promise<SourceState[]>;

  /** Every stored report of the sources named, ordered by source, then ipoId (code points). */
  sourceReports(sources: readonly string[]): Promise<SourceReport[]>;

  /** Stores a source's state (a failed run, or a run that wrote nothing), replacing the stored one. */
  saveSourceState(state: SourceState): Promise<void>;

  /**
   * In one atomic step, as {@link IpoStore.writeDataset} with its conflict check and events:
   * finds which of `run.reports` change the source's stored report (none stored, or another
   * price), replaces the source's reports of those IPOs and moves all of them to `run.at`,
   * calls `run.combine` with every source's reports of the changed IPOs, and writes
   * `run.data` with the combined snapshots after `run.data.snapshots`, and `run.state`.
   * Runs of different sources on one store take turns, so each combines the others'
   * committed reports. A combined snapshot of an IPO neither in `run.data.ipos` nor stored
   * is an `unknown-ipo` conflict at its index in that list; with any conflict nothing is
   * written (the state neither) and the conflicts are returned.
   */
  writeSourceRun(run: SourceRunWrite, options?: WriteOptions): Promise<{ conflicts: DatasetConflict[]; combined: number }>;
}
