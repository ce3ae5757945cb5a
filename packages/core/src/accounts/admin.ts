/**
 * Account administration (docs/spec.md#limits, #keys): accounts and API keys. Every failure
 * is an `IpokitError`.
 */
import { DAY_MS, dateToEpochMs, isCalendarDate } from '../model/dates.js';
import { IpokitError, storeCall } from '../model/errors.js';
import { invalidateKeyCache } from './key-cache.js';
import { generateApiKey, hashApiKey, KEY_PREFIX_LENGTH, randomId } from './keys.js';
import { DEFAULT_OPTIONS, isKeyCap, KEY_CAP_RULE, resolveOptions, type IpoRouterOptions } from '../model/options.js';
import { describeWindowsNow, drawnWindows, type AccountWindow } from '../limits/rate-limit.js';
import type { AccountRecord, AccountStore, ActiveKeyLimits, ApiKeyRecord, Plan, RateLimiter, UsageRow } from '../model/types.js';

/** Options of the admin functions. */
export interface AdminOptions {
  /** The clock for `createdAt`/`revokedAt`. Default `() => new Date()`. */
  now?: () => Date;
  /**
   * Active keys a paid or pro account may hold ({@link createApiKey}, {@link rotateApiKey},
   * and {@link updateAccount} moving an account to paid or pro); the free plan holds one.
   * Default 100; `Infinity`: no cap. Give the account router's own `maxKeysPerAccount`.
   */
  maxKeysPerAccount?: number;
}

/** No key limit: what a change that moves no account to a plan is checked against. */
const NO_KEY_LIMIT: ActiveKeyLimits = Object.freeze({ free: Infinity, paid: Infinity, pro: Infinity });

/** An account, as the admin functions return it. */
export type Account = AccountRecord;

/** A key as listed: never the key itself. */
export interface ApiKeyInfo {
  id: string;
  prefix: string;
  label: string;
  createdAt: string;
  revokedAt: string | null;
  /** From this instant on the key is refused; null: it never expires. */
  expiresAt: string | null;
  /** The last admitted request with the key, at most 60 s stale; null: never used. */
  lastUsedAt: string | null;
  /** The id of the key this one replaced by {@link rotateApiKey}; null: it was created, not rotated. */
  rotatedFrom: string | null;
}

/** A newly created key: the only time `key` is seen. */
export interface CreatedApiKey {
  id: string;
  key: string;
  prefix: string;
  label: string;
  accountId: string;
  createdAt: string;
  expiresAt: string | null;
}

/** The longest overlap of {@link rotateApiKey}: 7 days, in seconds. */
const MAX_OVERLAP_SECONDS = 604_800;
/** The default overlap of {@link rotateApiKey}: 1 day, in seconds. */
const DEFAULT_OVERLAP_SECONDS = 86_400;
/** The instants `toISOString` writes with 4 year digits (which then compare as text): 0000 to 9999. */
const YEAR_0 = -62_167_219_200_000;
const YEAR_10000 = 253_402_300_800_000;

const PLANS: readonly Plan[] = ['free', 'paid', 'pro'];

/**
 * Creates an account.
 *
 * @example
 * ```ts
 * const acct = await createAccount(store, { name: 'Acme', plan: 'pro', gmpAddon: true });
 * ```
 */
export async function createAccount(
  store: AccountStore,
  input: { name: string; plan: Plan; gmpAddon?: boolean },
  options: AdminOptions = {},
): Promise<Account> {
  const name = text('name', input?.name, 200);
  const plan = planOf(input.plan);
  const gmpAddon = input.gmpAddon ?? false;
  if (typeof gmpAddon !== 'boolean') throw bad('gmpAddon', 'gmpAddon must be a boolean.');
  const account: AccountRecord = { id: randomId('acct'), name, plan, gmpAddon, createdAt: clock(options) };
  await storeCall(() => store.insertAccount(account));
  return { ...account };
}

/**
 * The account with this id; `ERR:NOTFOUND` when there is none.
 *
 * @example
 * ```ts
 * const { plan, gmpAddon } = await getAccount(store, 'acct_3f9a...');
 * ```
 */
export async function getAccount(store: AccountStore, id: string): Promise<Account> {
  const accountId = text('id', id, 200);
  const account = await storeCall(() => store.getAccount(accountId));
  if (account === null) throw new IpokitError('ERR:NOTFOUND', `No account has the id ${JSON.stringify(accountId)}.`);
  return { ...account };
}

