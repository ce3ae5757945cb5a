/**
 * API key material: generation, hashing, prefixes, and random ids.
 */
// Web-standard APIs only (crypto.getRandomValues, TextEncoder): the core runs on Node, Bun,
// Deno and Workers alike (runtime-neutral.test.ts).

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
 * Lowercase hex SHA-256 of a key: the only form in which keys are stored and looked up.
 * Looking keys up by hash compares no key text, so timing reveals no valid prefix.
 *
 * @example
 * ```ts
 * hashApiKey('ipk_x').length; // 64
 * ```
 */
export function hashApiKey(key: string): string {
  // A key (36 ASCII characters) is copied into scratch space byte by byte, which costs less
  // than a call to encodeInto; anything else is encoded into it (TextEncoder.encode, which
  // allocates, costs a third of the hash). A string of n code units takes at most 3n bytes.
  if (key.length <= KEY_SCRATCH.length) {
    let i = 0;
    while (i < key.length) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) break;
      KEY_SCRATCH[i++] = c;
    }
    if (i === key.length) return sha256Hex(KEY_SCRATCH, i);
  }
  if (key.length * 3 <= KEY_SCRATCH.length) return sha256Hex(KEY_SCRATCH, UTF8.encodeInto(key, KEY_SCRATCH).written);
  const bytes = UTF8.encode(key);
  return sha256Hex(bytes, bytes.length);
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

// ---------------------------------------------------------------------------------------
// SHA-256 (FIPS 180-4), for hashApiKey.
//
// In JavaScript and synchronous, on purpose. Web Crypto's `crypto.subtle.digest` is the
// standard alternative, but it is async, and on Node 20 each call is a thread-pool job of
// about 35 us of CPU: about as much as a whole keyed request through Koa (38 us in
// BENCHMARKS.md), on every request that sends a key, and on every made-up key an attacker
// sends. This takes about 0.7 us for a key (one 64-byte block), against 0.4 us for
// node:crypto's one-shot hash, and keeps hashApiKey synchronous, as it always was. No
// branch and no table index depends on the bytes hashed, only on their number, so the
// time it takes tells nothing about a key but its length. keys.test.ts checks it against
// the NIST vectors and node:crypto.

const UTF8 = new TextEncoder();
const KEY_SCRATCH = new Uint8Array(256);

/** SHA-256's round constants (FIPS 180-4, 4.2.2); hmac.ts uses them too. */
export const SHA256_K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** The message schedule, reused: the function never yields, so no two calls share it. */
const W = new Int32Array(64);

/** The hash of the first `n` bytes of `bytes`. */
function sha256Hex(message: Uint8Array, n: number): string {
  // The message, then 0x80, zeros, and the length in bits as 64 bits big-endian, in 64-byte
  // blocks: padded in place when there is room after the message (the scratch space), which
  // leaves the loads below without a branch.
  const padded = (Math.floor((n + 8) / 64) + 1) * 64;
  let bytes = message;
  if (bytes.length < padded) {
    bytes = new Uint8Array(padded);
    bytes.set(message.subarray(0, n));
  }
  bytes[n] = 0x80;
  bytes.fill(0, n + 1, padded);
  let h0 = 0x6a09e667 | 0, h1 = 0xbb67ae85 | 0, h2 = 0x3c6ef372 | 0, h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0, h5 = 0x9b05688c | 0, h6 = 0x1f83d9ab | 0, h7 = 0x5be0cd19 | 0;
  for (let block = 0; block < padded; block += 64) {
    for (let t = 0, j = block; t < 16; t++, j += 4) W[t] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!;
    if (block + 64 === padded) {
      W[14] = Math.floor(n / 0x20000000); // the bits of n * 8 above the low 32
      W[15] = n << 3;
    }
    for (let t = 16; t < 64; t++) {
      const x = W[t - 15]!;
      const y = W[t - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let t = 0; t < 64; t++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + SHA256_K[t]! + W[t]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  return hex8(h0) + hex8(h1) + hex8(h2) + hex8(h3) + hex8(h4) + hex8(h5) + hex8(h6) + hex8(h7);
}

/** A 32-bit word as 8 lowercase hex digits. */
function hex8(x: number): string {
  return HEX[x >>> 24]! + HEX[(x >>> 16) & 255]! + HEX[(x >>> 8) & 255]! + HEX[x & 255]!;
}
