/**
 * Key lookups, cached per store object (docs/spec.md#keys). Only valid grants are cached, so a
 * key created a moment ago is found at once. Revocations and plan changes made through
 * the core's functions clear the store object's cache; another process sharing the store
 * sees them within `keyCacheTtlMs`.
 */
import { LRUCache } from 'lru-cache';
import { hashApiKey } from './keys.js';
import type { AccountStore, KeyGrant, StoreCallOptions } from './types.js';

/** How many keys a store object's cache holds at most. */
export const KEY_CACHE_SIZE = 10_000;

interface Entry {
  grant: KeyGrant;
  /** When the store was read, by the request clock. */
  at: number;
}

/** A store object's cache and its generation, which every invalidation moves on. */
interface StoreCache {
  entries: LRUCache<string, Entry>;
  generation: number;
}

const caches = new WeakMap<AccountStore, StoreCache>();

/**
 * The grant of a sent key, or null when no stored key has its hash. Served from the
 * store object's cache while the entry is younger than `ttlMs` by the request clock.
 *
 * A lookup that was under way when the cache was invalidated (a revocation or plan change
 * made meanwhile) answers its own request but is not cached: what it read may be older than
 * the change, and caching it would bring the old grant back for `ttlMs`.
 *
 * @example
 * ```ts
 * const grant = await lookupKey(store, 'ipk_...', now, 5_000); // now: the request's clock reading
 * ```
 */
export async function lookupKey(store: AccountStore, key: string, now: number, ttlMs: number, call?: StoreCallOptions): Promise<KeyGrant | null> {
  const hash = hashApiKey(key);
  let cache = caches.get(store);
  if (ttlMs > 0 && cache !== undefined) {
    const hit = cache.entries.get(hash);
    // A clock that went backwards also forces a fresh read.
    if (hit !== undefined && now - hit.at < ttlMs && now >= hit.at) return hit.grant;
  }
  if (cache === undefined) {
    cache = { entries: new LRUCache<string, Entry>({ max: KEY_CACHE_SIZE }), generation: 0 };
    caches.set(store, cache);
  }
  const generation = cache.generation;
  const grant = await store.findApiKey(hash, call);
  if (ttlMs > 0 && grant !== null && !grant.revoked && cache.generation === generation) {
    cache.entries.set(hash, { grant, at: now });
  }
  return grant;
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