/**
 * The account's rate-limit windows as they stand now, read without charging anything:
 * each window the account's requests draw on under these router options (a window whose
 * quota is `Infinity` is off and not listed). `ERR:NOTFOUND` for an unknown account.
 * Pass the router's own `limits`, `now` and `limiter`, so that the numbers are the router's.
 *
 * @example
 * ```ts
 * const windows = await getAccountWindows(store, { accountId: acct.id }, { limits: { paid: { perMinute: 600 } } });
 * // [{ name: 'minute', quota: 600, seconds: 60, remaining: 598, reset: 41 }, { name: 'gmp-minute', ... }] (every window that is on)
 * ```
 */
export async function getAccountWindows(
  store: AccountStore & Partial<RateLimiter>,
  input: { accountId: string },
  options: Pick<IpoRouterOptions, 'limits' | 'now' | 'limiter'> = {},
): Promise<AccountWindow[]> {
  const limiter: Partial<RateLimiter> = options.limiter ?? store;
  const peek = limiter.peekRateLimit;
  if (typeof peek !== 'function') {
    throw bad('limiter', 'getAccountWindows needs a rate limiter: pass a store that has one or the option limiter.');
  }
  const { limits, now: clockNow } = resolveOptions({ ...(options.limits === undefined ? {} : { limits: options.limits }), ...(options.now === undefined ? {} : { now: options.now }) });
  const account = await getAccount(store, input?.accountId);
  const now = clockNow().getTime();
  const windows = drawnWindows({ limits, account, address: '', gmpRoute: true, now });
  const states = windows.length === 0 ? [] : await storeCall(() => peek.call(limiter, { now, windows }));
  return describeWindowsNow(windows, states, now);
}

/** The longest range {@link getUsage} reads, in IST days. */
const MAX_USAGE_DAYS = 366;

/**
 * The usage counted for an account (docs/spec.md#usage): per IST day, key and route, the
 * requests its limiter admitted and those it refused with a 429, from the IST day `from`
 * to `to` inclusive (`YYYY-MM-DD`, at most 366 days), of one key or all. Rows are ordered
 * by day, key id and route (`gmp`, `ipo`, `list`); days without a counted request have no
 * row. Read from the router's limiter: pass the same `limiter` option when it is not the
 * store's own. `ERR:NOTFOUND` for an unknown account, `ERR:BADPARAM` for a bad range.
 *
 * @example
 * ```ts
 * await getUsage(store, { accountId: acct.id, from: '2026-11-01', to: '2026-11-30' });
 * // [{ day: '2026-11-24', keyId: 'key_...', route: 'list', admitted: 42, refused: 3 }, ...]
 * ```
 */
export async function getUsage(
  store: AccountStore & Partial<RateLimiter>,
  query: { accountId: string; from: string; to: string; keyId?: string },
  options: Pick<IpoRouterOptions, 'limiter'> = {},
): Promise<UsageRow[]> {
  const limiter: Partial<RateLimiter> = options.limiter ?? store;
  const read = limiter.readUsage;
  if (typeof read !== 'function') throw bad('limiter', 'getUsage needs a rate limiter that counts usage: pass a store that has one or the option limiter.');
  if (query === null || typeof query !== 'object') throw bad('query', 'getUsage takes { accountId, from, to, keyId? }.');
  const from = day('from', query.from);
  const to = day('to', query.to);
  const span = Math.round(((dateToEpochMs(to) as number) - (dateToEpochMs(from) as number)) / DAY_MS) + 1;
  if (span < 1) throw bad('to', `getUsage needs to on or after from (got from ${from}, to ${to}).`);
  if (span > MAX_USAGE_DAYS) throw bad('to', `getUsage reads at most ${MAX_USAGE_DAYS} days at a time (got ${span}).`);
  const keyId = query.keyId === undefined ? undefined : text('keyId', query.keyId, 200);
  const account = await getAccount(store, query.accountId);
  const rows = await storeCall(() => read.call(limiter, keyId === undefined ? { accountId: account.id, from, to } : { accountId: account.id, from, to, keyId }));
  return rows.map((r) => ({ ...r }));
}

function day(parameter: string, value: unknown): string {
  if (typeof value !== 'string' || !isCalendarDate(value)) throw bad(parameter, `getUsage option ${parameter} must be an IST calendar day written YYYY-MM-DD.`);
  return value;
}

