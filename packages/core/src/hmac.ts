/**
 * HMAC-SHA256 (RFC 2104, FIPS 180-4) in JavaScript, for the webhook signature
 * (docs/spec.md#webhooks). Web Crypto's `crypto.subtle.sign` is the standard alternative,
 * but on Node 20 each call is a thread-pool job whose dispatch alone costs the worker about
 * 60 us of its own thread: the largest single cost of a delivery. Here a secret's two padded
 * key blocks are compressed once, so a signature costs the message's blocks and one more
 * (about 10 us for an IPO event). hmac.test.ts checks it against node:crypto.
 */
import { SHA256_K } from './keys.js';

const IV = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
/** The message schedule, reused: nothing here yields, so no two calls share it. */
const W = new Int32Array(64);

/**
 * Hashes `bytes[0..n)` into `state` as the rest of a message whose first `before` bytes (a
 * multiple of 64) are already compressed into it, padding with the whole length.
 */
function absorb(state: Int32Array, bytes: Uint8Array, n: number, before: number): void {
  const padded = (Math.floor((n + 8) / 64) + 1) * 64;
  const bits = (before + n) * 8;
  for (let block = 0; block < padded; block += 64) {
    if (block + 64 <= n) {
      for (let t = 0; t < 16; t++) {
        const j = block + 4 * t;
        W[t] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!;
      }
    } else {
      for (let t = 0; t < 16; t++) {
        let word = 0;
        for (let j = block + 4 * t; j < block + 4 * t + 4; j++) word = (word << 8) | (j < n ? bytes[j]! : j === n ? 0x80 : 0);
        W[t] = word;
      }
      if (block + 64 === padded) {
        W[14] = Math.floor(bits / 0x100000000);
        W[15] = bits | 0;
      }
    }
    compress(state);
  }
}

/** One block (in W[0..16)) into `state`. */
function compress(state: Int32Array): void {
  for (let t = 16; t < 64; t++) {
    const x = W[t - 15]!;
    const y = W[t - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
  }
  let a = state[0]!, b = state[1]!, c = state[2]!, d = state[3]!, e = state[4]!, f = state[5]!, g = state[6]!, h = state[7]!;
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
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}

/** A secret made ready to sign with: the states after its inner and outer padded blocks. */
export interface HmacKey {
  inner: Int32Array;
  outer: Int32Array;
}

/**
 * Prepares a key (any length; one over 64 bytes is hashed first, as RFC 2104 says).
 *
 * @example
 * ```ts
 * const key = hmacKey(new TextEncoder().encode('secret'));
 * ```
 */
export function hmacKey(keyBytes: Uint8Array): HmacKey {
  let k = keyBytes;
  if (k.length > 64) {
    const s = IV.slice();
    absorb(s, k, k.length, 0);
    k = wordsToBytes(s);
  }
  const pad = (x: number): Int32Array => {
    for (let t = 0; t < 16; t++) {
      let word = 0;
      for (let j = 4 * t; j < 4 * t + 4; j++) word = (word << 8) | ((k[j] ?? 0) ^ x);
      W[t] = word;
    }
    const s = IV.slice();
    compress(s);
    return s;
  };
  return { inner: pad(0x36), outer: pad(0x5c) };
}

/**
 * HMAC-SHA256 of `message` under a prepared key: 32 bytes.
 *
 * @example
 * ```ts
 * hmacSha256(hmacKey(keyBytes), new TextEncoder().encode('id.1764000000.{}')); // Uint8Array(32)
 * ```
 */
export function hmacSha256(key: HmacKey, message: Uint8Array): Uint8Array {
  const inner = key.inner.slice();
  absorb(inner, message, message.length, 64);
  const outer = key.outer.slice();
  absorb(outer, wordsToBytes(inner), 32, 64);
  return wordsToBytes(outer);
}

function wordsToBytes(state: Int32Array): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const x = state[i]!;
    out[4 * i] = x >>> 24;
    out[4 * i + 1] = (x >>> 16) & 255;
    out[4 * i + 2] = (x >>> 8) & 255;
    out[4 * i + 3] = x & 255;
  }
  return out;
}
