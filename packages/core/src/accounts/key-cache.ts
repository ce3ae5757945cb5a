/**
 * Key lookups, cached per store object (docs/spec.md#keys). Only valid grants are cached, so a
 * key created a moment ago is found at once. Revocations, rotations and plan changes made
 * through the core's functions clear the store object's cache; another process sharing the
 * store sees them within `keyCacheTtlMs`. A cached grant is checked against its `expiresAt`
 * on every use, so no cache extends a key past it.
 */
import { LRUCache } from 'lru-cache';
import type { AccountStore, KeyGrant, StoreCallOptions } from '../model/types.js';

/** How many keys a store object's cache holds at most. */
export const KEY_CACHE_SIZE = 10_000;

interface Entry {
  grant: KeyGrant;
  /** When the store was read, by the request clock. */
  at: number;
  /** The grant's `expiresAt` in epoch ms (Infinity: never), parsed once. */
  expires: number;
}

/** A store object's cache and its generation, which every invalidation moves on. */
interface StoreCache {
  entries: LRUCache<string, Entry>;
  generation: number;
  /** Key id -> when this process last wrote the key's `lastUsedAt`, by the request clock. */
  uses: LRUCache<string, number>;
}

/** How often a process writes a key's `lastUsedAt` at most: once a minute. */
export const KEY_USE_INTERVAL_MS = 60_000;

const caches = new WeakMap<AccountStore, StoreCache>();

/**
 * The grant of a key, by its hash (`hashApiKey`), from the store object's cache, without
 * reading the store: the grant when the key is cached and valid at `now`, null when it is
 * cached but expired (`now >= expiresAt`), and undefined when the store must be read
 * ({@link readKey}): not cached, or the entry is `ttlMs` old or more by the request clock.
 * Synchronous, so that a cached key costs the request no store call.
 *
 * @example
 * ```ts
 * const hash = hashApiKey('ipk_...');
 * const grant = cachedKey(store, hash, now, 5_000) ?? (await readKey(store, hash, now, 5_000));
 * ```
 */
export function cachedKey(store: AccountStore, hash: string, now: number, ttlMs: number): KeyGrant | null | undefined {
  if (!(ttlMs > 0)) return undefined;
  const hit = cacheOf(store).entries.get(hash);
  // A clock that went backwards also forces a fresh read.
  if (hit === undefined || !(now - hit.at < ttlMs && now >= hit.at)) return undefined;
  return now < hit.expires ? hit.grant : null;
}

/**
 * The grant of a key, by its hash, read from the store and cached: null when no stored key
 * has the hash, or the key is revoked or expired (`now >= expiresAt`). Only valid grants are
 * cached.
 *
 * A read that was under way when the cache was invalidated (a revocation or plan change made
 * meanwhile) answers its own request but is not cached: what it read may be older than the
 * change, and caching it would bring the old grant back for `ttlMs`.
 *
 * @example
 * ```ts
 * const grant = await readKey(store, hashApiKey('ipk_...'), now, 5_000); // now: the request's clock reading
 * ```
 */
export async function readKey(store: AccountStore, hash: string, now: number, ttlMs: number, call?: StoreCallOptions): Promise<KeyGrant | null> {
  const cache = cacheOf(store);
  const generation = cache.generation;
  const grant = await store.findApiKey(hash, call);
  if (grant === null || grant.revoked) return null;
  const expires = grant.expiresAt === null ? Infinity : Date.parse(grant.expiresAt);
  if (ttlMs > 0 && cache.generation === generation && now < expires) cache.entries.set(hash, { grant, at: now, expires });
  return now < expires ? grant : null;
}

/**
 * The write of a key's `lastUsedAt` that an admitted request using the key `keyId` at `now`
 * owes, or undefined when none is due: the store is written at most once a minute per key
 * from this store object (docs/spec.md#keys), so `lastUsedAt` is at most a minute stale and
 * costs no write per request. A write that fails is owed again by the key's next request.
 *
 * @example
 * ```ts
 * const write = keyUseWrite(store, grant.keyId, now);
 * if (write !== undefined) await write({ deadline: performance.now() + 1_000 });
 * ```
 */
export function keyUseWrite(store: AccountStore, keyId: string, now: number): ((call?: StoreCallOptions) => Promise<void>) | undefined {
  const uses = cacheOf(store).uses;
  const last = uses.get(keyId);
  if (last !== undefined && now - last < KEY_USE_INTERVAL_MS && now >= last) return undefined;
  uses.set(keyId, now);
  return async (call) => {
    try {
      await store.recordKeyUse({ id: keyId, at: new Date(now).toISOString() }, call);
    } catch (err) {
      if (uses.get(keyId) === now) uses.delete(keyId);
      throw err;
    }
  };
}

function cacheOf(store: AccountStore): StoreCache {
  let cache = caches.get(store);
  if (cache === undefined) {
    cache = { entries: new LRUCache<string, Entry>({ max: KEY_CACHE_SIZE }), generation: 0, uses: new LRUCache<string, number>({ max: KEY_CACHE_SIZE }) };
    caches.set(store, cache);
  }
  return cache;
}

/**
 * Forgets every cached key of a store object, so that a revocation or plan change made
 * on it takes effect at once for every router built on it, lookups under way included.
 *
 * @example
 * ```ts
 * invalidateKeyCache(store);
 * ```
 */
export function invalidateKeyCache(store: AccountStore): void {
  const cache = caches.get(store);
  if (cache === undefined) return;
  cache.generation++;
  cache.entries.clear();
}
