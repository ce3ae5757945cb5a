/**
 * API key material: generation, hashing, prefixes, and random ids.
 */
// Web-standard APIs only (crypto.getRandomValues) and the `#crypto` import, which each runtime
// resolves to its own: the core runs on Node, Bun, Deno and Workers alike (runtime-neutral.test.ts).
import { sha256Hex } from '#crypto';

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
  while (out.length < length) {
    if (poolAt === POOL_BYTES) {
      crypto.getRandomValues(pool);
      poolAt = 0;
    }
    const byte = pool[poolAt]!;
    // Each byte is used once, then forgotten.
    pool[poolAt++] = 0;
    // Bytes from 248 (4 x 62) up are dropped: kept, they would make the first 8 characters likelier.
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

// Random bytes are drawn from the CSPRNG 4 KB at a time: one call per id cost more than the
// rest of recording an event (an import records one per snapshot), and the bytes are as random.
const POOL_BYTES = 4_096;
const pool = new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;

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
 * Lowercase hex SHA-256 of a key (its UTF-8 bytes): the only form in which keys are stored
 * and looked up. Looking keys up by hash compares no key text, so timing reveals no valid
 * prefix. Synchronous, from the `#crypto` import: node:crypto on Node, @noble/hashes elsewhere.
 *
 * @example
 * ```ts
 * hashApiKey('ipk_x').length; // 64
 * ```
 */
export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

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
