import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceStore } from '@ipokit/testing';
import { createIpoHandler } from './handler.js';

describe('the Web-API replacements agree with Node', () => {
  // handler.ts measures UTF-8 bytes with TextEncoder.encodeInto, 16 KiB at a time: the
  // maxUrlLength bound falls exactly where Buffer.byteLength says, for any text, across
  // the slices (a surrogate pair on a slice boundary included).
  it('maxUrlLength counts the bytes Buffer.byteLength counts, for any text and length', async () => {
    const store = referenceStore();
    const answers = async (url: string, maxUrlLength: number): Promise<number> =>
      (await createIpoHandler(store, { maxUrlLength })({ method: 'GET', url, path: '/', query: '', headers: {}, clientAddress: '203.0.113.9' })).status;
    const piece = fc.constantFrom('a', 'é', '€', '😀', '\uD800', '\uDC00', '%20');
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 40 }), fc.oneof(fc.constant(0), fc.integer({ min: 16_350, max: 16_376 }), fc.constant(40_000)), async (pieces, pad) => {
        const url = `/ipos?x=${'b'.repeat(pad)}${pieces.join('')}`;
        const bytes = Buffer.byteLength(url, 'utf8');
        expect(await answers(url, bytes)).not.toBe(414);
        expect(await answers(url, bytes - 1)).toBe(414);
      }),
      { numRuns: 200 },
    );
  });
});
