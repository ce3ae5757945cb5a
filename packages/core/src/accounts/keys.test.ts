import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, KEY_PREFIX, randomBase62, randomId } from './keys.js';

// hashApiKey is the hex SHA-256 of the key's UTF-8 bytes, which is what every key stored so far
// was hashed with; the `#crypto` implementations themselves are checked in crypto/crypto.test.ts.

const nodeSha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

describe('hashApiKey', () => {
  it('is the lowercase hex SHA-256 of the key (a known key, and any string)', () => {
    expect(hashApiKey('ipk_0123456789abcdefghijABCDEFGHIJ01')).toBe('0fed9c04a4bd32b264d69d6259f248be966140545abdc49f8f2d73287cafdc67');
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 100 }), fc.string({ unit: 'binary', maxLength: 50 })), (text) => {
        expect(hashApiKey(text)).toBe(nodeSha256(text));
      }),
      { numRuns: 200 },
    );
  });
});

describe('random keys and ids', () => {
  it('a key is ipk_ and 32 base62 characters; an id its prefix, _ and 20', () => {
    for (let i = 0; i < 200; i++) {
      expect(generateApiKey()).toMatch(/^ipk_[0-9A-Za-z]{32}$/);
      expect(randomId('acct')).toMatch(/^acct_[0-9A-Za-z]{20}$/);
    }
    expect(generateApiKey().startsWith(KEY_PREFIX)).toBe(true);
    expect(randomBase62(0)).toBe('');
    expect(randomBase62(100_000)).toHaveLength(100_000);
  });

  it('draws every base62 character about equally often (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const n = 62 * 4_000;
    for (const c of randomBase62(n)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Each count is binomial (n, 1/62): mean 4,000, sd 63. Bytes 248-255 kept as `% 62`
    // would draw '0'-'7' 4,844 times on average and the others 3,875.
    for (const [c, k] of counts) expect(Math.abs(k - 4_000), c).toBeLessThan(63 * 5);
    const first8 = [...'01234567'].reduce((sum, c) => sum + counts.get(c)!, 0);
    expect(Math.abs(first8 - 8 * 4_000)).toBeLessThan(5 * Math.sqrt(8 * 4_000));
  });
});