/** Default and largest page of {@link listAccounts}. */
const ACCOUNTS_PAGE = 100;
const MAX_ACCOUNTS_PAGE = 1_000;

/**
 * Lists accounts ascending by id (code-point order), `limit` at a time (1 to 1,000, default
 * 100), starting after the id `after` (exclusive): so that an operator who lost an id can
 * find it. Pass the last id of a page as `after` for the next page.
 *
 * @example
 * ```ts
 * const first = await listAccounts(store);                                   // up to 100
 * const next = await listAccounts(store, { after: first.at(-1)!.id, limit: 500 });
 * ```
 */
export async function listAccounts(store: AccountStore, input: { after?: string; limit?: number } = {}): Promise<Account[]> {
  const after = input?.after === undefined ? null : text('after', input.after, 200);
  const limit = input?.limit ?? ACCOUNTS_PAGE;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_ACCOUNTS_PAGE) {
    throw bad('limit', `limit must be a whole number from 1 to ${MAX_ACCOUNTS_PAGE}.`);
  }
  const accounts = await storeCall(() => store.listAccounts({ after, limit }));
  return accounts.map((a) => ({ ...a }));
}

/**
 * Changes an account's plan and/or GMP add-on. Moving an account to a plan that allows
 * fewer active keys (not revoked, not expired) than it holds is refused with `ERR:PLAN`:
 * more than one to free, more than `maxKeysPerAccount` (default 100) to paid or pro. A
 * change of the add-on alone moves no plan and checks no key limit. Takes effect at once
 * for every router built on this store object.
 *
 * @example
 * ```ts
 * await updateAccount(store, { accountId: acct.id, plan: 'paid' });
 * ```
 */
export async function updateAccount(
  store: AccountStore,
  input: { accountId: string; plan?: Plan; gmpAddon?: boolean },
  options: AdminOptions = {},
): Promise<Account> {
  const id = text('accountId', input?.accountId, 200);
  const patch: { plan?: Plan; gmpAddon?: boolean } = {};
  if (input.plan !== undefined) patch.plan = planOf(input.plan);
  if (input.gmpAddon !== undefined) {
    if (typeof input.gmpAddon !== 'boolean') throw bad('gmpAddon', 'gmpAddon must be a boolean.');
    patch.gmpAddon = input.gmpAddon;
  }
  const cap = keyCap(options);
  // An account over a limit (one that predates it) may still change its add-on.
  const maxActiveKeys = patch.plan === undefined ? NO_KEY_LIMIT : keyLimits(cap);
  const result = await storeCall(() => store.updateAccount({ id, ...patch, maxActiveKeys, now: clock(options) }));
  invalidateKeyCache(store);
  if (result === 'not-found') throw new IpokitError('ERR:NOTFOUND', `No account has the id ${JSON.stringify(id)}.`);
  if (result === 'too-many-keys') {
    if (patch.plan === 'free') throw new IpokitError('ERR:PLAN', 'The free plan allows one active key: revoke the others before moving to it.');
    throw new IpokitError('ERR:PLAN', `The ${patch.plan} plan allows ${cap} active keys and this account holds more: revoke some before moving to it.`);
  }
  return { ...result };
}

/**
 * Creates an API key for an account, optionally expiring at `expiresAt` (an ISO-8601
 * instant after now: from then on the key is refused like a revoked one). The free plan
 * holds at most one active key, so during a rotation's overlap it holds no new one; paid
 * and pro hold at most `maxKeysPerAccount` (default 100): one more is `ERR:PLAN`. The
 * returned `key` is shown only here: the store keeps its SHA-256 and prefix.
 *
 * @example
 * ```ts
 * const { key } = await createApiKey(store, { accountId: acct.id, label: 'prod server' });
 * const trial = await createApiKey(store, { accountId: acct.id, label: 'trial', expiresAt: '2026-12-31T18:30:00Z' });
 * ```
 */
