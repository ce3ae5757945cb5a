/**
 * Key lookups, cached per store object (CONTRACT 8). Only valid grants are cached, so a
 * key created a moment ago is found at once. Revocations and plan changes made through
 * the core's functions clear the store object's cache; another process sharing the store
 * sees them within `keyCacheTtlMs`.
 */
import { LRUCache } from 'lru-cache';
import { hashApiKey } from './keys.js';
import type { KeyGrant, Store } from './types.js';

/** How many keys a store object's cache holds at most. */
export const KEY_CACHE_SIZE = 10_000;

interface Entry {
  grant: KeyGrant;
  /** When the store was read, by the request clock. */
  at: number;
}

const caches = new WeakMap<Store, LRUCache<string, Entry>>();

/**
 * The grant of a sent key, or null when no stored key has its hash. Served from the
 * store object's cache while the entry is younger than `ttlMs` by the request clock.
 *
 * @example
 * ```ts
 * const grant = await lookupKey(store, 'ipk_...', Date.now(), 5_000);
 * ```
 */
export async function lookupKey(store: Store, key: string, now: number, ttlMs: number): Promise<KeyGrant | null> {
  const hash = hashApiKey(key);
  if (ttlMs > 0) {
    const hit = caches.get(store)?.get(hash);
    // A clock that went backwards also forces a fresh read.
    if (hit !== undefined && now - hit.at < ttlMs && now >= hit.at) return hit.grant;
  }
  const grant = await store.findApiKey(hash);
  if (ttlMs > 0 && grant !== null && !grant.revoked) {
    let cache = caches.get(store);
    if (cache === undefined) {
      cache = new LRUCache<string, Entry>({ max: KEY_CACHE_SIZE });
      caches.set(store, cache);
    }
    cache.set(hash, { grant, at: now });
  }
  return grant;
}

/**
 * Forgets every cached key of a store object, so that a revocation or plan change made
 * on it takes effect at once for every router built on it.
 *
 * @example
 * ```ts
 * invalidateKeyCache(store);
 * ```
 */
export function invalidateKeyCache(store: Store): void {
  caches.get(store)?.clear();
}
