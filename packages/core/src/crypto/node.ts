/**
 * The `#crypto` import on Node (package.json `imports`): SHA-256 and HMAC-SHA256 from
 * `node:crypto` (OpenSSL). Other runtimes resolve `#crypto` to web.ts (@noble/hashes), which
 * gives the same bytes; crypto.test.ts runs the known-answer vectors against both.
 */
import * as nodeCrypto from 'node:crypto';

// `crypto.hash` (one call, no Hash object) is in Node 21.7 and 20.12; older Node 20 has only createHash.
const oneShot = typeof nodeCrypto.hash === 'function' ? nodeCrypto.hash : undefined;

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
  return oneShot !== undefined ? oneShot('sha256', text, 'hex') : nodeCrypto.createHash('sha256').update(text, 'utf8').digest('hex');
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
  const mac = nodeCrypto.createHmac('sha256', key);
  return (typeof message === 'string' ? mac.update(message, 'utf8') : mac.update(message)).digest();
}