export async function createApiKey(
  store: AccountStore,
  input: { accountId: string; label: string; expiresAt?: string },
  options: AdminOptions = {},
): Promise<CreatedApiKey> {
  const accountId = text('accountId', input?.accountId, 200);
  const label = text('label', input.label, 100);
  const now = clockMs(options);
  const expiresAt = input.expiresAt === undefined ? null : expiryOf(input.expiresAt, now);
  const cap = keyCap(options);
  const fresh = newKey(now);
  const record: ApiKeyRecord = { ...fresh.record, accountId, label, revokedAt: null, expiresAt, lastUsedAt: null, rotatedFrom: null };
  const result = await storeCall(() => store.insertApiKey({ key: record, maxActiveKeys: keyLimits(cap), now: record.createdAt }));
  if (result === 'not-found') throw new IpokitError('ERR:NOTFOUND', `No account has the id ${JSON.stringify(accountId)}.`);
  if (result === 'too-many-keys') {
    // The store says only that the limit was reached; the plan (read after) says which.
    const plan = (await storeCall(() => store.getAccount(accountId)).catch(() => null))?.plan;
    if (plan === 'free') {
      throw new IpokitError(
        'ERR:PLAN',
        'The free plan allows one active key: revoke it (or wait for a rotated key to expire) or upgrade before creating another.',
      );
    }
    const limit = plan === undefined ? `The account holds the active keys its plan allows (free: 1, paid and pro: ${cap})` : `The ${plan} plan allows ${cap} active keys`;
    throw new IpokitError('ERR:PLAN', `${limit}: revoke one (or wait for a rotated key's overlap to end) before creating another.`);
  }
  return createdKey(record, fresh.key);
}

/**
 * Rotates a key: creates a new key with the same account, label and `expiresAt` (a trial
 * key rotated stays a trial key: a rotation never extends a key's life), listed with
 * `rotatedFrom` the old key's id, and makes the old one expire after `overlapSeconds` (0 to
 * 604,800, default 86,400), or at its own `expiresAt` when that is earlier, so that clients
 * can move to the new key meanwhile. Resolves to the
 * new key as {@link createApiKey} does (its `key` shown only here). On the free plan the
 * overlap is the one time an account holds two active keys. Rotating a revoked or expired
 * key is `ERR:PLAN`; an unknown id `ERR:NOTFOUND`. Takes effect at once for every router
 * built on this store object.
 *
 * @example
 * ```ts
 * const next = await rotateApiKey(store, old.id, { overlapSeconds: 3_600 }); // old.key works for one more hour
 * ```
 */
export async function rotateApiKey(
  store: AccountStore,
  id: string,
  input: { overlapSeconds?: number } = {},
  options: AdminOptions = {},
): Promise<CreatedApiKey> {
  const keyId = text('id', id, 200);
  if (input === null || typeof input !== 'object') throw bad('overlapSeconds', 'rotateApiKey takes { overlapSeconds? } as its third argument.');
  const overlap = input.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
  if (typeof overlap !== 'number' || !Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP_SECONDS) {
    throw bad('overlapSeconds', `overlapSeconds must be a whole number of seconds from 0 to ${MAX_OVERLAP_SECONDS} (7 days).`);
  }
  const now = clockMs(options);
  const cap = keyCap(options);
  const fresh = newKey(now);
  const result = await storeCall(() =>
    store.rotateApiKey({
      id: keyId,
      key: fresh.record,
      now: fresh.record.createdAt,
      overlapEndsAt: new Date(now + overlap * 1000).toISOString(),
      maxActiveKeys: keyLimits(cap),
    }),
  );
  invalidateKeyCache(store);
  if (result === 'not-found') throw new IpokitError('ERR:NOTFOUND', `No API key has the id ${JSON.stringify(keyId)}.`);
  if (result === 'inactive') throw new IpokitError('ERR:PLAN', `The key ${JSON.stringify(keyId)} is revoked or expired: create a new key instead.`);
  if (result === 'too-many-keys') {
    throw new IpokitError(
      'ERR:PLAN',
      `The account already holds the active keys its plan allows besides the one being rotated (free: 1, paid and pro: ${cap}): wait for the last rotation's overlap to end, or revoke a key.`,
    );
  }
  return createdKey(result, fresh.key);
}

/**
 * Lists an account's keys, ordered by creation: labels, prefixes, expiry, last use and the
 * key each rotated key replaced, never whole keys.
 *
 * @example
 * ```ts
 * const keys = await listApiKeys(store, { accountId: acct.id });
 * // [{ id, prefix, label, createdAt, revokedAt: null, expiresAt: null, lastUsedAt: '2026-11-24T09:14:05.120Z', rotatedFrom: null }]
 * ```
 */
