/**
 * The `#crypto` import beside Node (Bun, Deno, Workers, browsers; package.json `imports`):
 * SHA-256 and HMAC-SHA256 from @noble/hashes (audited, synchronous). Web Crypto's
 * `crypto.subtle` would be the platform's own, but it is async (a promise per keyed request,
 * and on Node a thread-pool job each), so it is not used on the request path. On Node,
 * `#crypto` is node.ts (node:crypto), which gives the same bytes; crypto.test.ts runs the
 * known-answer vectors against both.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

const UTF8 = new TextEncoder();

/**
 * Lowercase hex SHA-256 of the UTF-8 bytes of `text` (a lone surrogate as U+FFFD, as
 * TextEncoder does). Synchronous: it is on the request path of every keyed request.
 *
 * @example
 * ```ts
 * sha256Hex('abc'); // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 * ```
 */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(UTF8.encode(text)));
}

/**
 * HMAC-SHA256 (RFC 2104) of `message` (a string as its UTF-8 bytes) keyed by `key`: 32 bytes.
 *
 * @example
 * ```ts
 * hmacSha256(new TextEncoder().encode('Jefe'), 'what do ya want for nothing?'); // Uint8Array(32) [0x5b, 0xdc, ...]
 * ```
 */
export function hmacSha256(key: Uint8Array, message: string | Uint8Array): Uint8Array {
  return hmac(sha256, key, typeof message === 'string' ? UTF8.encode(message) : message);
}
