import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, KEY_PREFIX, randomBase62, randomId } from './keys.js';

// hashApiKey is SHA-256 written in JavaScript (keys.ts says why): the same hex as
// node:crypto for every string, which is what every key stored so far was hashed with.

const nodeSha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

describe('hashApiKey', () => {
  it('gives the FIPS 180-4 / NIST test vectors', () => {
    expect(hashApiKey('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashApiKey('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
    expect(hashApiKey('a'.repeat(1_000_000))).toBe('cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
  });

  it('equals node:crypto for every length around the block and padding boundaries', () => {
    for (let n = 0; n <= 200; n++) {
      const text = 'ipk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.repeat(4).slice(0, n);
      expect(hashApiKey(text), `length ${n}`).toBe(nodeSha256(text));
    }
  });

  it('equals node:crypto for any string, non-ASCII and lone surrogates included (hashed as UTF-8, U+FFFD for a lone one)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 150 }), fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)), maxLength: 80 })), (text) => {
        expect(hashApiKey(text)).toBe(nodeSha256(text));
      }),
      { numRuns: 2000 },
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
