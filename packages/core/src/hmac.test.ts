import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hmacKey, hmacSha256 } from './hmac.js';

// The JavaScript HMAC-SHA256 the webhook signature uses, against node:crypto: RFC 4231's
// vectors, and random keys and messages of every length around the block boundaries.

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('hmacSha256', () => {
  it("gives RFC 4231's test vectors", () => {
    const cases: Array<[Uint8Array, Uint8Array, string]> = [
      [new Uint8Array(20).fill(0x0b), Buffer.from('Hi There'), 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7'],
      [Buffer.from('Jefe'), Buffer.from('what do ya want for nothing?'), '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'],
      [new Uint8Array(131).fill(0xaa), Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First'), '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54'],
    ];
    for (const [key, message, mac] of cases) expect(hex(hmacSha256(hmacKey(key), message))).toBe(mac);
  });

  it('equals node:crypto for any key and message (lengths around 55, 56, 64, 119, 120 and 128 bytes included)', () => {
    const length = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom(55, 56, 63, 64, 65, 119, 120, 127, 128, 129));
    fc.assert(
      fc.property(
        length.chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
        fc.oneof(fc.constant(24), fc.integer({ min: 0, max: 150 })).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
        (message, key) => {
          expect(hex(hmacSha256(hmacKey(key), message))).toBe(createHmac('sha256', key).update(message).digest('hex'));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a prepared key signs any number of messages alike (nothing of one message stays in it)', () => {
    const key = hmacKey(Buffer.from('0123456789abcdef01234567'));
    const a = Buffer.from('a'.repeat(1_000));
    const first = hex(hmacSha256(key, a));
    hmacSha256(key, Buffer.from('something else'));
    expect(hex(hmacSha256(key, a))).toBe(first);
  });
});
