/**
 * API key material: generation, hashing, prefixes, and random ids.
 */
import * as crypto from 'node:crypto';
import { createHash, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Every key starts with this. */
export const KEY_PREFIX = 'ipk_';
/** How many characters of a key are kept in clear for lists. */
export const KEY_PREFIX_LENGTH = 12;

/**
 * A random base62 string from a cryptographically strong source, without modulo bias.
 *
 * @example
 * ```ts
 * randomBase62(32); // e.g. '3kTq...'
 * ```
 */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/**
 * A new API key: `ipk_` and 32 base62 characters (about 190 bits).
 *
 * @example
 * ```ts
 * generateApiKey(); // 'ipk_...'
 * ```
 */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBase62(32);
}

/**
 * Lowercase hex SHA-256 of a key: the only form in which keys are stored and looked up.
 * Looking keys up by hash compares no key text, so timing reveals no valid prefix.
 *
 * @example
 * ```ts
 * hashApiKey('ipk_x').length; // 64
 * ```
 */
export function hashApiKey(key: string): string {
  return oneShotHash === undefined ? createHash('sha256').update(key, 'utf8').digest('hex') : oneShotHash('sha256', key, 'hex');
}

/** `crypto.hash` (Node 20.12+): a third of createHash's cost per request; absent before. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/**
 * A random id with a readable prefix, e.g. `acct_...`.
 *
 * @example
 * ```ts
 * randomId('key'); // 'key_...'
 * ```
 */
export function randomId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}
