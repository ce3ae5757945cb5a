import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as node from './node.js';
import * as web from './web.js';

// Both `#crypto` implementations (node:crypto on Node, @noble/hashes elsewhere) against the
// published known answers (FIPS 180-4 / NIST for SHA-256, RFC 4231 for HMAC-SHA256), and
// against each other and node:crypto's streaming API for any input.

const IMPLEMENTATIONS = { 'node:crypto (crypto/node.ts)': node, '@noble/hashes (crypto/web.ts)': web };
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

/** FIPS 180-4 examples and the NIST CAVP / "one million a" vectors. */
const SHA256_VECTORS: Array<[string, string]> = [
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1'],
  [
    'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu',
    'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
  ],
  ['a'.repeat(1_000_000), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0'],
];

/** RFC 4231 section 4: key, data, HMAC-SHA-256 (test case 5's is truncated to 128 bits). */
const HMAC_VECTORS: Array<[Uint8Array, Uint8Array | string, string]> = [
  [new Uint8Array(20).fill(0x0b), 'Hi There', 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7'],
  [ascii('Jefe'), 'what do ya want for nothing?', '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'],
  [new Uint8Array(20).fill(0xaa), new Uint8Array(50).fill(0xdd), '773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe'],
  [bytes('0102030405060708090a0b0c0d0e0f10111213141516171819'), new Uint8Array(50).fill(0xcd), '82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b'],
  [new Uint8Array(20).fill(0x0c), 'Test With Truncation', 'a3b6167473100ee06e0c796c2955552b'],
  [new Uint8Array(131).fill(0xaa), 'Test Using Larger Than Block-Size Key - Hash Key First', '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54'],
  [
    new Uint8Array(131).fill(0xaa),
    'This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.',
    '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
  ],
];

describe.each(Object.entries(IMPLEMENTATIONS))('%s', (_name, impl) => {
  it('sha256Hex gives the FIPS 180-4 / NIST vectors', () => {
    for (const [text, digest] of SHA256_VECTORS) expect(impl.sha256Hex(text), `${text.slice(0, 20)}... (${text.length})`).toBe(digest);
  });

  it('hmacSha256 gives the RFC 4231 vectors', () => {
    for (const [key, data, mac] of HMAC_VECTORS) expect(hex(impl.hmacSha256(key, data)).slice(0, mac.length)).toBe(mac);
  });

  it('sha256Hex equals node:crypto for every length around the block and padding boundaries', () => {
    for (let n = 0; n <= 200; n++) {
      const text = 'ipk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.repeat(4).slice(0, n);
      expect(impl.sha256Hex(text), `length ${n}`).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  });

  it('sha256Hex equals node:crypto for any string, non-ASCII and lone surrogates included (hashed as UTF-8, U+FFFD for a lone one)', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 150 }),
      fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)), maxLength: 80 }),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(impl.sha256Hex(t)).toBe(createHash('sha256').update(t, 'utf8').digest('hex'));
      }),
      { numRuns: 1000 },
    );
  });

  it('hmacSha256 equals node:crypto for any key and message, string or bytes (lengths around 55, 56, 64, 119, 120 and 128 bytes included)', () => {
    const length = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom(55, 56, 63, 64, 65, 119, 120, 127, 128, 129));
    fc.assert(
      fc.property(
        fc.oneof(length.chain((n) => fc.uint8Array({ minLength: n, maxLength: n })), fc.string({ unit: 'binary', maxLength: 150 })),
        fc.oneof(fc.constant(24), fc.integer({ min: 0, max: 150 })).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
        (message, key) => {
          const expected = createHmac('sha256', key).update(typeof message === 'string' ? Buffer.from(message, 'utf8') : message).digest('hex');
          expect(hex(impl.hmacSha256(key, message))).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});