export async function listApiKeys(store: AccountStore, input: { accountId: string }): Promise<ApiKeyInfo[]> {
  const accountId = text('accountId', input?.accountId, 200);
  const keys = await storeCall(() => store.listApiKeys(accountId));
  if (keys === null) throw new IpokitError('ERR:NOTFOUND', `No account has the id ${JSON.stringify(accountId)}.`);
  return keys.map((k) => ({
    id: k.id,
    prefix: k.prefix,
    label: k.label,
    createdAt: k.createdAt,
    revokedAt: k.revokedAt,
    expiresAt: k.expiresAt,
    lastUsedAt: k.lastUsedAt,
    // (a store of an earlier version may not know it: a key it lists replaced none it knows of)
    rotatedFrom: k.rotatedFrom ?? null,
  }));
}

/**
 * Revokes a key by id. Revoking twice is a no-op; an unknown id is `ERR:NOTFOUND`.
 * Takes effect at once for every router built on this store object.
 *
 * @example
 * ```ts
 * await revokeApiKey(store, created.id);
 * ```
 */
export async function revokeApiKey(store: AccountStore, id: string, options: AdminOptions = {}): Promise<void> {
  const keyId = text('id', id, 200);
  const found = await storeCall(() => store.revokeApiKey({ id: keyId, at: clock(options) }));
  invalidateKeyCache(store);
  if (!found) throw new IpokitError('ERR:NOTFOUND', `No API key has the id ${JSON.stringify(keyId)}.`);
}

/** The `maxKeysPerAccount` option, checked: default 100. */
function keyCap(options: AdminOptions): number {
  const cap = options.maxKeysPerAccount ?? DEFAULT_OPTIONS.maxKeysPerAccount;
  if (!isKeyCap(cap)) throw bad('maxKeysPerAccount', `The maxKeysPerAccount option ${KEY_CAP_RULE}.`);
  return cap;
}

/** The free plan's one active key, and the cap on paid and pro, as the stores check them. */
function keyLimits(cap: number): ActiveKeyLimits {
  return { free: 1, paid: cap, pro: cap };
}

function clock(options: AdminOptions): string {
  return new Date(clockMs(options)).toISOString();
}

/** The admin clock's reading, refused when it is not a date `toISOString` writes with 4 year digits. */
function clockMs(options: AdminOptions): number {
  const ms = (options.now ?? (() => new Date()))().getTime();
  if (!(ms >= YEAR_0 && ms < YEAR_10000)) throw bad('now', 'The now option must give a date of the years 0000 to 9999.');
  return ms;
}

/** `expiresAt` as the stores keep it: the instant `toISOString` writes, after `now`. */
function expiryOf(value: unknown, now: number): string {
  // An instant: a date, a time and a zone (Z or an offset); Date.parse reads the rest.
  const ms = typeof value === 'string' && ISO_INSTANT.test(value) ? Date.parse(value) : NaN;
  if (!(ms < YEAR_10000)) throw bad('expiresAt', 'expiresAt must be an ISO-8601 instant with a zone, e.g. 2026-12-31T18:30:00Z, before the year 10000.');
  if (ms <= now) throw bad('expiresAt', `expiresAt must be after now (${new Date(now).toISOString()}).`);
  return new Date(ms).toISOString();
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** A new key's text and the part of its record that does not depend on the account. */
function newKey(now: number): { key: string; record: Pick<ApiKeyRecord, 'id' | 'hash' | 'prefix' | 'createdAt'> } {
  const key = generateApiKey();
  return { key, record: { id: randomId('key'), hash: hashApiKey(key), prefix: key.slice(0, KEY_PREFIX_LENGTH), createdAt: new Date(now).toISOString() } };
}

function createdKey(record: ApiKeyRecord, key: string): CreatedApiKey {
  return { id: record.id, key, prefix: record.prefix, label: record.label, accountId: record.accountId, createdAt: record.createdAt, expiresAt: record.expiresAt };
}

function planOf(plan: unknown): Plan {
  const found = PLANS.find((p) => p === plan);
  if (found === undefined) throw bad('plan', 'plan must be free, paid or pro.');
  return found;
}

function text(name: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.length === 0 || [...value].length > max || !value.isWellFormed()) {
    throw bad(name, `${name} must be a string of 1 to ${max} characters.`);
  }
  return value;
}

function bad(parameter: string, message: string): IpokitError {
  return new IpokitError('ERR:BADPARAM', message, { parameter });
}
